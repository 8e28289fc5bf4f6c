"""Tests for restmapper.store.GenerationCache (DESIGN.md sections 1 seed 1 and 5.4)."""

from __future__ import annotations

import copy
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from restmapper.errors import InvalidArgumentError, RestMapperError
from restmapper.store import GenerationCache, crd_fingerprint, object_uid_generation

TIMEOUT = 10.0  # seconds; only reached when a test is about to fail


# --- helpers -----------------------------------------------------------------------------------------------


def make_crd(
    uid: str = "uid-1",
    generation: int = 1,
    *,
    kind: str = "Widget",
    short_names: tuple[str, ...] = ("wd",),
    versions: tuple[tuple[str, bool], ...] = (("v1", True),),
    name: str = "widgets.example.com",
) -> dict[str, Any]:
    """A CRD in wire form, as a watch or list would deliver it."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name, "uid": uid, "generation": generation},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": "widgets"},
            "versions": [{"name": v, "served": served, "storage": i == 0} for i, (v, served) in enumerate(versions)],
        },
        "status": {
            "acceptedNames": {"kind": kind, "plural": "widgets", "shortNames": list(short_names)},
            "storedVersions": [versions[0][0]],
        },
    }


@dataclass(frozen=True)
class Built:
    """A value that records which object it was built from."""

    serial: int
    uid: str
    generation: int
    fingerprint: str


class Recorder:
    """A build/dispose pair that records every call; ``hook`` runs inside build (to block or fail)."""

    def __init__(self, hook: Callable[[Any], object] | None = None) -> None:
        self.hook = hook
        self.built: list[Built] = []
        self.disposed: list[Built] = []
        self._serial = itertools.count(1)
        self._lock = threading.Lock()

    def build(self, obj: Any) -> Built:
        if self.hook is not None:
            self.hook(obj)
        uid, generation = object_uid_generation(obj)
        value = Built(next(self._serial), uid, generation, crd_fingerprint(obj))
        with self._lock:
            self.built.append(value)
        return value

    def dispose(self, value: Built) -> None:
        with self._lock:
            self.disposed.append(value)

    def crd_cache(self) -> GenerationCache[Any, Built]:
        return GenerationCache.for_crds(self.build, dispose=self.dispose)


def poll_until(predicate: Callable[[], bool]) -> None:
    """Wait until another thread has reached a state (observed through the cache's counters)."""
    deadline = time.monotonic() + TIMEOUT
    tick = threading.Event()
    while not predicate():
        assert time.monotonic() < deadline, "other threads never reached the expected state"
        tick.wait(0.001)


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=40) as executor:
        yield executor


# --- seed 1: freshness -------------------------------------------------------------------------------------


def test_spec_update_then_immediate_get_returns_fresh_value() -> None:
    """Seed 1: a CRD update bumps the generation; the very next get must not serve the old state."""
    rec = Recorder()
    cache = rec.crd_cache()
    v1 = cache.get(make_crd(generation=1))
    assert cache.get(make_crd(generation=1)) is v1
    v2 = cache.get(make_crd(generation=2, versions=(("v1", True), ("v2", True))))
    assert v2 is not v1
    assert (v2.generation, len(rec.built)) == (2, 2)
    assert rec.disposed == [v1]
    assert cache.peek("uid-1") is v2
    stats = cache.stats
    assert (stats.builds, stats.rebuilds, stats.hits, stats.disposals) == (2, 1, 1, 1)


def test_accepted_names_change_without_generation_bump_rebuilds() -> None:
    """Seed 1: the names controller writes status.acceptedNames without bumping metadata.generation."""
    rec = Recorder()
    cache = rec.crd_cache()
    first = cache.get(make_crd(generation=3, short_names=()))
    fresh = cache.get(make_crd(generation=3, short_names=("wd",)))
    assert fresh is not first
    assert fresh.fingerprint == crd_fingerprint(make_crd(generation=3, short_names=("wd",)))
    assert rec.disposed == [first]


def test_served_version_flip_rebuilds() -> None:
    """A version marked served: false (the Cluster API upgrade of seed 2) must not keep serving the old value."""
    rec = Recorder()
    cache = rec.crd_cache()
    both = cache.get(make_crd(versions=(("v1beta1", True), ("v1", True))))
    flipped_same_gen = cache.get(make_crd(versions=(("v1beta1", False), ("v1", True))))
    assert flipped_same_gen is not both
    flipped_next_gen = cache.get(make_crd(generation=2, versions=(("v1beta1", False), ("v1", True))))
    assert flipped_next_gen is not flipped_same_gen
    assert len(rec.built) == 3


