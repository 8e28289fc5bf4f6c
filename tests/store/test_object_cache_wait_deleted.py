"""ObjectCache.wait_for_deleted: read your deletes (the cache no longer holds the deleted UID), sync and asyncio."""

from __future__ import annotations

import asyncio
import math
import threading

import pytest
from helpers.store import cm, object_cache, widget_cluster

from restmapper.aio import AsyncObjectCache
from restmapper.errors import InvalidArgumentError, ObjectWaitTimeoutError


def test_wait_for_deleted_returns_once_the_uid_is_gone_and_times_out_while_held() -> None:
    with widget_cluster() as served, object_cache(served) as cache:
        cluster = served.cluster
        uid = cluster.apply_object(cm("a"))["metadata"]["uid"]
        assert cache.wait_for_sync("configmaps", 10)
        cluster.delay_watch_events(math.inf)
        cluster.delete_object("configmaps", "a", "default")
        with pytest.raises(ObjectWaitTimeoutError):
            cache.wait_for_deleted("configmaps", "a", "default", uid=uid, timeout=0.05)
        waiter = threading.Thread(target=cache.wait_for_deleted, args=("configmaps", "a", "default"),
                                  kwargs={"uid": uid, "timeout": 10})
        waiter.start()
        cluster.delay_watch_events(0)
        waiter.join(10)
        assert not waiter.is_alive()
        with pytest.raises(InvalidArgumentError):
            cache.wait_for_deleted("configmaps", "a", "default", uid=uid, timeout=-1)


def test_a_new_object_of_the_same_name_counts_as_the_old_uid_gone() -> None:
    with widget_cluster() as served, object_cache(served) as cache:
        cluster = served.cluster
        old = cluster.apply_object(cm("a"))["metadata"]["uid"]
        cluster.delete_object("configmaps", "a", "default")
        new = cluster.apply_object(cm("a"))["metadata"]["uid"]
        assert cache.wait_for("configmaps", "a", "default", timeout=10)["metadata"]["uid"] == new != old
        cache.wait_for_deleted("configmaps", "a", "default", uid=old, timeout=0)
        with pytest.raises(ObjectWaitTimeoutError):
            cache.wait_for_deleted("configmaps", "a", "default", uid=None, timeout=0)


def test_the_asyncio_form_waits_on_the_loop() -> None:
    with widget_cluster() as served, object_cache(served) as cache:
        cluster = served.cluster
        uid = cluster.apply_object(cm("a"))["metadata"]["uid"]

        async def scenario() -> None:
            acache = AsyncObjectCache(cache)
            assert await acache.wait_for_sync("configmaps", 10)
            cluster.delay_watch_events(math.inf)
            cluster.delete_object("configmaps", "a", "default")
            with pytest.raises(ObjectWaitTimeoutError):
                await acache.wait_for_deleted("configmaps", "a", "default", uid=uid, timeout=0.05)
            wait = asyncio.ensure_future(acache.wait_for_deleted("configmaps", "a", "default", uid=uid, timeout=10))
            cluster.delay_watch_events(0)
            await asyncio.wait_for(wait, 10)

        asyncio.run(scenario())
