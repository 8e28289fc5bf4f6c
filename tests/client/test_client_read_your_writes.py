"""Read your writes: a write through the client returns only once the object cache reads it back.

The kit holds watch events back (``FakeCluster.delay_watch_events``), so a plain cache read right after a write is
stale; every write of the client (create, update, update_status, patch, apply, delete; sync and asyncio) returns
only after the cache caught up, and a read then sees the returned resourceVersion (after a delete: not the
deleted UID). The events of the client's own writes still reach handlers.
"""

from __future__ import annotations

import asyncio
import copy
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from helpers.client import served as served  # a fixture, used by name
from helpers.store import Mirror, cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import ObjectNotFoundError, WriteNotObservedError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.transport import RequestsTransport

CONFIGMAPS = "configmaps"
_GRACE = 0.1
"""Seconds a write whose event is held back is given to (wrongly) return: a correct one never does, so this only
bounds how long the test looks; it never decides the outcome of a correct client."""
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}}


def _rv(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


def _changed(obj: dict[str, Any], **data: str) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    new["data"] = dict(data)
    return new


@dataclass(frozen=True)
class Op:
    """One kind of write: the kind and name it touches, the write (sync args built from the seeded object)."""

    name: str
    kind: str
    target: str
    call: Callable[[Any, dict[str, Any]], Any]  # (client or async client, seeded object) -> result or awaitable

    @property
    def deletes(self) -> bool:
        """The object is gone afterwards (a delete the finalizers do not hold)."""
        return self.name.startswith("delete") and "finalizer" not in self.name


OPS = [
    Op("create", CONFIGMAPS, "b", lambda c, seed: c.create(cm("b", k="1"))),
    Op("update", CONFIGMAPS, "a", lambda c, seed: c.update(_changed(seed, k="2"))),
    Op("update_status", "deployments.apps", "web",
       lambda c, seed: c.update_status({**copy.deepcopy(seed), "status": {"observedGeneration": 1}})),
    Op("patch-merge", CONFIGMAPS, "a", lambda c, seed: c.patch(CONFIGMAPS, "a", {"data": {"k": "3"}}, "default")),
    Op("patch-json", CONFIGMAPS, "a",
       lambda c, seed: c.patch(CONFIGMAPS, "a", [{"op": "replace", "path": "/data/k", "value": "4"}], "default",
                               patch_type="json")),
    Op("apply", CONFIGMAPS, "a", lambda c, seed: c.apply(cm("a", k="5"), "tests", force=True)),
    Op("delete", CONFIGMAPS, "a", lambda c, seed: c.delete(CONFIGMAPS, "a", "default")),
    Op("delete-with-preconditions", CONFIGMAPS, "a",
       lambda c, seed: c.delete(CONFIGMAPS, "a", "default", uid=seed["metadata"]["uid"],
                                resource_version=_rv(seed))),
    Op("delete-held-by-a-finalizer", CONFIGMAPS, "a", lambda c, seed: c.delete(CONFIGMAPS, "a", "default")),
]


def _seed(cluster: FakeCluster, op: Op) -> dict[str, Any]:
    """Store what ``op`` writes to, straight in the cluster (no client involved)."""
    if op.kind == CONFIGMAPS:
        obj = cm("a", k="1")
        if "finalizer" in op.name:
            obj["metadata"]["finalizers"] = ["example.com/keep"]
        return cluster.apply_object(obj)
    return cluster.apply_object(DEPLOY)


def _applied_after(cluster: FakeCluster, before: int) -> None:
    """Block until the server has applied a write after resourceVersion ``before`` (a barrier, not a sleep)."""
    store = cluster.internals.store
    with store.cond:
        assert store.cond.wait_for(lambda: store.resource_version > before, 10.0)


def _held(cache: ObjectCache, op: Op, seed: dict[str, Any]) -> None:
    """The plain cache read is stale: it answers from before the write."""
    if op.name == "create":
        with pytest.raises(ObjectNotFoundError):
            cache.get(op.kind, op.target, "default")
    else:
        assert _rv(cache.get(op.kind, op.target, "default")) == _rv(seed)


def _fresh(cache: ObjectCache, op: Op, seed: dict[str, Any], result: dict[str, Any]) -> None:
    """The cache read after the write returned sees what it wrote."""
    if op.deletes:
        with pytest.raises(ObjectNotFoundError):
            cache.get(op.kind, op.target, "default")
    else:  # a write, or a delete held by a finalizer: read back (marked for deletion) at the returned version
        held = cache.get(op.kind, op.target, "default")
        assert _rv(held) == _rv(result) != _rv(seed)
        assert ("deletionTimestamp" in held["metadata"]) == ("finalizer" in op.name)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_a_write_returns_once_the_cache_reads_it_back(served: ServedCluster, op: Op) -> None:
    cluster = served.cluster
    seed = _seed(cluster, op)
    with object_cache(served) as cache:
        assert cache.wait_for_sync(op.kind, 10)
        client = Client(cache, timeout=10)
        cluster.delay_watch_events(math.inf)
        before = int(cluster.resource_version)
        results: list[dict[str, Any]] = []
        errors: list[BaseException] = []

        def write_then_read() -> None:
            try:
                results.append(op.call(client, seed))
                _fresh(cache, op, seed, results[0])  # the writer's own read, right after the write returned
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        writer = threading.Thread(target=write_then_read)
        writer.start()
        _applied_after(cluster, before)
        _held(cache, op, seed)
        # Applied on the server, its event held back: a write that returns now would leave the cache stale.
        writer.join(_GRACE)
        assert writer.is_alive(), f"the write returned while the cache was stale: {errors}"
        cluster.delay_watch_events(0)
        writer.join(10)
        assert not writer.is_alive() and results and not errors, errors
        _fresh(cache, op, seed, results[0])


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_an_async_write_returns_once_the_cache_reads_it_back(served: ServedCluster, op: Op) -> None:
    cluster = served.cluster
    seed = _seed(cluster, op)

    async def scenario(cache: ObjectCache) -> None:
        acache = AsyncObjectCache(cache)
        assert await acache.wait_for_sync(op.kind, 10)
        client = AsyncClient(acache, timeout=10)
        cluster.delay_watch_events(math.inf)
        before = int(cluster.resource_version)
        write = asyncio.ensure_future(op.call(client, seed))
        await asyncio.to_thread(_applied_after, cluster, before)
        await asyncio.to_thread(_held, cache, op, seed)
        await asyncio.wait({write}, timeout=_GRACE)
        assert not write.done(), "the write returned while the cache was stale"
        cluster.delay_watch_events(0)
        result = await asyncio.wait_for(write, 10)
        await asyncio.to_thread(_fresh, cache, op, seed, result)

    with object_cache(served) as cache:
        asyncio.run(scenario(cache))


def test_a_write_the_cache_does_not_observe_in_time_raises_with_what_was_written(served: ServedCluster) -> None:
    cluster = served.cluster
    seed = cluster.apply_object(cm("a", k="1"))
    with object_cache(served) as cache:
        assert cache.wait_for_sync(CONFIGMAPS, 10)
        cluster.delay_watch_events(math.inf)
        with pytest.raises(WriteNotObservedError) as caught:
            Client(cache, timeout=0.2).update(_changed(seed, k="2"))
        written = caught.value.written
        assert _rv(written) == cluster.get_object(CONFIGMAPS, "a", "default")["metadata"]["resourceVersion"]
        assert caught.value.resource_version == _rv(written)
        assert "the write succeeded" in str(caught.value)
        assert _rv(cache.get(CONFIGMAPS, "a", "default")) == _rv(seed)  # still stale: hence the error
        cluster.delay_watch_events(0)


def test_handlers_see_the_events_of_the_clients_own_writes(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        mirror = Mirror()
        mirror.attach(cache.informer(CONFIGMAPS))
        assert cache.wait_for_sync(CONFIGMAPS, 10)
        client = Client(cache, timeout=10)
        created = client.create(cm("a", k="1"))
        updated = client.update(_changed(created, k="2"))
        client.delete(CONFIGMAPS, "a", "default")
        mirror.wait(lambda m: ("DELETED", "default/a") in [(t, k) for t, k, _ in m.log])
        kinds = [(t, r) for t, k, r in mirror.log if k == "default/a"]
        assert kinds[:2] == [("ADDED", _rv(created)), ("MODIFIED", _rv(updated))]
        assert kinds[2][0] == "DELETED" and len(kinds) == 3 and not mirror.errors


def test_a_write_of_a_kind_without_informer_does_not_wait_and_a_first_read_sees_it(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        served.cluster.delay_watch_events(math.inf)  # a wait would time out: none happens
        created = Client(cache, timeout=0.2).create(cm("a", k="1"))
        assert not cache.informers()
        served.cluster.delay_watch_events(0)
        assert _rv(cache.get(CONFIGMAPS, "a", "default")) == _rv(created)


def test_held_watch_events_are_never_claimed_by_a_bookmark(served: ServedCluster) -> None:
    cluster = served.cluster
    before = cluster.resource_version
    cluster.delay_watch_events(math.inf)
    cluster.apply_object(cm("a", k="1"))
    stream = RequestsTransport(served.url).stream(
        "/api/v1/namespaces/default/configmaps",
        params={"watch": "1", "allowWatchBookmarks": "true", "resourceVersion": before, "timeoutSeconds": "10"})
    try:
        assert cluster.wait_for_watchers(1)
        cluster.send_bookmarks()
        first = next(iter(stream.iter_lines()))
        assert b'"BOOKMARK"' in first and f'"resourceVersion":"{before}"'.encode() in first.replace(b" ", b"")
    finally:
        stream.close()
        cluster.delay_watch_events(0)


def test_one_client_shared_by_worker_threads_reads_every_write_back(served: ServedCluster) -> None:
    workers, writes = 4, 15
    with object_cache(served) as cache:
        assert cache.wait_for_sync(CONFIGMAPS, 10)
        client = Client(cache, timeout=10)
        served.cluster.delay_watch_events(0.01)  # every event lags a little: a read without the wait would be stale
        stale: list[str] = []
        errors: list[BaseException] = []
        start = threading.Barrier(workers)

        def work(worker: int) -> None:
            try:
                start.wait(10)
                obj = client.create(cm(f"w{worker}", n="0"))
                for n in range(1, writes):
                    obj = client.update(_changed(obj, n=str(n)))
                    if _rv(cache.get(CONFIGMAPS, f"w{worker}", "default")) != _rv(obj):
                        stale.append(f"w{worker}@{n}")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        served.cluster.delay_watch_events(0)
        assert not errors and not stale, (errors, stale)


def test_deleting_a_namespace_that_still_holds_objects_reads_it_back_terminating(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    kept = cm("kept", namespace="team-a")
    kept["metadata"]["finalizers"] = ["example.com/keep"]
    cluster.apply_object(kept)
    with object_cache(served) as cache:
        assert cache.wait_for_sync("namespaces", 10)
        answer = Client(cache, timeout=5).delete("namespaces", "team-a")
        held = cache.get("namespaces", "team-a")
        assert _rv(held) == _rv(answer) and held["status"]["phase"] == "Terminating"
