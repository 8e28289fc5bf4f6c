"""Namespace deletion as kube-apiserver and the namespace controller perform it.

"Namespaces" concept page and the namespace lifecycle: deleting a namespace sets its ``deletionTimestamp`` and
``status.phase: Terminating``; the namespace controller then deletes every object in it (objects holding
finalizers only get their ``deletionTimestamp``, and keep the namespace Terminating until they are gone); once
the namespace is empty its ``spec.finalizers`` entry ``kubernetes`` is removed and, with no
``metadata.finalizers`` left, the namespace itself is deleted. The kit runs the controller's work at once.
"""

from __future__ import annotations

import copy
from typing import Any

from restmapper.testing._store import ObjectStore

__all__ = ["NAMESPACES_KEY", "finish_namespace", "terminate_namespace"]

NAMESPACES_KEY = "namespaces"


def _contents(store: ObjectStore, namespace: str) -> list[tuple[str, dict[str, Any]]]:
    return [(key, obj) for key, bucket in store.buckets.items() if key != NAMESPACES_KEY
            for obj in list(bucket.values()) if obj["metadata"].get("namespace") == namespace]


def terminate_namespace(store: ObjectStore, namespace: dict[str, Any], now: str) -> dict[str, Any]:
    """Mark ``namespace`` Terminating, delete its contents, and delete it when nothing holds it; return its last
    state (lock held)."""
    name = namespace["metadata"]["name"]
    if "deletionTimestamp" not in namespace["metadata"]:
        marked = copy.deepcopy(namespace)
        marked["metadata"]["deletionTimestamp"] = now
        marked["metadata"]["deletionGracePeriodSeconds"] = 0
        marked.setdefault("status", {})["phase"] = "Terminating"
        namespace, _ = store.put(NAMESPACES_KEY, marked, bump_generation=None)
    for key, obj in _contents(store, name):
        meta = obj["metadata"]
        if not meta.get("finalizers"):
            store.remove(key, name, meta["name"])
        elif "deletionTimestamp" not in meta:
            held = copy.deepcopy(obj)
            held["metadata"]["deletionTimestamp"] = now
            held["metadata"]["deletionGracePeriodSeconds"] = 0
            store.put(key, held, bump_generation=None)
    return finish_namespace(store, name) or namespace


def finish_namespace(store: ObjectStore, name: str | None) -> dict[str, Any] | None:
    """If namespace ``name`` is Terminating and empty, finalize and delete it (as the namespace controller);
    return its last state when it was deleted (lock held)."""
    if not name:
        return None
    namespace = store.bucket(NAMESPACES_KEY).get(name)
    if namespace is None or "deletionTimestamp" not in namespace["metadata"] or _contents(store, name):
        return None
    namespace = _remove_kubernetes_finalizer(store, namespace)
    if namespace["metadata"].get("finalizers") or _spec_finalizers(namespace):
        return None
    return store.remove(NAMESPACES_KEY, None, name)


def _spec_finalizers(namespace: dict[str, Any]) -> list[str]:
    return (namespace.get("spec") or {}).get("finalizers") or []


def _remove_kubernetes_finalizer(store: ObjectStore, namespace: dict[str, Any]) -> dict[str, Any]:
    """Store ``namespace`` without the ``kubernetes`` spec finalizer (the namespace controller's, removed once the
    namespace is empty) and return it as stored (unchanged without that finalizer)."""
    spec_finalizers = _spec_finalizers(namespace)
    if "kubernetes" not in spec_finalizers:
        return namespace
    done = copy.deepcopy(namespace)
    done["spec"]["finalizers"] = [f for f in spec_finalizers if f != "kubernetes"]
    stored, _ = store.put(NAMESPACES_KEY, done, bump_generation=None)
    return stored