def _mutate(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = obj
        for p in parents:
            node = node[p]
        node[last] = value(node[last]) if callable(value) else value

    return apply


@pytest.mark.parametrize(
    ("change", "rebuilds"),
    [
        pytest.param(_mutate("status.acceptedNames.kind", "Gadget"), True, id="accepted-kind"),
        pytest.param(_mutate("status.acceptedNames.shortNames", ["wd", "wdg"]), True, id="short-name-added"),
        pytest.param(_mutate("status.acceptedNames.categories", ["all"]), True, id="category-added"),
        pytest.param(_mutate("status.acceptedNames.shortNames", lambda s: [*s, "x"][::-1]), True,
                     id="short-names-reordered-kept-as-published"),
        pytest.param(_mutate("status.acceptedNames", lambda d: dict(reversed(list(d.items())))), False,
                     id="dict-key-order"),
        pytest.param(_mutate("spec.versions", lambda vs: vs[::-1]), False, id="versions-reordered"),
        pytest.param(_mutate("spec.versions", lambda vs: [*vs, {"name": "v2", "served": True, "storage": False}]),
                     True, id="served-version-added"),
        pytest.param(_mutate("spec.versions", lambda vs: [*vs, {"name": "v2", "served": False, "storage": False}]),
                     True, id="unserved-version-added"),
        pytest.param(_mutate("status.storedVersions", ["v1", "v0"]), False, id="stored-versions"),
        pytest.param(_mutate("status.conditions", [{"type": "Established", "status": "True"}]), False,
                     id="conditions"),
        pytest.param(_mutate("metadata.name", "other.example.com"), False, id="name-is-not-identity"),
    ],
)
def test_crd_fingerprint_rebuild_table(change: Callable[[dict[str, Any]], None], rebuilds: bool) -> None:
    """At one generation, only acceptedNames and the served versions decide; key and version order do not."""
    rec = Recorder()
    cache = rec.crd_cache()
    base = make_crd(versions=(("v1", True), ("v1beta1", True)))
    first = cache.get(base)
    changed = copy.deepcopy(base)
    change(changed)
    assert (cache.get(changed) is not first) is rebuilds
    assert len(rec.built) == (2 if rebuilds else 1)


def test_delete_and_recreate_same_name_is_a_new_object() -> None:
    """A CRD deleted and recreated under the same name gets a new UID: a new entry, never the old value."""
    rec = Recorder()
    cache = rec.crd_cache()
    old = cache.get(make_crd(uid="uid-old", generation=5))
    new = cache.get(make_crd(uid="uid-new", generation=1))
    assert new is not old and new.uid == "uid-new"
    assert len(cache) == 2 and rec.disposed == []
    assert cache.prune(["uid-new"]) == 1
    assert rec.disposed == [old]
    assert "uid-old" not in cache and "uid-new" in cache
    assert cache.forget("uid-new") is True
    assert cache.forget("uid-new") is False
    assert rec.disposed == [old, new] and len(cache) == 0


def test_lower_generation_never_downgrades() -> None:
    """A lagging informer presenting an older object gets the newer value; the entry is not replaced."""
    rec = Recorder()
    cache = rec.crd_cache()
    newer = cache.get(make_crd(generation=7, kind="New"))
    assert cache.get(make_crd(generation=6, kind="Old")) is newer
    assert cache.get(make_crd(generation=0, kind="Old")) is newer
    assert len(rec.built) == 1 and cache.stats.stale_reads == 2
    assert cache.peek("uid-1") is newer


def test_equal_generation_latest_presented_wins() -> None:
    rec = Recorder()
    cache = rec.crd_cache()
    a = cache.get(make_crd(kind="A"))
    b = cache.get(make_crd(kind="B"))
    a2 = cache.get(make_crd(kind="A"))
    assert len({a.serial, b.serial, a2.serial}) == 3
    assert rec.disposed == [a, b]


def test_without_fingerprint_only_uid_and_generation_decide() -> None:
    builds: list[Any] = []

    def build(obj: Any) -> int:
        builds.append(obj)
        return len(builds)

    cache: GenerationCache[dict[str, Any], int] = GenerationCache(build)
    assert cache.get({"metadata": {"uid": "u", "generation": 1}, "data": "a"}) == 1
    assert cache.get({"metadata": {"uid": "u", "generation": 1}, "data": "b"}) == 1
    assert cache.get({"metadata": {"uid": "u"}, "data": "c"}) == 1  # no generation reads as 0: older
    assert cache.get({"metadata": {"uid": "u", "generation": 2}}) == 2


def test_real_crd_manifest_seed1(fixtures_dir: Path) -> None:
    """Seed 1 on a real manifest: cert-manager's Certificate CRD gains a short name, then a spec update."""
    manifest = yaml.safe_load((fixtures_dir / "crds" / "cert-manager" / "cert-manager.io_certificates.yaml")
                              .read_text())
    crd = copy.deepcopy(manifest)
    crd["metadata"].update(uid="6f0c9d7e", generation=1)
    crd["status"] = {"acceptedNames": copy.deepcopy(crd["spec"]["names"])}
    rec = Recorder()
    cache = rec.crd_cache()
    first = cache.get(crd)
    renamed = copy.deepcopy(crd)
    renamed["status"]["acceptedNames"]["shortNames"].append("crt")
    second = cache.get(renamed)
    updated = copy.deepcopy(renamed)
    updated["metadata"]["generation"] = 2
    updated["spec"]["versions"][0]["served"] = False
    third = cache.get(updated)
    assert [first.serial, second.serial, third.serial] == [1, 2, 3]
    assert cache.get(renamed) is third  # the informer lagging behind never brings back generation 1
    assert rec.disposed == [first, second]


# --- object shapes -----------------------------------------------------------------------------------------


def _client_model_crd(uid: str, generation: int, short_names: list[str]) -> Any:
    from kubernetes import client

    return client.V1CustomResourceDefinition(
        api_version="apiextensions.k8s.io/v1",
        kind="CustomResourceDefinition",
        metadata=client.V1ObjectMeta(name="widgets.example.com", uid=uid, generation=generation),
        spec=client.V1CustomResourceDefinitionSpec(
            group="example.com",
            scope="Namespaced",
            names=client.V1CustomResourceDefinitionNames(kind="Widget", plural="widgets"),
            versions=[client.V1CustomResourceDefinitionVersion(name="v1", served=True, storage=True)],
        ),
        status=client.V1CustomResourceDefinitionStatus(
            accepted_names=client.V1CustomResourceDefinitionNames(kind="Widget", plural="widgets",
                                                                  short_names=short_names),
            stored_versions=["v1"],
        ),
    )


def _resource_instance(obj: dict[str, Any]) -> Any:
    from kubernetes.dynamic.resource import ResourceInstance

    return ResourceInstance(None, copy.deepcopy(obj))  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda: make_crd("u", 4), id="dict"),
        pytest.param(lambda: _client_model_crd("u", 4, ["wd"]), id="V1CustomResourceDefinition"),
        pytest.param(lambda: _client_model_crd("u", 4, ["wd"]).to_dict(), id="client-model-to_dict-snake-case"),
        pytest.param(lambda: _resource_instance(make_crd("u", 4)), id="dynamic-ResourceInstance"),
    ],
)
def test_every_object_shape_reads_the_same(shape: Callable[[], Any]) -> None:
    obj = shape()
    assert object_uid_generation(obj) == ("u", 4)
    assert crd_fingerprint(obj) == crd_fingerprint(make_crd("u", 4))


