"""A failed ``requests`` call as a :class:`~restmapper.errors.TransportError`: its kind, whether it is transient,
and the operating system's words, never a credential.

requests and urllib3 wrap the socket's error in layers whose reprs name private classes
(``HTTPSConnectionPool(...): Max retries exceeded ... NewConnectionError(<urllib3.connection...>)``);
:func:`map_requests_error` walks those layers for the ``OSError`` underneath (``127.0.0.1:1: Connection refused``)
and names the failure by the first matching row of a table (TLS error, connect or read timeout, proxy error,
truncated body, invalid request, connection error). Used by
:class:`~restmapper.transport.requests_transport.RequestsTransport` for every request and stream read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import requests
import urllib3
import urllib3.exceptions

from restmapper.errors import TransportError

__all__ = ["map_requests_error"]


def _socket_error(exc: BaseException) -> str | None:
    """``127.0.0.1:1: Connection refused``: the operating system's words under requests' and urllib3's wrappers
    (whose reprs name private classes), with the host and port when urllib3 says them; None if there is none."""
    where, seen = "", set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        where = where or _endpoint(e)
        if isinstance(e, OSError) and e.errno is not None and e.strerror:
            return f"{where}{e.strerror}"
        todo += [getattr(e, "reason", None), e.__cause__, e.__context__,
                 *(a for a in e.args if isinstance(a, BaseException))]
    return None


def _endpoint(exc: BaseException) -> str:
    """``host:port: `` of the connection or pool urllib3 attached to ``exc``, else ""."""
    # The connection (NewConnectionError.conn) or pool (MaxRetryError.pool) as instance attributes only:
    # urllib3 2's NewConnectionError.pool is a property that warns (FutureWarning) it is deprecated; 1.x
    # stores the connection as ``pool``.
    attrs: dict[str, Any] = getattr(exc, "__dict__", {})
    pool: Any = attrs.get("conn") or attrs.get("pool")
    return f"{pool.host}:{pool.port}: " if getattr(pool, "host", None) else ""


_FAILURE_KINDS: tuple[tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...], str, bool], ...] = (
    # (raised, or wrapped as its first argument), what the message calls it, whether it is transient.
    # The first row that matches wins: every RequestException is an OSError, so the generic row comes last.
    ((requests.exceptions.SSLError,), (), "TLS error", False),
    ((requests.exceptions.ConnectTimeout,), (), "connect timeout", True),
    ((requests.exceptions.ReadTimeout, urllib3.exceptions.ReadTimeoutError), (urllib3.exceptions.ReadTimeoutError,),
     "read timeout", True),
    ((requests.exceptions.ProxyError,), (), "proxy error", True),
    ((requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError), (),
     "truncated or undecodable body", True),
    ((requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema,
      requests.exceptions.InvalidHeader), (), "invalid request", False),
    ((requests.exceptions.ConnectionError, urllib3.exceptions.ProtocolError, OSError), (), "connection error", True),
)


def _failure_kind(exc: BaseException) -> tuple[str, bool]:
    """What the message calls the failure ``exc`` and whether it is transient (:data:`_FAILURE_KINDS`; an
    exception of no row is named by its type and is not transient)."""
    first = exc.args[0] if exc.args else None
    for raised, wrapped, kind, transient in _FAILURE_KINDS:
        if isinstance(exc, raised) or isinstance(first, wrapped):
            return kind, transient
    return type(exc).__name__, False


def map_requests_error(exc: BaseException, path: str, scrub: Callable[[str], str], method: str = "GET"
                       ) -> TransportError:
    """Turn a requests/urllib3 exception into a TransportError whose message carries no credential.

    Args:
        exc: the exception raised by requests (or urllib3 underneath it).
        path: the request path.
        scrub: removes known secrets from text.
        method: the request's HTTP method (named in the message).

    Returns:
        The TransportError: ``transient`` is False for TLS failures and malformed URLs, True otherwise.
    """
    kind, transient = _failure_kind(exc)
    detail = scrub(_socket_error(exc) or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
    return TransportError(f"{method} {path}: {kind}: {detail[:500]}", path=path, transient=transient)
