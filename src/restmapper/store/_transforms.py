"""Ready transforms for the object cache (``ObjectCache(transform=...)``, client-go's ``TransformFunc``).

Each takes an object as the server sent it and returns it with less in it, changed in place: the cache hands a
transform the dict it has just decoded and will own, so no copy is needed. They compose: pass a list,
``transform=[strip_managed_fields, strip_last_applied]``, applied in order. :func:`transformed` runs the cache's
transform on one object and checks what it returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from restmapper.errors import TransformError

__all__ = ["LAST_APPLIED_ANNOTATION", "strip_last_applied", "strip_managed_fields", "transformed"]

LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
"""The annotation ``kubectl apply`` (client-side) writes: a copy of the whole applied manifest."""


def strip_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop ``metadata.managedFields`` (server-side apply's field ownership; often a third of an object's bytes).

    Returns:
        ``obj`` itself, changed in place. As controller-runtime's ``cache.TransformStripManagedFields``.
    """
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def strip_last_applied(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop the ``kubectl.kubernetes.io/last-applied-configuration`` annotation (and ``annotations`` when that
    leaves it empty).

    Returns:
        ``obj`` itself, changed in place.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and LAST_APPLIED_ANNOTATION in annotations:
        del annotations[LAST_APPLIED_ANNOTATION]
        if not annotations:
            del meta["annotations"]
    return obj


_KEPT = ("name", "namespace", "uid", "resourceVersion")
"""The metadata a transform must keep: how the store keys, replaces and orders objects."""


def _callable_name(fn: object) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module else str(name)


def transformed(transform: Callable[[dict[str, Any]], Any], obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """Return ``transform(obj)`` once checked to be the same object: a dict whose ``metadata`` keeps the ``name``,
    ``namespace``, ``uid`` and ``resourceVersion`` of ``obj`` (absent and ``""`` count alike). An ``obj`` without
    a ``metadata`` object is returned as it is (the store refuses it as the server's malformed object).

    Args:
        transform: the cache's transform.
        obj: a wire-form object as the server sent it (the transform may change it in place).
        kind: the informer's kind, for the error.

    Raises:
        TransformError: ``transform`` raised (the cause), or returned anything else (None, a list, a dict without
            metadata, another name, namespace, uid or resourceVersion).
    """
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    before = [meta.get(field) or None for field in _KEPT]  # read first: the transform may change obj in place
    name, namespace = str(before[0] or ""), str(before[1] or "")
    try:
        result = transform(obj)
    except BaseException as exc:  # user code on a worker thread: SystemExit too must not end the informer
        raise TransformError(kind, _callable_name(transform), namespace, name,
                             f"raised {type(exc).__name__}: {exc}") from exc
    problem = _problem(result, before)
    if problem:
        raise TransformError(kind, _callable_name(transform), namespace, name, problem)
    assert isinstance(result, dict)
    return result


def _problem(result: object, before: list[Any]) -> str:
    """What is wrong with a transform's ``result`` (``""``: nothing), ``before`` the values of the kept metadata
    fields (:data:`_KEPT`) of the object it was given."""
    if not isinstance(result, dict):
        return f"returned {'None' if result is None else 'a ' + type(result).__name__}, not the object"
    new_meta = result.get("metadata")
    if not isinstance(new_meta, dict):
        return "returned an object without metadata"
    for field, old in zip(_KEPT, before, strict=True):
        new = new_meta.get(field) or None
        if new != old:
            return f"dropped metadata.{field}" if new is None else f"changed metadata.{field} from {old!r} to {new!r}"
    return ""