def test_client_model_crd_accepted_names_change_rebuilds() -> None:
    rec = Recorder()
    cache = rec.crd_cache()
    first = cache.get(_client_model_crd("u", 1, ["wd"]))
    assert cache.get(_client_model_crd("u", 1, ["wd"])) is first
    assert cache.get(_client_model_crd("u", 1, ["wd", "wdg"])) is not first
    assert cache.get(_client_model_crd("u", 2, ["wd", "wdg"])).generation == 2


def test_plain_attribute_object() -> None:
    class Meta:
        def __init__(self, uid: str, generation: int) -> None:
            self.uid = uid
            self.generation = generation

    class Thing:
        def __init__(self, uid: str, generation: int) -> None:
            self.metadata = Meta(uid, generation)

    cache: GenerationCache[Any, tuple[str, int]] = GenerationCache(object_uid_generation)
    assert cache.get(Thing("t", 1)) == ("t", 1)
    assert cache.get(SimpleNamespace(metadata=SimpleNamespace(uid="t", generation=3))) == ("t", 3)
    assert cache.get(Thing("t", 2)) == ("t", 3)


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param({}, id="no-metadata"),
        pytest.param({"metadata": None}, id="metadata-null"),
        pytest.param({"metadata": {"name": "x"}}, id="no-uid"),
        pytest.param({"metadata": {"uid": None}}, id="uid-null"),
        pytest.param({"metadata": {"uid": ""}}, id="uid-empty"),
        pytest.param({"metadata": {"uid": 42}}, id="uid-not-a-string"),
        pytest.param({"metadata": {"uid": "u", "generation": "3"}}, id="generation-string"),
        pytest.param({"metadata": {"uid": "u", "generation": True}}, id="generation-bool"),
        pytest.param({"metadata": {"uid": "u", "generation": -1}}, id="generation-negative"),
        pytest.param({"metadata": {"uid": "u", "generation": 1.5}}, id="generation-float"),
        pytest.param(object(), id="plain-object"),
        pytest.param(SimpleNamespace(metadata=SimpleNamespace(uid=None, generation=1)), id="attr-uid-none"),
        pytest.param({"metadata": {"uid": "u"}, "spec": {"versions": "v1"}}, id="versions-not-a-list"),
        pytest.param({"metadata": {"uid": "u"}, "spec": {"versions": [{"served": True}]}}, id="version-no-name"),
        pytest.param({"metadata": {"uid": "u"}, "status": {"acceptedNames": {"kind": object()}}},
                     id="accepted-names-not-data"),
    ],
)
def test_bad_objects_raise_typed_error_and_cache_nothing(obj: Any) -> None:
    rec = Recorder()
    cache = rec.crd_cache()
    with pytest.raises(InvalidArgumentError):
        cache.get(obj)
    assert len(cache) == 0 and rec.built == [] and cache.stats.builds == 0


