"""Ready transforms for the object cache (``ObjectCache(transform=...)``, client-go's ``TransformFunc``).

Each takes an object as the server sent it and returns it with less in it, changed in place: the cache hands a
transform the dict it has just decoded and will own, so no copy is needed. They compose: pass a list,
``transform=[strip_managed_fields, strip_last_applied]``, applied in order.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LAST_APPLIED_ANNOTATION", "strip_last_applied", "strip_managed_fields"]

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
