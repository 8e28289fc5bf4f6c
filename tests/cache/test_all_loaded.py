"""Whether every listed group is loaded and fresh (``DiscoveryCache.ensure_all``), known without a scan of every
group: after a group was dropped and loaded again, and not after a group was dropped and left out."""

from __future__ import annotations

import pytest

from restmapper.cache import DiscoveryCache
from restmapper.discovery import DiscoveryClient
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.testing.transport import InProcessTransport


def _cache(mode: str, groups: int = 5) -> tuple[DiscoveryCache, FakeCluster]:
    cluster = FakeCluster.embedded(mode=mode)
    for i in range(groups):
        cluster.add_crd(crd_manifest(f"g{i}.example.com", "Widget"))
    cache = DiscoveryCache(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    cache.ensure_all()
    return cache, cluster


def _scans(cache: DiscoveryCache) -> list[int]:
    """Count, from now on, the reads of every group (``groups(None)``) that ``ensure_all`` falls back to."""
    scans = [0]
    groups = cache.groups

    def counting(names: object = None, versions: object = None) -> object:
        if names is None:
            scans[0] += 1
        return groups(names, versions)  # type: ignore[arg-type]

    cache.groups = counting  # type: ignore[method-assign,assignment]
    return scans


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_group_invalidated_and_loaded_again_leaves_every_group_known_loaded(mode: str) -> None:
    cache, cluster = _cache(mode)
    scans = _scans(cache)
    cache.invalidate_group("g2.example.com")
    cache.groups({"g2.example.com"})  # loaded again by a lookup naming it
    before = cluster.request_count()
    cache.ensure_all()
    assert scans[0] == 0, "every dropped group was loaded again: no scan of every group"
    assert cluster.request_count() == before


def test_a_group_invalidated_and_not_loaded_again_is_loaded_by_ensure_all() -> None:
    cache, _cluster = _cache("legacy")  # a group at a time (aggregated discovery loads every group at once)
    scans = _scans(cache)
    cache.invalidate_group("g2.example.com")
    cache.invalidate_group("g3.example.com")
    cache.groups({"g2.example.com"})
    assert cache.entry("g3.example.com") is None
    cache.ensure_all()
    assert scans[0] == 1
    assert cache.entry("g3.example.com") is not None
    cache.ensure_all()
    assert scans[0] == 1, "once every group was seen loaded, the next check needs no scan"
