"""A watcher stopped and restarted as on leadership loss, while a CRD is deleted and recreated (seed 3, kcp).

kcp tied informers to the leader lease: after losing it they stayed stopped, and the next term got a dead informer
back. Here a stopped Watcher drops its handlers, a restart relists from scratch (nothing from before the stop is
served), and nothing waits for a backoff. (Better still: never stop it on lease loss; see ``restmapper.watch``.)

Run: python examples/watch_lease_loss.py
"""

from __future__ import annotations

import threading
import time
from typing import Any

from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.model import GroupKind
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.watch import Watcher, wait_for

GK = GroupKind("example.com", "Widget")


def crd(scope: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": scope,
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}}


def main() -> None:
    cluster = FakeCluster()
    cluster.add_crd(crd("Namespaced"))
    backoffs: list[float] = []
    with cluster.serve() as served:
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1))))

        def backoff(stop: threading.Event, seconds: float) -> None:
            backoffs.append(seconds)
            stop.wait(seconds)

        watcher = Watcher(mapper, sleep=backoff)
        term1: list[str] = []
        watcher.add_handler(lambda t, k, o: term1.append(f"{t} {o['metadata']['name']}"))

        watcher.start()
        assert watcher.wait_until_healthy(10)
        print("term 1: healthy =", watcher.healthy, "| Widget namespaced =", mapper.rest_mapping(GK).namespaced)

        started = time.monotonic()
        print("lease lost: stop() ->", watcher.stop(timeout=5), f"in {time.monotonic() - started:.2f}s",
              "| running =", watcher.running)
        seen = len(term1)
        cluster.delete_crd("widgets.example.com")
        cluster.add_crd(crd("Cluster"))
        print("while stopped: CRD deleted and recreated cluster-scoped")

        term2: list[str] = []
        ready, updated = threading.Event(), threading.Event()

        def on_event(event_type: str, kind: str, obj: Any) -> None:
            term2.append(f"{event_type} {obj['metadata']['name']}")
            if kind == "CustomResourceDefinition":
                ready.set()
                if event_type == "MODIFIED":
                    updated.set()

        watcher.add_handler(on_event)
        started = time.monotonic()
        watcher.start()
        mapping = wait_for(mapper, GK, timeout=10, watcher=watcher)
        print(f"term 2: Widget namespaced = {mapping.namespaced} after {time.monotonic() - started:.2f}s")
        assert watcher.wait_until_healthy(10) and ready.wait(10)
        print("term 2 handler got:", [e for e in term2 if "widgets" in e])
        print("term 1 handler calls after stop:", len(term1) - seen)
        print("backoff waits:", backoffs)
        cluster.update_crd(crd("Namespaced"))
        assert updated.wait(10)
        print("update after restart seen: Widget namespaced =", mapper.rest_mapping(GK).namespaced)
        watcher.stop()
        ok = not mapping.namespaced and len(term1) == seen and not backoffs
        print("nothing lost, nothing waited:", ok)
        if not ok:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
