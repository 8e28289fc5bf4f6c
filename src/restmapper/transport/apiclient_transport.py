"""A transport over an existing ``kubernetes.client.ApiClient``: its connection pool, TLS and credentials."""

from __future__ import annotations

import hashlib
import logging
import socket
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

import urllib3
import urllib3.exceptions

from restmapper.errors import InvalidArgumentError, RequestTimeoutError, ResponseTooLargeError, TransportError
from restmapper.transport._body import check_content_length, read_capped
from restmapper.transport._deadline import DEFAULT_REQUEST_TIMEOUT, Deadline, check_request_timeout, translated
from restmapper.transport._redact import SecretBook, strip_userinfo
from restmapper.transport._stream import LineStream
from restmapper.transport.base import DEFAULT_MAX_BODY_BYTES, Response
from restmapper.transport.retry import RetryPolicy, run_with_retry

__all__ = ["ApiClientTransport"]

_log = logging.getLogger("restmapper.transport")

_CHUNK = 64 * 1024
_STREAM_CHUNK = 8 * 1024


def _map_urllib3_error(exc: BaseException, path: str, scrub: Callable[[str], str], method: str = "GET"
                       ) -> TransportError:
    if isinstance(exc, urllib3.exceptions.SSLError):
        kind, transient = "TLS error", False
    elif isinstance(exc, urllib3.exceptions.NewConnectionError):
        # Checked before ConnectTimeoutError, which urllib3 2 makes its base class.
        kind, transient = "connection error", True
    elif isinstance(exc, urllib3.exceptions.ConnectTimeoutError):
        kind, transient = "connect timeout", True
    elif isinstance(exc, (urllib3.exceptions.ReadTimeoutError, TimeoutError, socket.timeout)):
        kind, transient = "read timeout", True
    elif isinstance(exc, urllib3.exceptions.ProxyError):
        kind, transient = "proxy error", True
    elif isinstance(exc, (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ProtocolError,
                          urllib3.exceptions.MaxRetryError, OSError)):
        kind, transient = "connection error", True
    elif isinstance(exc, (urllib3.exceptions.LocationValueError, urllib3.exceptions.LocationParseError)):
        kind, transient = "invalid request", False
    else:
        kind, transient = type(exc).__name__, True
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return TransportError(f"{method} {path}: {kind}: {scrub(text)[:500]}", path=path, transient=transient)


def _urllib3_stream(response: Any, path: str, limit: int, scrub: Callable[[str], str],
                    read_deadline: float | None) -> LineStream:
    """A streaming answer over a urllib3 response."""

    def release() -> None:
        response.close()
        response.release_conn()  # a half-read response must not go back to the pool

    return LineStream(
        status=int(response.status), headers=dict(response.headers), path=path, limit=limit,
        chunks=lambda size: response.stream(size, decode_content=True),
        errors=(urllib3.exceptions.HTTPError,),
        map_error=lambda exc: _map_urllib3_error(exc, path, scrub),
        sock=lambda: getattr(getattr(response, "_connection", None), "sock", None),
        release=release,
        read_deadline=read_deadline,
    )


