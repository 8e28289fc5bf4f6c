"""Shared helpers for the ``restmapper.dynamic`` tests: CRD manifests, clients over a served FakeCluster."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient

from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.dynamic._query import _attribute
from restmapper.testing import FakeCluster


def crd(group: str, kind: str, *, plural: str | None = None, versions: tuple[str, ...] = ("v1",),
        scope: str = "Namespaced", short_names: tuple[str, ...] = (), storage: str | None = None) -> dict[str, Any]:
    """Return a minimal apiextensions.k8s.io/v1 CRD manifest; the first version is the storage version."""
    plural = plural or kind.lower() + "s"
    storage = storage or versions[0]
    names: dict[str, Any] = {"plural": plural, "kind": kind}
    if short_names:
        names["shortNames"] = list(short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": names,
            "versions": [{"name": v, "served": True, "storage": v == storage,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}
                         for v in versions],
        },
    }


def api_client(url: str) -> kclient.ApiClient:
    """An ApiClient for a loopback server URL."""
    return kclient.ApiClient(kclient.Configuration(host=url))


@contextmanager
def served(cluster: FakeCluster, **options: Any) -> Iterator[tuple[DynamicClient, Any]]:
    """Serve ``cluster`` and yield ``(DynamicClient with our discoverer, the discoverer)``.

    ``options`` go to :class:`SelfHealingDiscoverer` (``clock``, ``ttl``, ``miss_refresh_interval``).
    """
    with cluster.serve() as s:
        dc = DynamicClient(api_client(s.url), discoverer=lambda c, f: SelfHealingDiscoverer(c, f, **options))
        yield dc, dc.resources


class FakeClock:
    """A manual monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def matches(obj: Any, filters: tuple[tuple[str, Any], ...]) -> bool:
    """The reference filter match, written plainly (the drop-in's ``passes`` prepares the filters once per
    question): every attribute the filters ask for, names without case, a string against a list attribute is
    membership, a list compares whole (as upstream); a ``ResourceList``'s are its resource's."""
    for term, wanted in filters:
        actual = _attribute(obj, term)
        if term in ("name", "singular_name") and isinstance(actual, str) and isinstance(wanted, str):
            if actual.lower() != wanted.lower():
                return False
        elif term in ("short_names", "categories", "verbs") and isinstance(wanted, str):
            if not isinstance(actual, list) or wanted.lower() not in (a.lower() for a in actual):
                return False
        elif term in ("short_names", "categories", "verbs") and isinstance(wanted, (list, tuple)):
            if not isinstance(actual, list) or [a.lower() for a in actual] != [str(w).lower() for w in wanted]:
                return False
        elif actual != wanted:
            return False
    return True
