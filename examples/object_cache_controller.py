"""A small reconciler reading through ObjectCache while its API changes under it (docs/design.md §1.3).

It keeps one ConfigMap ``widget-<name>`` per Widget. The cache lives for the process; a Lease leader elector decides
only whether handlers are registered (``add_handler(..., while_leading=elector)``). On the embedded cluster it then
survives, without a restart:

1. losing the lease to another replica and regaining it (handlers detached, then attached again: synthetic adds
   catch up on what changed; the informer never stopped, so no relist);
2. an upgrade that stops serving the version the informer watches (it moves to the new one, no event storm);
3. the CRD deleted (reads raise the no-match, handlers see deletes) and recreated cluster-scoped.

Run: python examples/object_cache_controller.py
"""

from __future__ import annotations

import queue
import threading
from typing import Any

from restmapper.errors import is_no_match
from restmapper.leader import LeaderElector
from restmapper.store import ObjectCache, is_not_found
from restmapper.testing import FakeCluster
from restmapper.watch import Watcher

WIDGETS = "widgets.example.com"
LEASE = "widget-controller"


def crd(scope: str, versions: tuple[tuple[str, bool], ...]) -> dict[str, Any]:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": WIDGETS},
            "spec": {"group": "example.com", "scope": scope,
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": name, "served": served, "storage": i == len(versions) - 1,
                                   "schema": schema} for i, (name, served) in enumerate(versions)]}}


def widget(name: str, size: int, version: str = "v1alpha1", namespaced: bool = True) -> dict[str, Any]:
    meta = {"name": name, "namespace": "default"} if namespaced else {"name": name}
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": meta, "spec": {"size": size}}


class Reconciler:
    """Handlers only enqueue names; ``drain`` reads the current object from the cache and writes its ConfigMap."""

    def __init__(self, cache: ObjectCache, cluster: FakeCluster) -> None:
        self.cache, self.cluster = cache, cluster
        self.work: queue.Queue[tuple[str, str]] = queue.Queue()
        self.events: list[str] = []

    def follow(self, elector: LeaderElector) -> None:
        """Handle Widget changes while ``elector`` leads (the cache keeps watching either way)."""
        self.cache.add_handler(
            WIDGETS,
            on_add=lambda o: self._enqueue("add", o),
            on_update=lambda old, new: self._enqueue("update", new),
            on_delete=lambda o: self._enqueue("delete", o),
            while_leading=elector)

    def _enqueue(self, what: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.events.append(f"{what} {meta['name']}")
        self.work.put((meta.get("namespace") or "", meta["name"]))

    def drain(self, expected: int) -> list[str]:
        done = []
        for _ in range(expected):
            namespace, name = self.work.get(timeout=10)
            try:
                obj = self.cache.get(WIDGETS, name, namespace or None)
            except Exception as exc:
                if not (is_not_found(exc) or is_no_match(exc)):
                    raise
                self.cluster.delete_object("configmaps", f"widget-{name}", "default") if self.cluster.get_object(
                    "configmaps", f"widget-{name}", "default") else None
                done.append(f"{name}: gone")
                continue
            self.cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": f"widget-{name}", "namespace": "default"},
                                       "data": {"size": str(obj["spec"]["size"]), "from": obj["apiVersion"]}})
            done.append(f"{name}: size {obj['spec']['size']} via {obj['apiVersion']}")
        return sorted(done)


def main() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("Namespaced", (("v1alpha1", True),)))
    for name, size in (("a", 1), ("b", 2)):
        cluster.apply_object(widget(name, size))
    with cluster.serve() as served:
        cache = ObjectCache.from_kubeconfig(str(served.kubeconfig_path), sync_timeout=10)
        with Watcher(cache.mapper, watch_apiservices=False) as watcher:   # process lifetime, like the cache
            cache.watcher = watcher
            controller = Reconciler(cache, cluster)
            informer = cache.informer(WIDGETS)

            leading, lost = threading.Event(), threading.Event()
            elector = LeaderElector(cache.mapper, LEASE, "default", identity="replica-1", retry_period=0.1,
                                    on_started_leading=leading.set, on_stopped_leading=lost.set)
            controller.follow(elector)
            elector.start()
            assert leading.wait(10)
            print("term 1:", controller.drain(2))

            leading.clear()
            cluster.steal_lease(LEASE, "default", "replica-2")  # another replica takes the lease over
            assert lost.wait(10)
            cluster.apply_object(widget("a", 10))
            updated = cluster.apply_object(widget("c", 3))
            cache.wait_for(WIDGETS, "c", "default", resource_version=updated["metadata"]["resourceVersion"],
                           timeout=10)
            print("while not leader, handler calls:", len(controller.events) - 2)
            cluster.expire_lease(LEASE, "default")  # replica-2 goes away: we acquire at the next retry
            assert leading.wait(10)
            print("term 2 (synthetic adds):", controller.drain(3), "| lease transitions:", elector.lease_transitions,
                  "| lists:", informer.stats.lists)

            before = len(controller.events)
            cluster.update_crd(crd("Namespaced", (("v1alpha1", False), ("v1beta1", True))))
            informer.wait_until(lambda i: i.get("a", "default")["apiVersion"] == "example.com/v1beta1", timeout=10)
            moved = cluster.apply_object(widget("b", 20, version="v1beta1"))
            cache.wait_for(WIDGETS, "b", "default", resource_version=moved["metadata"]["resourceVersion"], timeout=10)
            assert informer.mapping is not None
            print(f"after the upgrade: watching {informer.mapping.resource.version}, a is",
                  cache.get(WIDGETS, "a", "default")["apiVersion"], f"| moves={informer.stats.moves}")
            drained = controller.drain(1)  # handlers run on their own thread: wait for the work they queue first
            print("upgrade events:", controller.events[before:], "->", drained)

            cluster.delete_crd(WIDGETS)
            informer.wait_for_state("not_served", timeout=10)
            try:
                cache.get(WIDGETS, "a", "default")
            except Exception as exc:
                print("CRD deleted: state", informer.state, "| get raises no-match:", is_no_match(exc))
            print("deletes:", controller.drain(3))

            cluster.add_crd(crd("Cluster", (("v1beta1", True),)))
            cluster.apply_object(widget("z", 7, version="v1beta1", namespaced=False))
            print("CRD recreated cluster-scoped:", controller.drain(1), "| state", informer.state)
            made = cluster.get_object("configmaps", "widget-z", "default")
            ok = informer.state == "synced" and informer.stats.restarts == 1 and made is not None
            ok = ok and made["data"]["size"] == "7" and controller.events[before:before + 1] == ["update b"]
            elector.stop()  # handlers detached, then the Lease released
            cache.stop()
        print("survived everything without a restart:", ok)
        if not ok:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
