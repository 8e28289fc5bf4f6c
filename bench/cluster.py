"""The benchmark cluster: operator-shaped CRD groups served on loopback, and the clients under test.

Ours is :class:`restmapper.mapper.LazyRESTMapper` over :class:`restmapper.discovery.DiscoveryClient` over
:class:`restmapper.transport.RequestsTransport` without retries; the peer is ``kubernetes.dynamic.DynamicClient``
with its ``LazyDiscoverer`` or ``EagerDiscoverer`` and a cache file in a private temporary directory.

The server's own time is kept apart: :class:`ServerTimer` sums the time the served cluster spends answering
(without injected latency), and :func:`prime` makes it build its discovery documents before a timed run, as
kube-apiserver serves a cached ``/apis`` instead of serialising it per request.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from bench.shapes import GroupShape, crd_manifests, group_shapes
from restmapper import wire
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

__all__ = ["BenchCluster", "PeerFactory", "ServerTimer", "build_cluster", "our_discovery", "our_mapper", "prime",
           "served"]


class BenchCluster:
    """A served benchmark cluster: the :class:`FakeCluster`, its group shapes, URL, latency and server timer."""

    def __init__(self, cluster: FakeCluster, shapes: list[GroupShape]) -> None:
        self.cluster = cluster
        self.shapes = shapes
        self.url = ""
        self.latency_s = 0.0
        self.timer = ServerTimer(cluster)

    @property
    def groups(self) -> int:
        """How many CRD groups it serves."""
        return len(self.shapes)

    def set_mode(self, mode: str) -> None:
        """Switch discovery mode (``aggregated`` or ``legacy``) and prime the server's documents."""
        self.cluster.mode = mode
        prime(self.cluster)


def build_cluster(groups: int) -> BenchCluster:
    """Return a cluster serving the built-in API plus ``groups`` CRD groups shaped after the fixtures."""
    cluster = FakeCluster(builtin=True)
    for i in range(groups):
        for manifest in crd_manifests(i):
            cluster.add_crd(manifest)
    return BenchCluster(cluster, group_shapes(groups))


def prime(cluster: FakeCluster) -> None:
    """Have ``cluster`` build and cache its ``/api`` and ``/apis`` documents in the current mode (untimed).

    The fake server caches a root document per revision, like kube-apiserver's cached discovery; the first
    request after a change would otherwise charge its serialisation (seconds for 1,000 groups) to one client.
    """
    for path in ("/api", "/apis"):
        for accept in (wire.ACCEPT_AGGREGATED, wire.ACCEPT_JSON):
            cluster.handle("GET", path, {}, {"Accept": accept})
    cluster.clear_requests()


class ServerTimer:
    """Sums the seconds the served cluster spends answering (injected latency excluded), across threads."""

    def __init__(self, cluster: FakeCluster) -> None:
        self._cluster = cluster
        self._lock = threading.Lock()
        self.seconds = 0.0
        self.latency_s = 0.0
        inner = cluster.handle_stream

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t0 - self.latency_s
                with self._lock:
                    self.seconds += max(0.0, spent)

        cluster.handle_stream = timed  # type: ignore[method-assign]

    def reset(self) -> None:
        """Start summing from zero."""
        with self._lock:
            self.seconds = 0.0


@contextlib.contextmanager
def served(bench: BenchCluster, latency_ms: float) -> Iterator[str]:
    """Serve ``bench`` on 127.0.0.1 with ``latency_ms`` milliseconds added to every request; yield its URL."""
    fault = bench.cluster.inject("/*", latency=latency_ms / 1000.0) if latency_ms > 0 else None
    bench.latency_s = bench.timer.latency_s = latency_ms / 1000.0
    try:
        with bench.cluster.serve(host="127.0.0.1") as server:
            bench.url = server.url
            yield server.url
    finally:
        bench.latency_s = bench.timer.latency_s = 0.0
        if fault is not None:
            fault.remove()


@contextlib.contextmanager
def latency(bench: BenchCluster, latency_ms: float) -> Iterator[None]:
    """Add ``latency_ms`` to every request of an already served cluster while the context is open."""
    if latency_ms <= 0:
        yield
        return
    fault = bench.cluster.inject("/*", latency=latency_ms / 1000.0)
    bench.latency_s = bench.timer.latency_s = latency_ms / 1000.0
    try:
        yield
    finally:
        bench.latency_s = bench.timer.latency_s = 0.0
        fault.remove()


def our_discovery(url: str) -> DiscoveryClient:
    """Return a fresh discovery client for ``url`` that makes exactly one attempt per request."""
    return DiscoveryClient(RequestsTransport(url, retry=RetryPolicy(max_attempts=1)))


def our_mapper(url: str, *, miss_refresh_interval: float = 1.0) -> LazyRESTMapper:
    """Return a fresh (cold) mapper for ``url``."""
    return LazyRESTMapper(our_discovery(url), miss_refresh_interval=miss_refresh_interval)


class PeerFactory:
    """Builds ``kubernetes.dynamic.DynamicClient`` instances, each with its own cache file under ``cache_dir``.

    The peer's default cache file is shared in the system temporary directory and would make "cold" runs warm;
    every client made here gets a new file instead (``cache_file`` names one explicitly to start warm from it).
    """

    def __init__(self, cache_dir: str) -> None:
        self.cache_dir = cache_dir
        self._numbers = itertools.count()

    def new_cache_file(self) -> str:
        """Return a path in ``cache_dir`` that no client used yet."""
        return os.path.join(self.cache_dir, f"peer-{next(self._numbers)}.json")

    def client(self, url: str, *, eager: bool = False, cache_file: str | None = None) -> Any:
        """Return a DynamicClient for ``url`` (constructing it already reads ``/version`` and ``/apis``)."""
        from kubernetes import client as k8s_client
        from kubernetes.dynamic import DynamicClient
        from kubernetes.dynamic.discovery import EagerDiscoverer, LazyDiscoverer

        configuration = k8s_client.Configuration(host=url)
        api_client = k8s_client.ApiClient(configuration)
        discoverer = EagerDiscoverer if eager else LazyDiscoverer
        path = cache_file or self.new_cache_file()
        return DynamicClient(api_client, cache_file=path, discoverer=discoverer)  # type: ignore[no-untyped-call]

    def dropin(self, url: str) -> Any:
        """Return a DynamicClient for ``url`` over our drop-in ``restmapper.dynamic.SelfHealingDiscoverer``."""
        from kubernetes import client as k8s_client
        from kubernetes.dynamic import DynamicClient

        from restmapper.dynamic import SelfHealingDiscoverer

        api_client = k8s_client.ApiClient(k8s_client.Configuration(host=url))
        return DynamicClient(api_client, discoverer=SelfHealingDiscoverer)  # type: ignore[no-untyped-call]
