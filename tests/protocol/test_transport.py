"""RequestsTransport and RetryPolicy over `responses`: statuses, retries, size caps, credentials and redaction."""

from __future__ import annotations

import email.utils
import logging
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from hypothesis import given
from hypothesis import strategies as st

from restmapper.errors import InvalidArgumentError, ResponseTooLargeError, RestMapperError, TransportError
from restmapper.transport import (
    ConfigError,
    RequestsTransport,
    Response,
    RetryPolicy,
    Transport,
    parse_retry_after,
)

SERVER = "https://k8s.example.test:6443"
TOKEN = "sekrit-token-123"
PASSWORD = "hunter2-pass-xyz"


def kw(request: Any) -> dict[str, Any]:
    """The keyword arguments requests was called with (recorded by `responses`)."""
    return dict(request.req_kwargs)


class FakeTime:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def policy(ft: FakeTime, **overrides: object) -> RetryPolicy:
    options: dict[str, object] = {"sleep": ft.sleep, "clock": ft.clock, "jitter": 0.0, "wall_clock": lambda: 0.0}
    options.update(overrides)
    return RetryPolicy(**options)  # type: ignore[arg-type]


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


def make(ft: FakeTime, **options: object) -> RequestsTransport:
    options.setdefault("retry", policy(ft))
    return RequestsTransport(SERVER, **options)  # type: ignore[arg-type]


# --- basics ------------------------------------------------------------------------------------------------


def test_satisfies_transport_protocol(fake_time: FakeTime) -> None:
    assert isinstance(make(fake_time), Transport)


@pytest.mark.parametrize("status", [200, 304, 400, 401, 403, 404, 406, 410])
def test_status_is_passed_through_without_retry(mocked: responses.RequestsMock, fake_time: FakeTime,
                                                status: int) -> None:
    body = b"" if status == 304 else b'{"kind":"Status"}'
    mocked.get(f"{SERVER}/apis/apps/v1", status=status, body=body,
               headers={"Content-Type": "application/json", "ETag": '"abc"'})
    resp = make(fake_time).get("/apis/apps/v1")
    assert (resp.status, resp.body, resp.path) == (status, body, "/apis/apps/v1")
    assert resp.header("etag") == '"abc"'
    assert resp.content_type == "application/json"
    assert len(mocked.calls) == 1
    assert fake_time.sleeps == []


