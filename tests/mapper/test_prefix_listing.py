"""A group *prefix* argument (``foos.a``) depends on the group listing: a group listed later that the prefix
matches may answer it (a direct path that answered from the listing last applied, its answer not depending on
the listing, gave the earlier group's answer)."""

from __future__ import annotations

import warnings

import pytest

from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest


def _mapper(cluster: FakeCluster, clock: ManualClock | None = None) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock or ManualClock())


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("tell", ["invalidate_group", "read"])
def test_a_prefix_argument_sees_a_group_listed_later(mode: str, tell: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    clock = ManualClock()
    cluster.add_crd(crd_manifest("a.example.com", "Foo"))  # foos.a.example.com
    warm = _mapper(cluster, clock)
    warm.expand_category("all")  # every group loaded: the direct paths may answer
    for _ in range(3):  # memoized, then held
        assert warm.resolve("foos.a").resource.group == "a.example.com"
    # A new group matching the prefix whose short name foos wins (the prefix step takes short names first).
    cluster.add_crd(crd_manifest("ab.example.com", "Bar", short_names=("foos",)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _mapper(cluster).resolve("foos.a").resource.group == "ab.example.com"  # the judge
        if tell == "invalidate_group":
            warm.invalidate_group("ab.example.com")
            clock.advance(2)
        else:  # the mapper itself lists and reads the new group
            clock.advance(2)
            warm.resolve("bars.ab.example.com")
        assert warm.resolve("foos.a").resource.group == "ab.example.com"
