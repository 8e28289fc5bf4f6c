"""A complete small controller: object cache + client + work queue + leader elector, on the embedded cluster.

It keeps an annotation ``checksum.example.com/sha256`` on every ConfigMap labelled
``checksum.example.com/enabled=true`` equal to the SHA-256 of its ``data`` (and removes it when the label goes).

- The cache watches ConfigMaps for the life of the process; its handlers are bound to the Lease elector
  (``while_leading=elector``), so only the leader enqueues keys (``namespace/name``), and a replica that gains the
  lease gets synthetic adds for every object the cache holds.
- Worker threads take keys from a rate-limited queue: success ``forget``s the key, a failure is retried with
  per-key backoff (``add_rate_limited``), and every key is ``done`` after.
- ``reconcile`` reads through the cache and writes with ``Client``, whose writes return only once the cache holds
  them, so the next reconcile of that key reads the write back (never an older copy that would 409).
- Shutdown: the queue drains (keys handed out finish), the workers exit, the elector stops and releases the Lease
  (a standby replica takes over at its next retry), the cache stops.

Run: python examples/controller.py  (a couple of seconds; prints what it did)
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from typing import Any

from restmapper.client import Client
from restmapper.leader import LeaderElector
from restmapper.store import Informer, ObjectCache, is_not_found, object_key, split_object_key
from restmapper.testing import FakeCluster
from restmapper.workqueue import RateLimitingQueue, ShutDown

LABEL = "checksum.example.com/enabled"
ANNOTATION = "checksum.example.com/sha256"


def checksum(configmap: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(configmap.get("data", {}), sort_keys=True).encode()).hexdigest()[:12]


def wanted(configmap: dict[str, Any]) -> str | None:
    """The annotation this ConfigMap should carry (None: none)."""
    return checksum(configmap) if configmap["metadata"].get("labels", {}).get(LABEL) == "true" else None


class ChecksumController:
    def __init__(self, cache: ObjectCache, elector: LeaderElector, workers: int = 2) -> None:
        self.cache, self.elector = cache, elector
        self.client = Client(cache)                      # writes the cache reads back
        self.queue: RateLimitingQueue[str] = RateLimitingQueue("checksums")
        self.writes: list[str] = []                      # what we did, for the demo's report
        self.retries: list[str] = []
        cache.add_handler("configmaps",                  # handlers only enqueue; attached while we lead
                          on_add=lambda obj: self.queue.add(object_key(obj)),
                          on_update=lambda old, new: self.queue.add(object_key(new)),
                          on_delete=lambda obj: self.queue.add(object_key(obj)),
                          while_leading=elector)
        self.threads = [threading.Thread(target=self.worker, name=f"worker-{i}") for i in range(workers)]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def worker(self) -> None:
        while True:
            try:
                item = self.queue.get()                  # blocks; ShutDown once shut down and drained
            except ShutDown:
                return
            try:
                self.reconcile(item)
                self.queue.forget(item)                  # success: reset the key's backoff
            except Exception as exc:                     # e.g. ConflictError: retry with per-key backoff
                self.retries.append(f"{item}: {type(exc).__name__}")
                self.queue.add_rate_limited(item)
            finally:
                self.queue.done(item)

    def reconcile(self, item: str) -> None:
        if not self.elector.is_leader:                   # lost the lease: the new leader reconciles it
            return
        namespace, name = split_object_key(item)
        try:
            configmap = self.cache.get("configmaps", name, namespace)
        except LookupError as exc:
            if is_not_found(exc):                        # deleted: nothing to keep in step
                return
            raise
        want = wanted(configmap)
        if configmap["metadata"].get("annotations", {}).get(ANNOTATION) == want:
            return                                       # up to date (also right after our own write)
        changed = copy.deepcopy(configmap)               # cached objects are shared: never edit them
        annotations = changed["metadata"].setdefault("annotations", {})
        if want is None:
            del annotations[ANNOTATION]
        else:
            annotations[ANNOTATION] = want
        self.client.update(changed)                      # carries the resourceVersion read: 409 if stale
        self.writes.append(f"{item} -> {want}")

    def stop(self) -> None:
        self.queue.shutdown_with_drain()                 # no new keys; the ones handed out finish
        for thread in self.threads:
            thread.join()
        self.elector.stop()                              # handlers detached, then the Lease released
        self.cache.stop()


def converged(informer: Informer) -> bool:
    """Every ConfigMap carries exactly the annotation it should (what the demo waits for, instead of sleeping)."""
    return all(cm["metadata"].get("annotations", {}).get(ANNOTATION) == wanted(cm)
               for cm in informer.list("default"))


def report(informer: Informer) -> list[str]:
    return sorted(f"{cm['metadata']['name']}={wanted(cm)}" for cm in informer.list("default"))


def configmap(name: str, data: dict[str, str], labelled: bool) -> dict[str, Any]:
    labels = {LABEL: "true"} if labelled else {}
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": data,
            "metadata": {"name": name, "namespace": "default", "labels": labels}}


def main() -> None:
    cluster = FakeCluster.embedded()
    conflict = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409,
                "message": 'Operation cannot be fulfilled on configmaps "c": the object has been modified'}
    cluster.inject("/api/v1/namespaces/default/configmaps/c", status=409, body=json.dumps(conflict),
                   content_type="application/json", times=1)   # c's first write loses a race: retried
    with cluster.serve() as served:
        cache = ObjectCache.from_kubeconfig(str(served.kubeconfig_path), sync_timeout=10)
        informer = cache.informer("configmaps")
        leading, took_over = threading.Event(), threading.Event()
        elector = LeaderElector(cache.mapper, "checksum-controller", "default", identity="replica-1",
                                retry_period=0.1, on_started_leading=leading.set)
        standby = LeaderElector(cache.mapper, "checksum-controller", "default", identity="replica-2",
                                retry_period=0.1, on_started_leading=took_over.set)
        controller = ChecksumController(cache, elector)
        controller.start()
        elector.start()
        assert leading.wait(10)
        standby.start()                                  # another replica: waits while replica-1 renews

        users = Client(cache)                            # the users' edits (the demo makes them itself)
        for name, labelled in (("a", True), ("b", True), ("c", True), ("plain", False)):
            users.create(configmap(name, {"value": name}, labelled))
        assert informer.wait_until(converged, timeout=10)
        print("converged:", report(informer))
        users.patch("configmaps", "a", {"data": {"value": "a2"}}, namespace="default")
        users.patch("configmaps", "b", {"metadata": {"labels": {LABEL: None}}}, namespace="default")
        assert informer.wait_until(converged, timeout=10)
        print("after edits:", report(informer))
        print("standby leading while we lead:", standby.is_leader)

        controller.stop()                                # after it, every key handed out is done
        print("writes:", len(controller.writes), sorted(controller.writes))
        print("retries:", controller.retries)
        print("standby took over after our release:", took_over.wait(10))
        standby.stop()
        lease = cluster.get_object("leases.coordination.k8s.io", "checksum-controller", "default")
        print("lease holder after the standby's release:", repr(lease["spec"].get("holderIdentity") if lease else None))


if __name__ == "__main__":
    main()
