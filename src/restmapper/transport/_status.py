"""The one way an HTTP error answer becomes an :class:`~restmapper.errors.APIStatusError`, for every caller.

Discovery, the watcher, the dynamic drop-in and the object cache all turn error answers (and watch ``ERROR``
events) into errors here, so that every one of them is scrubbed of credentials the same way: a proxy may echo the
request's ``Authorization`` header into the body, and the excerpt kept is scrubbed *before* it is cut.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from restmapper._redact import excerpt, scrubbing
from restmapper.errors import APIStatusError, status_error_class
from restmapper.transport.base import header, scrub_with
from restmapper.transport.retry import parse_retry_after

__all__ = ["REASON_LIMIT", "status_error"]

REASON_LIMIT = 200
"""At most this many characters of server text are kept in an error's reason."""
_SNIFF = 64 * 1024


def _decoded(body: bytes | Mapping[str, Any]) -> Any:
    """The JSON document of ``body`` (its first 64 KiB), the text when it is not JSON, or the mapping itself."""
    if isinstance(body, Mapping):
        return body
    head = bytes(body[:_SNIFF])
    try:
        return json.loads(head)
    except (ValueError, RecursionError):
        return head.decode("utf-8", "replace").strip()


def _reason(doc: Any) -> str:
    """``Status.message`` (or the first line of a text body), not yet scrubbed nor cut."""
    if isinstance(doc, str):
        if doc.lower().startswith(("<!doctype", "<html")):
            return "HTML page (probably from a proxy)"
        first = doc.splitlines()[0] if doc else ""
        return "".join(ch for ch in first if ch.isprintable())
    if isinstance(doc, Mapping):
        message = doc.get("message")
        if isinstance(message, str):
            return "".join(ch for ch in message if ch.isprintable())
    return ""


def _scrubbed(value: Any, scrub: Callable[[str], str]) -> Any:
    """A copy of a decoded JSON value with every string passed through ``scrub`` (keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return {scrub(str(k)): _scrubbed(v, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, scrub) for v in value]
    return value


def status_error(transport: object, path: str, status: object, body: bytes | Mapping[str, Any] = b"",
                 headers: Mapping[str, str] | None = None) -> APIStatusError:
    """Return the typed error for an error answer or a watch ``ERROR`` event.

    Args:
        transport: the transport that got the answer (its ``scrub`` removes the credentials it holds).
        path: the request path.
        status: the HTTP status, or a Status object's ``code`` (anything but an int in 100..599 counts as 500).
        body: the error body (bytes; only its first 64 KiB are read) or a decoded Status object.
        headers: the response headers (``Retry-After`` is kept, in seconds, as client-go reads it).

    Returns:
        An :class:`APIStatusError` whose ``reason`` is ``Status.message`` or the first line of a text body,
        scrubbed of credentials, then cut to :data:`REASON_LIMIT` characters; its ``server_status`` the Status
        object (every string scrubbed) when the body was one. Its type follows the Status (see
        :func:`~restmapper.errors.status_error_class`): :class:`~restmapper.errors.ConflictError`,
        :class:`~restmapper.errors.AlreadyExistsError`, :class:`~restmapper.errors.ObjectNotFoundStatusError`,
        :class:`~restmapper.errors.InvalidObjectError`, :class:`~restmapper.errors.ForbiddenError`, or
        :class:`APIStatusError` itself.
    """
    code = status if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599 else 500
    doc = _decoded(body)
    server_status = None
    with scrubbing(lambda text: scrub_with(transport, text)):
        reason = excerpt(_reason(doc), REASON_LIMIT)
        if isinstance(doc, Mapping) and doc.get("kind") == "Status":
            with contextlib.suppress(RecursionError):  # a hostile nesting depth: keep the error, not the Status
                server_status = _scrubbed(doc, lambda text: scrub_with(transport, text))
    retry_after = None
    if headers is not None:
        retry_after = parse_retry_after(header(headers, "Retry-After"), date=header(headers, "Date"))
    cls = status_error_class(code, server_status)
    return cls(path, code, reason, retry_after=retry_after, server_status=server_status)
