"""The ``requests``-based transport: TLS, client certificates, bearer tokens (static, file, exec), proxies."""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, unquote, urlsplit

import requests
import urllib3
import urllib3.exceptions

from restmapper._public import repr_when_unfinished
from restmapper.errors import InvalidArgumentError, TransportError
from restmapper.transport._adapters import DeadlineAdapter, SNIAdapter
from restmapper.transport._body import check_content_length, read_capped
from restmapper.transport._deadline import (
    DEFAULT_REQUEST_TIMEOUT,
    Deadline,
    check_request_timeout,
    translated,
)
from restmapper.transport._redact import SecretBook, strip_userinfo
from restmapper.transport._requests_errors import map_requests_error
from restmapper.transport.base import DEFAULT_MAX_BODY_BYTES, Response
from restmapper.transport.config import ClientConfig, incluster_config, resolve_config
from restmapper.transport.kubeconfig import ConfigError, configuration_options
from restmapper.transport.retry import RetryPolicy, run_with_retry

if TYPE_CHECKING:
    from restmapper.transport._stream import LineStream

__all__ = ["DEFAULT_USER_AGENT", "RequestsTransport"]

_log = logging.getLogger("restmapper.transport")


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
        try:
            return version("kube-restmapper")
        except PackageNotFoundError:
            return "dev"
    except ImportError:  # pragma: no cover - importlib.metadata is stdlib from 3.8
        return "dev"


DEFAULT_USER_AGENT = f"kube-restmapper/{_version()}"
"""The User-Agent sent unless one is given."""

TOKEN_FILE_REFRESH_SECONDS = 60.0
"""How often a token file is re-read: client-go's cached file token source re-reads once a minute."""

_CHUNK = 64 * 1024
_STREAM_CHUNK = 8 * 1024


class _TokenFile:
    """A bearer token read from a file and re-read periodically, so rotated tokens are picked up.

    As client-go ``transport.NewCachedFileTokenSource``: a failed re-read keeps the last good token.
    """

    def __init__(self, path: str, clock: Callable[[], float], period: float, secrets: SecretBook) -> None:
        self.path = path
        self._clock = clock
        self._period = period
        self._secrets = secrets
        self._lock = threading.Lock()  # guards _token and _read_at
        self._token: str | None = None
        self._read_at = 0.0

    def token(self, path: str) -> str:
        with self._lock:
            now = self._clock()
            if self._token is not None and now - self._read_at < self._period:
                return self._token
            try:
                fresh = Path(self.path).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                if self._token is not None:
                    _log.warning("cannot re-read token file %s (%s); keeping the previous token", self.path,
                                 type(exc).__name__)
                    self._read_at = now
                    return self._token
                raise TransportError(f"GET {path}: cannot read token file {self.path}: {type(exc).__name__}",
                                     path=path, transient=False) from None
            if not fresh:
                raise TransportError(f"GET {path}: token file {self.path} is empty", path=path, transient=False)
            self._secrets.add(fresh, f"Bearer {fresh}")
            self._token, self._read_at = fresh, now
            return fresh


def _requests_stream(response: requests.Response, path: str, limit: int, scrub: Callable[[str], str],
                     read_deadline: float | None) -> LineStream:
    """A streaming answer over a requests.Response."""
    from restmapper.transport._stream import LineStream  # watches only: not loaded for plain GETs

    return LineStream(
        status=response.status_code, headers=dict(response.headers), path=path, limit=limit,
        chunks=lambda size: response.iter_content(chunk_size=size),
        errors=(requests.RequestException, urllib3.exceptions.HTTPError),
        map_error=lambda exc: map_requests_error(exc, path, scrub),
        sock=lambda: getattr(getattr(response.raw, "_connection", None), "sock", None),
        release=response.close,
        read_deadline=read_deadline,
    )


def _check_cert(cert: tuple[str, str] | None) -> None:
    """Raise ConfigError unless ``cert`` is None or a (cert_file, key_file) pair of non-empty paths."""
    if cert is not None and (len(cert) != 2 or not all(cert)):
        raise ConfigError("cert must be a (cert_file, key_file) pair")


def _split_server_url(base_url: str) -> SplitResult:
    """``base_url`` split into its parts (surrounding blanks removed).

    Raises:
        ConfigError: ``base_url`` is not an http(s) URL with a host.
    """
    parts = urlsplit(base_url.strip()) if isinstance(base_url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"invalid server URL {strip_userinfo(str(base_url))!r}: expected http(s)://host[:port]")
    return parts


