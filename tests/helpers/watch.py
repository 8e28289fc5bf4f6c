"""Shared helpers for the watch tests: a small CRD, a mapper over a served FakeCluster, an event recorder."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.watch import Watcher

WIDGET: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList",
                  "shortNames": ["wdg"]},
        "versions": [
            {"name": "v1", "served": True, "storage": True,
             "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
            {"name": "v1beta1", "served": True, "storage": False,
             "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
        ],
    },
}


def widget(**changes: Any) -> dict[str, Any]:
    """A copy of the Widget CRD with top-level ``spec`` keys replaced."""
    crd = copy.deepcopy(WIDGET)
    crd["spec"].update(changes)
    return crd


def make_mapper(url: str, **options: Any) -> LazyRESTMapper:
    """A mapper over ``url`` whose transport does not retry (failures show at once)."""
    return LazyRESTMapper(DiscoveryClient(RequestsTransport(url, retry=RetryPolicy(max_attempts=1))), **options)


class Recorder:
    """A watch handler recording ``(event_type, kind, name)``; tests wait on it with a condition, never a sleep."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.events: list[tuple[str, str, str]] = []
        self.objects: list[Mapping[str, Any]] = []

    def __call__(self, event_type: str, kind: str, obj: Mapping[str, Any]) -> None:
        with self.cond:
            self.events.append((event_type, kind, str(obj.get("metadata", {}).get("name"))))
            self.objects.append(obj)
            self.cond.notify_all()

    def wait(self, event: tuple[str, str, str], *, timeout: float = 10.0) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: event in self.events, timeout), (event, self.events)

    def clear(self) -> None:
        with self.cond:
            self.events.clear()
            self.objects.clear()


class BackoffRecorder:
    """A ``sleep(stop, seconds)`` that records every backoff wait; from the ``enough``-th on it sets ``enough`` and
    parks until the owner stops (so a test can inspect a storm of retries without racing it)."""

    def __init__(self, enough: int) -> None:
        self.delays: list[float] = []
        self.enough = threading.Event()
        self._count = enough

    def __call__(self, stop: threading.Event, seconds: float) -> None:
        self.delays.append(seconds)
        if len(self.delays) >= self._count:
            self.enough.set()
            stop.wait(10)


def until(watcher: Watcher, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait (on the watcher's change condition) until ``predicate()`` holds."""
    with watcher.changed:
        assert watcher.changed.wait_for(predicate, timeout), "condition not reached"


@contextmanager
def running(watcher: Watcher, cluster: FakeCluster | None = None, streams: int = 2) -> Iterator[Watcher]:
    """Start ``watcher``, wait until it is healthy (and ``cluster`` has ``streams`` watches open), stop it on exit."""
    watcher.start()
    try:
        assert watcher.wait_until_healthy(10.0), watcher.last_error
        if cluster is not None:
            assert cluster.wait_for_watchers(streams, 10.0)
        yield watcher
    finally:
        assert watcher.stop(timeout=10.0)
