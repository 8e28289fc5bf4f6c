"""Bounded time (DESIGN 6): every request has a total deadline, however slowly the server sends.

A loopback server trickles a body (or its headers) a byte at a time, each byte well within the per-read timeout;
only the total deadline can end the request. Deadlines are tiny (0.3 s) and the server stops on its own when the
client hangs up, so nothing here waits long; the generous bounds on elapsed time are a safety net only.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as k8s_client

from restmapper import LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError, RequestTimeoutError, RestMapperError, TransportError
from restmapper.model import GroupKind
from restmapper.transport import ApiClientTransport, RequestsTransport, RetryPolicy, Transport

DEADLINE = 0.3
SAFETY = 10.0  # far above DEADLINE: only a hang would take this long


class Trickler:
    """Answers every request by sending its answer one byte every ``interval`` seconds until the client leaves."""

    def __init__(self, mode: str, interval: float = 0.02) -> None:
        self.mode = mode
        self.interval = interval
        self.stop = threading.Event()
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.handlers: list[threading.Thread] = []

    def _accept(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            handler = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            self.handlers.append(handler)
            handler.start()

    def _answer(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(SAFETY)
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                request += chunk
            if self.mode in ("body", "error"):
                status = b"200 OK" if self.mode == "body" else b"500 Internal Server Error"
                conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 100000\r\n\r\n")
                payload = b"{" + b" " * 99999
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                payload = b"X-Slow: " + b"a" * 99999
            for i in range(len(payload)):
                if self.stop.wait(self.interval):
                    return
                conn.sendall(payload[i:i + 1])  # raises once the client has shut the connection down

    def __enter__(self) -> Trickler:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        self.thread.join(SAFETY)
        for handler in self.handlers:
            handler.join(SAFETY)
        self.listener.close()


@contextlib.contextmanager
def trickling(mode: str) -> Iterator[Trickler]:
    with Trickler(mode) as server:
        yield server


def requests_transport(url: str) -> Transport:
    return RequestsTransport(url, request_timeout=DEADLINE, read_timeout=5.0, retry=RetryPolicy.no_retry())


def apiclient_transport(url: str) -> Transport:
    cfg = k8s_client.Configuration()
    cfg.host = url
    return ApiClientTransport(k8s_client.ApiClient(cfg), request_timeout=DEADLINE, read_timeout=5.0,
                              retry=RetryPolicy.no_retry())


@pytest.mark.parametrize("make", [requests_transport, apiclient_transport], ids=["requests", "apiclient"])
def test_a_trickled_body_is_cut_at_the_total_deadline(make: object) -> None:
    with trickling("body") as server:
        transport = make(server.url)  # type: ignore[operator]
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError) as info:
            transport.get("/apis")
        elapsed = time.monotonic() - started
    assert DEADLINE <= elapsed < SAFETY
    err = info.value
    assert isinstance(err, TransportError) and isinstance(err, TimeoutError) and err.transient
    assert err.path == "/apis" and err.timeout == DEADLINE
    assert "0.3s" in str(err)


def test_trickled_headers_are_cut_at_the_total_deadline() -> None:
    """The requests transport owns its connections, so the deadline also covers the status line and headers."""
    with trickling("headers") as server:
        transport = requests_transport(server.url)
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            transport.get("/api")
        assert time.monotonic() - started < SAFETY


@pytest.mark.parametrize("make", [requests_transport, apiclient_transport], ids=["requests", "apiclient"])
def test_a_trickled_error_body_of_a_watch_is_cut_at_the_deadline(make: object) -> None:
    """A watch stream has no total deadline, but reading its error body (a non-200 answer) does."""
    with trickling("error") as server:
        transport = make(server.url)  # type: ignore[operator]
        stream = transport.stream("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", params={"watch": "1"})
        assert stream.status == 500
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            stream.read()
        assert time.monotonic() - started < SAFETY


def test_opening_a_watch_whose_headers_trickle_is_cut_at_the_deadline() -> None:
    with trickling("headers") as server:
        transport = requests_transport(server.url)
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            transport.stream("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", params={"watch": "1"})
        assert time.monotonic() - started < SAFETY


def test_the_deadline_applies_to_each_attempt_and_retries_stay_bounded() -> None:
    waits: list[float] = []
    policy = RetryPolicy(max_attempts=2, initial_backoff=0.0, jitter=0.0, sleep=waits.append)
    with trickling("body") as server:
        transport = RequestsTransport(server.url, request_timeout=DEADLINE, read_timeout=5.0, retry=policy)
        with pytest.raises(RequestTimeoutError) as info:
            transport.get("/apis")
        assert server.connections == 2
    assert isinstance(info.value.__cause__, RequestTimeoutError) and info.value.timeout == DEADLINE
    assert "gave up after 2 attempts" in str(info.value)


def test_every_thread_single_flighted_behind_a_trickled_request_gets_the_error() -> None:
    threads = 6
    with trickling("body") as server:
        mapper = LazyRESTMapper(DiscoveryClient(requests_transport(server.url)))
        barrier = threading.Barrier(threads)
        errors: list[BaseException | None] = [None] * threads

        def lookup(i: int) -> None:
            barrier.wait(SAFETY)
            try:
                mapper.rest_mapping(GroupKind("apps", "Deployment"))
            except BaseException as exc:
                errors[i] = exc

        workers = [threading.Thread(target=lookup, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(SAFETY)
        assert not any(w.is_alive() for w in workers), "a lookup is still blocked behind the trickled request"
    for err in errors:
        assert isinstance(err, RestMapperError), err
        assert _caused_by(err, RequestTimeoutError), repr(err)


def test_the_default_deadline_is_client_gos_and_can_be_turned_off() -> None:
    assert RequestsTransport("http://127.0.0.1:1").request_timeout == 32.0
    assert RequestsTransport("http://127.0.0.1:1", request_timeout=None).request_timeout is None
    cfg = k8s_client.Configuration()
    cfg.host = "http://127.0.0.1:1"
    assert ApiClientTransport(k8s_client.ApiClient(cfg)).request_timeout == 32.0
    for bad in (0, -1, "5", True):
        with pytest.raises(InvalidArgumentError, match="request_timeout"):
            RequestsTransport("http://127.0.0.1:1", request_timeout=bad)  # type: ignore[arg-type]


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kind):
            return True
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)
        stack.extend(getattr(e, "failed", {}).values())
    return False


def test_the_cli_takes_kubectls_request_timeout(tmp_path: Path) -> None:
    import io

    from restmapper.cli import run

    def cli(*argv: str) -> tuple[int, str]:
        err = io.StringIO()
        try:
            code = run(list(argv), stdout=io.StringIO(), stderr=err)
        except SystemExit as exc:  # argparse rejects a bad flag value with exit status 2
            code = int(exc.code or 0)
        return code, err.getvalue()

    with trickling("body") as server:
        config = tmp_path / "config"
        config.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": server.url}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "users": [{"name": "u", "user": {}}]}))
        started = time.monotonic()
        code, err = cli("resolve", "deploy", "--kubeconfig", str(config), "--request-timeout", "300ms")
        assert time.monotonic() - started < SAFETY
    assert code == 1 and "request deadline of 0.3s" in err and err.count("\n") == 1
    assert cli("resolve", "deploy", "--request-timeout", "soon")[0] == 2