class ApiClientTransport:
    """A :class:`~restmapper.transport.Transport` that sends GETs through a ``kubernetes.client.ApiClient``.

    Requests go through the client's own ``rest_client.pool_manager`` with its ``default_headers`` and the auth
    settings of its Configuration (whose ``refresh_api_key_hook`` runs before every request, so exec-plugin
    tokens refresh exactly as for the client's own calls); TLS, client certificates and proxies are the pool's.

    Args:
        api_client: the client; it stays owned by the caller (:meth:`close` does not close it).
        max_body_bytes: size cap of one body in bytes, enforced while reading.
        retry: the retry policy for :meth:`get` (default :class:`RetryPolicy`).
        connect_timeout: seconds to establish a connection.
        read_timeout: seconds to wait for bytes from the server.
        request_timeout: total deadline of one :meth:`get` attempt in seconds, from the response headers to the
            last body byte (default 32, client-go's discovery timeout; None for none): past it the attempt fails
            with :class:`~restmapper.errors.RequestTimeoutError`. The ApiClient's pool is not ours to change, so
            a server trickling its *headers* is bounded by ``read_timeout`` per read only.

    Raises:
        InvalidArgumentError: the client's Configuration has no host or ``max_body_bytes`` is not positive.

    Status answers (404, 503, ...) come back as Responses, as the ``kubernetes.dynamic`` client would see them
    before raising ``ApiException``.
    """

    def __init__(self, api_client: Any, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 retry: RetryPolicy | None = None, connect_timeout: float = 10.0,
                 read_timeout: float = 30.0, request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT) -> None:
        if max_body_bytes <= 0:
            raise InvalidArgumentError(f"max_body_bytes must be positive, got {max_body_bytes}")
        self._api_client = api_client
        cfg = api_client.configuration
        host = getattr(cfg, "host", None)
        if not host or not isinstance(host, str):
            raise InvalidArgumentError("the ApiClient's Configuration has no host")
        self.base_url: str = strip_userinfo(host).rstrip("/")
        self.max_body_bytes = max_body_bytes
        self.retry = retry if retry is not None else RetryPolicy()
        self._timeout = (connect_timeout, read_timeout)
        self.request_timeout = check_request_timeout(request_timeout)
        self._secrets = SecretBook()
        self.identity: str = self._compute_identity()

    # --- Transport ---------------------------------------------------------------------------------------

    def get(self, path: str, headers: Mapping[str, str] | None = None, *,
            params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """GET ``path`` through the ApiClient's pool and return the whole answer, retrying per :attr:`retry`.

        Args:
            path: absolute request path, e.g. ``/apis/apps/v1``.
            headers: extra request headers (Accept, If-None-Match).
            params: query parameters.
            timeout: read timeout in seconds for this call.

        Returns:
            The Response, whatever its status; after retries of a retried status ran out, the last answer.

        Raises:
            TransportError: no answer after the retries, a TLS failure, or a failing refresh hook.
            ResponseTooLargeError: the body exceeded ``max_body_bytes``.
            InvalidArgumentError: ``path`` does not start with ``/``.
        """
        return self.request("GET", path, headers, params=params, timeout=timeout)

    def request(self, method: str, path: str, headers: Mapping[str, str] | None = None, body: bytes = b"", *,
                params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """Send ``method path`` with ``body`` (a write) through the ApiClient's pool; see
        :meth:`~restmapper.transport.WritingTransport.request`. A GET is retried per :attr:`retry`, another method
        only after a 429.

        Raises:
            TransportError, ResponseTooLargeError, InvalidArgumentError: as :meth:`get`.
        """
        url = self._url(path, params)
        return run_with_retry(self.retry, lambda: self._attempt(path, url, headers, timeout, method, body),
                              path=path, method=method)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> LineStream:
        """Open a streaming GET (a watch) without retries.

        Args:
            path: absolute request path.
            headers: extra request headers.
            params: query parameters.
            timeout: read timeout in seconds between bytes.

        Returns:
            The open stream, whatever its status.

        Raises:
            TransportError: the connection could not be opened.
            InvalidArgumentError: ``path`` does not start with ``/``.
        """
        url = self._url(path, params)
        response = self._send(path, url, headers, timeout, "GET", b"")
        _log.debug("GET %s (stream) -> %d", path, response.status)
        return _urllib3_stream(response, path, self.max_body_bytes, self._scrub, self.request_timeout)

    def scrub(self, text: str) -> str:
        """Return ``text`` with every credential this transport holds (and anything credential-shaped) redacted.

        Upper layers pass server-provided text (error bodies, ``Status.message``) through this before it reaches
        an exception or a log line: a proxy may echo the request's ``Authorization`` header back.
        """
        return self._scrub(text)

    def close(self) -> None:
        """Nothing to release: the ApiClient and its pool belong to the caller."""

    def __repr__(self) -> str:
        return f"ApiClientTransport(base_url={self.base_url!r}, identity={self.identity!r})"

    __str__ = __repr__

    # --- internals ---------------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        return self._secrets.scrub(text)

    def _compute_identity(self) -> str:
        cfg = self._api_client.configuration
        parts = [self.base_url]
        try:
            parts.extend(f"{k}:{v}" for k, v in sorted(self._auth_headers("").items()))
        except TransportError:
            parts.append("auth:unavailable")
        for name in ("cert_file", "username", "password"):
            value = getattr(cfg, name, None)
            if value:
                parts.append(f"{name}:{value}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def _url(self, path: str, params: Mapping[str, str] | None) -> str:
        if not isinstance(path, str) or not path.startswith("/"):
            raise InvalidArgumentError(f"request path must start with '/', got {path!r}")
        query = f"?{urlencode(list(params.items()))}" if params else ""
        return str(self._api_client.configuration.host).rstrip("/") + path + query

    def _auth_headers(self, path: str) -> dict[str, str]:
        """The credential headers of the next request (API keys, else basic auth); each value becomes a secret."""
        out = self._api_key_headers(path)
        if "authorization" not in {k.lower() for k in out}:
            out.update(self._basic_auth_header())
        for value in out.values():
            self._secrets.add(value)
            token = value.partition(" ")[2]
            if token:
                self._secrets.add(token)
        return out

    def _api_key_headers(self, path: str) -> dict[str, str]:
        """The header-borne API keys of the configuration (bearer tokens, refreshed by its hook first).

        Raises:
            TransportError: the refresh hook (an exec plugin) failed; not transient.
        """
        try:
            # auth_settings() calls get_api_key_with_prefix, which runs refresh_api_key_hook: the same path the
            # ApiClient's generated methods take before each call.
            settings = self._api_client.configuration.auth_settings()
        except Exception as exc:  # a failing hook (exec plugin) becomes one typed error
            raise TransportError(f"GET {path}: credential refresh failed: {type(exc).__name__}", path=path,
                                 transient=False) from None
        return {str(s["key"]): str(s["value"]) for s in settings.values() if s.get("in") == "header" and s.get("value")}

    def _basic_auth_header(self) -> dict[str, str]:
        """``authorization: Basic ...`` when the configuration has a username or password, else nothing."""
        cfg = self._api_client.configuration
        username, password = getattr(cfg, "username", None), getattr(cfg, "password", None)
        if not (username or password):
            return {}
        basic = cfg.get_basic_auth_token()
        if not basic:
            return {}
        if password:
            self._secrets.add(str(password))
            self._secrets.add(f"{username or ''}:{password}")
        return {"authorization": str(basic)}

    def _send(self, path: str, url: str, headers: Mapping[str, str] | None, timeout: float | None, method: str,
              body: bytes) -> Any:
        request_headers: dict[str, str] = dict(self._api_client.default_headers)
        cookie = getattr(self._api_client, "cookie", None)
        if cookie:
            request_headers["Cookie"] = cookie
        request_headers.update(self._auth_headers(path))
        if headers:
            request_headers.update(headers)
        connect, read = self._timeout
        try:
            return self._api_client.rest_client.pool_manager.request(
                method, url, headers=request_headers, body=body or None, preload_content=False, retries=False,
                timeout=urllib3.Timeout(connect=connect, read=read if timeout is None else timeout))
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise _map_urllib3_error(exc, path, self._scrub, method) from None

    def _attempt(self, path: str, url: str, headers: Mapping[str, str] | None, timeout: float | None,
                 method: str = "GET", body: bytes = b"") -> Response:
        with Deadline(self.request_timeout, path, method) as deadline, translated(deadline):
            response = self._send(path, url, headers, timeout, method, body)
            try:
                deadline.attach(getattr(getattr(response, "_connection", None), "sock", None))
                response_headers = dict(response.headers)
                check_content_length(response_headers, self.max_body_bytes, path)
                content = read_capped(response.stream(_CHUNK, decode_content=True), self.max_body_bytes, path)
                deadline.check()
            except (ResponseTooLargeError, RequestTimeoutError):
                # Dropping the connection stops the download; a half-read connection must not be reused.
                response.close()
                raise
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise _map_urllib3_error(exc, path, self._scrub, method) from None
            finally:
                response.release_conn()
        _log.debug("%s %s -> %d (%d bytes)", method, path, response.status, len(content))
        return Response(status=int(response.status), headers=response_headers, body=content, path=path)