def test_prune_rejects_a_single_string() -> None:
    cache = Recorder().crd_cache()
    cache.get(make_crd("abc"))
    with pytest.raises(InvalidArgumentError):
        cache.prune("abc")
    assert "abc" in cache


def test_peek_contains_len_clear_and_repr_hide_values() -> None:
    rec = Recorder()
    cache = rec.crd_cache()
    assert cache.peek("a") is None and "a" not in cache and len(cache) == 0
    a = cache.get(make_crd("a"))
    b = cache.get(make_crd("b"))
    assert cache.peek("a") is a and "a" in cache and len(cache) == 2
    assert repr(cache) == "GenerationCache(entries=2, in_flight=0)"
    cache.clear()
    assert len(cache) == 0 and sorted(rec.disposed, key=lambda v: v.uid) == [a, b]
    assert cache.stats.builds == 2  # peek never builds


# --- dispose errors ----------------------------------------------------------------------------------------


class Secretive:
    def __repr__(self) -> str:
        return "Client(token=SECRET-TOKEN)"


def test_dispose_errors_are_logged_counted_and_never_break_get(caplog: pytest.LogCaptureFixture) -> None:
    def dispose(value: Secretive) -> None:
        raise RuntimeError("close failed")

    cache: GenerationCache[dict[str, Any], Secretive] = GenerationCache(lambda obj: Secretive(), dispose=dispose)
    first = cache.get(make_crd(generation=1))
    with caplog.at_level(logging.WARNING, logger="restmapper.store"):
        second = cache.get(make_crd(generation=2))
        assert cache.forget("uid-1") is True
    assert second is not first
    stats = cache.stats
    assert (stats.disposals, stats.dispose_errors) == (2, 2)
    records = [r for r in caplog.records if r.name == "restmapper.store"]
    assert len(records) == 2 and all(r.exc_info for r in records)
    assert "SECRET-TOKEN" not in caplog.text


# --- concurrency -------------------------------------------------------------------------------------------


