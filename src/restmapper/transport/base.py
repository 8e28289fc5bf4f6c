"""The transport contract: the only place restmapper does network I/O.

A transport sends ``GET`` requests to one API server and returns the raw answer; it never interprets
discovery documents and never raises for an HTTP status (the caller decides what a 404 means). It raises
:class:`~restmapper.errors.TransportError` only when no answer could be had (after its own bounded retries)
and :class:`~restmapper.errors.ResponseTooLargeError` when a body exceeds its size cap.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["Response", "StreamResponse", "Transport", "WritingTransport", "header", "scrub_with"]

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
"""Default response-size cap: 64 MiB."""


def header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive header lookup on any mapping; returns None when absent."""
    value = headers.get(name)
    if value is not None:
        return value
    lname = name.lower()
    for key, val in headers.items():
        if key.lower() == lname:
            return val
    return None


@dataclass(frozen=True, slots=True)
class Response:
    """A complete HTTP answer.

    Attributes:
        status: HTTP status code.
        headers: response headers; look them up with :meth:`header` (case-insensitive).
        body: the full body (already bounded by the transport's size cap).
        path: the request path, without query string.
    """

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    path: str = ""

    def header(self, name: str) -> str | None:
        """Case-insensitive header lookup."""
        return header(self.headers, name)

    @property
    def content_type(self) -> str:
        """The Content-Type header, or "" when absent."""
        return self.header("Content-Type") or ""


class StreamResponse(Protocol):
    """A streaming answer (for watches): status and headers known, body read line by line."""

    status: int
    headers: Mapping[str, str]

    def iter_lines(self) -> Iterator[bytes]:
        """Yield newline-delimited chunks of the body until the server closes the stream.

        Raises:
            TransportError: on a read timeout or a dropped connection.
        """
        ...

    def read(self) -> bytes:
        """Read the rest of the body (bounded by the size cap), for non-200 answers."""
        ...

    def close(self) -> None:
        """Close the stream; safe to call twice and from another thread."""
        ...


@runtime_checkable
class Transport(Protocol):
    """Sends GET requests to one API server.

    Attributes:
        base_url: the server URL (scheme, host, port, optional path prefix); never carries credentials.
        identity: an opaque, credential-free string that differs between users of the same server (a hash of
            the credential), for keying on-disk caches by server *and* identity.

    Optional attribute (read with ``getattr``, not part of the protocol check): ``streams``, False for a transport
    whose :meth:`stream` always fails (an in-process one); the object cache refuses such a transport up front.
    """

    base_url: str
    identity: str

    def get(self, path: str, headers: Mapping[str, str] | None = None, *,
            params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """GET ``path`` (absolute, e.g. ``/apis/apps/v1``) and return the whole answer.

        Args:
            path: the request path.
            headers: extra request headers (Accept, If-None-Match).
            params: query parameters.
            timeout: read timeout in seconds overriding the transport default.

        Returns:
            The Response, whatever its status (after retries of 429/5xx were exhausted).

        Raises:
            TransportError: no answer (connection error, timeout, TLS error) after bounded retries.
            ResponseTooLargeError: the body exceeded the size cap.
        """
        ...

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> StreamResponse:
        """Open a streaming GET (a watch); no retries.

        Raises:
            TransportError: the connection could not be opened.
        """
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class WritingTransport(Transport, Protocol):
    """A :class:`Transport` that also sends requests with a body (POST, PUT, PATCH, DELETE): what writes need.

    A separate protocol so that a read-only transport (third-party, or a test's) stays a valid ``Transport``.
    """

    def request(self, method: str, path: str, headers: Mapping[str, str] | None = None, body: bytes = b"", *,
                params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """Send ``method path`` with ``body`` and return the whole answer, whatever its status.

        Args:
            method: the HTTP method, upper case (``POST``, ``PUT``, ``PATCH``, ``DELETE``; ``GET`` as :meth:`get`).
            path: the request path (absolute).
            headers: request headers (``Content-Type`` of the body, ``Accept``).
            body: the request body, bytes.
            params: query parameters.
            timeout: read timeout in seconds overriding the transport default.

        Returns:
            The Response. A request other than GET is resent only after a 429 (the server did nothing with it),
            never after a connection error, a timeout or a 5xx (it may have been applied).

        Raises:
            TransportError: no answer (connection error, timeout, TLS error).
            ResponseTooLargeError: the answer exceeded the size cap.
        """
        ...


def scrub_with(transport: object, text: str) -> str:
    """Redact credentials from server-provided ``text`` with the transport's ``scrub`` (when it has one).

    ``scrub`` is optional for third-party transports; credential-shaped values (``Authorization: ...``,
    ``Bearer ...``, URL userinfo) are always redacted.
    """
    from restmapper.transport._redact import sanitize

    method = getattr(transport, "scrub", None)
    text = method(text) if callable(method) else text
    return sanitize(str(text))
