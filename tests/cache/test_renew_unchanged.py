"""A revalidation that finds ``/apis`` unchanged renews its groups' entries; it rebuilds none of them.

Rule: installing an aggregated document again (a 304, or the same document after an invalidation elsewhere)
changes a healthy group's entry in its fetch time only: same content generation, same resource lists (nothing
converted or compared again), answers memoized from it stay valid. Any group whose entry is not a plain copy of
what the document says (evicted, failed, stale, outdated, a new document's content) is rebuilt from the document.

The renewal holds across the awkward sequences too: a real change of ``/apis`` then 304s, ``/api`` changing (or
switching between legacy and aggregated) while ``/apis`` answers 304, a 304 after an eviction or after an outage
served stale, groups first read one by one; and a replaced ``/apis`` document is let go.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from restmapper import GroupKind, GroupVersionResource
from restmapper.cache import _state
from restmapper.discovery import DiscoveryClient
from restmapper.errors import GroupDiscoveryError, RestMapperError
from restmapper.mapper import LazyRESTMapper
from restmapper.model import APIResource, GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

crd = crd_manifest  # reviews of this file import it

GROUPS = [f"g{i}.example.com" for i in range(20)]


def count_rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the groups whose entry is built from an aggregated document from now on, in order."""
    rebuilt: list[str] = []
    upstream = _state.aggregated_parts

    def counting(root: Any, g: Any, stale: Any) -> Any:
        rebuilt.append(g.name)
        return upstream(root, g, stale)

    monkeypatch.setattr(_state, "aggregated_parts", counting)
    return rebuilt


@pytest.fixture
def setup(monkeypatch: pytest.MonkeyPatch) -> Any:
    cluster = FakeCluster(crds=[crd(g, f"Widget{i}") for i, g in enumerate(GROUPS)])
    clock = ManualClock()
    rebuilt = count_rebuilds(monkeypatch)
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url,
                                                                  retry=RetryPolicy(max_attempts=1))),
                                clock=clock, ttl=60)
        mapper.expand_category("all")  # every group loaded and indexed
        yield cluster, clock, mapper, rebuilt


def test_a_304_renews_every_healthy_group_and_rebuilds_none(setup: Any) -> None:
    cluster, clock, mapper, rebuilt = setup
    before = {g: mapper.cache.entry(g) for g in GROUPS}
    answers = {g: mapper.rest_mapping(GroupKind(g, f"Widget{i}")) for i, g in enumerate(GROUPS)}
    rebuilt.clear()
    clock.advance(61)  # every entry expired: the next lookup revalidates /api and /apis
    cluster.clear_requests()
    assert mapper.rest_mapping(GroupKind(GROUPS[3], "Widget3")) is answers[GROUPS[3]]
    assert mapper.stats.not_modified >= 1
    assert [r.path for r in cluster.requests if r.path.startswith("/apis")] == ["/apis"]
    assert rebuilt == []
    for g in GROUPS:
        entry, old = mapper.cache.entry(g), before[g]
        assert entry is not None and old is not None
        assert entry.fetched_at == clock()  # renewed: fresh for another TTL
        assert entry.generation == old.generation and entry.resources is old.resources
    cluster.clear_requests()
    for i, g in enumerate(GROUPS):  # answers memoized before the revalidation stand, with no request
        assert mapper.rest_mapping(GroupKind(g, f"Widget{i}")) == answers[g]
    assert cluster.requests == []


def test_an_evicted_group_is_rebuilt_from_the_same_document_and_only_it(setup: Any) -> None:
    _, _, mapper, rebuilt = setup
    rebuilt.clear()
    mapper.invalidate_group(GROUPS[5])
    assert mapper.kind_for(GroupVersionResource(GROUPS[5], "v1", "widget5s")).kind == "Widget5"
    assert rebuilt == [GROUPS[5]]
    assert mapper.cache.entry(GROUPS[5]) is not None


def test_a_changed_document_is_read_for_every_group(setup: Any) -> None:
    cluster, clock, mapper, rebuilt = setup
    cluster.add_crd(crd(GROUPS[7], "Gadget"))  # same group, one more kind: a new /apis document
    rebuilt.clear()
    clock.advance(61)
    assert mapper.rest_mapping(GroupKind(GROUPS[7], "Gadget")).resource.resource == "gadgets"
    assert set(GROUPS) <= set(rebuilt)  # a new document: every group read from it
    assert mapper.rest_mapping(GroupKind(GROUPS[6], "Widget6")).resource.resource == "widget6s"