def test_concurrent_gets_for_one_key_build_once(pool: ThreadPoolExecutor) -> None:
    release = threading.Event()
    rec = Recorder(hook=lambda obj: release.wait(TIMEOUT))
    cache = rec.crd_cache()
    futures = [pool.submit(cache.get, make_crd()) for _ in range(32)]
    poll_until(lambda: cache.stats.builds == 1 and cache.stats.waits == 31)
    assert len(cache) == 0  # nothing is visible before the build finishes
    release.set()
    results = [f.result(TIMEOUT) for f in futures]
    assert len(rec.built) == 1
    assert all(r is results[0] for r in results)
    assert cache.peek("uid-1") is results[0]


def test_different_keys_build_in_parallel(pool: ThreadPoolExecutor) -> None:
    """Both builds must be in progress at once: a global lock held while building would break the barrier."""
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    rec = Recorder(hook=lambda obj: barrier.wait())
    cache = rec.crd_cache()
    fa = pool.submit(cache.get, make_crd("a"))
    fb = pool.submit(cache.get, make_crd("b"))
    a, b = fa.result(TIMEOUT), fb.result(TIMEOUT)
    assert (a.uid, b.uid) == ("a", "b") and len(cache) == 2


def test_hits_on_other_keys_do_not_wait_for_a_build(pool: ThreadPoolExecutor) -> None:
    release = threading.Event()
    started = threading.Event()

    def hook(obj: Any) -> None:
        if object_uid_generation(obj)[0] == "slow":
            started.set()
            release.wait(TIMEOUT)

    rec = Recorder(hook=hook)
    cache = rec.crd_cache()
    fast = cache.get(make_crd("fast"))
    slow = pool.submit(cache.get, make_crd("slow"))
    assert started.wait(TIMEOUT)
    assert cache.get(make_crd("fast")) is fast
    assert cache.get(make_crd("other")).uid == "other"
    release.set()
    assert slow.result(TIMEOUT).uid == "slow"


class Boom(Exception):
    pass


def test_build_exception_reaches_every_waiter_and_caches_nothing(pool: ThreadPoolExecutor) -> None:
    release = threading.Event()
    calls = itertools.count()

    def build(obj: Any) -> int:
        n = next(calls)
        if n == 0:
            release.wait(TIMEOUT)
            raise Boom("first build fails")
        return n

    cache: GenerationCache[dict[str, Any], int] = GenerationCache.for_crds(build)
    futures: list[Future[int]] = [pool.submit(cache.get, make_crd()) for _ in range(8)]
    poll_until(lambda: cache.stats.waits == 7)
    release.set()
    errors = [f.exception(TIMEOUT) for f in futures]
    assert all(isinstance(e, Boom) for e in errors)
    assert "uid-1" not in cache and len(cache) == 0
    assert cache.stats.build_errors == 1
    assert cache.get(make_crd()) == 1  # the next get builds again


def test_failed_rebuild_keeps_nothing_stale_visible_to_newer_objects() -> None:
    fail = threading.Event()

    def build(obj: Any) -> int:
        if fail.is_set():
            raise Boom
        return object_uid_generation(obj)[1]

    cache: GenerationCache[dict[str, Any], int] = GenerationCache.for_crds(build)
    assert cache.get(make_crd(generation=1)) == 1
    fail.set()
    with pytest.raises(Boom):
        cache.get(make_crd(generation=2))
    with pytest.raises(Boom):  # never the generation-1 value for a generation-2 object
        cache.get(make_crd(generation=2))
    fail.clear()
    assert cache.get(make_crd(generation=2)) == 2


def _blocking_recorder(block_generation: int) -> tuple[Recorder, threading.Event, threading.Event]:
    started, release = threading.Event(), threading.Event()

    def hook(obj: Any) -> None:
        if object_uid_generation(obj)[1] == block_generation:
            started.set()
            release.wait(TIMEOUT)

    return Recorder(hook=hook), started, release


def test_newer_generation_does_not_take_an_in_flight_older_build(pool: ThreadPoolExecutor) -> None:
    """Generation 1 is building when generation 2 arrives: 2 builds at once and wins; 1 finishing late loses."""
    rec, started, release = _blocking_recorder(1)
    cache = rec.crd_cache()
    late = pool.submit(cache.get, make_crd(generation=1))
    assert started.wait(TIMEOUT)
    newer = cache.get(make_crd(generation=2))  # returns while the generation-1 build is still blocked
    assert newer.generation == 2 and cache.peek("uid-1") is newer
    release.set()
    assert late.result(TIMEOUT) is newer  # the stale build's callers get the newer value
    loser = next(v for v in rec.built if v.generation == 1)
    assert rec.disposed == [loser]
    assert cache.peek("uid-1") is newer


