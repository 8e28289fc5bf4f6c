"""The one way an HTTP error answer becomes an :class:`~restmapper.errors.APIStatusError`, for every caller.

Discovery, the watcher, the dynamic drop-in and the object cache all turn error answers (and watch ``ERROR``
events) into errors here, so that every one of them is scrubbed of credentials the same way: a proxy may echo the
request's ``Authorization`` header into the body, and the excerpt kept is scrubbed *before* it is cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from restmapper._redact import excerpt, scrubbing
from restmapper.errors import (
    AlreadyExistsError,
    APIStatusError,
    ConflictError,
    ForbiddenError,
    InvalidObjectError,
    ObjectNotFoundStatusError,
)
from restmapper.transport.base import header, scrub_with
from restmapper.transport.retry import parse_retry_after

__all__ = ["REASON_LIMIT", "status_error"]

REASON_LIMIT = 500
"""At most this many characters of server text are kept in an error's reason: a longer one is cut at the last word
boundary before the limit and ends with an ellipsis (``…``), so a reason is never cut mid-word without saying so."""
_SNIFF = 64 * 1024
STATUS_TEXT_LIMIT = 2000
"""At most this many characters of each string of a Status object kept in :attr:`APIStatusError.server_status`."""


def _document(body: bytes | Mapping[str, Any]) -> Any:
    """The decoded body (a Status object, usually), or its text (a str) when it is not JSON."""
    if isinstance(body, Mapping):
        return body
    head = bytes(body[:_SNIFF])
    try:
        doc = json.loads(head)
    except (ValueError, RecursionError):
        return head.decode("utf-8", "replace").strip()
    return None if isinstance(doc, str) else doc  # a JSON string is no message (only text bodies are)


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


def _scrubbed(value: Any, depth: int = 0) -> Any:
    """A copy of a decoded Status with every string scrubbed and cut (nesting bounded: Status is shallow)."""
    if isinstance(value, str):
        return excerpt(value, STATUS_TEXT_LIMIT)
    if depth > 8:
        return None
    if isinstance(value, Mapping):
        return {excerpt(str(k), STATUS_TEXT_LIMIT): _scrubbed(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, depth + 1) for v in value]
    return value


KNOWN_REASONS = frozenset({
    "Unauthorized", "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Gone", "Invalid", "ServerTimeout",
    "StoreReadError", "Timeout", "TooManyRequests", "BadRequest", "MethodNotAllowed", "NotAcceptable",
    "RequestEntityTooLarge", "UnsupportedMediaType", "InternalError", "Expired", "ServiceUnavailable"})
"""The Status reasons apimachinery's ``errors`` package knows (its ``knownReasons``; the empty reason is not one)."""


def _error_class(code: int, server_status: Mapping[str, Any] | None) -> type[APIStatusError]:
    """The type of an error answer other than 403, as apimachinery's ``errors.IsAlreadyExists``/``IsConflict``/
    ``IsNotFound``/``IsInvalid`` read the Status: its ``reason`` first (a 409 ``AlreadyExists`` is no ``Conflict``),
    the code when the reason is not one of :data:`KNOWN_REASONS` (an empty or a future reason: a 409 is then a
    conflict). A 404 is an object's only when its Status names the object
    (``details.name``): a 404 for a resource type ("the server could not find the requested resource") stays a
    plain :class:`APIStatusError`."""
    status: Mapping[str, Any] = server_status or {}
    reason, details = status.get("reason"), status.get("details")
    if reason == "AlreadyExists":
        return AlreadyExistsError
    if reason == "Conflict" or (code == 409 and not _is_known_reason(reason)):
        return ConflictError
    if code == 404 and _names_an_object(details):
        return ObjectNotFoundStatusError
    if code == 422 or reason == "Invalid":
        return InvalidObjectError
    return APIStatusError


def _is_known_reason(reason: object) -> bool:
    """Whether a Status's ``reason`` is one of :data:`KNOWN_REASONS` (a non-string never is)."""
    return isinstance(reason, str) and reason in KNOWN_REASONS


def _names_an_object(details: object) -> bool:
    """Whether a Status's ``details`` name an object (a non-empty ``details.name``)."""
    return isinstance(details, Mapping) and bool(details.get("name"))


def _bounded(text: str) -> str:
    """``text`` when it fits :data:`REASON_LIMIT`, else its words up to the limit followed by ``…``."""
    if len(text) <= REASON_LIMIT:
        return text
    head = text[:REASON_LIMIT - 1]
    space = head.rfind(" ")
    if space > REASON_LIMIT // 2:  # a word boundary not too far back; one very long word is cut where it must be
        head = head[:space]
    return head.rstrip() + "…"


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
        scrubbed of credentials, then bounded to :data:`REASON_LIMIT` characters (cut at a word boundary, ending
        in ``…``), and whose ``server_status`` is the Status object (every string scrubbed and cut to
        :data:`STATUS_TEXT_LIMIT`) when the body was one. Its type
        follows the answer: :class:`ForbiddenError` (403), :class:`AlreadyExistsError`, :class:`ConflictError`,
        :class:`ObjectNotFoundStatusError` (a 404 naming an object), :class:`InvalidObjectError` (422), else
        :class:`APIStatusError` itself.
    """
    code = status if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599 else 500
    doc = _document(body)
    server_status = None
    with scrubbing(lambda text: scrub_with(transport, text)):
        reason = _bounded(excerpt(_reason(doc), REASON_LIMIT + 1))
        if isinstance(doc, Mapping) and doc.get("kind") == "Status":
            server_status = _scrubbed(doc)
    retry_after = None
    if headers is not None:
        retry_after = parse_retry_after(header(headers, "Retry-After"), date=header(headers, "Date"))
    if code == 403:
        return ForbiddenError(path, reason, retry_after=retry_after, server_status=server_status)
    return _error_class(code, server_status)(path, code, reason, retry_after=retry_after, server_status=server_status)
