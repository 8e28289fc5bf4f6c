"""Work-queue keys for objects: ``namespace/name`` (``name`` when cluster-scoped), as client-go's
``cache.MetaNamespaceKeyFunc`` and ``cache.SplitMetaNamespaceKey``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from restmapper.errors import InvalidArgumentError


def object_key(obj: Mapping[str, Any]) -> str:
    """The key a controller queues for ``obj``: ``"<namespace>/<name>"``, or ``"<name>"`` for an object without a
    namespace (cluster-scoped), as client-go's ``cache.MetaNamespaceKeyFunc``.

    Args:
        obj: an object as the cache or the API server returns it (``metadata.name``, optional
            ``metadata.namespace``).

    Returns:
        The key; :func:`split_object_key` gives back ``(namespace or None, name)``.

    Raises:
        TypeError: ``obj`` is not a mapping.
        InvalidArgumentError: ``metadata.name`` is missing or empty, or the name or namespace is not a string or
            contains ``/`` (no valid Kubernetes name does).
    """
    if not isinstance(obj, Mapping):
        raise TypeError(f"object_key takes an object (a mapping), got {type(obj).__name__}")
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, namespace = meta.get("name"), meta.get("namespace") or ""
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError("object_key: the object has no metadata.name")
    if not isinstance(namespace, str) or "/" in name or "/" in namespace:
        raise InvalidArgumentError(f"object_key: invalid name {name!r} or namespace {namespace!r}")
    return f"{namespace}/{name}" if namespace else name


def split_object_key(key: str) -> tuple[str | None, str]:
    """``(namespace, name)`` from a key made by :func:`object_key` (namespace None for a cluster-scoped object),
    ready for ``cache.get(kind, name, namespace)``, as client-go's ``cache.SplitMetaNamespaceKey``.

    Args:
        key: ``"<namespace>/<name>"`` or ``"<name>"``.

    Returns:
        ``(namespace or None, name)``.

    Raises:
        TypeError: ``key`` is not a string.
        InvalidArgumentError: the key has more than one ``/``, or an empty name or namespace.
    """
    if not isinstance(key, str):
        raise TypeError(f"split_object_key takes a str key, got {type(key).__name__}")
    parts = key.split("/")
    if len(parts) > 2 or not all(parts):
        raise InvalidArgumentError(f"split_object_key: {key!r} is not a key made by object_key "
                                   "('<namespace>/<name>' or '<name>')")
    return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
