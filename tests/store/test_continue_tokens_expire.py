"""Continue tokens that always expire (etcd compacting faster than the pages are read): after restarting the
paged list once, the informer lists in one request without ``limit``, as client-go's pager falls back to a full
list; it syncs with every object once (a cache syncing by paginated lists: WatchList has no pages)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from helpers.store import cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.testing import FakeCluster, ServedCluster

PATH = "/api/v1/configmaps"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    for i in range(7):
        cluster.apply_object(cm(f"c{i}"))
    cluster.expire_continue_tokens()
    with cluster.serve() as s:
        yield s


def _lists(cluster: FakeCluster) -> list[tuple[bool, bool]]:
    """(limit given, continue given) of every list request of ConfigMaps."""
    return [("limit" in r.query, "continue" in r.query) for r in cluster.requests
            if r.path == PATH and "watch" not in r.query]


def test_informer_falls_back_to_one_full_list(served: ServedCluster) -> None:
    with object_cache(served, page_size=3, watch_list=False) as cache:
        assert cache.wait_for_sync("cm", 10)
        names = [o["metadata"]["name"] for o in cache.list("cm", "default")]
        assert names == [f"c{i}" for i in range(7)]
        assert _lists(served.cluster) == [(True, False), (True, True), (True, False), (True, True), (False, False)]
        assert cache.informer("cm").stats.lists == 1


def test_async_cache_falls_back_to_one_full_list(served: ServedCluster) -> None:
    async def scenario() -> list[str]:
        acache = AsyncObjectCache(cache)
        assert await acache.wait_for_sync("cm", 10)
        return [o["metadata"]["name"] for o in await acache.list("cm", "default")]

    with object_cache(served, page_size=3, watch_list=False) as cache:
        assert asyncio.run(scenario()) == [f"c{i}" for i in range(7)]
        assert _lists(served.cluster)[-1] == (False, False)
