"""Remembered and racing answers are never confidently wrong (DESIGN 5.10).

An answer that may come from any group depends on the set of groups that failed or are served stale: when a
group that outranks the answer becomes troubled, the memoized answer is not replayed (a fresh mapper raises
``GroupDiscoveryError``; so must a warm one).

An invalidation that lands inside a lookup never turns into a no-match for a kind that is served throughout.
The interleaving is made deterministic by a hook that invalidates the group right after the cache reported every
group loaded (the window a watcher's ``invalidate_group`` hits in threaded runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from restmapper import APIResource, GroupDiscoveryError, GroupVersion, GroupVersionResource
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest

MODES = ["aggregated", "legacy"]
GVR = GroupVersionResource


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _core(cluster: FakeCluster) -> None:
    cluster.add_api_resources("v1", [
        APIResource("pods", "pod", True, "Pod", ("get", "list"), ("po",), ("all",)),
        APIResource("configmaps", "configmap", True, "ConfigMap", ("get", "list"), ("cm",), ()),
    ])


def _outranked_cluster(mode: str) -> FakeCluster:
    """Core, a.example.com (Gadget, v1 and v2) outranking b.example.com (Widget, short ``w``, category ``stuff``)."""
    cluster = FakeCluster.empty(mode=mode)
    _core(cluster)
    cluster.add_crd(crd_manifest("a.example.com", "Gadget", versions=("v1", "v2")))
    cluster.add_crd(crd_manifest("b.example.com", "Widget", versions=("v1",), short_names=("w",),
                                 categories=("stuff",)))
    return cluster


def _mapper(cluster: FakeCluster, clock: Callable[[], float], **options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, **options)


QUESTIONS: dict[str, Callable[[LazyRESTMapper], Any]] = {
    "kind_for": lambda m: m.kind_for(GVR("", "", "widgets")),
    "resolve short": lambda m: m.resolve("w"),
    "resolve plural": lambda m: m.resolve("widgets"),
    "resolve kind": lambda m: m.resolve("Widget"),
    "expand_category": lambda m: m.expand_category("stuff"),
    "resources_for": lambda m: m.resources_for(GVR("", "", "widgets")),
    "resources_for core": lambda m: m.resources_for(GVR("", "", "configmaps")),
}


def _outcome(ask: Callable[[LazyRESTMapper], Any], mapper: LazyRESTMapper) -> tuple[str, str]:
    try:
        return "ok", repr(ask(mapper))
    except Exception as exc:  # the outcome is compared, whatever it is
        return "error", type(exc).__name__


@pytest.mark.parametrize("how", ["invalidate_group", "report_not_found", "ttl_none"])
def test_a_memoized_answer_does_not_survive_an_outranking_group_going_stale(mode: str, how: str) -> None:
    cluster = _outranked_cluster(mode)
    clock = ManualClock()
    ttl = None if how == "ttl_none" else 300
    mapper = _mapper(cluster, clock, ttl=ttl, max_stale=0)
    for ask in QUESTIONS.values():
        assert _outcome(ask, mapper)[0] == "ok"
    cluster.set_stale("a.example.com/v2", True)
    if how == "report_not_found":
        mapper.report_not_found(GroupVersion("a.example.com", "v2"))
    else:
        mapper.invalidate_group("a.example.com")
    clock.advance(2)
    fresh = _mapper(cluster, ManualClock(), ttl=ttl, max_stale=0)
    for name, ask in QUESTIONS.items():
        assert _outcome(ask, mapper) == _outcome(ask, fresh), name
    # The rule holds: what could be outranked by the unreadable a.example.com/v2 is not answered.
    with pytest.raises(GroupDiscoveryError):
        mapper.kind_for(GVR("", "", "widgets"))
    # Healed and invalidated again: the answers come back (the troubled set left a.example.com).
    cluster.set_stale("a.example.com/v2", False)
    mapper.invalidate_group("a.example.com")
    clock.advance(120)  # past any retry backoff
    healed = _mapper(cluster, ManualClock(), ttl=ttl, max_stale=0)
    for name, ask in QUESTIONS.items():
        assert _outcome(ask, mapper) == _outcome(ask, healed), name
        assert _outcome(ask, mapper)[0] == "ok", name


def test_an_empty_category_is_not_remembered_past_a_group_going_stale(mode: str) -> None:
    cluster = _outranked_cluster(mode)
    clock = ManualClock()
    mapper = _mapper(cluster, clock, ttl=300, max_stale=0)
    assert mapper.expand_category("nope") == []
    cluster.set_stale("a.example.com/v2", True)
    mapper.invalidate_group("a.example.com")
    clock.advance(2)
    with pytest.raises(GroupDiscoveryError):
        mapper.expand_category("nope")


def _race_cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster.empty(mode=mode)
    _core(cluster)
    for i in range(4):
        cluster.add_crd(crd_manifest(f"g{i}.example.org", f"K{i}", versions=("v1", "v2"), short_names=(f"k{i}",)))
    return cluster


def _invalidate_after_ensure_all(mapper: LazyRESTMapper, invalidate: Callable[[], None], times: int = 1
                                 ) -> list[int]:
    """Make the next ``times`` ``ensure_all`` calls of the mapper's cache be followed by ``invalidate()`` before
    their caller sees the result: the invalidation lands inside the lookup, after every group was loaded."""
    cache = mapper.cache
    original = cache.ensure_all
    fired: list[int] = []

    def ensure_all() -> float:
        until = original()
        if len(fired) < times:
            fired.append(1)
            invalidate()
        return until

    cache.ensure_all = ensure_all  # type: ignore[method-assign]
    return fired


RACE_QUESTIONS: dict[str, Callable[[LazyRESTMapper], Any]] = {
    "kind_for": lambda m: m.kind_for(GVR("", "", "k2s")),
    "resolve short": lambda m: m.resolve("k2"),
    "resolve plural": lambda m: m.resolve("k2s"),
    "resources_for": lambda m: m.resources_for(GVR("", "", "k2s")),
}


@pytest.mark.parametrize("question", sorted(RACE_QUESTIONS))
@pytest.mark.parametrize("what", ["group", "all"])
def test_an_invalidation_inside_a_lookup_is_never_a_no_match(mode: str, what: str, question: str) -> None:
    cluster = _race_cluster(mode)
    clock = ManualClock()
    mapper = _mapper(cluster, clock, ttl=300)
    ask = RACE_QUESTIONS[question]
    expected = ask(_mapper(cluster, ManualClock(), ttl=300))
    assert mapper.resolve("po").resource.resource == "pods"  # every group loaded and indexed; the question is new
    invalidate = (lambda: mapper.invalidate_group("g2.example.org")) if what == "group" else mapper.invalidate_all
    invalidate()
    fired = _invalidate_after_ensure_all(mapper, invalidate)
    assert ask(mapper) == expected
    assert fired, "the hook never ran: the test did not interleave anything"
    # Nothing wrong was remembered either.
    assert ask(mapper) == expected


def test_an_invalidation_racing_every_retry_is_a_discovery_error_not_a_no_match(mode: str) -> None:
    cluster = _race_cluster(mode)
    mapper = _mapper(cluster, ManualClock(), ttl=300)
    assert mapper.resolve("po").resource.resource == "pods"
    mapper.invalidate_group("g2.example.org")
    _invalidate_after_ensure_all(mapper, lambda: mapper.invalidate_group("g2.example.org"), times=1000)
    try:
        found = mapper.kind_for(GVR("", "", "k2s"))
    except GroupDiscoveryError as exc:
        assert "k2s" in str(exc)
    else:
        assert found.kind == "K2"


# --- the kubernetes.dynamic drop-in ----------------------------------------------------------------------------


def _drop_in(cluster: FakeCluster) -> Any:
    kclient = pytest.importorskip("kubernetes.client")
    dynamic = pytest.importorskip("kubernetes.dynamic")
    from restmapper.dynamic import SelfHealingDiscoverer

    config = kclient.Configuration()
    config.host = "https://kube.restmapper.test"
    return dynamic.DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock())).resources


DROP_IN_QUESTIONS: dict[str, dict[str, Any]] = {
    "kind": {"kind": "K2"},
    "short name": {"short_names": ["k2"]},
    "name": {"name": "k2s"},
}


@pytest.mark.parametrize("question", sorted(DROP_IN_QUESTIONS))
@pytest.mark.parametrize("what", ["group", "all"])
def test_an_invalidation_inside_a_drop_in_lookup_is_never_resource_not_found(mode: str, what: str,
                                                                              question: str) -> None:
    cluster = _race_cluster(mode)
    resources = _drop_in(cluster)
    mapper = resources.mapper
    kwargs = DROP_IN_QUESTIONS[question]
    assert resources.get(kind="Pod").kind == "Pod"  # every group loaded and indexed; the question is new
    invalidate = (lambda: mapper.invalidate_group("g2.example.org")) if what == "group" else mapper.invalidate_all
    invalidate()
    fired = _invalidate_after_ensure_all(mapper, invalidate)
    found = resources.get(**kwargs)
    assert (found.group, found.kind) == ("g2.example.org", "K2")
    assert fired, "the hook never ran: the test did not interleave anything"
    assert resources.get(**kwargs).kind == "K2"


def test_a_drop_in_lookup_raced_on_every_retry_is_a_discovery_error(mode: str) -> None:
    cluster = _race_cluster(mode)
    resources = _drop_in(cluster)
    mapper = resources.mapper
    assert resources.get(kind="Pod").kind == "Pod"
    mapper.invalidate_group("g2.example.org")
    _invalidate_after_ensure_all(mapper, lambda: mapper.invalidate_group("g2.example.org"), times=1000)
    try:
        found = resources.get(kind="K2")
    except GroupDiscoveryError:
        pass
    else:
        assert found.kind == "K2"


@pytest.mark.parametrize("how", ["invalidate_group", "ttl"])
def test_the_async_front_end_does_not_replay_an_outranked_answer(mode: str, how: str) -> None:
    import asyncio

    from restmapper.aio import AsyncRESTMapper

    cluster = _outranked_cluster(mode)
    clock = ManualClock()
    front = AsyncRESTMapper(_mapper(cluster, clock, ttl=300, max_stale=0))

    async def scenario() -> None:
        assert (await front.resolve("w")).resource.group == "b.example.com"
        assert front.cached_resolve("w") is not None  # answered inline while warm
        cluster.set_stale("a.example.com/v2", True)
        if how == "invalidate_group":
            front.invalidate_group("a.example.com")
            clock.advance(2)
        else:
            clock.advance(301)  # every group expired; another lookup reloads them (a.example.com now troubled)
            with pytest.raises(GroupDiscoveryError):
                await front.resolve("Gadget")
        assert front.cached_resolve("w") is None
        with pytest.raises(GroupDiscoveryError):
            await front.resolve("w")

    asyncio.run(scenario())