def test_a_stale_version_is_never_renewed_as_healthy(setup: Any) -> None:
    cluster, clock, mapper, rebuilt = setup
    cluster.set_stale(f"{GROUPS[2]}/v1")
    clock.advance(61)
    rebuilt.clear()
    with pytest.raises(GroupDiscoveryError):  # never a confident no-match over a stale version
        mapper.rest_mapping(GroupKind(GROUPS[2], "Nope"))
    assert GROUPS[2] in rebuilt
    entry = mapper.cache.entry(GROUPS[2])
    assert entry is None or entry.failed or entry.stale
    cluster.set_stale(f"{GROUPS[2]}/v1", False)
    clock.advance(61)
    rebuilt.clear()
    assert mapper.rest_mapping(GroupKind(GROUPS[2], "Widget2")).resource.resource == "widget2s"
    assert GROUPS[2] in rebuilt  # the document changed back: read again, never renewed from the failed entry
    entry = mapper.cache.entry(GROUPS[2])
    assert entry is not None and not entry.failed and not entry.stale


def test_a_revalidation_that_finds_nothing_changed_reuses_the_root_discovery(setup: Any) -> None:
    cluster, _, mapper, _ = setup
    client = mapper.cache.discovery
    first = client.fetch_named()
    again = client.fetch_named()
    assert again.not_modified and again is client.fetch_named()
    assert first.groups == again.groups
    cluster.add_crd(crd("new.example.com", "Fresh"))
    changed = client.fetch_named()
    assert not changed.not_modified and changed is not again
    assert any(g.name == "new.example.com" for g in changed.groups)


def test_after_a_real_change_of_apis_unchanged_groups_are_renewed_on_the_next_304(setup: Any) -> None:
    """A new /apis document (one CRD added anywhere) must not keep an unchanged group's entry on its part of the
    old document, where no later 304 would renew it: every revalidation rebuilt and compared every group again."""
    cluster, clock, mapper, rebuilt = setup
    before = {g: mapper.cache.entry(g) for g in GROUPS}
    cluster.add_crd(crd("new.example.com", "Fresh"))
    clock.advance(61)
    assert mapper.rest_mapping(GroupKind("new.example.com", "Fresh")).resource.resource == "freshs"
    for g in GROUPS:  # read from the new document, the same content: the same generation, answers stand
        entry, old = mapper.cache.entry(g), before[g]
        assert entry is not None and old is not None and entry.generation == old.generation
    for _ in range(2):
        rebuilt.clear()
        clock.advance(61)  # nothing changed since: a 304
        assert mapper.rest_mapping(GroupKind(GROUPS[3], "Widget3")).resource.resource == "widget3s"
        assert [g for g in rebuilt if g in GROUPS] == []


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Any:
    cluster = FakeCluster(crds=[crd(g, f"Widget{i}") for i, g in enumerate(GROUPS)])
    clock = ManualClock()
    rebuilt = count_rebuilds(monkeypatch)
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, ttl=60)
    mapper.expand_category("all")
    return cluster, clock, mapper, rebuilt


def test_after_one_real_change_of_apis_the_unchanged_groups_are_renewed_on_the_next_304(counted: Any) -> None:
    """One CRD added anywhere (a new /apis document) keeps each unchanged group's entry on its part of the OLD
    document (same_resources); from then on no 304 renews them: every later revalidation rebuilds and compares
    all of them again, the cost the fast path was meant to remove."""
    cluster, clock, mapper, rebuilt = counted
    cluster.add_crd(crd("new.example.com", "Fresh"))
    clock.advance(61)
    assert mapper.rest_mapping(GroupKind("new.example.com", "Fresh")).resource.resource == "freshs"
    rebuilt.clear()
    clock.advance(61)  # nothing changed since: a 304
    before = mapper.stats.not_modified
    assert mapper.rest_mapping(GroupKind(GROUPS[3], "Widget3")).resource.resource == "widget3s"
    assert mapper.stats.not_modified > before
    first = [g for g in rebuilt if g in GROUPS]
    rebuilt.clear()
    clock.advance(61)  # and again: the entries still read the old document's parts
    assert mapper.rest_mapping(GroupKind(GROUPS[3], "Widget3")).resource.resource == "widget3s"
    again = [g for g in rebuilt if g in GROUPS]
    entry = mapper.cache.entry(GROUPS[3])
    assert entry is not None
    assert (first, again) == ([], []), f"rebuilt on the 1st 304: {len(first)}, on the 2nd: {len(again)}"


