"""The controller of ``controller.py`` in asyncio form: ``AsyncObjectCache``, ``AsyncClient``,
``AsyncRateLimitingQueue`` and ``AsyncLeaderElector``; workers are tasks, handlers run on the loop.

What it keeps in step, and the demo's helpers (``wanted``, ``configmap``, ...), are imported from ``controller.py``.

Run: python examples/controller_async.py  (about a second; prints what it did)
"""

from __future__ import annotations

import asyncio
import copy
import json

from controller import ANNOTATION, configmap, converged, report, wanted

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient
from restmapper.leader import AsyncLeaderElector
from restmapper.store import is_not_found, object_key, split_object_key
from restmapper.testing import FakeCluster
from restmapper.workqueue import AsyncRateLimitingQueue, ShutDown


class ChecksumController:
    def __init__(self, cache: AsyncObjectCache, elector: AsyncLeaderElector, workers: int = 2) -> None:
        self.cache, self.elector = cache, elector
        self.client = AsyncClient(cache)                 # awaits until the cache holds each write
        self.queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("checksums")
        self.writes: list[str] = []
        self.retries: list[str] = []
        self.tasks = [asyncio.create_task(self.worker()) for _ in range(workers)]

    async def start(self) -> None:
        await self.cache.add_handler("configmaps",       # run on the loop, only while we lead
                                     on_add=lambda obj: self.queue.add(object_key(obj)),
                                     on_update=lambda old, new: self.queue.add(object_key(new)),
                                     on_delete=lambda obj: self.queue.add(object_key(obj)),
                                     while_leading=self.elector)
        await self.elector.start()

    async def worker(self) -> None:
        while True:
            try:
                item = await self.queue.get()
            except ShutDown:
                return
            try:
                await self.reconcile(item)
                self.queue.forget(item)
            except Exception as exc:
                self.retries.append(f"{item}: {type(exc).__name__}")
                self.queue.add_rate_limited(item)
            finally:
                self.queue.done(item)

    async def reconcile(self, item: str) -> None:
        if not self.elector.is_leader:
            return
        namespace, name = split_object_key(item)
        try:
            cm = await self.cache.get("configmaps", name, namespace)
        except LookupError as exc:
            if is_not_found(exc):
                return
            raise
        want = wanted(cm)
        if cm["metadata"].get("annotations", {}).get(ANNOTATION) == want:
            return
        changed = copy.deepcopy(cm)
        annotations = changed["metadata"].setdefault("annotations", {})
        if want is None:
            del annotations[ANNOTATION]
        else:
            annotations[ANNOTATION] = want
        await self.client.update(changed)
        self.writes.append(f"{item} -> {want}")

    async def stop(self) -> None:
        await self.queue.shutdown_with_drain()           # the keys handed out finish
        await asyncio.gather(*self.tasks)
        await self.elector.stop()                        # handlers detached, then the Lease released
        await self.cache.aclose()


async def main() -> None:
    cluster = FakeCluster.embedded()
    conflict = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409,
                "message": 'Operation cannot be fulfilled on configmaps "c": the object has been modified'}
    cluster.inject("/api/v1/namespaces/default/configmaps/c", status=409, body=json.dumps(conflict),
                   content_type="application/json", times=1)
    with cluster.serve() as served:
        cache = AsyncObjectCache.from_kubeconfig(str(served.kubeconfig_path), sync_timeout=10)
        informer = await cache.informer("configmaps")
        leading = asyncio.Event()
        elector = AsyncLeaderElector(cache.cache.mapper, "checksum-controller", "default", identity="replica-1",
                                     retry_period=0.1, on_started_leading=leading.set)
        controller = ChecksumController(cache, elector)
        await controller.start()
        await asyncio.wait_for(leading.wait(), 10)

        users = AsyncClient(cache)
        for name, labelled in (("a", True), ("b", True), ("c", True), ("plain", False)):
            await users.create(configmap(name, {"value": name}, labelled))
        assert await asyncio.to_thread(informer.wait_until, converged, 10)
        print("converged:", report(informer))
        await users.patch("configmaps", "a", {"data": {"value": "a2"}}, namespace="default")
        await users.patch("configmaps", "b", {"metadata": {"labels": {"checksum.example.com/enabled": None}}},
                          namespace="default")
        assert await asyncio.to_thread(informer.wait_until, converged, 10)
        print("after edits:", report(informer))

        await controller.stop()
        print("writes:", len(controller.writes), sorted(controller.writes))
        print("retries:", controller.retries)
        lease = cluster.get_object("leases.coordination.k8s.io", "checksum-controller", "default")
        print("lease holder after our release:", repr(lease["spec"].get("holderIdentity") if lease else None))


if __name__ == "__main__":
    asyncio.run(main())
