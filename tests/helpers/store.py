"""Helpers for the object-cache tests: a handler that mirrors what it is told and checks the story is consistent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from helpers.watch import WIDGET, make_mapper
from restmapper.store import Informer, ObjectCache
from restmapper.testing import FakeCluster, ManualClock, ServedCluster

WIDGETS = "widgets.example.com"


def cm(name: str, namespace: str = "default", **data: str) -> dict[str, Any]:
    """A ConfigMap manifest."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": dict(data)}


def widget_obj(name: str, namespace: str | None = "default", version: str = "v1", **spec: Any) -> dict[str, Any]:
    """A Widget manifest (cluster-scoped when ``namespace`` is None)."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": meta, "spec": dict(spec)}


def key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace') or ''}/{meta['name']}"


class Mirror:
    """Handlers that rebuild the informer's view from the events alone and fail on an impossible story.

    ``errors`` collects duplicate adds (an add for a key it holds), updates or deletes of keys it does not hold,
    updates that go back in resourceVersion, and updates whose object did not change (a spurious update).
    ``log`` is every ``(type, key, resourceVersion)`` in delivery order; ``threads`` the threads that called.
    """

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.state: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, str, str]] = []
        self.errors: list[str] = []
        self.threads: set[str] = set()

    def _record(self, kind: str, obj: dict[str, Any]) -> None:
        self.log.append((kind, key(obj), obj["metadata"].get("resourceVersion", "")))
        self.threads.add(threading.current_thread().name)
        self.cond.notify_all()

    def on_add(self, obj: dict[str, Any]) -> None:
        with self.cond:
            if key(obj) in self.state:
                self.errors.append(f"duplicate add {key(obj)}")
            self.state[key(obj)] = obj
            self._record("ADDED", obj)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        with self.cond:
            held = self.state.get(key(new))
            if held is None:
                self.errors.append(f"update of unknown {key(new)}")
            elif int(new["metadata"]["resourceVersion"]) <= int(held["metadata"]["resourceVersion"]):
                self.errors.append(f"update of {key(new)} not newer")
            self.state[key(new)] = new
            self._record("MODIFIED", new)

    def on_delete(self, obj: dict[str, Any]) -> None:
        with self.cond:
            if self.state.pop(key(obj), None) is None:
                self.errors.append(f"delete of unknown {key(obj)}")
            self._record("DELETED", obj)

    def attach(self, informer: Informer) -> Any:
        return informer.add_handler(self.on_add, self.on_update, self.on_delete)

    def versions(self) -> dict[str, str]:
        with self.cond:
            return {k: v["metadata"]["resourceVersion"] for k, v in self.state.items()}

    def wait(self, predicate: Callable[[Mirror], bool], timeout: float = 10.0) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self), timeout), (self.log[-20:], self.errors)

    def clear_log(self) -> None:
        with self.cond:
            self.log.clear()


def server_versions(cluster: FakeCluster, resource: str, namespace: str | None = None) -> dict[str, str]:
    return {key(o): o["metadata"]["resourceVersion"] for o in cluster.list_objects(resource, namespace)}


def converged(mirror: Mirror, cluster: FakeCluster, resource: str, timeout: float = 10.0) -> None:
    """Wait until the mirror equals the server's objects of ``resource`` (resourceVersions included)."""
    mirror.wait(lambda m: m.versions() == server_versions(cluster, resource), timeout)


@contextmanager
def object_cache(served: ServedCluster, **options: Any) -> Iterator[ObjectCache]:
    """A cache over ``served`` with fast backoffs and probes (no test waits for a real backoff)."""
    mapper = make_mapper(served.url, miss_refresh_interval=0.0)
    defaults: dict[str, Any] = {"backoff_initial": 0.01, "backoff_max": 0.1, "probe_initial": 0.02,
                                "probe_max": 0.2, "sync_timeout": 10.0}
    cache = ObjectCache(mapper, **{**defaults, **options})
    try:
        yield cache
    finally:
        assert cache.stop(timeout=10)


@contextmanager
def widget_cluster() -> Iterator[ServedCluster]:
    """A served cluster with the built-in profile and the Widget CRD (v1 preferred, v1beta1)."""
    cluster = FakeCluster()
    cluster.add_crd(WIDGET)
    with cluster.serve() as served:
        yield served


class ClockBackoff:
    """A ``sleep(stop, seconds)`` for an :class:`ObjectCache` driven by a :class:`ManualClock`: each backoff wait is
    recorded and lasts until the test advances the clock past it (or the cache stops). Nothing really sleeps."""

    def __init__(self, clock: ManualClock | None = None) -> None:
        self.clock = clock or ManualClock()
        self.cond = threading.Condition()
        self.delays: list[float] = []
        self.parked = 0  # waits in progress

    def __call__(self, stop: threading.Event, seconds: float) -> None:
        with self.cond:
            until = self.clock() + seconds
            self.delays.append(seconds)
            self.parked += 1
            self.cond.notify_all()
            try:
                while self.clock() < until and not stop.is_set():
                    self.cond.wait(0.05)  # the informer's stop event cannot notify this condition: look again
            finally:
                self.parked -= 1
                self.cond.notify_all()

    def wait_parked(self, waits: int, timeout: float = 10.0) -> None:
        """Wait until the ``waits``-th backoff wait has begun and is in progress."""
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.delays) >= waits and self.parked, timeout), self.delays

    def advance(self, seconds: float) -> None:
        """Move the clock (ending every backoff wait it passes)."""
        with self.cond:
            self.clock.advance(seconds)
            self.cond.notify_all()
