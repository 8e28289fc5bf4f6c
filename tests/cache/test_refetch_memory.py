"""What a cache entry of an aggregated group keeps alive is bounded by that group's own content.

Rule: each ``/apis`` refetch replaces the document; a group it did not change keeps its entry (and the resource
lists in it), a group it changed gets the new document's. Neither may keep a whole document (or another group's
content) alive: after any number of refetches the cache holds one document plus its groups' content, never one
document per refetch.
"""

from __future__ import annotations

import gc
import tracemalloc

from helpers.dynamic import crd

from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock
from restmapper.wire import ACCEPT_AGGREGATED

GROUPS = 8
_THEIRS = (tracemalloc.Filter(False, "*/restmapper/testing/*", all_frames=True),  # the fake cluster's own state
           tracemalloc.Filter(False, "*/helpers/dynamic.py", all_frames=True))


def _kept(snapshot_filters: tuple[tracemalloc.Filter, ...] = _THEIRS) -> int:
    """Bytes traced now, in allocations made neither by the fake cluster nor by the test's helpers."""
    gc.collect()
    return sum(stat.size for stat in tracemalloc.take_snapshot().filter_traces(snapshot_filters).statistics("filename"))


def _mapper(cluster: FakeCluster, clock: ManualClock) -> LazyRESTMapper:
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, ttl=10)
    for i in range(GROUPS):
        mapper.resolve(f"k{i}")  # every group converted
    return mapper


def test_refetches_do_not_pin_every_old_document() -> None:
    cluster = FakeCluster.embedded(mode="aggregated")
    for i in range(GROUPS):
        cluster.add_crd(crd(f"g{i}.example.com", f"K{i}"))
    clock = ManualClock()
    tracemalloc.start(8)
    try:
        mapper = _mapper(cluster, clock)
        for r in range(2 * GROUPS):  # each refetch of /apis changes one group (its second version: v2, then v3)
            i = r % GROUPS
            cluster.update_crd(crd(f"g{i}.example.com", f"K{i}", versions=("v1", "v2" if r < GROUPS else "v3")))
            clock.advance(11)
            mapper.resolve(f"k{(i + 1) % GROUPS}")  # a group the refetch did not change
            mapper.resolve(f"k{i}")  # the changed one
        refetched = _kept()
        once = _mapper(cluster, clock)  # what reading the last document once keeps, for the same answers
        both = _kept()
    finally:
        tracemalloc.stop()
    body = len(InProcessTransport(cluster).get("/apis", {"Accept": ACCEPT_AGGREGATED}).body)
    single = both - refetched
    # What a group's entry keeps is its own group's content: the refetched mapper holds at most two copies of a
    # group (its entry's, the current document's; ~1.6 bodies more than reading once, here). Before, each entry
    # kept the document of the refetch that last changed that group (its unconverted versions held spans of the
    # document's whole text, every other group's included): ~14 bodies more.
    assert refetched - single < 3 * body, (refetched, single, body)
    assert mapper.resolve("k0") and once.resolve("k0")

