"""Groups brought back while a root document is served stale are served only as stale (DESIGN 5.2, 5.10).

An invalidation (``invalidate_group``, ``invalidate_all``) says the content changed; a 404 (``report_not_found``)
says it is gone. When ``/apis`` then fails transiently, the cache serves its earlier ``/apis`` and brings back the
groups evicted since: those come back flagged stale (the mapper answers from them, but never a no-match or an
any-group answer they could outrank), never fresh (the first lookup after the fault refetches them), counted in
``stats.stale_served``, and not at all with ``max_stale=0``. A group evicted by a 404 never comes back from its
pre-404 content: lookups that need it raise GroupDiscoveryError until it can be read.

Every test talks HTTP to a FakeCluster through ``responses``; time is an injected clock; nothing sleeps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from restmapper import (
    GroupDiscoveryError,
    GroupKind,
    GroupVersion,
    GroupVersionResource,
    NoKindMatchError,
    NoResourceMatchError,
)
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

MODES = ["aggregated", "legacy"]
WIDGET = GroupKind("g5.example.com", "Widget")
WIDGETS = GroupVersionResource("", "", "widgets")


@pytest.fixture(params=MODES)
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    c = FakeCluster.embedded(mode=request.param)
    with c.mock():
        yield c


def mapper_for(cluster: FakeCluster, clock: ManualClock, **kw: float) -> LazyRESTMapper:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    return LazyRESTMapper(DiscoveryClient(transport), clock=clock, **kw)


def oracle(cluster: FakeCluster) -> LazyRESTMapper:
    """A mapper that has never seen the cluster: what the server says now."""
    return mapper_for(cluster, ManualClock())


def invalidate(mapper: LazyRESTMapper, how: str, group: str) -> None:
    if how == "invalidate_all":
        mapper.invalidate_all()
    else:
        mapper.invalidate_group(group)


@pytest.mark.parametrize("how", ["invalidate_group", "invalidate_all"])
def test_an_invalidation_is_not_undone_by_one_transient_apis_failure(cluster: FakeCluster, how: str) -> None:
    """The group restored during the outage is stale, so the first lookup after it refetches."""
    widget = cluster.add_crd(crd_manifest("g5.example.com", "Widget", versions=("v1",)))
    cluster.add_crd(crd_manifest("g5.example.com", "Thing", versions=("v1",)))
    cluster.add_crd(crd_manifest("g6.example.com", "Other", versions=("v1",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    assert mapper.rest_mapping(WIDGET).resource.resource == "widgets"
    clock.advance(250)
    mapper.invalidate_group("g5.example.com")
    assert mapper.rest_mapping(WIDGET).resource.resource == "widgets"  # re-read at t=250
    clock.advance(40)
    cluster.delete_crd(widget)
    invalidate(mapper, how, "g5.example.com")  # the mapper is told
    clock.advance(11)  # /apis is due (TTL) ...
    fault = cluster.inject("/apis", status=503, body="unavailable", times=1)  # ... and fails once
    before = mapper.stats.stale_served
    assert mapper.rest_mapping(GroupKind("g6.example.com", "Other")).resource.resource == "others"
    restored = mapper.cache.entry("g5.example.com")
    if restored is not None:  # brought back for the outage: flagged stale, counted, never fresh
        assert set(restored.stale) == set(restored.resources)
        assert mapper.stats.stale_served > before + 1  # the root and the restored versions
    fault.remove()
    clock.advance(1)
    with pytest.raises(NoKindMatchError):
        mapper.rest_mapping(WIDGET)
    with pytest.raises(NoKindMatchError):
        oracle(cluster).rest_mapping(WIDGET)


def test_an_invalidation_is_not_undone_on_the_upgrade_fetch_with_max_stale_0(cluster: FakeCluster) -> None:
    """Nine one-group lookups, then the upgrade to the whole /apis fails once: nothing restored."""
    for i in range(12):
        cluster.add_crd(crd_manifest(f"g{i}.example.com", "Thing", versions=("v2", "v1")))
    widget = cluster.add_crd(crd_manifest("g5.example.com", "Widget", versions=("v2", "v1")))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock, max_stale=0)
    for i in range(9):
        mapper.rest_mapping(GroupKind(f"g{i}.example.com", "Thing"))
    assert mapper.rest_mapping(WIDGET).resource.version == "v2"
    cluster.delete_crd(widget)
    cluster.add_crd(crd_manifest("g5.example.com", "Gadget", versions=("v2", "v1")))
    mapper.invalidate_group("g5.example.com")
    clock.advance(1)
    cluster.inject("/apis", status=503, body="unavailable", times=1)
    before = mapper.stats.stale_served
    mapper.rest_mapping(GroupKind("g10.example.com", "Thing"))
    held = mapper.cache.entry("g5.example.com")
    assert held is None or not held.resources  # max_stale=0: no content comes back (at most "failed")
    assert mapper.stats.stale_served <= before + 1  # at most the root document itself
    clock.advance(5)
    with pytest.raises(NoKindMatchError):
        mapper.rest_mapping(WIDGET)
    assert mapper.kind_for(GroupVersionResource("g5.example.com", "", "gadgets")).kind == "Gadget"


def test_with_max_stale_0_invalidated_content_is_not_answered_during_an_outage(cluster: FakeCluster) -> None:
    """After invalidate_all, /apis 503, max_stale=0: a discovery error, not the deleted kind."""
    widget = cluster.add_crd(crd_manifest("g9.example.com", "Widget", versions=("v1",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock, max_stale=0)
    assert mapper.resource_for(WIDGETS).group == "g9.example.com"
    cluster.delete_crd(widget)
    mapper.invalidate_all()
    clock.advance(2)
    fault = cluster.inject("/apis", status=503, body="unavailable")
    with pytest.raises(GroupDiscoveryError):
        mapper.resource_for(WIDGETS)
    fault.remove()
    clock.advance(2)
    with pytest.raises(NoResourceMatchError):
        mapper.resource_for(WIDGETS)


def test_a_group_the_server_said_404_for_is_not_answered_from_its_pre_404_content(cluster: FakeCluster) -> None:
    """After report_not_found, then /apis due and failing: a discovery error, never the 404'd kind."""
    widget = cluster.add_crd(crd_manifest("g0.example.com", "Widget", versions=("v2",)))
    cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=("v2",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    gk = GroupKind("g0.example.com", "Widget")
    assert mapper.rest_mapping(gk).resource.version == "v2"
    cluster.delete_crd(widget)
    mapper.report_not_found(GroupVersion("g0.example.com", "v2"))
    clock.advance(301)
    cluster.inject("/apis", status=503, body="unavailable")
    cluster.inject("/apis/g0.example.com/v2", status=503, body="unavailable")
    with pytest.raises(GroupDiscoveryError):
        mapper.rest_mapping(gk)
    with pytest.raises(GroupDiscoveryError):
        mapper.rest_mapping(GroupKind("g0.example.com", "Thing"))


def test_a_404_group_whose_version_is_readable_is_read_during_an_apis_outage() -> None:
    """Legacy path: the group's own version document answers, so the mapper reads it (never the pre-404 list)."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        widget = cluster.add_crd(crd_manifest("g0.example.com", "Widget", versions=("v2",)))
        cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=("v2",)))
        clock = ManualClock()
        mapper = mapper_for(cluster, clock)
        assert mapper.rest_mapping(GroupKind("g0.example.com", "Widget")).resource.version == "v2"
        cluster.delete_crd(widget)
        mapper.report_not_found(GroupVersion("g0.example.com", "v2"))
        clock.advance(301)
        cluster.inject("/apis", status=503, body="unavailable")
        cluster.clear_requests()
        assert mapper.rest_mapping(GroupKind("g0.example.com", "Thing")).resource.resource == "things"
        assert "/apis/g0.example.com/v2" in [r.path for r in cluster.requests]
        with pytest.raises((GroupDiscoveryError, NoKindMatchError)):
            mapper.rest_mapping(GroupKind("g0.example.com", "Widget"))


Evict = Callable[[LazyRESTMapper], None]


@pytest.mark.parametrize(("evict", "gone"), [
    pytest.param(lambda m: m.invalidate_group("g0.example.com"), False, id="invalidate_group"),
    pytest.param(lambda m: m.invalidate_all(), False, id="invalidate_all"),
    pytest.param(lambda m: m.report_not_found(GroupVersion("g0.example.com", "v1")), True, id="report_not_found"),
])
def test_an_evicted_higher_ranked_group_blocks_any_group_answers_during_an_outage(
        cluster: FakeCluster, evict: Evict, gone: bool) -> None:
    """A model-test case, reduced: g0 outranks g4 for "things"; g0 evicted, /apis down: never g4's answer as current."""
    cluster.add_crd(crd_manifest("g4.example.com", "Thing", versions=("v1",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    things = GroupVersionResource("", "", "things")
    assert mapper.resource_for(things).group == "g4.example.com"
    cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=("v1",)))
    mapper.invalidate_all()
    assert mapper.resource_for(things).group == "g0.example.com"
    evict(mapper)
    clock.advance(1)
    cluster.inject("/api*", status=503, body="unavailable")
    if gone:  # 404'd: its pre-404 content is never served, and g4 must not answer in its place
        with pytest.raises(GroupDiscoveryError):
            mapper.resource_for(things)
        return
    try:
        answer = mapper.resource_for(things)
    except GroupDiscoveryError:
        return
    assert answer.group == "g0.example.com"  # only from g0's content restored as stale
    assert mapper.cache.entry("g0.example.com") is not None
    assert mapper.cache.entry("g0.example.com").stale  # type: ignore[union-attr]


def test_a_version_failing_on_every_retry_is_served_stale_only_within_max_stale() -> None:
    """max_stale counts from the last good answer, not from the last failed retry that served it stale."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.add_crd(crd_manifest("g0.example.com", "Widget", versions=("v1",)))
        clock = ManualClock()
        mapper = mapper_for(cluster, clock, ttl=10, max_stale=20)
        gk = GroupKind("g0.example.com", "Widget")
        assert mapper.rest_mapping(gk).resource.version == "v1"
        cluster.inject("/apis/g0.example.com/v1", status=503, body="unavailable")
        for _ in range(5):  # t = 5 .. 25: within ttl + max_stale (30 s) of the answer read at t = 0
            clock.advance(5)
            assert mapper.rest_mapping(gk).resource.version == "v1"
        clock.advance(6)  # t = 31
        with pytest.raises(GroupDiscoveryError):
            mapper.rest_mapping(gk)


@pytest.mark.parametrize("warm", ["one group", "any group"])
@pytest.mark.parametrize("max_stale", [0, 600])
def test_a_group_invalidated_and_read_again_during_an_outage_is_never_fresh(cluster: FakeCluster, warm: str,
                                                                            max_stale: float) -> None:
    """A group invalidated (its CRD gained a preferred version) and read again while ``/apis`` fails is loaded with
    the versions the earlier group listing names: its resources are current, its version list is not. It must not
    be installed as fresh (``rest_mapping`` would answer the old version confidently): with
    ``max_stale=0`` the lookup fails, else the entry is flagged stale; after the fault the new version answers."""
    gadget = GroupKind("g3.example.com", "Gadget")
    cluster.add_crd(crd_manifest("g3.example.com", "Gadget", versions=("v1",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock, max_stale=max_stale)
    if warm == "one group":
        assert mapper.rest_mapping(gadget).resource.version == "v1"
    else:
        assert mapper.resource_for(GroupVersionResource("", "", "gadgets")).version == "v1"
    clock.advance(5)
    cluster.add_crd(crd_manifest("g3.example.com", "Gadget", versions=("v2", "v1"), storage="v2"))
    mapper.invalidate_group("g3.example.com")
    clock.advance(2)
    fault = cluster.inject("/apis", status=503, body="unavailable")
    if max_stale == 0:
        with pytest.raises(GroupDiscoveryError):
            mapper.rest_mapping(gadget)
    else:
        with contextlib.suppress(GroupDiscoveryError):
            mapper.rest_mapping(gadget)  # an earlier answer may be served, flagged stale
        entry = mapper.cache.entry("g3.example.com")
        assert entry is None or entry.stale or entry.failed  # never fresh from the earlier listing
    fault.remove()
    clock.advance(2)
    assert mapper.rest_mapping(gadget).resource.version == "v2"
