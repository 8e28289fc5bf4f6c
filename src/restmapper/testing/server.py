"""Front ends of the fake cluster: a ``responses`` mock for ``requests`` and a loopback HTTP server.

Both only translate HTTP to :meth:`FakeCluster.handle` and back, so they answer identically, except for watches:
the loopback server streams them in real time (chunked, one flush per event), the mock returns the events
available now and ends the response (see :mod:`restmapper.testing._watch`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import select
import shutil
import socket
import ssl
import struct
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from restmapper._optional import install_hint

if TYPE_CHECKING:
    from restmapper.testing._router import StreamBody
    from restmapper.testing.cluster import FakeCluster

__all__ = ["KUBECONFIG_NAME", "ServedCluster", "mock_cluster", "serve_cluster"]

KUBECONFIG_NAME = "restmapper-embedded"
_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _split_target(target: str) -> tuple[str, dict[str, str]]:
    parts = urlsplit(target)
    return parts.path or "/", dict(parse_qsl(parts.query, keep_blank_values=True))


@contextlib.contextmanager
def mock_cluster(cluster: FakeCluster, *, assert_all_requests_are_fired: bool = False) -> Iterator[Any]:
    """Answer every ``requests`` call to ``cluster.base_url`` (any method) from ``cluster.handle``.

    Args:
        cluster: the cluster answering.
        assert_all_requests_are_fired: passed to ``responses.RequestsMock``: every entry *the test* adds must be
            requested (the cluster's own routes are not entries).

    Yields:
        The active ``responses.RequestsMock``. Entries a test adds to it (``rsps.add(...)``, ``rsps.get(...)``)
        win over the cluster, with ``responses``' usual rules among themselves; the cluster answers every request
        none of them matches, for the whole block.

    An injected connection reset raises ``requests.ConnectionError`` in the caller.
    """
    import requests

    try:
        import responses
        from responses.registries import FirstMatchRegistry
    except ModuleNotFoundError as exc:  # a test-only dependency
        raise ModuleNotFoundError(
            f"FakeCluster.mock() needs the 'responses' package: {install_hint('testing')}; or use "
            "FakeCluster.serve(), which needs nothing extra",
            name="responses") from exc

    pattern = re.compile(re.escape(cluster.base_url) + r"(?:[/?#].*)?\Z")

    def callback(request: Any) -> Any:
        path, query = _split_target(request.path_url)
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode("utf-8")
        try:
            status, headers, data = cluster.handle(request.method, path, query, dict(request.headers), body)
        except ConnectionResetError as exc:
            raise requests.ConnectionError(str(exc), request=request) from exc
        return status, headers, data

    routes = [responses.CallbackResponse(method, pattern, callback=callback, content_type=None) for method in _METHODS]

    class ClusterLast(FirstMatchRegistry):
        """The test's entries first (``responses``' rules), then the cluster's routes, which are never used up."""

        def find(self, request: Any) -> tuple[Any, list[str]]:
            found, reasons = super().find(request)
            if found is None:
                found = next((route for route in routes if route.matches(request)[0]), None)
            return found, reasons

    with responses.RequestsMock(assert_all_requests_are_fired=assert_all_requests_are_fired,
                                registry=ClusterLast) as rsps:
        yield rsps


@dataclass(frozen=True)
class ServedCluster:
    """A running loopback server.

    Attributes:
        url: ``http://<host>:<port>`` (``https://`` in TLS mode).
        kubeconfig_path: a kubeconfig (mode 0600) whose cluster, context and user are ``restmapper-embedded``
            and whose server is ``url`` (with the CA as ``certificate-authority-data`` in TLS mode); the user has
            no credentials.
        cluster: the :class:`FakeCluster` being served.
        ca_file: in TLS mode, the generated CA certificate (PEM) that signed the server's certificate; else None.
    """

    url: str
    kubeconfig_path: Path
    cluster: FakeCluster
    ca_file: Path | None = None


