"""Both transports against a real HTTP server on 127.0.0.1: chunked streams, timeouts, size caps, ApiClient auth.

The server is bounded: every handler waits on events with a timeout and stops sending after a fixed amount, and
the fixture shuts it down.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kubernetes import client as k8s_client

from restmapper.errors import ResponseTooLargeError, TransportError
from restmapper.transport import ApiClientTransport, RequestsTransport, RetryPolicy, Transport

TOKEN = "sekrit-token-123"
Handler = Callable[[BaseHTTPRequestHandler], None]


class Server:
    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {}
        self.release = threading.Event()
        self.sent_bytes = 0
        self.seen_headers: list[dict[str, str]] = []
        routes, owner = self.routes, self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                owner.seen_headers.append({k.lower(): v for k, v in self.headers.items()})
                route = routes.get(self.path.split("?")[0])
                if route is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                # The client may hang up on purpose (size cap, close()): not a server error.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    route(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()


def start_chunked(handler: BaseHTTPRequestHandler, status: int = 200) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()


def end_chunked(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def send_json(handler: BaseHTTPRequestHandler, status: int, doc: object) -> None:
    body = json.dumps(doc).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def requests_transport(srv: Server, **options: Any) -> Transport:
    return RequestsTransport(srv.url, token=TOKEN, **options)


def apiclient_transport(srv: Server, **options: Any) -> Transport:
    cfg = k8s_client.Configuration()
    cfg.host = srv.url
    cfg.api_key = {"authorization": TOKEN}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    return ApiClientTransport(k8s_client.ApiClient(cfg), **options)


FACTORIES = [pytest.param(requests_transport, id="requests"), pytest.param(apiclient_transport, id="apiclient")]


@pytest.mark.parametrize("factory", FACTORIES)
def test_stream_yields_lines_across_chunk_boundaries(server: Server, factory: Callable[..., Transport]) -> None:
    def watch(h: BaseHTTPRequestHandler) -> None:
        start_chunked(h)
        for piece in (b'{"type":"ADDED"}\n{"ty', b'pe":"MODIFIED"}', b"\n\n", b'{"type":"DELETED"}\r\n', b"tail"):
            chunk(h, piece)
        end_chunked(h)

    server.routes["/apis/apiextensions.k8s.io/v1/customresourcedefinitions"] = watch
    with factory(server).stream("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                params={"watch": "1"}) as stream:  # type: ignore[attr-defined]
        assert stream.status == 200
        lines = list(stream.iter_lines())
    assert lines == [b'{"type":"ADDED"}', b'{"type":"MODIFIED"}', b'{"type":"DELETED"}', b"tail"]
    assert server.seen_headers[-1]["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("factory", FACTORIES)
def test_stream_read_timeout_is_transport_error(server: Server, factory: Callable[..., Transport]) -> None:
    def stall(h: BaseHTTPRequestHandler) -> None:
        start_chunked(h)
        chunk(h, b'{"type":"ADDED"}\n')
        server.release.wait(5)

    server.routes["/watch"] = stall
    stream = factory(server).stream("/watch", timeout=0.3)
    lines = stream.iter_lines()
    assert next(lines) == b'{"type":"ADDED"}'
    with pytest.raises(TransportError) as info:
        next(lines)
    assert info.value.transient and "timeout" in str(info.value)
    stream.close()


@pytest.mark.parametrize("factory", FACTORIES)
def test_stream_close_from_another_thread_ends_iteration(server: Server,
                                                         factory: Callable[..., Transport]) -> None:
    def stall(h: BaseHTTPRequestHandler) -> None:
        start_chunked(h)
        chunk(h, b'{"type":"ADDED"}\n')
        server.release.wait(5)

    server.routes["/watch"] = stall
    stream = factory(server).stream("/watch", timeout=10)
    got: list[bytes] = []
    first = threading.Event()
    done = threading.Event()

    def reader() -> None:
        for line in stream.iter_lines():
            got.append(line)
            first.set()
        done.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    assert first.wait(5)
    stream.close()
    stream.close()  # idempotent
    assert done.wait(5), "close() did not wake the blocked reader"
    assert got == [b'{"type":"ADDED"}']


@pytest.mark.parametrize("factory", FACTORIES)
def test_stream_of_an_error_status_can_be_read(server: Server, factory: Callable[..., Transport]) -> None:
    server.routes["/watch"] = lambda h: send_json(h, 410, {"kind": "Status", "code": 410})
    stream = factory(server).stream("/watch")
    assert stream.status == 410
    assert json.loads(stream.read()) == {"kind": "Status", "code": 410}


@pytest.mark.parametrize("factory", FACTORIES)
def test_endless_body_is_cut_at_the_cap(server: Server, factory: Callable[..., Transport]) -> None:
    limit = 256 * 1024
    budget = 64 * 1024 * 1024

    def endless(h: BaseHTTPRequestHandler) -> None:
        start_chunked(h)
        block = b"x" * 65536
        while server.sent_bytes < budget and not server.release.is_set():
            chunk(h, block)
            server.sent_bytes += len(block)
        end_chunked(h)

    server.routes["/apis"] = endless
    with pytest.raises(ResponseTooLargeError) as info:
        factory(server, max_body_bytes=limit).get("/apis")
    assert info.value.limit == limit
    # The client stopped reading: the server could not push the whole budget (socket buffers hold a few MiB).
    assert server.sent_bytes < budget


@pytest.mark.parametrize("factory", FACTORIES)
def test_declared_length_over_the_cap(server: Server, factory: Callable[..., Transport]) -> None:
    def big(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(10**9))
        h.end_headers()
        h.wfile.write(b"{}")

    server.routes["/apis"] = big
    with pytest.raises(ResponseTooLargeError):
        factory(server, max_body_bytes=1024).get("/apis")


@pytest.mark.parametrize("factory", FACTORIES)
def test_status_answers_and_retries(server: Server, factory: Callable[..., Transport]) -> None:
    answers = iter([503, 503, 200])
    server.routes["/apis/metrics.k8s.io/v1beta1"] = lambda h: send_json(h, next(answers), {"kind": "APIResourceList"})
    sleeps: list[float] = []
    transport = factory(server, retry=RetryPolicy(sleep=sleeps.append, jitter=0.0))
    assert transport.get("/api/v1").status == 404
    resp = transport.get("/apis/metrics.k8s.io/v1beta1", {"Accept": "application/json"})
    assert resp.status == 200 and json.loads(resp.body) == {"kind": "APIResourceList"}
    assert sleeps == pytest.approx([0.2, 0.4])
    assert server.seen_headers[-1]["accept"] == "application/json"


@pytest.mark.parametrize("factory", FACTORIES)
def test_connection_refused_is_transient_transport_error(factory: Callable[..., Transport]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    srv = Server.__new__(Server)
    srv.url = f"http://127.0.0.1:{port}"
    sleeps: list[float] = []
    transport = factory(srv, retry=RetryPolicy(max_attempts=2, sleep=sleeps.append))
    with pytest.raises(TransportError) as info:
        transport.get("/api")
    assert info.value.transient and "connection error" in str(info.value)
    assert TOKEN not in str(info.value) + repr(transport)
    assert len(sleeps) == 1


def test_apiclient_refresh_hook_runs_before_each_request(server: Server) -> None:
    server.routes["/api"] = lambda h: send_json(h, 200, {"auth": h.headers.get("Authorization")})
    cfg = k8s_client.Configuration()
    cfg.host = server.url
    cfg.api_key = {"BearerToken": "Bearer initial"}
    count = [0]

    def hook(c: Any) -> None:
        count[0] += 1
        c.api_key["BearerToken"] = f"Bearer fresh-{count[0]}"

    cfg.refresh_api_key_hook = hook  # type: ignore[assignment]
    transport = ApiClientTransport(k8s_client.ApiClient(cfg))
    start = count[0]
    bodies = [json.loads(transport.get("/api").body)["auth"] for _ in range(2)]
    assert bodies == [f"Bearer fresh-{start + 1}", f"Bearer fresh-{start + 2}"]
    assert "fresh" not in repr(transport)


def test_apiclient_identity_differs_by_user(server: Server) -> None:
    def make(token: str) -> ApiClientTransport:
        cfg = k8s_client.Configuration()
        cfg.host = server.url
        cfg.api_key = {"authorization": token}
        return ApiClientTransport(k8s_client.ApiClient(cfg))

    assert make("a-token").identity == make("a-token").identity != make("b-token").identity
    assert make("a-token").base_url == server.url
