"""A stopped ObjectCache refuses reads with InformerStoppedError instead of starting informer threads nobody will
stop (leaving ``with ObjectCache(...)`` stops it); ``start()`` makes it usable again."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from helpers.store import cm
from helpers.watch import make_mapper

from restmapper.aio import AsyncObjectCache
from restmapper.errors import InformerStoppedError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("c1"))
    with cluster.serve() as s:
        yield s


def _informer_threads() -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith("restmapper-informer-")}


def test_reads_after_leaving_the_with_block_raise_and_start_nothing(served: ServedCluster) -> None:
    with ObjectCache(make_mapper(served.url)) as cache:
        assert cache.get("cm", "c1", "default")["metadata"]["name"] == "c1"
    before = _informer_threads()
    calls = [lambda: cache.get("cm", "c1", "default"), lambda: cache.list("cm"), lambda: cache.informer("cm"),
             lambda: cache.wait_for_sync("cm", 1), lambda: cache.add_handler("cm", on_add=print),
             lambda: cache.wait_for("cm", "c1", "default", resource_version="1", timeout=1)]
    for call in calls:
        with pytest.raises(InformerStoppedError, match="stopped"):
            call()
    assert cache.informers() == []
    assert _informer_threads() == before


def test_start_makes_a_stopped_cache_usable_again(served: ServedCluster) -> None:
    cache = ObjectCache(make_mapper(served.url))
    cache.get("cm", "c1", "default")
    assert cache.stop()
    with pytest.raises(InformerStoppedError):
        cache.get("cm", "c1", "default")
    with cache.start():
        assert cache.get("cm", "c1", "default")["metadata"]["name"] == "c1"


def test_the_async_cache_refuses_reads_after_it_closed(served: ServedCluster) -> None:
    async def scenario() -> None:
        async with AsyncObjectCache(ObjectCache(make_mapper(served.url))) as cache:
            assert (await cache.get("cm", "c1", "default"))["metadata"]["name"] == "c1"
        with pytest.raises(InformerStoppedError):
            await cache.get("cm", "c1", "default")

    asyncio.run(scenario())
