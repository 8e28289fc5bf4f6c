"""Telling a 404 for a missing resource *type* from a 404 for a missing object."""

from __future__ import annotations

import json

from restmapper.model import GroupVersion

__all__ = ["group_version_of_path", "is_resource_type_not_found"]


def is_resource_type_not_found(exc: BaseException) -> bool:
    """Return True when a 404 says the resource *type* is not served, not that one object is missing.

    kube-apiserver answers an unknown group, version or resource with a ``Status`` whose ``details`` carry no
    ``name`` ("the server could not find the requested resource") or with Go's plain ``404 page not found``; a
    missing object (``deployments.apps "x" not found``) has ``details.name``.

    Args:
        exc: an exception from a request (``kubernetes.dynamic.exceptions.NotFoundError`` or ``ApiException``).

    Returns:
        True only for a 404 whose body does not name an object.
    """
    if getattr(exc, "status", None) != 404:
        return False
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not body:
        return True
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return True  # "404 page not found" from the mux: no handler for that path at all
    if not isinstance(doc, dict) or doc.get("kind") != "Status":
        return True
    details = doc.get("details")
    return not (isinstance(details, dict) and details.get("name"))


def group_version_of_path(path: str) -> GroupVersion | None:
    """Return the group version a request path is under (``/api/v1/...``, ``/apis/g/v/...``), or None."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return GroupVersion("", parts[1])
    if len(parts) >= 3 and parts[0] == "apis":
        return GroupVersion(parts[1], parts[2])
    return None