FROB = APIResource("frobs", "frob", True, "Frob", ("get", "list"), ("fr",), ("all",))


POD = APIResource("pods", "pod", True, "Pod", ("get", "list"), ("po",), ("all",))


def _answer(call: Any, *args: Any) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", str(call(*args)))
    except RestMapperError as exc:
        return ("error", type(exc).__name__)


@pytest.mark.parametrize("mode", ["aggregated", "aggregated-v2beta1"])
def test_api_changing_while_apis_answers_304(mode: str) -> None:
    cluster = FakeCluster(crds=[crd(g, f"Widget{i}") for i, g in enumerate(GROUPS[:3])], mode=mode)
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, ttl=60)
    mapper.expand_category("all")
    assert mapper.resolve("po").resource.resource == "pods"
    client = DiscoveryClient(InProcessTransport(cluster))
    root = client.fetch_root()
    assert client.fetch_root() is client.fetch_root()
    cluster.add_api_resources("v1", [FROB])  # /api changes (core v1 now serves frobs alone); /apis does not
    clock.advance(61)
    again = client.fetch_root()
    assert again is not root and not again.not_modified
    assert again.resources is not None and GroupVersion("", "v1") in again.resources
    assert [r.name for r in again.resources[GroupVersion("", "v1")].resources] == ["frobs"]
    questions = [(m, n) for n in ("fr", "frob", "frobs", "Frob", "po", "pods", "Pod") for m in ("resolve", "kind_for")]

    def ask(m: LazyRESTMapper, q: tuple[str, str]) -> Any:
        if q[0] == "resolve":
            return _answer(m.resolve, q[1])
        return _answer(m.kind_for, GroupVersionResource("", "", q[1]))

    fresh = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    assert [ask(mapper, q) for q in questions] == [ask(fresh, q) for q in questions]
    assert _answer(mapper.expand_category, "all") == _answer(fresh.expand_category, "all")
    cluster.add_api_resources("v1", [POD])  # and back
    clock.advance(61)
    fresh = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    assert [ask(mapper, q) for q in questions] == [ask(fresh, q) for q in questions]


LEGACY_API = '{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}'


def test_fetch_root_over_legacy_and_aggregated_api_combinations() -> None:
    cluster = FakeCluster(crds=[crd(g, f"Widget{i}") for i, g in enumerate(GROUPS[:2])])
    client = DiscoveryClient(InProcessTransport(cluster))
    agg = client.fetch_root()
    assert agg.aggregated and agg.resources is not None
    fault = cluster.inject("/api", status=200, body=LEGACY_API, content_type="application/json")
    mixed = client.fetch_root()  # /api legacy now, /apis 304
    assert mixed is not agg and not mixed.aggregated and mixed.resources is None and not mixed.not_modified
    again = client.fetch_root()  # /api the same legacy body (no ETag), /apis 304
    assert not again.aggregated and again.resources is None
    fault.remove()
    back = client.fetch_root()  # /api aggregated again (new document), /apis 304
    assert back.aggregated and back.resources is not None and not back.not_modified
    assert back is not agg and back.groups == agg.groups
    assert client.fetch_root() is client.fetch_root()  # both 304 now
    fault = cluster.inject("/api", status=404)
    gone = client.fetch_root()
    assert [g.name for g in gone.groups][:1] != [""]
    assert client.fetch_root() is not agg
    fault.remove()
    assert client.fetch_root().groups[0].name == ""


def _questions_about(mapper: LazyRESTMapper, i: int) -> list[Any]:
    g = GROUPS[i]
    return [_answer(mapper.rest_mapping, GroupKind(g, f"Widget{i}")),
            _answer(mapper.rest_mapping, GroupKind(g, "Nope")), _answer(mapper.resolve, f"widget{i}s"),
            _answer(mapper.kind_for, GroupVersionResource("", "", f"widget{i}")),
            _answer(mapper.resolve, "nothing-at-all"), _answer(mapper.expand_category, "all")]


