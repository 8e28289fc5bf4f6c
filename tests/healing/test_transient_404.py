"""A group version that answers 404 while its group still lists it (DESIGN 5.2 and 5.10).

kube-aggregator answers 404 on ``/apis/<g>/<v>`` for a moment while an APIService registers, and a CRD version
that just stopped being served 404s before the listing drops it. The cache then leaves the version out of the
group's served versions (the same lookup re-lists and retries once first). Two rules follow:

1. Such a version does not stay out for a TTL: once ``miss_refresh_interval`` has passed, a lookup that finds no
   match asks the server about every listed version that could hold the answer again before it says no-match
   (through the mapper's ``rest_mapping``/``kind_for``/``resolve`` and through the drop-in discoverer).
2. A version that keeps answering 404 is asked about at most once per ``miss_refresh_interval`` round (the fetch
   that found the 404 and the one retry after re-listing), however many lookups miss: misses stay rate-limited.

Every test talks to a FakeCluster in-process or through ``responses``; time is a ManualClock; nothing sleeps.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from restmapper import (
    GroupDiscoveryError,
    GroupKind,
    GroupVersionResource,
    LazyRESTMapper,
    PartialDiscoveryWarning,
    is_no_match,
)
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.errors import MappingError
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

G = "g3.example.com"
MODES = ["legacy", "aggregated"]
DEPLOYMENT = GroupKind("apps", "Deployment")  # a warm-up that reads one other group only
NOT_FOUND: dict[str, Any] = dict(status=404, body="404 page not found", content_type="text/plain")

# A named group's kind, in each of the mapper's question shapes (the first three name the group).
SHAPES: dict[str, Callable[[LazyRESTMapper], object]] = {
    "rest_mapping": lambda m: m.rest_mapping(GroupKind(G, "Widget")),
    "rest_mapping_v1": lambda m: m.rest_mapping(GroupKind(G, "Widget"), "v1"),
    "kind_for": lambda m: m.kind_for(GroupVersionResource(G, "", "widgets")),
    "kind_for_v1": lambda m: m.kind_for(GroupVersionResource(G, "v1", "widgets")),
    "resolve_group": lambda m: m.resolve(f"widgets.{G}"),
    "resolve_version": lambda m: m.resolve(f"widgets.v1.{G}"),
    "resolve_kind": lambda m: m.resolve("Widget"),
    "resolve_plural": lambda m: m.resolve("widgets"),
}


def cluster_with(mode: str, versions: tuple[str, ...] = ("v1",)) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd_manifest(G, "Widget", versions=versions))
    return cluster


def mapper_for(cluster: FakeCluster, clock: ManualClock) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)


def gv_requests(cluster: FakeCluster) -> list[str]:
    return [r.path for r in cluster.requests if r.path.startswith(f"/apis/{G}/")]


def reads_versions(mapper: LazyRESTMapper, ask: Callable[[LazyRESTMapper], object]) -> bool:
    """Whether ``ask`` reads group version documents on an aggregated server (a cold lookup of one named group
    reads the group listing and that group's versions; any other reads the aggregated document)."""
    cluster = FakeCluster.embedded(mode="aggregated")
    cluster.add_crd(crd_manifest(G, "Widget", versions=("v1",)))
    probe = mapper_for(cluster, ManualClock())
    if mapper.cache.stats.requests:
        probe.rest_mapping(DEPLOYMENT)
        ask(probe)
    cluster.clear_requests()
    ask(probe)
    return bool(gv_requests(cluster))


def no_match(call: Callable[[], object]) -> MappingError:
    with pytest.raises(MappingError) as info:
        call()
    assert is_no_match(info.value), info.value
    return info.value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("start", ["cold", "expired"])
def test_a_version_404_heals_one_miss_interval_after_it_stops(mode: str, shape: str, start: str) -> None:
    """The 404 outlasts the first lookup (its retry too); one interval after it stops, the lookup answers."""
    cluster = cluster_with(mode)
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    ask = SHAPES[shape]
    if start != "cold":
        mapper.rest_mapping(DEPLOYMENT)
        ask(mapper)
    if start == "expired":
        clock.advance(301)  # past the TTL: the group is read again, and answers 404
    fault = cluster.inject(f"/apis/{G}/v1", **NOT_FOUND)
    if mode == "aggregated" and not reads_versions(mapper, ask):
        return  # answered from the aggregated document: no version document was read
    first = no_match(lambda: ask(mapper))
    assert first.remembered_age is None  # confirmed by this very lookup
    fault.remove()
    clock.advance(0.5)
    before = cluster.request_count()
    later = no_match(lambda: ask(mapper))  # within the interval: the negative answer, not asked again
    assert cluster.request_count() == before
    assert later.remembered_age == pytest.approx(0.5)
    clock.advance(0.5)  # one interval after the confirmation
    assert ask(mapper) is not None
    before = cluster.request_count()
    ask(mapper)
    assert cluster.request_count() == before  # and then from the cache


@pytest.mark.parametrize("mode", MODES)
def test_a_404_once_heals_in_the_same_lookup(mode: str) -> None:
    """The one 404 lands on the first fetch: the lookup re-lists, retries once, and answers."""
    cluster = cluster_with(mode)
    mapper = mapper_for(cluster, ManualClock())
    cluster.inject(f"/apis/{G}/v1", times=1, **NOT_FOUND)
    assert mapper.rest_mapping(GroupKind(G, "Widget")).resource.version == "v1"
    assert gv_requests(cluster) == [f"/apis/{G}/v1", f"/apis/{G}/v1"]


@pytest.mark.parametrize("mode", MODES)
def test_a_404_on_a_new_version_of_a_loaded_group_heals(mode: str) -> None:
    """A version added to a loaded group (an APIService registering) 404s at first: the kind it brings is found
    one interval after the 404 stops, not at the group's TTL."""
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd_manifest(G, "Gadget", versions=("v1",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    assert mapper.rest_mapping(GroupKind(G, "Gadget")).resource.version == "v1"
    clock.advance(5)
    cluster.add_crd(crd_manifest(G, "Widget", versions=("v2",)))
    fault = cluster.inject(f"/apis/{G}/v2", **NOT_FOUND)
    no_match(lambda: mapper.rest_mapping(GroupKind(G, "Widget")))
    if mode == "legacy":  # (aggregated: a question about any group reads the aggregated document)
        no_match(lambda: mapper.resolve("widgets"))
    fault.remove()
    clock.advance(1)
    assert mapper.rest_mapping(GroupKind(G, "Widget")).resource.version == "v2"
    assert mapper.resolve("widgets").resource.version == "v2"
    assert mapper.rest_mapping(GroupKind(G, "Gadget")).resource.version == "v1"


# --- rule 2: a version that keeps answering 404 is asked about once per interval ---------------------------------


def assert_asked_once_per_interval(log: dict[float, list[str]]) -> None:
    """Each version is read in rounds at least an interval apart, each round the 404 and the retry at most."""
    for version in ("v1", "v2"):
        path = f"/apis/{G}/{version}"
        rounds = [t for t, paths in log.items() if path in paths]
        assert all(log[t].count(path) <= 2 for t in rounds), log
        assert all(b - a >= 1.0 - 1e-9 for a, b in itertools.pairwise(rounds)), (version, rounds)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_version_that_keeps_answering_404_is_asked_once_per_interval(mode: str, shape: str) -> None:
    """Two listed versions that both 404, asked about every 0.25 s for 4 s: each version is read in rounds an
    interval apart (the 404 and the retry after re-listing), and every round of misses reads the versions that
    could hold the answer."""
    cluster = cluster_with(mode, ("v2", "v1"))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    mapper.rest_mapping(DEPLOYMENT)
    cluster.inject(f"/apis/{G}/v2", **NOT_FOUND)
    cluster.inject(f"/apis/{G}/v1", **NOT_FOUND)
    ask = SHAPES[shape]
    if mode == "aggregated" and not reads_versions(mapper, ask):
        return  # answered from the aggregated document: no version document is read
    needed = ("v1",) if shape.endswith("_v1") else ("v2", "v1")  # the versions that could hold the answer
    log: dict[float, list[str]] = {}
    for step in range(17):
        cluster.clear_requests()
        no_match(lambda: ask(mapper))
        no_match(lambda: mapper.rest_mapping(GroupKind(G, "Widget"), "v2"))
        log[step * 0.25] = gv_requests(cluster)
        clock.advance(0.25)
    assert_asked_once_per_interval(log)
    for version in needed:  # asked again every interval (4 s: at 0, 1, 2, 3 and 4 s)
        assert sum(f"/apis/{G}/{version}" in paths for paths in log.values()) == 5, log


@pytest.mark.parametrize("mode", MODES)
def test_a_404ing_version_is_not_refetched_by_other_lookups_within_the_interval(mode: str) -> None:
    """Another lookup that must load the group within the interval (it was dropped from the cache by an unrelated
    miss's re-list) takes the 404 as still standing; an explicit invalidation asks again at once."""
    cluster = cluster_with(mode, ("v2", "v1"))
    cluster.add_crd(crd_manifest(G, "Gadget", versions=("v2",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    mapper.rest_mapping(DEPLOYMENT)
    cluster.inject(f"/apis/{G}/v1", **NOT_FOUND)
    no_match(lambda: mapper.rest_mapping(GroupKind(G, "Widget"), "v1"))
    cluster.clear_requests()
    clock.advance(0.3)
    assert mapper.rest_mapping(GroupKind(G, "Gadget")).resource.version == "v2"
    assert mapper.rest_mapping(GroupKind(G, "Widget")).resource.version == "v2"
    assert f"/apis/{G}/v1" not in gv_requests(cluster)
    mapper.invalidate_group(G)  # the caller says it changed (a watcher event): ask again
    no_match(lambda: mapper.rest_mapping(GroupKind(G, "Widget"), "v1"))
    assert f"/apis/{G}/v1" in gv_requests(cluster)


# --- aggregated discovery: a Stale version is a failure, never a no-match, and recovers --------------------------


def test_a_stale_aggregated_version_is_a_discovery_error_then_heals() -> None:
    cluster = cluster_with("aggregated", ("v2", "v1"))
    cluster.add_crd(crd_manifest(G, "Gadget", versions=("v2",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    cluster.set_stale(f"{G}/v1")
    with pytest.warns(PartialDiscoveryWarning, match=f"{G}/v1"):  # reads the aggregated document
        mapper.resolve("deploy")
    with pytest.raises(GroupDiscoveryError) as info:
        mapper.rest_mapping(GroupKind(G, "Widget"), "v1")
    assert not is_no_match(info.value)
    cluster.set_stale(f"{G}/v1", False)
    clock.advance(1)  # the group's first retry is due
    assert mapper.rest_mapping(GroupKind(G, "Widget"), "v1").resource.version == "v1"


# --- the drop-in discoverer ------------------------------------------------------------------------------------


@pytest.fixture(params=MODES)
def mocked(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    cluster = cluster_with(request.param)
    with cluster.mock():
        yield cluster


def drop_in(cluster: FakeCluster, clock: ManualClock) -> Any:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    client = DynamicClient(kclient.ApiClient(kclient.Configuration(host=cluster.base_url)),
                           discoverer=lambda c, f: SelfHealingDiscoverer(c, f, clock=clock, transport=transport))
    return client.resources


GETS: dict[str, dict[str, str]] = {
    "api_version": dict(api_version=f"{G}/v1", kind="Widget"),
    "group": dict(group=G, kind="Widget"),
    "kind": dict(kind="Widget"),
    "name": dict(name="widgets"),
}


@pytest.mark.parametrize("how", list(GETS))
def test_the_drop_in_heals_one_miss_interval_after_a_404_stops(mocked: FakeCluster, how: str) -> None:
    clock = ManualClock()
    resources = drop_in(mocked, clock)
    resources.get(api_version="apps/v1", kind="Deployment")
    fault = mocked.inject(f"/apis/{G}/v1", **NOT_FOUND)
    if mocked.mode == "aggregated" and how in ("kind", "name"):
        assert resources.get(**GETS[how]).kind == "Widget"  # read from the aggregated document
        assert not gv_requests(mocked)
        return
    with pytest.raises(ResourceNotFoundError):
        resources.get(**GETS[how])
    fault.remove()
    clock.advance(0.5)
    with pytest.raises(ResourceNotFoundError, match=r"as of 0\.5 s ago"):
        resources.get(**GETS[how])  # within the interval: the remembered miss, saying how old it is
    clock.advance(0.5)
    assert resources.get(**GETS[how]).kind == "Widget"


def test_the_drop_in_asks_a_404ing_version_once_per_interval(mocked: FakeCluster) -> None:
    clock = ManualClock()
    resources = drop_in(mocked, clock)
    resources.get(api_version="apps/v1", kind="Deployment")
    mocked.inject(f"/apis/{G}/v1", **NOT_FOUND)
    mocked.clear_requests()
    with pytest.raises(ResourceNotFoundError):
        resources.get(api_version=f"{G}/v1", kind="Widget")
    assert gv_requests(mocked).count(f"/apis/{G}/v1") <= 2
    mocked.clear_requests()
    gets = [GETS["api_version"], GETS["group"]] if mocked.mode == "aggregated" else list(GETS.values())
    for _ in range(3):
        clock.advance(0.25)
        for kw in gets:  # (aggregated: a get not naming the group reads the aggregated document)
            with pytest.raises(ResourceNotFoundError):
                resources.get(**kw)
    assert gv_requests(mocked) == []
    clock.advance(0.25)
    with pytest.raises(ResourceNotFoundError):
        resources.get(group=G, kind="Widget")
    assert 1 <= gv_requests(mocked).count(f"/apis/{G}/v1") <= 2
