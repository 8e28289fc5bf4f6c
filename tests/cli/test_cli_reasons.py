"""``restmapper resolve -o json`` tells scripts "not there" from "could not check" (a category found nowhere while
its group failed is an error; one answered while a group failed is marked ``partial``); ``api-resources
--api-group`` is complete when only other groups fail; connection errors read plainly."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from restmapper.cli import Session, run
from restmapper.cli._embedded import EmbeddedTransport
from restmapper.discovery import DiscoveryClient
from restmapper.errors import TransportError
from restmapper.model import APIResource
from restmapper.testing import FakeCluster
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


METRICS = [APIResource("pods", "pod", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "node", False, "NodeMetrics", ("get", "list"))]


def _metrics_failing_session(mode: str) -> Session:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    if mode == "aggregated":
        cluster.set_stale("metrics.k8s.io/v1beta1")
    else:
        cluster.inject("/apis/metrics.k8s.io/v1beta1", status=503, body="unavailable", content_type="text/plain")
    return Session(DiscoveryClient(EmbeddedTransport(cluster)))


def _run_in(argv: list[str], session: Session) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(argv, session=session, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_api_group_filter_outside_the_failing_group_is_complete(mode: str) -> None:
    code, out, err = _run_in(["api-resources", "--api-group", "apps", "--no-headers"], _metrics_failing_session(mode))
    assert (code, err) == (0, "")
    assert "deployments" in out and "metrics" not in out


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("flags", [["--api-group", "metrics.k8s.io"], []])
def test_failing_group_in_the_filter_or_no_filter_still_fails(mode: str, flags: list[str]) -> None:
    code, _, err = _run_in(["api-resources", *flags], _metrics_failing_session(mode))
    assert code == 1
    assert err.startswith("error: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1")


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_resolve_json_marks_a_partial_category(mode: str) -> None:
    code, out, err = _run_in(["resolve", "-o", "json", "all,deploy,deployments.apps"], _metrics_failing_session(mode))
    assert code == 0 and "Warning:" in err
    objects = json.loads(out)
    assert isinstance(objects, list)
    of_all = [o for o in objects if o["input"] == "all"]
    of_deploy = [o for o in objects if o["input"] == "deploy"]
    of_deployments = [o for o in objects if o["input"] == "deployments.apps"]
    assert of_all and of_deploy and of_deployments
    # A category's members may be missing; a short name may be beaten by a real name in the unreadable version
    # (test_weak_readings.py; a bare real name too, by a category it may declare); a name in a group is not.
    for o in of_all + of_deploy:
        assert o["partial"] is True and o["failedGroupVersions"] == ["metrics.k8s.io/v1beta1"], o
        assert {"group", "version", "resource", "kind", "namespaced"} <= o.keys()
    for o in of_deployments:
        assert "partial" not in o and "failedGroupVersions" not in o


def test_resolve_json_of_a_complete_category_has_no_partial_mark() -> None:
    out = io.StringIO()
    assert run(["resolve", "--embedded", "-o", "json", "all"], stdout=out, stderr=io.StringIO()) == 0
    assert all("partial" not in o for o in json.loads(out.getvalue()))


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_resolve_json_of_a_category_found_nowhere_as_its_group_failed_is_an_error(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [
        APIResource("pods", "pod", True, "PodMetrics", ("get", "list"), categories=("metricsonly",))])
    if mode == "aggregated":
        cluster.set_stale("metrics.k8s.io/v1beta1")
    else:
        cluster.inject("/apis/metrics.k8s.io/v1beta1", status=503, body="unavailable", content_type="text/plain")
    code, out, _ = _run_in(["resolve", "-o", "json", "metricsonly,deployments.apps"],
                        Session(DiscoveryClient(EmbeddedTransport(cluster))))
    assert code == 1
    first, *rest = json.loads(out)
    assert first["input"] == "metricsonly" and first["reason"] == "DiscoveryFailed"  # could not tell: an error
    assert "metrics.k8s.io/v1beta1" in first["error"]
    assert [o["resource"] for o in rest] == ["deployments"] and "partial" not in rest[0]