def test_older_generation_joins_an_in_flight_newer_build(pool: ThreadPoolExecutor) -> None:
    rec, started, release = _blocking_recorder(2)
    cache = rec.crd_cache()
    newer = pool.submit(cache.get, make_crd(generation=2))
    assert started.wait(TIMEOUT)
    older = pool.submit(cache.get, make_crd(generation=1))
    poll_until(lambda: cache.stats.waits == 1)
    release.set()
    assert older.result(TIMEOUT) is newer.result(TIMEOUT)
    assert len(rec.built) == 1 and rec.built[0].generation == 2


def test_same_generation_race_latest_presented_wins(pool: ThreadPoolExecutor) -> None:
    started, release = threading.Event(), threading.Event()

    def hook(obj: Any) -> None:
        if obj["status"]["acceptedNames"]["kind"] == "First":
            started.set()
            release.wait(TIMEOUT)

    rec = Recorder(hook=hook)
    cache = rec.crd_cache()
    first = pool.submit(cache.get, make_crd(kind="First"))
    assert started.wait(TIMEOUT)
    second = cache.get(make_crd(kind="Second"))
    release.set()
    assert first.result(TIMEOUT) is second
    assert cache.peek("uid-1") is second and len(rec.disposed) == 1


def test_forget_during_build_does_not_resurrect_the_entry(pool: ThreadPoolExecutor) -> None:
    rec, started, release = _blocking_recorder(1)
    cache = rec.crd_cache()
    pending = pool.submit(cache.get, make_crd(generation=1))
    assert started.wait(TIMEOUT)
    assert cache.forget("uid-1") is False  # nothing cached yet, but the build is cancelled
    release.set()
    value = pending.result(TIMEOUT)
    assert value.generation == 1
    assert "uid-1" not in cache and rec.disposed == [value]


def test_build_reentering_get_for_its_own_object_raises_instead_of_deadlocking() -> None:
    holder: list[GenerationCache[Any, Built]] = []

    def hook(obj: Any) -> None:
        older = copy.deepcopy(obj)
        older["metadata"]["generation"] -= 1
        holder[0].get(older)

    rec = Recorder(hook=hook)
    holder.append(rec.crd_cache())
    with pytest.raises(RestMapperError, match="called get"):
        holder[0].get(make_crd(generation=2))
    assert len(holder[0]) == 0


# --- property ----------------------------------------------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("get"), st.sampled_from("abc"), st.integers(0, 4), st.sampled_from(["K1", "K2", "K3"])),
        st.tuples(st.just("forget"), st.sampled_from("abc"), st.just(0), st.just("")),
        st.tuples(st.just("prune"), st.sampled_from(["", "a", "ab", "bc"]), st.just(0), st.just("")),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(ops)
def test_get_matches_max_generation_and_latest_fingerprint(sequence: list[tuple[str, str, int, str]]) -> None:
    """For any update sequence: the value comes from the max generation seen and the latest names at it."""
    rec = Recorder()
    cache = rec.crd_cache()
    model: dict[str, tuple[int, str]] = {}
    expected_builds = 0
    for op, uid, generation, kind in sequence:
        if op == "forget":
            model.pop(uid, None)
            cache.forget(uid)
            continue
        if op == "prune":
            for dead in set(model) - set(uid):
                del model[dead]
            cache.prune(list(uid))
            continue
        obj = make_crd(uid, generation, kind=kind)
        current = model.get(uid)
        if current is None or generation > current[0] or (generation == current[0] and kind != current[1]):
            model[uid] = (generation, kind)
            expected_builds += 1
        value = cache.get(obj)
        want_generation, want_kind = model[uid]
        assert (value.uid, value.generation) == (uid, want_generation)
        assert value.fingerprint == crd_fingerprint(make_crd(uid, want_generation, kind=want_kind))
        assert cache.peek(uid) is value
    assert cache.stats.builds == expected_builds == len(rec.built)
    assert set(model) == {uid for uid in "abc" if uid in cache}
    cache.clear()
    assert sorted(v.serial for v in rec.disposed) == [v.serial for v in rec.built]  # each exactly once