def test_request_carries_headers_params_user_agent_and_bearer(mocked: responses.RequestsMock,
                                                              fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/prefix/apis", body=b"{}")
    transport = RequestsTransport(SERVER + "/prefix/", token=TOKEN, retry=policy(fake_time), user_agent="ua/1")
    transport.get("/apis", {"Accept": "application/json", "If-None-Match": '"e1"'}, params={"limit": "5"},
                  timeout=3.5)
    request = mocked.calls[0].request
    assert request.url == f"{SERVER}/prefix/apis?limit=5"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["User-Agent"] == "ua/1"
    assert request.headers["Accept"] == "application/json"
    assert request.headers["If-None-Match"] == '"e1"'
    assert kw(request)["timeout"] == (10.0, 3.5)
    assert kw(request)["verify"] is not False  # True, or $REQUESTS_CA_BUNDLE merged in by requests


def test_basic_auth_and_client_cert_and_proxy_are_applied(mocked: responses.RequestsMock, fake_time: FakeTime,
                                                          tmp_path: Path) -> None:
    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_text("CERT")
    key.write_text("KEY")
    mocked.get(f"{SERVER}/api", body=b"{}")
    transport = make(fake_time, username="admin", password=PASSWORD, cert=(str(cert), str(key)),
                     verify="/ca.pem", proxy="http://proxyuser:proxypass@proxy.test:3128")
    transport.get("/api")
    request = mocked.calls[0].request
    assert request.headers["Authorization"].startswith("Basic ")
    assert kw(request)["cert"] == (str(cert), str(key))
    assert kw(request)["verify"] == "/ca.pem"
    assert "proxypass" not in repr(transport)
    assert "proxy.test:3128" in repr(transport)


def test_userinfo_in_server_url_becomes_basic_auth_and_is_not_kept(mocked: responses.RequestsMock,
                                                                   fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/api", body=b"{}")
    transport = RequestsTransport(f"https://bob:{PASSWORD}@k8s.example.test:6443", retry=policy(fake_time))
    assert transport.base_url == SERVER
    transport.get("/api")
    assert mocked.calls[0].request.headers["Authorization"].startswith("Basic ")
    assert PASSWORD not in repr(transport)


@pytest.mark.parametrize("url", ["k8s.example.test", "ftp://host", "https://", ""])
def test_invalid_server_url_is_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        RequestsTransport(url)


@pytest.mark.parametrize("path", ["apis", "", "http://other/apis"])
def test_relative_path_is_rejected(fake_time: FakeTime, path: str) -> None:
    with pytest.raises(InvalidArgumentError):
        make(fake_time).get(path)


def test_identity_depends_on_credentials_not_their_text(fake_time: FakeTime) -> None:
    a = RequestsTransport(SERVER, token=TOKEN)
    b = RequestsTransport(SERVER, token=TOKEN)
    c = RequestsTransport(SERVER, token="other-token-456")
    d = RequestsTransport("https://other.test", token=TOKEN)
    e = RequestsTransport(SERVER)
    assert a.identity == b.identity
    assert len({a.identity, c.identity, d.identity, e.identity}) == 4
    assert len(a.identity) == 16 and TOKEN not in a.identity


def test_close_leaves_a_callers_session_open(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    session = requests.Session()
    mocked.get(f"{SERVER}/api", body=b"{}")
    with make(fake_time, session=session) as transport:
        transport.get("/api")
    assert session.adapters  # still usable: close() did not clear it
    session.close()


# --- retries -----------------------------------------------------------------------------------------------


def test_5xx_is_retried_with_exponential_backoff(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    url = f"{SERVER}/apis"
    mocked.get(url, status=503)
    mocked.get(url, status=500)
    mocked.get(url, status=502)
    mocked.get(url, status=200, body=b"ok")
    resp = make(fake_time).get("/apis")
    assert resp.status == 200 and resp.body == b"ok"
    assert fake_time.sleeps == pytest.approx([0.2, 0.4, 0.8])


def test_exhausted_retries_return_the_last_status_answer(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis/metrics.k8s.io/v1beta1", status=503, body=b"service unavailable",
               content_type="text/plain")
    resp = make(fake_time).get("/apis/metrics.k8s.io/v1beta1")
    assert resp.status == 503 and resp.body == b"service unavailable"
    assert len(mocked.calls) == 4
    assert len(fake_time.sleeps) == 3


def test_backoff_is_capped_and_jittered(fake_time: FakeTime) -> None:
    p = policy(fake_time, initial_backoff=1.0, max_backoff=3.0, jitter=0.5, random=lambda: 1.0)
    assert [p.backoff(n) for n in (1, 2, 3, 4)] == pytest.approx([1.5, 3.0, 4.5, 4.5])


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 410, 422])
def test_other_4xx_are_not_retried(mocked: responses.RequestsMock, fake_time: FakeTime, status: int) -> None:
    mocked.get(f"{SERVER}/apis", status=status)
    assert make(fake_time).get("/apis").status == status
    assert len(mocked.calls) == 1


def test_retry_statuses_is_configurable(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    """A 503 from an aggregated API is an answer discovery must see at once."""
    mocked.get(f"{SERVER}/apis/metrics.k8s.io/v1beta1", status=503)
    transport = make(fake_time, retry=policy(fake_time, retry_statuses=frozenset({429})))
    assert transport.get("/apis/metrics.k8s.io/v1beta1").status == 503
    assert len(mocked.calls) == 1


def test_retry_after_seconds_is_honoured(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", status=429, headers={"Retry-After": "3"})
    mocked.get(f"{SERVER}/apis", status=200)
    assert make(fake_time).get("/apis").status == 200
    assert fake_time.sleeps == [3.0]


def test_retry_after_http_date_is_measured_against_the_date_header(mocked: responses.RequestsMock,
                                                                   fake_time: FakeTime) -> None:
    date = email.utils.formatdate(1_700_000_000, usegmt=True)
    later = email.utils.formatdate(1_700_000_007, usegmt=True)
    mocked.get(f"{SERVER}/apis", status=503, headers={"Retry-After": later, "Date": date})
    mocked.get(f"{SERVER}/apis", status=200)
    assert make(fake_time).get("/apis").status == 200
    assert fake_time.sleeps == [7.0]


def test_retry_after_http_date_without_date_uses_the_wall_clock(mocked: responses.RequestsMock,
                                                                fake_time: FakeTime) -> None:
    later = email.utils.formatdate(1_700_000_002, usegmt=True)
    mocked.get(f"{SERVER}/apis", status=429, headers={"Retry-After": later})
    mocked.get(f"{SERVER}/apis", status=200)
    transport = make(fake_time, retry=policy(fake_time, wall_clock=lambda: 1_700_000_000.0))
    assert transport.get("/apis").status == 200
    assert fake_time.sleeps == [2.0]


def test_retry_after_is_capped_by_the_remaining_total_time(mocked: responses.RequestsMock,
                                                           fake_time: FakeTime) -> None:
    # Counted by thread: while active, ``responses`` intercepts (and lists in ``mocked.calls``) the requests of
    # every thread of the process, such as one an earlier test left running a little longer under load.
    callers: list[int] = []

    def too_many(request: Any) -> tuple[int, dict[str, str], bytes]:
        callers.append(threading.get_ident())
        return 429, {"Retry-After": "100"}, b""

    mocked.add_callback(responses.GET, f"{SERVER}/apis", callback=too_many)
    resp = make(fake_time, retry=policy(fake_time, max_total_seconds=10.0, max_attempts=10)).get("/apis")
    assert resp.status == 429
    assert fake_time.sleeps == [10.0]
    assert callers.count(threading.get_ident()) == 2


def test_total_time_is_bounded(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", status=500)
    p = policy(fake_time, max_attempts=100, max_total_seconds=12.0, initial_backoff=1.0, max_backoff=4.0)
    assert make(fake_time, retry=p).get("/apis").status == 500
    assert sum(fake_time.sleeps) <= 12.0
    assert fake_time.sleeps == pytest.approx([1.0, 2.0, 4.0, 4.0, 1.0])


def test_connection_errors_are_retried_then_raised_as_transient(mocked: responses.RequestsMock,
                                                                fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", body=requests.exceptions.ConnectionError("connection refused"))
    with pytest.raises(TransportError) as info:
        make(fake_time).get("/apis")
    assert info.value.transient is True
    assert info.value.path == "/apis"
    assert "connection error" in str(info.value) and "4 attempts" in str(info.value)
    assert len(mocked.calls) == 4


def test_connection_error_then_success(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", body=requests.exceptions.ConnectionError("reset"))
    mocked.get(f"{SERVER}/apis", body=b"{}")
    assert make(fake_time).get("/apis").status == 200
    assert fake_time.sleeps == [0.2]


@pytest.mark.parametrize(("exc", "kind", "transient", "calls"), [
    (requests.exceptions.ReadTimeout("read timed out"), "read timeout", True, 4),
    (requests.exceptions.ConnectTimeout("connect timed out"), "connect timeout", True, 4),
    (requests.exceptions.SSLError("certificate verify failed"), "TLS error", False, 1),
    (requests.exceptions.ProxyError("cannot connect to proxy"), "proxy error", True, 4),
    (requests.exceptions.ChunkedEncodingError("incomplete read"), "truncated", True, 4),
])
def test_request_failures_map_to_transport_error(mocked: responses.RequestsMock, fake_time: FakeTime,
                                                 exc: Exception, kind: str, transient: bool, calls: int) -> None:
    mocked.get(f"{SERVER}/apis", body=exc)
    with pytest.raises(TransportError) as info:
        make(fake_time).get("/apis")
    assert kind in str(info.value)
    assert info.value.transient is transient
    assert len(mocked.calls) == calls
    assert info.value.__cause__ is None or isinstance(info.value.__cause__, TransportError)
    assert info.value.__suppress_context__ or info.value.__cause__ is not None


def test_no_retry_policy_makes_one_attempt(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", status=503)
    assert make(fake_time, retry=RetryPolicy.no_retry()).get("/apis").status == 503
    assert len(mocked.calls) == 1


@pytest.mark.parametrize("bad", [{"max_attempts": 0}, {"max_total_seconds": -1}, {"initial_backoff": -0.1},
                                 {"jitter": -1}])
def test_invalid_policy_is_rejected(bad: dict[str, float]) -> None:
    with pytest.raises(InvalidArgumentError):
        RetryPolicy(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("value", "date", "now", "expected"), [
    (None, None, 0.0, None),
    ("", None, 0.0, None),
    ("5", None, 0.0, 5.0),
    (" 1.5 ", None, 0.0, 1.5),
    ("-3", None, 0.0, 0.0),
    ("nan", None, 0.0, None),
    ("soon", None, 0.0, None),
    ("Wed, 21 Oct 2015 07:28:10 GMT", "Wed, 21 Oct 2015 07:28:00 GMT", 0.0, 10.0),
    ("Wed, 21 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:28:30 GMT", 0.0, 0.0),
    ("Wed, 21 Oct 2015 07:28:04 GMT", None, 1445412480.0, 4.0),
    ("Wed, 21 Oct 2015 07:28:04 GMT", "garbage", 1445412480.0, 4.0),
])
def test_parse_retry_after(value: str | None, date: str | None, now: float, expected: float | None) -> None:
    assert parse_retry_after(value, date=date, now=now) == expected


@given(st.text(), st.one_of(st.none(), st.text()))
def test_parse_retry_after_never_raises_and_is_never_negative(value: str, date: str | None) -> None:
    result = parse_retry_after(value, date=date, now=0.0)
    assert result is None or result >= 0.0


# --- size cap ----------------------------------------------------------------------------------------------


def test_declared_content_length_over_the_cap_fails_fast(mocked: responses.RequestsMock,
                                                         fake_time: FakeTime) -> None:
    # The body is tiny: only the declared length can trigger the error, so nothing was read to find out.
    mocked.get(f"{SERVER}/apis", body=b"{}", headers={"Content-Length": str(10**9)})
    with pytest.raises(ResponseTooLargeError) as info:
        make(fake_time, max_body_bytes=1024).get("/apis")
    assert info.value.limit == 1024 and info.value.transient is False
    assert len(mocked.calls) == 1


def test_streamed_body_over_the_cap_fails_while_reading(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", body=b"x" * 5000)  # responses sends no Content-Length by default
    with pytest.raises(ResponseTooLargeError):
        make(fake_time, max_body_bytes=4096).get("/apis")


def test_body_at_the_cap_is_accepted(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    mocked.get(f"{SERVER}/apis", body=b"x" * 4096, auto_calculate_content_length=True)
    assert len(make(fake_time, max_body_bytes=4096).get("/apis").body) == 4096


# --- credentials ---------------------------------------------------------------------------------------------


def test_token_file_is_reread_once_a_minute(mocked: responses.RequestsMock, fake_time: FakeTime,
                                            tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first-token\n")
    mocked.get(f"{SERVER}/api", body=b"{}")
    transport = make(fake_time, token_file=str(token_file), clock=fake_time.clock)
    transport.get("/api")
    token_file.write_text("second-token")
    fake_time.now += 30
    transport.get("/api")
    fake_time.now += 31
    transport.get("/api")
    seen = [c.request.headers["Authorization"] for c in mocked.calls]
    assert seen == ["Bearer first-token", "Bearer first-token", "Bearer second-token"]


def test_token_file_that_vanishes_keeps_the_last_token(mocked: responses.RequestsMock, fake_time: FakeTime,
                                                       tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("kept-token")
    mocked.get(f"{SERVER}/api", body=b"{}")
    transport = make(fake_time, token_file=str(token_file), clock=fake_time.clock)
    transport.get("/api")
    token_file.unlink()
    fake_time.now += 120
    transport.get("/api")
    assert mocked.calls[1].request.headers["Authorization"] == "Bearer kept-token"


def test_missing_token_file_is_a_permanent_transport_error(fake_time: FakeTime, tmp_path: Path) -> None:
    transport = make(fake_time, token_file=str(tmp_path / "absent"))
    with pytest.raises(TransportError) as info:
        transport.get("/api")
    assert info.value.transient is False and "token file" in str(info.value)


def test_auth_provider_runs_before_every_attempt(mocked: responses.RequestsMock, fake_time: FakeTime) -> None:
    tokens = iter(f"rotating-{n}" for n in range(100))
    mocked.get(f"{SERVER}/api", status=503)
    mocked.get(f"{SERVER}/api", status=200)
    transport = make(fake_time, auth_provider=lambda: {"Authorization": f"Bearer {next(tokens)}"},
                     identity_material="user-a")
    transport.get("/api")
    assert [c.request.headers["Authorization"] for c in mocked.calls] == ["Bearer rotating-0", "Bearer rotating-1"]


# --- redaction ---------------------------------------------------------------------------------------------


def _raising(message: str) -> Callable[[], dict[str, str]]:
    def provider() -> dict[str, str]:
        raise RuntimeError(message)
    return provider


FAILURES: list[tuple[str, object]] = [
    ("connection", requests.exceptions.ConnectionError(
        f"HTTPSConnectionPool: Max retries exceeded with url https://admin:{PASSWORD}@k8s.example.test/api "
        f"headers={{'Authorization': 'Bearer {TOKEN}'}}")),
    ("tls", requests.exceptions.SSLError(f"bad cert for token {TOKEN}")),
    ("timeout", requests.exceptions.ReadTimeout(f"Read timed out Authorization: Bearer {TOKEN}")),
    ("proxy", requests.exceptions.ProxyError(f"Cannot connect to proxy http://u:{PASSWORD}@proxy:3128")),
    ("status", 503),
    ("too-large", b"x" * 2048),
]


@pytest.mark.parametrize(("name", "failure"), FAILURES, ids=[f[0] for f in FAILURES])
@pytest.mark.parametrize("auth", ["token", "basic", "provider"])
def test_credentials_never_leak(mocked: responses.RequestsMock, fake_time: FakeTime,
                                caplog: pytest.LogCaptureFixture, name: str, failure: object, auth: str) -> None:
    caplog.set_level(logging.DEBUG, logger="restmapper")
    if isinstance(failure, int):
        mocked.get(f"{SERVER}/api", status=failure, body=b"unavailable")
    else:
        mocked.get(f"{SERVER}/api", body=failure)
    creds: dict[str, object] = {
        "token": {"token": TOKEN},
        "basic": {"username": "admin", "password": PASSWORD},
        "provider": {"auth_provider": lambda: {"Authorization": f"Bearer {TOKEN}"}},
    }[auth]  # type: ignore[assignment]
    transport = make(fake_time, max_body_bytes=1024, proxy=f"http://u:{PASSWORD}@proxy:3128", **creds)
    texts = [repr(transport), str(transport)]
    try:
        resp = transport.get("/api")
        texts.append(repr(resp.headers))
    except RestMapperError as exc:
        texts += [str(exc), repr(exc), repr(exc.args)]
    texts.append(caplog.text)
    joined = "\n".join(texts)
    # The proxy password is always in use; the token only when it is this transport's credential.
    assert PASSWORD not in joined
    if auth != "basic":
        assert TOKEN not in joined


def test_failing_auth_provider_message_is_scrubbed(mocked: responses.RequestsMock, fake_time: FakeTime,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="restmapper")
    mocked.get(f"{SERVER}/api", body=b"{}")
    transport = make(fake_time, auth_provider=_raising(f"exec failed: Authorization: Bearer {TOKEN}"),
                     identity_material="x")
    with pytest.raises(TransportError) as info:
        transport.get("/api")
    assert "credential refresh failed" in str(info.value)
    assert TOKEN not in str(info.value) + repr(info.value) + caplog.text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_response_object_is_a_plain_value() -> None:
    resp = Response(status=200, headers={"content-type": "application/json"}, body=b"{}", path="/api")
    assert resp.content_type == "application/json"


def test_environment_proxies_are_resolved_once_as_requests_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proxy variables are honoured (as kubectl does) but read at construction, not scanned on every request."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    t = RequestsTransport("https://kube.example:6443")
    assert t._proxies == {"https": "http://proxy.example:3128"}  # resolved for base_url
    assert t._session.trust_env is False
    monkeypatch.setenv("NO_PROXY", "kube.example")
    assert RequestsTransport("https://kube.example:6443")._proxies is None
    explicit = RequestsTransport("https://kube.example:6443", proxy="http://other.example:8080")
    assert explicit._proxies == {"http": "http://other.example:8080", "https": "http://other.example:8080"}


def test_split_lines_joins_a_long_line_across_many_chunks_and_caps_it() -> None:
    from restmapper.transport._body import split_lines

    line = b"x" * 100_000
    chunks = [line[i:i + 7] for i in range(0, len(line), 7)] + [b"\r\n", b"a\nb", b"\n", b"tail"]
    assert list(split_lines(chunks, 200_000, "/w")) == [line, b"a", b"b", b"tail"]
    with pytest.raises(ResponseTooLargeError):
        list(split_lines([b"y" * 50, b"y" * 60, b"\n"], 100, "/w"))
    with pytest.raises(ResponseTooLargeError):
        list(split_lines([b"z" * 150 + b"\nok\n"], 100, "/w"))


@given(failures=st.integers(min_value=1, max_value=10**9),
       initial=st.floats(min_value=0.0, max_value=10.0),
       cap=st.floats(min_value=0.0, max_value=3600.0))
def test_backoff_stays_finite_and_capped_after_any_number_of_failures(failures: int, initial: float,
                                                                     cap: float) -> None:
    """A group version down for days (1,024+ failures at a 60 s cap) once overflowed ``2.0 ** n``: every lookup,
    watcher and informer sharing the policy then raised OverflowError. The wait is capped whatever the count."""
    policy = RetryPolicy(initial_backoff=initial, max_backoff=cap, jitter=0.0)
    assert 0.0 <= policy.backoff(failures) <= cap
    assert policy.backoff(failures) == min(cap, initial * 2.0 ** min(failures - 1, 64))


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "https://127.0.0.1:1"])
def test_an_unreachable_server_warns_nothing(url: str) -> None:
    """The message names the address refused (``127.0.0.1:1: Connection refused``) without reading urllib3's
    deprecated ``NewConnectionError.pool`` property, whose FutureWarning every unreachable server printed."""
    transport = RequestsTransport(url, retry=RetryPolicy(max_attempts=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TransportError) as info:
            transport.get("/api")
    assert "127.0.0.1:1: Connection refused" in str(info.value), str(info.value)
