"""Secrets never leave (DESIGN 6): every derived form of every credential is scrubbed from every error path.

A server (or a proxy in front of it) echoes a credential into an error body, a Status message, a malformed
discovery document or a watch ``ERROR`` event. Whatever form it echoes (the raw token, ``Bearer <token>``, the bare
base64 of ``user:password``, ``Basic <base64>``, the decoded pair, a token file's contents, what an exec plugin
printed), no part of it may reach an exception, ``last_error`` or a log line: scrubbing happens before any
truncation, so not even the head of a cut credential comes out.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from helpers.watch import make_mapper
from hypothesis import given, settings
from hypothesis import strategies as st

from restmapper._redact import derived_forms
from restmapper.discovery import DiscoveryClient
from restmapper.errors import APIStatusError, MalformedDiscoveryError, RestMapperError
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy, Transport, status_error
from restmapper.transport._redact import sanitize
from restmapper.watch import Watcher

TOKEN = "tok-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"  # longer than any excerpt cut
USER, PASSWORD = "alice", "pa55-word-0123456789abcdefghijklmnop"
PAIR = f"{USER}:{PASSWORD}"
B64 = base64.b64encode(PAIR.encode()).decode()
EXEC_TOKEN = "exec-9876543210zyxwvutsrqponmlkjihgfedcbaZYXWV"
FILE_TOKEN = "file-5555555555aaaaaaaaaabbbbbbbbbbccccccccccdd"


def _token(url: str, tmp: Path) -> Transport:
    return RequestsTransport(url, token=TOKEN, retry=RetryPolicy.no_retry())


def _basic(url: str, tmp: Path) -> Transport:
    return RequestsTransport(url, username=USER, password=PASSWORD, retry=RetryPolicy.no_retry())


def _token_file(url: str, tmp: Path) -> Transport:
    path = tmp / "token"
    path.write_text(FILE_TOKEN + "\n")
    return RequestsTransport(url, token_file=str(path), retry=RetryPolicy.no_retry())


def _exec(url: str, tmp: Path) -> Transport:
    return RequestsTransport(url, auth_provider=lambda: {"Authorization": f"Bearer {EXEC_TOKEN}"},
                             retry=RetryPolicy.no_retry())


# (credential kind, transport factory, every form the server may echo)
CREDENTIALS: list[tuple[str, Callable[[str, Path], Transport], list[str]]] = [
    ("token", _token, [TOKEN, f"Bearer {TOKEN}", f"Authorization: Bearer {TOKEN}"]),
    ("basic", _basic, [PASSWORD, B64, f"Basic {B64}", PAIR]),
    ("token-file", _token_file, [FILE_TOKEN, f"Bearer {FILE_TOKEN}"]),
    ("exec", _exec, [EXEC_TOKEN, f"Bearer {EXEC_TOKEN}"]),
]
CASES = [pytest.param(make, form, id=f"{kind}-{i}") for kind, make, forms in CREDENTIALS
         for i, form in enumerate(forms)]


def _secret_of(form: str) -> str:
    return form.rpartition(" ")[2]


def assert_clean(text: str, form: str) -> None:
    """No 8-character piece of the credential (or of its decoded pair) appears in ``text``."""
    for secret in {_secret_of(form), PASSWORD, B64}:
        if secret not in form and secret != _secret_of(form):
            continue
        for i in range(len(secret) - 7):
            assert secret[i:i + 8] not in text, f"credential piece {secret[i:i + 8]!r} leaked in {text!r}"


def _messages(exc: BaseException) -> str:
    out = []
    seen: set[int] = set()
    stack = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append(f"{e!s} {e!r} {vars(e)!r}")
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)
        stack.extend(getattr(e, "failed", {}).values())
    return "\n".join(out)


# Where the echo goes: an error body (text or Status), a body that is not JSON, a JSON document cut at the
# credential, a Status object where a document was expected.
BODIES: list[tuple[str, Callable[[str], tuple[int, str, str]]]] = [
    ("text-status", lambda f: (503, f"upstream refused {f} for this request", "text/plain")),
    ("status-object", lambda f: (403, '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"user '
                                       + f + ' is forbidden","reason":"Forbidden","code":403}', "application/json")),
    ("not-json", lambda f: (200, f + " was rejected by the proxy " * 4, "application/json")),
    ("cut-json", lambda f: (200, '{"kind":"APIResourceList","groupVersion":"apps/v1","x":"' + f + '" oops',
                            "application/json")),
    ("status-as-document", lambda f: (200, '{"kind":"Status","message":"' + f + ' denied"}', "application/json")),
]


@pytest.mark.parametrize("make", [c.values[0] for c in CASES], ids=[c.id for c in CASES])
@pytest.mark.parametrize("where", [b[1] for b in BODIES], ids=[b[0] for b in BODIES])
@pytest.mark.parametrize("mode", ["legacy", "aggregated"])
def test_discovery_errors_never_carry_an_echoed_credential(
        make: Any, where: Callable[[str], tuple[int, str, str]], mode: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    forms = next(forms for _, m, forms in CREDENTIALS if m is make)
    cluster = FakeCluster(mode=mode)
    with cluster.serve() as served:
        client = DiscoveryClient(make(served.url, tmp_path))
        for form in forms:
            status, body, content_type = where(form)
            path = "/apis/apps/v1" if mode == "legacy" else "/apis"
            fault = cluster.inject(path, status=status, body=body, content_type=content_type)
            try:
                with pytest.raises(RestMapperError) as info:
                    if mode == "legacy":
                        client.server_resources_for_group_version("apps/v1")
                    else:
                        client.fetch_named()
            finally:
                fault.remove()
            assert isinstance(info.value, (APIStatusError, MalformedDiscoveryError))
            assert_clean(_messages(info.value), form)
    assert_clean(caplog.text, forms[0])


def test_the_watcher_uses_the_one_status_path_and_scrubs_last_error_and_logs(
        caplog: pytest.LogCaptureFixture) -> None:
    """A proxy echoing ``Bearer <token>`` in a list error: the watcher once logged it and kept it in last_error."""
    caplog.set_level(logging.DEBUG)
    cluster = FakeCluster()
    with cluster.serve() as served:
        mapper = make_mapper(served.url)
        transport = RequestsTransport(served.url, token=TOKEN, retry=RetryPolicy.no_retry())
        cluster.inject("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", status=500,
                       body=f"proxy: upstream rejected Authorization: Bearer {TOKEN} (raw {TOKEN})")
        failed = threading.Event()

        def sleep(stop: threading.Event, seconds: float) -> None:
            failed.set()
            stop.wait(10)

        watcher = Watcher(mapper, transport=transport, sleep=sleep, watch_apiservices=False)
        watcher.start()
        try:
            assert failed.wait(10)
            error = watcher.last_error
        finally:
            assert watcher.stop(timeout=10)
    assert isinstance(error, APIStatusError) and error.status == 500
    assert "<redacted>" in str(error)
    assert_clean(_messages(error), TOKEN)
    assert_clean(caplog.text, TOKEN)


def test_a_watch_error_event_goes_through_the_same_scrubbing() -> None:
    transport = RequestsTransport("http://127.0.0.1:1", token=TOKEN)
    error = status_error(transport, "/apis/x", 500, {"kind": "Status", "code": 500, "message": f"echo {TOKEN}"})
    assert error.status == 500 and "echo <redacted>" in error.reason
    odd = status_error(transport, "/apis/x", "five hundred", {"message": 7})
    assert odd.status == 500 and odd.reason == ""


def test_scrubbing_happens_before_the_reason_is_cut() -> None:
    """A reason is cut to 500 characters; a credential straddling the cut must not leave its head behind."""
    transport = RequestsTransport("http://127.0.0.1:1", token=TOKEN)
    for pad in range(470, 500):
        error = status_error(transport, "/apis", 503, ("x" * pad + TOKEN + " tail").encode())
        assert len(error.reason) <= 500
        assert_clean(str(error), TOKEN)


def test_a_long_reason_is_cut_at_a_word_boundary_and_says_so() -> None:
    transport = RequestsTransport("http://127.0.0.1:1")
    words = " ".join(f"word{i}" for i in range(200))  # ~1,300 characters
    reason = status_error(transport, "/apis", 503, {"kind": "Status", "message": words}).reason
    assert len(reason) <= 500 and reason.endswith("…") and words.startswith(reason[:-1] + " ")
    assert status_error(transport, "/apis", 503, {"kind": "Status", "message": words[:480]}).reason == words[:480]


def test_the_status_error_helper_is_the_only_one() -> None:
    """Delete the copies: no module but the transport's builds an APIStatusError from a body."""
    src = Path(__file__).resolve().parents[2] / "src" / "restmapper"
    builders = sorted(str(p.relative_to(src)) for p in src.rglob("*.py")
                      if "APIStatusError(" in p.read_text(encoding="utf-8")
                      and str(p.relative_to(src)) not in ("errors/_core.py", "transport/_status.py"))
    assert builders == []


