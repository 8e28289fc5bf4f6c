"""Telling a 404 for a missing resource *type* from a 404 for a missing object."""

from __future__ import annotations

import json
import logging
from typing import Any

from restmapper.model import GroupVersion

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})

__all__ = ["addresses_subresource", "group_version_of_path", "is_resource_type_not_found", "observe_requests_of"]

log = logging.getLogger("restmapper.dynamic")


def observe_requests_of(client: Any, mapper: Any) -> None:
    """Wrap ``client.request`` (on that instance only) so that a request answering 404 for its resource *type*
    evicts that group from ``mapper.cache`` (the discoverer's ``LazyRESTMapper``; its cache's
    ``report_not_found_limited``): the next lookup sees the new mapping (a CRD version removed, a CRD recreated)
    instead of the cached one. The error is raised as before."""
    original = client.request

    def request(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(method, path, *args, **kwargs)
        except Exception as exc:
            if is_resource_type_not_found(exc, path):
                gv = group_version_of_path(path)
                if gv is not None:
                    log.info("%s %s: resource type not found; evicting group %r", method.upper(), path, gv.group)
                    mapper.cache.report_not_found_limited(gv)
            raise

    client.request = request


def is_resource_type_not_found(exc: BaseException, path: str | None = None) -> bool:
    """Return True when a 404 says the resource *type* is not served, not that an object or subresource is missing.

    kube-apiserver answers an unknown group, version or resource with a ``Status`` whose ``details`` carry no
    ``name`` ("the server could not find the requested resource", from its not-found handler) or with Go's plain
    ``404 page not found``; a missing object (``deployments.apps "x" not found``) has ``details.name``, and so
    has a subresource a CRD does not serve (apiextensions-apiserver answers ``NewNotFound(resource, name)``). An
    unknown subresource of a built-in resource gets the same empty-details Status as an unknown type: only the
    path tells them apart, so a 404 on a subresource ``path`` is never read as the type's.

    Args:
        exc: an exception from a request (``kubernetes.dynamic.exceptions.NotFoundError`` or ``ApiException``).
        path: the request path, when known.

    Returns:
        True only for a 404 whose body does not name an object, on a path that is not a subresource's.
    """
    if getattr(exc, "status", None) != 404:
        return False
    if path is not None and addresses_subresource(path):
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


def addresses_subresource(path: str) -> bool:
    """True for ``.../{resource}/{name}/{subresource}`` paths (``/apis/apps/v1/namespaces/x/deployments/d/scale``).

    ``/api/v1/namespaces/{name}/status`` and ``.../finalize`` are the namespace's subresources; any other
    ``namespaces/{ns}/{resource}`` is a namespaced collection.
    """
    if group_version_of_path(path) is None:
        return False
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    rest = parts[2 if parts[0] == "api" else 3:]
    if rest[:1] == ["namespaces"]:
        if len(rest) == 3:  # ``namespaces/{ns}/{resource}`` lists; only the namespace's own subresources differ
            return parts[0] == "api" and rest[2] in _NAMESPACE_SUBRESOURCES
        rest = rest[2:]
    return len(rest) >= 3


def group_version_of_path(path: str) -> GroupVersion | None:
    """Return the group version a request path is under (``/api/v1/...``, ``/apis/g/v/...``), or None."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return GroupVersion("", parts[1])
    if len(parts) >= 3 and parts[0] == "apis":
        return GroupVersion(parts[1], parts[2])
    return None
