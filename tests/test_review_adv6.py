"""Adversarial review adv6: the renewal fast path, RootDiscovery reuse, the lazy answer table, and the drop-in's
one-keyword warm paths. F1 (the renewal fast path lost after any real change of ``/apis``) failed on 2a841df; the
rest held and stay as regression tests. Left alone, noted: a value that only compares equal to a str short name
(not a str) gets that name's memoized answer in the drop-in, as upstream's equality filter would give it."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from dynamic_helpers import crd as dcrd
from test_dynamic_answers_across_refreshes import MODES, A, _cluster, _discoverer
from test_renew_unchanged import GROUPS, count_rebuilds, crd

from restmapper import GroupKind, GroupVersionResource
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.errors import RestMapperError
from restmapper.mapper import LazyRESTMapper
from restmapper.model import APIResource, GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

ODD: list[dict[str, Any]] = [
    {"short_names": ["al"]}, {"short_names": ("al",)}, {"short_names": "al"}, {"short_names": ["al", "al"]},
    {"short_names": []}, {"short_names": None}, {"short_names": [1]}, {"short_names": [True]},
    {"short_names": [["al"]]}, {"short_names": [{"al"}]}, {"short_names": [None]}, {"short_names": ["AL"]},
    {"short_names": ["al", "be"]}, {"short_names": ["al"], "kind": "Alpha"},
    {"kind": "Alpha", "short_names": ["al"]}, {"kind": ["Alpha"]}, {"kind": ("Alpha",)}, {"name": ["alphas"]},
    {"kind": "Alpha", "api_version": ["v1"]}, {"categories": ["alphacat"]}, {"categories": "alphacat"},
    {"verbs": ["get"]}, {"kind": 1}, {"kind": True}, {"namespaced": True}, {"namespaced": 1},
    {"kind": "Alpha", "namespaced": True}, {"kind": "Alpha", "namespaced": 1}, {"bogus": "x"},
    {"short_names": [b"al"]}, {"short_names": ["al"], "bogus": 1}, {}, {"short_names": [0.0]}, {"short_names": [0]},
]


def _outcome(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            answer = getattr(resources, method)(**kwargs)
        except Exception as exc:
            return ("raised", type(exc).__name__)
    if method == "search":
        return [(r.group_version, r.kind, r.name) for r in answer]
    return (answer.group_version, answer.kind, answer.name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["get", "search"])
def test_odd_dropin_arguments_answer_warm_as_cold(mode: str, method: str) -> None:
    """Each odd question asked in turn on one warm discoverer (held answers of the others around) answers as a
    new discoverer asked only that question."""
    cluster = _cluster(mode)
    warm = _discoverer(cluster)
    warm.search(kind="Namespace")
    got: dict[int, list[Any]] = {}
    for _ in range(3):  # cold, memoized, held
        for i, kwargs in enumerate(ODD):
            got.setdefault(i, []).append(_outcome(warm, method, dict(kwargs)))
    for i, kwargs in enumerate(ODD):
        fresh = _outcome(_discoverer(cluster), method, dict(kwargs))
        assert got[i] == [fresh] * 3, (kwargs, got[i], fresh)


# --- 1. the renewal fast path ----------------------------------------------------------------------------------


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


# --- 2. RootDiscovery reuse ------------------------------------------------------------------------------------


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


# --- 4. the drop-in's short-name table across changes ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tell", ["group", "all", "ttl"])
def test_a_held_short_name_follows_a_crd_change(mode: str, tell: str) -> None:
    cluster = _cluster(mode)
    resources = _discoverer(cluster)
    resources.search(kind="Namespace")
    qs: list[dict[str, Any]] = [{"short_names": ["al"]}, {"short_names": ["alx"]}, {"short_names": ["al", "alx"]},
                                {"short_names": "al"}, {"short_names": ("al",)}]
    for _ in range(3):
        [_outcome(resources, "get", dict(q)) for q in qs]
    alpha = dcrd(A, "Alpha", short_names=("alx",))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.update_crd(alpha)
    if tell == "group":
        resources.mapper.invalidate_group(A)
    elif tell == "all":
        resources.mapper.invalidate_all()
    else:
        resources._clock.advance(10_000)  # type: ignore[attr-defined]
    for _ in range(3):
        got = [_outcome(resources, "get", dict(q)) for q in qs]
        assert got == [_outcome(_discoverer(cluster), "get", dict(q)) for q in qs]


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