# --- derived forms (DESIGN 6): base64 of the token or password alone, escapes, percent-encoding ------------------


def _echoed_forms(secret: str) -> list[str]:
    """The forms a server or proxy may echo ``secret`` in, computed here independently of the scrubber."""
    raw = secret.encode()
    std, url = base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()
    encoded, plus = quote(secret, safe=""), quote_plus(secret)
    every_other = "".join(quote(ch, safe="") if i % 2 else ch for i, ch in enumerate(secret))  # a subset encoded
    return [secret, std, std.rstrip("="), url, url.rstrip("="), json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1], encoded, plus, quote(secret),  # quote keeps "/"
            _lower_hex(encoded), _lower_hex(plus), every_other, quote(std, safe=""), raw.hex(), raw.hex().upper()]


def _lower_hex(encoded: str) -> str:
    """Percent-encoding with lower-case hex digits (valid per RFC 3986; some proxies and JS encoders emit it)."""
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), encoded)


# Printable text from ASCII and Latin (escapes and multi-byte UTF-8 included). The marker keeps a generated secret
# from being a word the error message itself contains ("resource"), which no scrubber could tell apart.
SECRETS = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x17F, blacklist_categories=("Cc", "Cs")),
                  min_size=6, max_size=30).map(lambda s: "\u00a7" + s)
