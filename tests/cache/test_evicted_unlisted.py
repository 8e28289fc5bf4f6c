"""A group's earlier content, kept after an eviction for an outage (``CacheState._evicted``), is let go once a
root document is read that no longer lists the group: it is never served again, and is not kept for good.

A group evicted (``invalidate_group``, ``invalidate_all``, ``report_not_found``) and then removed from the cluster
left its entry in ``_evicted`` (its name in ``_gone``, its versions in ``_unserved``) for good: memory never
released, one entry per group a cluster ever removed (a test environment creating groups per test). No stale answer
came of it (when the group came back with other content and ``/apis`` failed, lookups of it raised
GroupDiscoveryError): the second half of the test keeps it so.

Every test talks HTTP to a FakeCluster through ``responses``; time is an injected clock; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from restmapper import GroupDiscoveryError, GroupKind, GroupVersion
from restmapper.cache import DiscoveryCache
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

GROUP = "g9.example.com"
WIDGET, GADGET, OTHER = GroupKind(GROUP, "Widget"), GroupKind(GROUP, "Gadget"), GroupKind("g8.example.com", "Other")


@pytest.fixture(params=["aggregated", "legacy"])
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    c = FakeCluster.embedded(mode=request.param)
    with c.mock():
        yield c


def evict(mapper: LazyRESTMapper, how: str) -> None:
    if how == "invalidate_group":
        mapper.invalidate_group(GROUP)
    elif how == "invalidate_all":
        mapper.invalidate_all()
    else:
        mapper.cache.report_not_found(GroupVersion(GROUP, "v1"))


def kept(cache: DiscoveryCache) -> set[str]:
    """The group names the cache keeps anything of, besides its entries (what the test is about)."""
    return {*cache._evicted, *cache._gone, *cache._unserved}


@pytest.mark.parametrize("how", ["invalidate_group", "invalidate_all", "report_not_found"])
def test_an_evicted_group_the_server_no_longer_lists_is_let_go(cluster: FakeCluster, how: str) -> None:
    widget = cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",)))
    cluster.add_crd(crd_manifest("g8.example.com", "Other", versions=("v1",)))
    clock = ManualClock()
    cache = DiscoveryCache(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))),
                           ttl=100, clock=clock)
    mapper = LazyRESTMapper(cache)
    assert mapper.rest_mapping(WIDGET).resource.resource == "widgets"
    assert mapper.rest_mapping(OTHER).resource.resource == "others"
    evict(mapper, how)
    cluster.delete_crd(widget)  # the group is gone from the listing
    clock.advance(101)  # /apis is due
    assert mapper.rest_mapping(OTHER).resource.resource == "others"  # reads /apis: no g9.example.com
    assert GROUP not in kept(cache), kept(cache)

    # The group comes back with other content; /apis is read, g9 is not loaded (legacy: lazily), then /apis fails.
    cluster.add_crd(crd_manifest(GROUP, "Gadget", versions=("v2",)))
    clock.advance(101)
    assert mapper.rest_mapping(OTHER).resource.resource == "others"
    clock.advance(101)
    cluster.inject("/apis", status=503, body="unavailable")
    cluster.inject(f"/apis/{GROUP}/v2", status=503, body="unavailable")
    try:
        mapping = mapper.rest_mapping(WIDGET)
    except GroupDiscoveryError:
        pass  # could not tell: fine
    else:
        pytest.fail(f"answered for a kind the server removed, from its pre-removal content: {mapping}")
    try:
        gadget = mapper.rest_mapping(GADGET)
    except GroupDiscoveryError:
        return
    assert gadget.resource.resource == "gadgets"  # aggregated: the stale /apis itself holds it
