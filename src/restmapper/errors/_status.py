"""Typed errors for a server's error answers to object requests (published by :mod:`restmapper.errors`).

Each is an :class:`APIStatusError` carrying the server's ``Status`` object (``server_status``), chosen by
``restmapper.transport.status_error`` from the Status ``reason`` and HTTP code as apimachinery's
``errors.IsConflict``/``IsAlreadyExists``/``IsNotFound``/``IsInvalid`` read them (403 is
:class:`~restmapper.errors.ForbiddenError`). :class:`WriteNotObservedError` is the client's read-your-writes
timeout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from restmapper.errors._core import APIStatusError
from restmapper.errors._objects import ObjectNotFoundError, ObjectWaitTimeoutError

__all__ = ["AlreadyExistsError", "ConflictError", "InvalidObjectError", "ObjectNotFoundStatusError",
           "WriteNotObservedError"]


class ConflictError(APIStatusError):
    """409 Conflict: the object changed since it was read (an update or a precondition named an older
    ``resourceVersion``, or another UID). Read it again and retry (client-go ``errors.IsConflict``)."""


class AlreadyExistsError(APIStatusError):
    """409 with reason ``AlreadyExists``: a create of a name that is taken (client-go ``errors.IsAlreadyExists``;
    not a :class:`ConflictError`, as upstream: retrying the create cannot succeed)."""


class InvalidObjectError(APIStatusError):
    """422 Unprocessable Entity (reason ``Invalid``): the server's validation refused the object.

    Attributes:
        causes: the Status ``details.causes``, each ``{"reason", "message", "field"}`` as the server sent it
            (``field`` is the JSON path at fault, e.g. ``spec.replicas``).
    """

    @property
    def causes(self) -> tuple[Mapping[str, Any], ...]:
        details = (self.server_status or {}).get("details")
        causes = details.get("causes") if isinstance(details, Mapping) else None
        return tuple(c for c in causes if isinstance(c, Mapping)) if isinstance(causes, list) else ()


class ObjectNotFoundStatusError(ObjectNotFoundError, APIStatusError):
    """The server's 404 for an object (its Status names it): an :class:`ObjectNotFoundError`
    (``is_not_found(exc)``, ``except ObjectNotFoundError``) that is also an :class:`APIStatusError`.

    Attributes:
        kind: the resource as the server names it in the Status (``configmaps``, ``widgets.example.com``).
        namespace: the namespace of the request path (``""`` for cluster-scoped).
        name: the object name the Status carries.
    """

    def __init__(self, path: str, status: int, reason: str = "", *, retry_after: float | None = None,
                 server_status: Mapping[str, Any] | None = None) -> None:
        APIStatusError.__init__(self, path, status, reason, retry_after=retry_after, server_status=server_status)
        details = (server_status or {}).get("details")
        details = details if isinstance(details, Mapping) else {}
        resource, group = str(details.get("kind") or ""), str(details.get("group") or "")
        self.kind = f"{resource}.{group}" if group else resource
        self.name = str(details.get("name") or "")
        parts = path.split("/")
        self.namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts[:-1] else ""


class WriteNotObservedError(ObjectWaitTimeoutError):
    """A write **succeeded**, but the object cache did not observe it within the client's timeout: a read through
    the cache could still be stale, so the client raises this instead of returning. The write is not undone; do not
    blindly repeat a create (read :attr:`written`).

    Attributes:
        written: what the server returned for the write (the object, or the Status of a delete).
        resource_version: the resourceVersion waited for (None for a delete: the object's absence was awaited).
    """

    def __init__(self, kind: str, namespace: str, name: str, timeout: float, resource_version: str | None,
                 written: Mapping[str, Any]) -> None:
        super().__init__(kind, namespace, name, timeout, resource_version, None)
        self.written = written
        wanted = f" at resourceVersion {resource_version}" if resource_version is not None else " gone"
        self.args = (f"the write succeeded, but the object cache did not see {self.target}{wanted} within "
                     f"{timeout:g}s: reads through it may still be stale (the informer's watch is behind)",)