# Where the echo lands: a text error body, a Status message, after an Authorization header (JSON-escaped).
ECHOES: list[Callable[[str], tuple[int, str, str]]] = [
    lambda f: (503, f"upstream said {f} and gave up", "text/plain"),
    lambda f: (403, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
                                "message": f"pw={f}&x"}), "application/json"),
    lambda f: (503, f"Authorization: Basic {json.dumps(f)}, more", "text/plain"),
]


def _assert_no_form_survives(client: DiscoveryClient, cluster: FakeCluster, secret: str, caplog_text: Callable[[], str],
                             extra: list[str]) -> None:
    forms = [f for s in (secret, *extra) for f in _echoed_forms(s)]
    for form in forms:
        for echo in ECHOES:
            status, body, content_type = echo(form)
            fault = cluster.inject("/api/v1", status=status, body=body, content_type=content_type)
            try:
                with pytest.raises(RestMapperError) as info:
                    client.server_resources_for_group_version("v1")
            finally:
                fault.remove()
            text = _messages(info.value) + caplog_text()
            for leaked in forms:
                assert leaked not in text, f"{leaked!r} (a form of the credential) leaked in {text!r}"


@settings(max_examples=15)
@given(token=SECRETS)
def test_no_derived_form_of_a_bearer_token_survives(token: str) -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock(), _captured_logs() as logs:
        client = DiscoveryClient(RequestsTransport(cluster.base_url, token=token, retry=RetryPolicy.no_retry()))
        _assert_no_form_survives(client, cluster, token, logs, [])


@settings(max_examples=15)
@given(user=st.sampled_from(["alice", "bob-the-admin"]), password=SECRETS)
def test_no_derived_form_of_a_password_survives(user: str, password: str) -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock(), _captured_logs() as logs:
        transport = RequestsTransport(cluster.base_url, username=user, password=password,
                                      retry=RetryPolicy.no_retry())
        _assert_no_form_survives(DiscoveryClient(transport), cluster, password, logs, [f"{user}:{password}"])


