"""Read your deletes when the cache had not seen the object yet: another writer created it while the watch held
its events back (``FakeCluster.delay_watch_events``), and the client deletes it. "Not held" is then no proof: the
late ADDED event would bring the deleted object back after the delete returned. The delete returns only once the
informer has seen through the deletion's resourceVersion (the deleted object the server returns carries it; after
a ``Status`` answer, which carries none, the client reads one), sync and asyncio; reads then never see it.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from typing import Any

import pytest
from helpers.client import served as served  # a fixture, used by name
from helpers.store import cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import ObjectNotFoundError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster

CONFIGMAPS = "configmaps"
OBJECT = "/api/v1/namespaces/default/configmaps/x"
_GRACE = 0.1
"""Seconds a delete whose events are held back is given to (wrongly) return; a correct one never does."""


def _created_unseen(cluster: FakeCluster, cache: ObjectCache, answer: str) -> str:
    """Create x behind the cache's back (its events held); return its UID. With ``answer == "status"`` the
    server deletes it now and answers the client's delete with a Status (as for most built-in kinds)."""
    assert cache.wait_for_sync(CONFIGMAPS, 10)
    cluster.delay_watch_events(math.inf)
    uid = str(cluster.apply_object(cm("x", k="1"))["metadata"]["uid"])
    if answer == "status":
        cluster.delete_object(CONFIGMAPS, "x", "default")
        body = {"kind": "Status", "apiVersion": "v1", "status": "Success",
                "details": {"name": "x", "kind": "configmaps", "uid": uid}}
        cluster.inject(OBJECT, status=200, body=json.dumps(body), content_type="application/json", times=1)
    with pytest.raises(ObjectNotFoundError):
        cache.get(CONFIGMAPS, "x", "default")  # the cache has not seen it
    return uid


def _never_read_back(cache: ObjectCache, uid: str) -> None:
    try:
        held = cache.get(CONFIGMAPS, "x", "default")
    except ObjectNotFoundError:
        return
    assert held["metadata"]["uid"] != uid, "the cache returned the deleted object after the delete returned"


@pytest.mark.parametrize("answer", ["object", "status"])
def test_a_delete_returns_once_the_informer_saw_through_the_deletion(served: ServedCluster, answer: str) -> None:
    cluster = served.cluster
    with object_cache(served) as cache:
        uid = _created_unseen(cluster, cache, answer)
        errors: list[BaseException] = []

        def delete_then_read() -> None:
            try:
                Client(cache, timeout=10).delete(CONFIGMAPS, "x", "default")
                _never_read_back(cache, uid)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        deleter = threading.Thread(target=delete_then_read)
        deleter.start()
        deleter.join(_GRACE)
        alive = deleter.is_alive()
        cluster.delay_watch_events(0)
        deleter.join(10)
        assert alive, f"the delete returned before the informer saw the object come and go: {errors}"
        assert not deleter.is_alive() and not errors, errors
        _never_read_back(cache, uid)


@pytest.mark.parametrize("answer", ["object", "status"])
def test_an_async_delete_returns_once_the_informer_saw_through_the_deletion(served: ServedCluster,
                                                                           answer: str) -> None:
    cluster = served.cluster

    async def scenario(cache: ObjectCache, uid: str) -> None:
        client = AsyncClient(AsyncObjectCache(cache), timeout=10)
        delete = asyncio.ensure_future(client.delete(CONFIGMAPS, "x", "default"))
        await asyncio.wait({delete}, timeout=_GRACE)
        done = delete.done()
        cluster.delay_watch_events(0)
        result: Any = await asyncio.wait_for(delete, 10)
        assert not done, "the delete returned before the informer saw the object come and go"
        assert result["kind"] == ("Status" if answer == "status" else "ConfigMap")
        await asyncio.to_thread(_never_read_back, cache, uid)

    with object_cache(served) as cache:
        asyncio.run(scenario(cache, _created_unseen(cluster, cache, answer)))
