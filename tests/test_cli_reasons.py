"""``restmapper resolve -o json`` tells scripts "not there" from "could not check"; connection errors read plainly
(review 9, F4)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from restmapper.cli import run
from restmapper.errors import TransportError
from restmapper.transport import RequestsTransport, RetryPolicy

DEAD = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: "s3cr3t-t0ken"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def resolve_json(*argv: str) -> tuple[int, list[dict[str, object]], str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["resolve", "-o", "json", *argv], stdout=out, stderr=err)
    return code, json.loads(out.getvalue()), err.getvalue()


def test_json_says_why_an_argument_failed() -> None:
    code, rows, _ = resolve_json("--embedded", "xyzzy", "deploy", "deploy/web")
    assert code == 1
    assert rows[0]["input"] == "xyzzy" and rows[0]["reason"] == "NotFound"
    assert rows[1]["resource"] == "deployments" and "reason" not in rows[1]
    assert rows[2]["reason"] == "InvalidArgument"


def test_json_says_when_it_could_not_check(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text(DEAD)
    code, rows, _ = resolve_json("--kubeconfig", str(kubeconfig), "--request-timeout", "2s", "xyzzy")
    assert code == 1
    assert rows == [{"input": "xyzzy", "reason": "DiscoveryFailed", "error": rows[0]["error"]}]
    text = str(rows[0]["error"])
    assert "127.0.0.1:1: Connection refused" in text, text
    assert "s3cr3t" not in text


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "https://127.0.0.1:1"])
def test_connection_refused_reads_plainly(url: str) -> None:
    transport = RequestsTransport(url, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(TransportError) as info:
        transport.get("/api")
    text = str(info.value)
    assert "127.0.0.1:1: Connection refused" in text, text
    for private in ("_HTTP", "Pool(", "NewConnectionError", "Max retries"):
        assert private not in text, text