@contextlib.contextmanager
def _captured_logs() -> Iterator[Callable[[], str]]:
    """Every record of the ``restmapper`` loggers at DEBUG, formatted with its arguments."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("restmapper")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield stream.getvalue
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


PW_WITH_SLASH = 'p\u00e4$s w\u00f6rd/"\\\u00fc:@%2F'  # quote() keeps "/" literal
TOKEN_LOWER = "ab>?cd>?ef~~gh>>ij??kl0123456789"  # its percent-encoding echoed with lower-case hex


@pytest.mark.parametrize(("credential", "echo"), [
    (dict(token="sEcReTtOkEn0123456789abcdefXYZ"), "tok=c0VjUmVUdE9rRW4wMTIzNDU2Nzg5YWJjZGVmWFla&"),
    (dict(username="alice", password='p\u00e4$s w\u00f6rd"x'), 'Authorization: Basic "p\\u00e4$s w\\u00f6rd\\"x"'),
    (dict(username="alice", password='p\u00e4$s w\u00f6rd"x'),
     json.dumps({"kind": "Status", "code": 503, "message": "pw=cMOkJHMgd8O2cmQieA=="})),
    (dict(username="alice", password='p\u00e4$s w\u00f6rd"x'), "pw=p%C3%A4%24s%20w%C3%B6rd%22x"),
    (dict(username="alice", password=PW_WITH_SLASH), "echo " + quote(PW_WITH_SLASH)),
    (dict(token=TOKEN_LOWER), "echo " + quote(TOKEN_LOWER, safe="").lower()),
], ids=["base64-token", "json-escaped-password-after-header", "base64-password-in-status", "url-encoded-password",
        "quoted-password-slash-kept", "lower-hex-url-encoded-token"])
def test_derived_forms_that_once_leaked_are_scrubbed(credential: dict[str, str], echo: str) -> None:
    """Reproducers that each once leaked a derived form of the credential in full."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.inject("/api/v1", status=503, body=echo,
                       content_type="application/json" if echo.startswith("{") else "text/plain")
        transport = RequestsTransport(cluster.base_url, retry=RetryPolicy.no_retry(), **credential)
        with pytest.raises(RestMapperError) as info:
            LazyRESTMapper(DiscoveryClient(transport)).resolve("pods")
    text = _messages(info.value)
    assert "<redacted>" in text
    for secret in credential.values():
        if secret != "alice":
            for form in _echoed_forms(secret):
                assert form not in text, (form, text)


def _cpu_seconds(run: Callable[[], object]) -> float:
    """The least CPU time (this process only: other work on the machine does not count) of 3 runs of ``run``."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def _assert_linear(hostile: Callable[[int], str], scrub: Callable[[str], object]) -> None:
    """Scrubbing 4x the hostile text costs at most 8x the CPU time (linear: about 4x; quadratic: 16x)."""
    small, large = hostile(1), hostile(4)
    scrub(small)  # warm up
    ratio = _cpu_seconds(lambda: scrub(large)) / max(_cpu_seconds(lambda: scrub(small)), 1e-4)
    assert ratio < 8.0, f"4x the input cost {ratio:.1f}x the CPU time"


def test_authorization_header_redaction_is_linear_time() -> None:
    """The header redactor now runs to a closing quote or the end of the line: hostile text must stay cheap."""
    def hostile(n: int) -> str:
        return (("authorization: '" + "\\x" * 5_000 * n + "\n") * 5 + "Authorization" + " " * 25_000 * n
                + "x" * 25_000 * n)

    assert sanitize(hostile(4)).count("<redacted>") == 5
    _assert_linear(hostile, sanitize)


def test_percent_decoding_redaction_is_linear_time() -> None:
    """The decoding pass maps every byte back to the text: escape-heavy hostile text must stay cheap too."""
    token = "ab>?cd>?ef~~gh>>ij??kl0123456789"
    echoed = _lower_hex(quote(token, safe=""))
    forms = derived_forms(token)

    def hostile(n: int) -> str:
        return "%41" * 12_500 * n + "+" * 12_500 * n + echoed + "a%6" * 12_500 * n

    scrubbed = sanitize(hostile(4), forms)
    assert echoed not in scrubbed and scrubbed.count("<redacted>") == 1
    _assert_linear(hostile, lambda text: sanitize(text, forms))