class RequestsTransport:
    """A :class:`~restmapper.transport.Transport` over a ``requests.Session``.

    Args:
        base_url: the API server URL (``https://host:6443``, optionally with a path prefix). A ``user:pass@``
            part is removed and used as basic-auth credentials when ``username`` is not given.
        verify: True to verify TLS against the system CAs, a CA bundle path, or False to skip verification.
        cert: ``(cert_file, key_file)`` paths of a client certificate.
        token: a bearer token.
        token_file: a file holding a bearer token, re-read every minute (projected service-account tokens).
        username: basic-auth user name.
        password: basic-auth password.
        auth_provider: called before every request (retries included); returns headers such as
            ``{"Authorization": "Bearer ..."}`` and wins over the other credentials (exec plugins, refresh hooks).
        proxy: proxy URL for both http and https.
        tls_server_name: the name sent as SNI and checked in the server certificate, when it differs from the host.
        connect_timeout: seconds to establish a connection.
        read_timeout: seconds to wait for bytes from the server (per read, not for the whole body).
        request_timeout: total deadline of one :meth:`get` attempt in seconds, from sending the request to the
            last body byte, however slowly the server sends (default 32, client-go's discovery timeout; None for
            none); past it the attempt fails with :class:`~restmapper.errors.RequestTimeoutError`. Streams
            (watches) have no total deadline.
        max_body_bytes: size cap of one body in bytes, enforced while reading.
        retry: the retry policy for :meth:`get` (default :class:`RetryPolicy`); streams are never retried.
        user_agent: the User-Agent header.
        session: a session to use (it is not closed by :meth:`close`); TLS and proxy settings are passed per
            request, so a shared session is not modified (except that ``tls_server_name`` mounts an adapter).
        identity_material: a stable string identifying the user when credentials rotate (hashed into
            :attr:`identity`, never kept).
        clock: monotonic clock in seconds, for the token-file refresh period.

    Raises:
        ConfigError: ``base_url`` is not an http(s) URL with a host, or ``cert`` is incomplete.

    Credentials are applied as client-go ``rest.Config`` does: a bearer token (static or file) or basic auth,
    client certificates at the TLS layer; none of them appears in ``repr()``, messages or log lines.
    """

    def __init__(
        self,
        base_url: str,
        *,
        verify: bool | str = True,
        cert: tuple[str, str] | None = None,
        token: str | None = None,
        token_file: str | None = None,
        username: str | None = None,
        password: str | None = None,
        auth_provider: Callable[[], Mapping[str, str]] | None = None,
        proxy: str | None = None,
        tls_server_name: str | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 30.0,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        retry: RetryPolicy | None = None,
        user_agent: str = DEFAULT_USER_AGENT,
        session: requests.Session | None = None,
        identity_material: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._secrets = SecretBook()
        username, password = self._read_server_url(base_url, username, password)
        _check_cert(cert)
        if max_body_bytes <= 0:
            raise InvalidArgumentError(f"max_body_bytes must be positive, got {max_body_bytes}")
        self._verify = verify
        self._cert = cert
        self._token = token or None
        self._username = username
        self._password = password
        self._auth_provider = auth_provider
        self._proxies: dict[str, str] | None = None
        self._proxy_display: str | None = None
        if proxy:
            self._proxies, self._proxy_display = self._use_proxy(proxy)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self.request_timeout = check_request_timeout(request_timeout)
        self.max_body_bytes = max_body_bytes
        self.retry = retry if retry is not None else RetryPolicy()
        self._user_agent = user_agent
        self._basic = self._basic_auth(username, password)
        self._secrets.add(token, f"Bearer {token}" if token else None, password, self._basic)
        self._token_file = self._open_token_file(token_file, clock) if token_file else None
        self._session = self._open_session(session, tls_server_name)
        self.identity: str = self._compute_identity(identity_material)

    def _read_server_url(self, base_url: str, username: str | None, password: str | None
                         ) -> tuple[str | None, str | None]:
        """Set :attr:`base_url` from ``base_url`` without its userinfo; return the basic-auth credentials to use:
        ``username``/``password`` when either is given, else the URL's own (``https://user:pw@host``).

        Raises:
            ConfigError: ``base_url`` is not an http(s) URL with a host.
        """
        parts = _split_server_url(base_url)
        if parts.username is not None or parts.password is not None:
            if username is None and password is None:
                username, password = unquote(parts.username or ""), unquote(parts.password or "")
            self._secrets.add(parts.password, unquote(parts.password or ""))
        self.base_url: str = strip_userinfo(base_url.strip()).rstrip("/")
        return username, password

    def _use_proxy(self, proxy: str) -> tuple[dict[str, str], str]:
        """The requests ``proxies`` for ``proxy`` and its form for display (no userinfo); its password becomes a
        secret."""
        proxy_password = urlsplit(proxy).password
        self._secrets.add(proxy_password, unquote(proxy_password or ""))
        return {"http": proxy, "https": proxy}, strip_userinfo(proxy)

    def _open_token_file(self, token_file: str, clock: Callable[[], float]) -> _TokenFile:
        """The bearer token file (``~`` expanded), re-read every :data:`TOKEN_FILE_REFRESH_SECONDS`."""
        return _TokenFile(str(Path(token_file).expanduser()), clock, TOKEN_FILE_REFRESH_SECONDS, self._secrets)

    def _basic_auth(self, username: str | None, password: str | None) -> str | None:
        """The ``Authorization`` value for basic auth (None without credentials), its forms added to the secrets."""
        if username is None and password is None:
            return None
        pair = f"{username or ''}:{password or ''}"
        encoded = base64.b64encode(pair.encode()).decode("ascii")
        # The book adds every derived form (base64, escapes, percent-encoding) of each value.
        self._secrets.add(pair if password else None, encoded)
        return "Basic " + encoded

    def _open_session(self, session: requests.Session | None, tls_server_name: str | None) -> requests.Session:
        """``session``, or a new one this transport owns with the environment's proxy and CA settings resolved
        once; with ``tls_server_name``, its https adapter sends that SNI name."""
        self._owns_session = session is None
        if session is None:
            session = requests.Session()
            # requests re-reads proxy variables (HTTPS_PROXY, NO_PROXY) and REQUESTS_CA_BUNDLE from the environment
            # on every request, scanning os.environ twice (~0.4 ms each time). Every request goes to base_url, so
            # resolve them once, exactly as requests would for that URL, and stop the per-request lookups.
            env = session.merge_environment_settings(self.base_url, self._proxies or {}, True, self._verify,
                                                     self._cert)
            self._proxies = dict(env["proxies"]) or None
            if env["verify"] is not None:
                self._verify = env["verify"]
            session.trust_env = False
            session.mount("https://", DeadlineAdapter())
            session.mount("http://", DeadlineAdapter())
        if tls_server_name:
            session.mount("https://", SNIAdapter(tls_server_name))
        return session

    # --- constructors ------------------------------------------------------------------------------------

    @classmethod
    def from_configuration(cls, cfg: Any, **options: Any) -> RequestsTransport:
        """Build a transport from a ``kubernetes.client.Configuration``.

        Args:
            cfg: the Configuration: host, ssl_ca_cert, verify_ssl, cert_file/key_file, api_key['authorization']
                (or ['BearerToken']) with api_key_prefix, username/password, proxy, tls_server_name and
                refresh_api_key_hook are honoured; the hook runs before each request, as ``ApiClient`` runs it.
            **options: any :class:`RequestsTransport` keyword, overriding what the Configuration gives.

        Returns:
            The transport.

        Raises:
            ConfigError: the Configuration has no usable host.
        """
        merged = configuration_options(cfg)
        merged.update(options)
        return cls(**merged)

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, context: str | None = None,
                        **options: Any) -> RequestsTransport:
        """Build a transport from a kubeconfig, or from the pod's service account when there is none.

        Args:
            path: the kubeconfig file; None resolves as :func:`~restmapper.transport.config.resolve_config`:
                ``$KUBECONFIG`` (several files merged), the in-cluster service account, then ``~/.kube/config``.
            context: the context to use; None uses ``current-context``.
            **options: any :class:`RequestsTransport` keyword (timeouts, retry, ...), overriding the file.

        Returns:
            The transport.

        Raises:
            ConfigError: no usable source (the message lists those tried), unknown context, invalid content, or
                an exec plugin that fails.

        The file is loaded by ``kubernetes.config.load_kube_config`` into a fresh Configuration, so exec plugins,
        auth providers, client certificates and inline CA data work as in ``kubernetes.client``; a user's
        ``tokenFile`` is re-read every minute, as client-go does.
        """
        return cls.from_config(resolve_config(path, context), **options)

    @classmethod
    def from_incluster(cls, service_account_dir: str | None = None, **options: Any) -> RequestsTransport:
        """Build a transport from the pod's service account, as client-go ``rest.InClusterConfig``.

        Args:
            service_account_dir: the folder with ``token``, ``ca.crt`` and ``namespace`` (default
                ``/var/run/secrets/kubernetes.io/serviceaccount``).
            **options: any :class:`RequestsTransport` keyword, overriding the service account's settings.

        Returns:
            The transport; the token file is re-read every minute, so rotated tokens are followed.

        Raises:
            ConfigError: not in a pod, or the token file is missing or empty.
        """
        return cls.from_config(incluster_config(service_account_dir), **options)

    @classmethod
    def from_config(cls, config: ClientConfig, **options: Any) -> RequestsTransport:
        """Build a transport from resolved settings (:func:`~restmapper.transport.config.resolve_config`).

        Args:
            config: the settings.
            **options: any :class:`RequestsTransport` keyword, overriding them.

        Returns:
            The transport.

        Raises:
            ConfigError: the settings hold an unusable server URL or certificate pair.
        """
        merged = dict(config.options)
        merged.update(options)
        return cls(**merged)

    # --- Transport ---------------------------------------------------------------------------------------

    def get(self, path: str, headers: Mapping[str, str] | None = None, *,
            params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """GET ``path`` and return the whole answer, retrying per :attr:`retry`.

        Args:
            path: absolute request path, e.g. ``/apis/apps/v1``.
            headers: extra request headers (Accept, If-None-Match).
            params: query parameters.
            timeout: read timeout in seconds for this call, overriding ``read_timeout``.

        Returns:
            The Response, whatever its status; after retries of a retried status ran out, the last answer.

        Raises:
            TransportError: no answer after the retries (connection error, timeout), a TLS failure, or a failing
                credential source; the message never carries credentials.
            ResponseTooLargeError: the body exceeded ``max_body_bytes`` (declared or while reading).
            InvalidArgumentError: ``path`` does not start with ``/``.
        """
        return self.request("GET", path, headers, params=params, timeout=timeout)

    def request(self, method: str, path: str, headers: Mapping[str, str] | None = None, body: bytes = b"", *,
                params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """Send ``method path`` with ``body`` (a write) and return the whole answer; see
        :meth:`~restmapper.transport.WritingTransport.request`. A GET is retried per :attr:`retry`, another method
        only after a 429.

        Raises:
            TransportError, ResponseTooLargeError, InvalidArgumentError: as :meth:`get`.
        """
        url = self._url(path)
        return run_with_retry(self.retry, lambda: self._attempt(path, url, headers, params, timeout, method, body),
                              path=path, method=method)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> LineStream:
        """Open a streaming GET (a watch) without retries.

        Args:
            path: absolute request path.
            headers: extra request headers.
            params: query parameters (``watch=1``, ``resourceVersion``, ``timeoutSeconds``).
            timeout: read timeout in seconds between bytes, overriding ``read_timeout``.

        Returns:
            The open stream; its ``status`` may be any HTTP status (read the body with ``read()`` then).

        Raises:
            TransportError: the connection could not be opened.
            InvalidArgumentError: ``path`` does not start with ``/``.
        """
        url = self._url(path)
        # The deadline covers opening the stream (status line and headers), not the long-lived body.
        with Deadline(self.request_timeout, path) as deadline, translated(deadline):
            response = self._send(path, url, headers, params, timeout, "GET", b"")
            if deadline.expired:  # headers cut short by the deadline parse as a complete (empty) header block
                response.close()
                raise deadline.error()
        _log.debug("GET %s (stream) -> %d", path, response.status_code)
        return _requests_stream(response, path, self.max_body_bytes, self._secrets.scrub, self.request_timeout)

    def scrub(self, text: str) -> str:
        """Return ``text`` with every credential this transport holds (and anything credential-shaped) redacted.

        Upper layers pass server-provided text (error bodies, ``Status.message``) through this before it reaches
        an exception or a log line: a proxy may echo the request's ``Authorization`` header back.
        """
        return self._secrets.scrub(text)

    def close(self) -> None:
        """Release pooled connections (a session passed in by the caller is left open)."""
        if self._owns_session:
            self._session.close()

    def __enter__(self) -> RequestsTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @repr_when_unfinished
    def __repr__(self) -> str:
        proxy = f", proxy={self._proxy_display!r}" if self._proxy_display else ""
        return (f"RequestsTransport(base_url={self.base_url!r}, identity={self.identity!r}, "
                f"auth={self._auth_kind()!r}{proxy})")

    __str__ = __repr__

    # --- internals ---------------------------------------------------------------------------------------

    def _auth_kind(self) -> str:
        kinds = []
        if self._auth_provider is not None:
            kinds.append("provider")
        elif self._token_file is not None:
            kinds.append("token-file")
        elif self._token:
            kinds.append("token")
        elif self._basic:
            kinds.append("basic")
        if self._cert:
            kinds.append("client-cert")
        return "+".join(kinds) or "none"

    def _compute_identity(self, material: str | None) -> str:
        parts = [self.base_url]
        if material is not None:
            parts.append("m:" + material)
        else:
            if self._auth_provider is not None:
                try:
                    parts.append("p:" + repr(sorted(self._provider_headers("").items())))
                except TransportError:
                    parts.append("p:unavailable")
            if self._token_file is not None:
                parts.append("f:" + self._token_file.path)
            if self._token:
                parts.append("t:" + self._token)
            if self._basic:
                parts.append("b:" + self._basic)
        if self._cert:
            try:
                parts.append("c:" + hashlib.sha256(Path(self._cert[0]).read_bytes()).hexdigest())
            except OSError:
                parts.append("c:" + self._cert[0])
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]

    def _url(self, path: str) -> str:
        if not isinstance(path, str) or not path.startswith("/"):
            raise InvalidArgumentError(f"request path must start with '/', got {path!r}")
        return self.base_url + path

    def _provider_headers(self, path: str) -> dict[str, str]:
        assert self._auth_provider is not None
        try:
            produced = dict(self._auth_provider())
        except Exception as exc:  # any failure of user/exec code: one typed error
            raise TransportError(f"GET {path}: credential refresh failed: {type(exc).__name__}: "
                                 f"{self._secrets.scrub(str(exc).splitlines()[0] if str(exc) else '')}"[:500],
                                 path=path, transient=False) from None
        for value in produced.values():
            self._secrets.add(value, value.partition(" ")[2])
        return produced

    def _request_headers(self, path: str, extra: Mapping[str, str] | None) -> dict[str, str]:
        out = {"User-Agent": self._user_agent}
        if self._auth_provider is not None:
            out.update(self._provider_headers(path))
        elif self._token_file is not None:
            out["Authorization"] = f"Bearer {self._token_file.token(path)}"
        elif self._token:
            out["Authorization"] = f"Bearer {self._token}"
        elif self._basic:
            out["Authorization"] = self._basic
        if extra:
            out.update(extra)
        return out

    def _send(self, path: str, url: str, headers: Mapping[str, str] | None, params: Mapping[str, str] | None,
              timeout: float | None, method: str, body: bytes) -> requests.Response:
        request_headers = self._request_headers(path, headers)
        read_timeout = self._read_timeout if timeout is None else timeout
        try:
            return self._session.request(method, url, headers=request_headers, params=dict(params) if params else None,
                                         data=body or None, timeout=(self._connect_timeout, read_timeout),
                                         stream=True, verify=self._verify, cert=self._cert, proxies=self._proxies)
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            raise map_requests_error(exc, path, self._secrets.scrub, method) from None

    def _attempt(self, path: str, url: str, headers: Mapping[str, str] | None, params: Mapping[str, str] | None,
                 timeout: float | None, method: str = "GET", body: bytes = b"") -> Response:
        with Deadline(self.request_timeout, path, method) as deadline, translated(deadline):
            response = self._send(path, url, headers, params, timeout, method, body)
            try:
                # A session passed in by the caller has plain connections: the deadline learns the socket here.
                deadline.attach(getattr(getattr(response.raw, "_connection", None), "sock", None))
                check_content_length(response.headers, self.max_body_bytes, path)
                content = read_capped(response.iter_content(chunk_size=_CHUNK), self.max_body_bytes, path)
                # A server that closes instead of finishing a body without a length looks complete when the deadline
                # shut the socket: the deadline decides.
                deadline.check()
            except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
                raise map_requests_error(exc, path, self._secrets.scrub, method) from None
            finally:
                response.close()
        _log.debug("%s %s -> %d (%d bytes)", method, path, response.status_code, len(content))
        return Response(status=response.status_code, headers=dict(response.headers), body=content, path=path)
