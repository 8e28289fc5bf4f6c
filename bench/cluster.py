"""The benchmark cluster: synthetic CRD groups served on loopback, and the two clients under test.

Ours is :class:`restmapper.mapper.LazyRESTMapper` over :class:`restmapper.discovery.DiscoveryClient` over
:class:`restmapper.transport.RequestsTransport` without retries; the peer is ``kubernetes.dynamic.DynamicClient``
with its ``LazyDiscoverer`` or ``EagerDiscoverer`` and a cache file in a private temporary directory.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from typing import Any

from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

__all__ = ["BETA_EVERY", "PeerFactory", "build_cluster", "our_discovery", "our_mapper", "served", "widget_crd"]

BETA_EVERY = 3
"""Every third synthetic group also serves ``v1beta1`` (so legacy discovery has more than one version per group)."""

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def widget_crd(i: int) -> dict[str, Any]:
    """Return the synthetic CRD manifest number ``i``.

    Group ``g{i}.bench.example.com``, kind ``Widget{i}``, plural ``widget{i}s``, short name ``w{i}``, namespaced;
    versions ``v1`` (served, storage) and, for every ``BETA_EVERY``-th group, ``v1beta1`` (served).
    """
    versions = [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA}]
    if i % BETA_EVERY == 0:
        versions.append({"name": "v1beta1", "served": True, "storage": False, "schema": _SCHEMA})
    group = f"g{i}.bench.example.com"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widget{i}s.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": f"widget{i}s", "singular": f"widget{i}", "kind": f"Widget{i}",
                      "listKind": f"Widget{i}List", "shortNames": [f"w{i}"]},
            "versions": versions,
        },
    }


def build_cluster(groups: int) -> FakeCluster:
    """Return a cluster serving the built-in API plus ``groups`` synthetic CRD groups (aggregated mode)."""
    cluster = FakeCluster(builtin=True)
    for i in range(groups):
        cluster.add_crd(widget_crd(i))
    return cluster


@contextlib.contextmanager
def served(cluster: FakeCluster, latency_ms: float) -> Iterator[str]:
    """Serve ``cluster`` on 127.0.0.1 with ``latency_ms`` milliseconds added to every request; yield its URL."""
    fault = cluster.inject("/*", latency=latency_ms / 1000.0) if latency_ms > 0 else None
    try:
        with cluster.serve(host="127.0.0.1") as server:
            yield server.url
    finally:
        if fault is not None:
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
    every client made here gets a new file instead (``reuse`` names one explicitly to start warm from it).
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