def kubeconfig_text(server: str, ca_pem: bytes | None = None) -> str:
    """Return a kubeconfig for ``server`` with cluster/context/user ``restmapper-embedded`` and no credentials.

    ``ca_pem``, when given, becomes the cluster's ``certificate-authority-data``.
    """
    cluster: dict[str, str] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": KUBECONFIG_NAME, "cluster": cluster}],
        "contexts": [{"name": KUBECONFIG_NAME, "context": {"cluster": KUBECONFIG_NAME, "user": KUBECONFIG_NAME}}],
        "current-context": KUBECONFIG_NAME,
        "users": [{"name": KUBECONFIG_NAME, "user": {}}],
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def _write_private(path: Path, text: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(text)


def _peer_closed(sock: socket.socket) -> bool:
    """True when the client closed its side (readable with EOF); a watch stream then ends."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable and isinstance(sock, ssl.SSLSocket):
            return True  # a watch client sends nothing more but a close_notify alert or a FIN; TLS cannot peek
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that can close every open connection (keep-alive ones included) and that treats a
    client going away (``BrokenPipeError``, ``ConnectionResetError``...) as normal, never printing a traceback."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 stopping: threading.Event) -> None:
        self.stopping = stopping
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.stopping.is_set():
            self.shutdown_request(request)
            return
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        """Shut down every accepted connection: idle keep-alive ones see EOF, busy ones an error on write."""
        with self._open_lock:
            connections = list(self._open)
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError) or self.stopping.is_set():
            return  # the client went away, or we are closing its connection: nothing to report
        super().handle_error(request, client_address)


_UNAUTHORIZED = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": "Unauthorized", "reason": "Unauthorized", "code": 401}).encode()


def _handler_class(cluster: FakeCluster, stopping: threading.Event,
                   authorize: Callable[[Mapping[str, str]], bool] | None = None) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: without TCP_NODELAY every keep-alive request after the
        # first waits ~40 ms for Nagle and delayed ACK.
        disable_nagle_algorithm = True
        server_version = "restmapper-fake-apiserver"
        sys_version = ""

        def _dispatch(self) -> None:
            if stopping.is_set():  # the server's block exited: answer nothing more, even on keep-alive
                self.close_connection = True
                return
            path, query = _split_target(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            if authorize is not None and not authorize(dict(self.headers.items())):
                # kube-apiserver's answer to a missing, wrong or revoked bearer token.
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(_UNAUTHORIZED)))
                self.end_headers()
                self.wfile.write(_UNAUTHORIZED)
                return
            try:
                status, headers, data = cluster.handle_stream(self.command, path, query,
                                                              dict(self.headers.items()), body)
            except ConnectionResetError:
                # SO_LINGER 0 makes close() send a TCP RST: the client sees "connection reset by peer".
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            if not isinstance(data, bytes):
                self._stream(data)
                return
            if status not in (204, 304):
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD" and status not in (204, 304):
                self.wfile.write(data)

        def _stream(self, body: StreamBody) -> None:
            # Chunked transfer encoding, one chunk per event, flushed at once: how kube-apiserver streams watches.
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunks = body.stream(lambda: stopping.is_set() or _peer_closed(self.connection))
            try:
                for chunk in chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                self.close_connection = True
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _dispatch

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def finish(self) -> None:
            with contextlib.suppress(OSError):
                super().finish()

    return Handler


def _serve_tls(server: LoopbackHTTPServer, directory: Path) -> Path:
    """Make ``server`` answer HTTPS with a CA and certificate generated into ``directory``; return the CA file.

    Raises:
        ModuleNotFoundError: without the ``cryptography`` package.
    """
    from restmapper.testing._tls import make_tls_material

    material = make_tls_material(directory)
    # The handshake runs in the request's thread on first read, so a slow client never stalls accept().
    server.socket = material.server_context().wrap_socket(server.socket, server_side=True,
                                                          do_handshake_on_connect=False)
    return material.ca_file


def _secure_and_describe(server: LoopbackHTTPServer, url: str, kubeconfig_path: str | os.PathLike[str] | None,
                         private: Path | None, tls: bool) -> tuple[Path, Path | None]:
    """Serve HTTPS when ``tls`` (material in the ``private`` directory) and write the kubeconfig for ``url``
    (at ``kubeconfig_path``, else in ``private``); return the kubeconfig's path and the CA file (None: HTTP).

    Raises:
        OSError: when the kubeconfig cannot be written.
        ModuleNotFoundError: ``tls`` without the ``cryptography`` package.
    """
    path = Path(kubeconfig_path) if kubeconfig_path is not None else Path(str(private)) / "kubeconfig"
    ca_file = _serve_tls(server, private) if private is not None and tls else None
    _write_private(path, kubeconfig_text(url, ca_file.read_bytes() if ca_file is not None else None))
    return path, ca_file


@contextlib.contextmanager
def serve_cluster(cluster: FakeCluster, *, host: str = "127.0.0.1", port: int = 0,
                  kubeconfig_path: str | os.PathLike[str] | None = None, tls: bool = False,
                  authorize: Callable[[Mapping[str, str]], bool] | None = None) -> Iterator[ServedCluster]:
    """Serve ``cluster`` over HTTP (or HTTPS) on ``host:port`` from a daemon thread until the context exits.

    When the block exits the server stops answering every connection, keep-alive ones included (they are shut
    down; a request already being answered may still complete), and a client that goes away is never reported.

    Args:
        cluster: the cluster answering.
        host: the address to bind (loopback by default).
        port: the port; 0 picks a free one.
        kubeconfig_path: where to write the kubeconfig; None writes it in a private temporary directory (0700)
            removed when the block exits, or at interpreter exit if the block never exits.
        tls: serve HTTPS with a CA and certificate generated now (see :mod:`restmapper.testing._tls`; needs
            the ``cryptography`` package); the kubeconfig trusts that CA and ``ServedCluster.ca_file`` holds it.
        authorize: called with each request's headers; False answers 401 Unauthorized, as kube-apiserver does
            for a bad bearer token (see :class:`restmapper.testing.ServiceAccount`). None accepts everything.

    Yields:
        A :class:`ServedCluster`.

    Raises:
        OSError: when the address cannot be bound or the kubeconfig cannot be written.
        ModuleNotFoundError: ``tls`` without the ``cryptography`` package.
    """
    stopping = threading.Event()
    try:
        server = LoopbackHTTPServer((host, port), _handler_class(cluster, stopping, authorize), stopping)
    except OSError as exc:  # "Address already in use" alone does not say which address
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    url = f"{'https' if tls else 'http'}://{bound_host}:{bound_port}"
    remove_tmpdir: Callable[[], object] | None = None
    try:
        private = None
        if kubeconfig_path is None or tls:
            tmpdir = tempfile.mkdtemp(prefix="restmapper-")
            # Removed when the block exits, or at interpreter exit when it never does (a daemon thread holding the
            # server open): weakref.finalize runs its callback once, whichever comes first.
            remove_tmpdir = weakref.finalize(server, shutil.rmtree, tmpdir, ignore_errors=True)
            private = Path(tmpdir)
        path, ca_file = _secure_and_describe(server, url, kubeconfig_path, private, tls)
        # A short poll interval keeps shutdown (and so every loopback test's teardown) fast.
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                  name=f"restmapper-fake-apiserver:{bound_port}", daemon=True)
        thread.start()
        try:
            yield ServedCluster(url, path, cluster, ca_file)
        finally:
            stopping.set()
            cluster.internals.wake_watchers()  # open watch streams notice ``stopping`` and end
            server.shutdown()
            thread.join()
            server.close_open_connections()
    finally:
        server.server_close()
        if remove_tmpdir is not None:
            remove_tmpdir()
