"""``LazyRESTMapper.read_groups``: the cache entries of some groups for a layer answering from entries (the drop-in).

The groups are read through the cache the first time (loading what is missing) and held ready: the next call
about them asks the cache nothing until one of them changes; ``None`` reads every listed group; a failing group
version is in its entry's ``failed``, never raised.
"""

from __future__ import annotations

import asyncio
from typing import Any

from restmapper.aio import AsyncRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock


def _counted(mapper: LazyRESTMapper) -> list[Any]:
    asked: list[Any] = []
    groups = mapper.cache.groups
    mapper.cache.groups = lambda *a, **k: asked.append(a) or groups(*a, **k)  # type: ignore[method-assign]
    return asked


def test_groups_read_once_are_held_ready_until_one_changes() -> None:
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), clock=clock, ttl=30)
    asked = _counted(mapper)
    entries, until = mapper.read_groups({"apps", "batch"})
    assert [e.name for e in entries] == ["apps", "batch"] and until == clock() + 30
    assert asked
    asked.clear()
    assert mapper.read_groups({"apps"})[0] == entries[:1]
    assert asked == [], "a group read before was asked of the cache again"
    mapper.invalidate_group("apps")
    again, _ = mapper.read_groups({"apps"})
    assert asked and again[0].name == "apps" and again[0] is not entries[0]
    assert mapper.read_groups({"nowhere.example.com"})[0] == []  # not listed: left out, as the cache does


def test_every_group_and_a_failing_version_in_its_entry() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.inject("/apis/batch/v1", status=503, body="down", content_type="text/plain")
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    entries, _ = mapper.read_groups(None)
    names = [e.name for e in entries]
    assert names[0] == "" and "apps" in names and "batch" in names
    batch = next(e for e in entries if e.name == "batch")
    assert GroupVersion("batch", "v1") in batch.failed


def test_the_asyncio_mapper_reads_the_same_entries() -> None:
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), clock=ManualClock())

    async def main() -> None:
        assert await AsyncRESTMapper(mapper).read_groups({"apps"}) == mapper.read_groups({"apps"})

    asyncio.run(main())