@pytest.mark.parametrize("step", ["report_not_found", "invalidate_group", "invalidate_all"])
def test_a_304_after_an_eviction_answers_as_a_fresh_mapper(counted: Any, step: str) -> None:
    cluster, clock, mapper, _ = counted
    before = _questions_about(mapper, 5)
    if step == "report_not_found":
        mapper.report_not_found(GroupVersion(GROUPS[5], "v1"))
    elif step == "invalidate_group":
        mapper.invalidate_group(GROUPS[5])
    else:
        mapper.invalidate_all()
    clock.advance(2)
    fresh = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    assert _questions_about(mapper, 5) == _questions_about(fresh, 5) == before
    clock.advance(61)
    assert _questions_about(mapper, 5) == before


def test_an_outage_served_stale_then_a_304(counted: Any) -> None:
    cluster, clock, mapper, _ = counted
    before = [_questions_about(mapper, i) for i in (4, 5)]
    fault = cluster.inject("/apis", status=503)
    clock.advance(61)
    during = [_questions_about(mapper, i) for i in (4, 5)]
    mapper.invalidate_group(GROUPS[5])  # changed, says a watcher, while /apis cannot be read
    clock.advance(2)
    [_questions_about(mapper, i) for i in (4, 5)]
    entry = mapper.cache.entry(GROUPS[5])
    assert entry is None or entry.outdated or entry.stale or entry.failed
    fault.remove()
    clock.advance(2)
    after = [_questions_about(mapper, i) for i in (4, 5)]
    fresh = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    assert after == [_questions_about(fresh, i) for i in (4, 5)] == before, during
    entry = mapper.cache.entry(GROUPS[5])
    assert entry is not None and not (entry.outdated or entry.stale or entry.failed)
    clock.advance(61)  # a plain 304 now: renewed
    assert [_questions_about(mapper, i) for i in (4, 5)] == before


def test_groups_first_read_one_by_one_are_renewed_on_a_304(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold mapper's first lookups of one named group read the /apis listing then that group's own document;
    a later lookup over every group reads the aggregated /apis. The groups read one by one keep their entries
    (equal content), which never read the document's parts: no 304 renews them."""
    cluster = FakeCluster(crds=[crd(g, f"Widget{i}") for i, g in enumerate(GROUPS)])
    clock = ManualClock()
    rebuilt = count_rebuilds(monkeypatch)
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, ttl=60)
    for i in range(5):
        assert mapper.rest_mapping(GroupKind(GROUPS[i], f"Widget{i}")).resource.resource == f"widget{i}s"
    cluster.clear_requests()
    mapper.expand_category("all")
    assert any(r.path == "/apis" for r in cluster.requests)
    for _ in range(2):
        rebuilt.clear()
        clock.advance(61)
        before = mapper.stats.not_modified
        mapper.expand_category("all")
        assert mapper.stats.not_modified > before
        assert [g for g in rebuilt if g in GROUPS[:5]] == []


def test_a_replaced_apis_document_is_let_go(counted: Any) -> None:
    import gc
    import weakref

    cluster, clock, mapper, _ = counted
    client = mapper.cache.discovery
    client.fetch_root()  # a fetch_root on the cache's client too: the /apis document holds what it built
    old = client._documents["/apis"]
    dead = weakref.ref(old)
    parsed = weakref.ref(old.parsed)
    built = [(k, weakref.ref(r)) for k, (_, r) in old.built.items()]
    del old
    cluster.add_crd(crd("new.example.com", "Fresh"))
    clock.advance(61)
    assert mapper.rest_mapping(GroupKind("new.example.com", "Fresh")).resource.resource == "freshs"
    client.fetch_root()
    mapper.expand_category("all")  # (EntryTable._all_loaded holds the old root until a lookup over every group)
    gc.collect()
    alive = [k for k, r in built if r() is not None]
    holders = [type(h).__name__ + (str(list(h)[:1]) if isinstance(h, tuple) else "") for k, r in built
               if r() is not None for h in gc.get_referrers(r())]
    assert dead() is None and parsed() is None and not alive, (alive, holders)
