"""What tests keep re-writing: a CRD manifest builder and a manual clock."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.testing._crd_rules import go_lower

__all__ = ["ManualClock", "crd_manifest"]


def crd_manifest(group: str, kind: str, *, versions: Sequence[str] = ("v1",), plural: str | None = None,
                 singular: str | None = None, scope: str = "Namespaced", short_names: Sequence[str] = (),
                 categories: Sequence[str] = (), storage: str | None = None,
                 served: Sequence[str] | None = None) -> dict[str, Any]:
    """Return a minimal, valid ``apiextensions.k8s.io/v1`` CustomResourceDefinition manifest.

    Args:
        group: the API group, e.g. ``example.com``.
        kind: the kind, e.g. ``Widget``.
        versions: the versions, in the order the CRD lists them.
        plural: the resource name; default the kind lower-cased (as Go does) + ``"s"`` (give it for kinds that
            pluralize otherwise).
        singular: the singular name; default the kind lower-cased as Go does.
        scope: ``"Namespaced"`` or ``"Cluster"``.
        short_names: ``spec.names.shortNames``.
        categories: ``spec.names.categories`` (``["all"]`` puts it in ``kubectl get all``).
        storage: the storage version; default the first of ``versions``.
        served: the served versions; default all of ``versions``.

    Returns:
        The manifest (a new dict): ``metadata.name`` is ``<plural>.<group>``, every version has a schema that
        preserves unknown fields. Feed it to ``FakeCluster(crds=[...])`` or ``FakeCluster.add_crd``.

    Raises:
        InvalidArgumentError: no versions, an unknown scope, or a storage/served version not in ``versions``.
    """
    storage, served_set = _storage_and_served(versions, scope, storage, served)
    plural = plural or go_lower(kind) + "s"
    names: dict[str, Any] = {"plural": plural, "singular": singular or go_lower(kind), "kind": kind,
                             "listKind": kind + "List"}
    if short_names:
        names["shortNames"] = list(short_names)
    if categories:
        names["categories"] = list(categories)
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": names,
            "versions": [{"name": v, "served": v in served_set, "storage": v == storage, "schema": schema}
                         for v in versions],
        },
    }


def _storage_and_served(versions: Sequence[str], scope: str, storage: str | None,
                        served: Sequence[str] | None) -> tuple[str, set[str]]:
    """The storage version and the served versions of ``crd_manifest``'s arguments (defaults: the first version,
    every version), checked.

    Raises:
        InvalidArgumentError: no versions, an unknown scope, or a storage/served version not in ``versions``.
    """
    if not versions:
        raise InvalidArgumentError("a CRD needs at least one version")
    if scope not in ("Namespaced", "Cluster"):
        raise InvalidArgumentError(f"scope must be 'Namespaced' or 'Cluster', got {scope!r}")
    storage = versions[0] if storage is None else storage
    served_set = set(versions if served is None else served)
    if storage not in versions or not served_set <= set(versions):
        raise InvalidArgumentError(f"storage {storage!r} and served {sorted(served_set)} must be among "
                                   f"{list(versions)}")
    return storage, served_set


class ManualClock:
    """A monotonic clock (seconds) that moves only when told: inject it as ``clock=`` so tests never sleep.

    Example::

        clock = ManualClock()
        mapper = LazyRESTMapper(discovery, clock=clock, ttl=300)
        clock.advance(301)          # every group is now expired

    Thread-safe.
    """

    def __init__(self, start: float = 1000.0) -> None:
        """Start at ``start`` seconds (not 0, so "never happened" sentinels stay distinguishable)."""
        self._lock = threading.Lock()
        self._now = float(start)

    def __call__(self) -> float:
        """Return the current reading in seconds."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` and return the new reading.

        Raises:
            InvalidArgumentError: ``seconds`` is negative (a monotonic clock never goes back).
        """
        if seconds < 0:
            raise InvalidArgumentError(f"a monotonic clock cannot go back ({seconds} s)")
        with self._lock:
            self._now += seconds
            return self._now

    def __repr__(self) -> str:
        return f"ManualClock({self():.3f})"
