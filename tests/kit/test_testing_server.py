"""Front ends of the fake cluster: the ``responses`` mock and the loopback server answer identically; kubectl works."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from restmapper.testing import FakeCluster

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
CLIENT_GO = f"{V2},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
PATHS = ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/cert-manager.io/v1", "/apis/nope", "/nope", "/version",
         "/api/v1/namespaces/default/pods"]
HEADERS = ("Content-Type", "ETag", "Vary", "Cache-Control")


def _answers(base: str, session: requests.Session) -> list[tuple[int, dict[str, str | None], bytes]]:
    out = []
    for path in PATHS:
        for accept in (CLIENT_GO, "application/json"):
            r = session.get(base + path, headers={"Accept": accept, "Host": "kube.restmapper.test:443"})
            out.append((r.status_code, {h: r.headers.get(h) for h in HEADERS}, r.content))
    return out


def test_mock_and_serve_answer_identically() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        mocked = _answers(cluster.base_url, requests.Session())
    with cluster.serve() as served:
        live = _answers(served.url, requests.Session())
    assert mocked == live
    assert cluster.request_count("/apis") == 4


def test_mock_304_has_no_content_type() -> None:
    cluster = FakeCluster()
    with cluster.mock():
        first = requests.get(cluster.base_url + "/apis", headers={"Accept": V2})
        second = requests.get(cluster.base_url + "/apis",
                              headers={"Accept": V2, "If-None-Match": first.headers["ETag"]})
    assert second.status_code == 304 and second.content == b""
    assert "Content-Type" not in second.headers


def test_serve_304_has_no_content_type_and_keeps_the_connection_usable() -> None:
    cluster = FakeCluster()
    with cluster.serve() as served:
        session = requests.Session()
        first = session.get(served.url + "/apis", headers={"Accept": V2})
        second = session.get(served.url + "/apis", headers={"Accept": V2, "If-None-Match": first.headers["ETag"]})
        third = session.get(served.url + "/api/v1")
    assert second.status_code == 304 and second.content == b"" and "Content-Type" not in second.headers
    assert third.status_code == 200


def test_mock_answers_other_methods_and_query_strings() -> None:
    cluster = FakeCluster()
    with cluster.mock():
        assert requests.post(cluster.base_url + "/apis", data=b"x").status_code == 405
        assert requests.get(cluster.base_url + "/apis?timeout=32s").status_code == 200
    assert cluster.requests[-1].query == {"timeout": "32s"}


def test_reset_in_both_front_ends_is_a_connection_error() -> None:
    cluster = FakeCluster()
    cluster.inject("/apis", reset=True)
    with cluster.mock(), pytest.raises(requests.ConnectionError):
        requests.get(cluster.base_url + "/apis")
    with cluster.serve() as served:
        with pytest.raises(requests.ConnectionError):
            requests.get(served.url + "/apis")
        assert requests.get(served.url + "/api").status_code == 200


def test_kubeconfig_is_private_and_points_at_the_server(tmp_path: Path) -> None:
    cluster = FakeCluster.empty()
    target = tmp_path / "config"
    with cluster.serve(kubeconfig_path=target) as served:
        assert served.kubeconfig_path == target
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        doc = yaml.safe_load(target.read_text())
        assert doc["current-context"] == "restmapper-embedded"
        assert doc["clusters"][0] == {"name": "restmapper-embedded", "cluster": {"server": served.url}}
        assert doc["users"] == [{"name": "restmapper-embedded", "user": {}}]
        assert served.url.startswith("http://127.0.0.1:")
    with cluster.serve() as served:
        private = served.kubeconfig_path
        assert stat.S_IMODE(private.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert not private.exists()


def test_server_stops_on_exit() -> None:
    cluster = FakeCluster.empty()
    with cluster.serve() as served:
        url = served.url
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/version", timeout=2)


KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed on this machine")


def _kubectl(served_kubeconfig: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, "--kubeconfig", str(served_kubeconfig), "--cache-dir", str(cache), *args],
                          capture_output=True, text=True, timeout=60)


@needs_kubectl
@pytest.mark.parametrize("mode", ["aggregated", "aggregated-v2beta1", "legacy"])
def test_kubectl_api_resources(mode: str, tmp_path: Path) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    with cluster.serve() as served:
        result = _kubectl(served.kubeconfig_path, tmp_path / "cache", "api-resources")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert "apps/v1" in rows["deployments"] and "Deployment" in rows["deployments"]
    assert "cert-manager.io/v1" in rows["certificates"] and "cert,certs" in rows["certificates"]
    assert "cluster.x-k8s.io/v1beta1" in rows["machinedeployments"]
    if mode == "legacy":
        assert cluster.request_count("/apis/apps/v1") == 1
    else:
        assert cluster.request_count(prefix="/apis/") == 0


@needs_kubectl
def test_kubectl_get_pods(tmp_path: Path) -> None:
    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        result = _kubectl(served.kubeconfig_path, tmp_path / "cache", "get", "pods", "-v=6")
    assert result.returncode == 0, result.stderr
    assert "No resources found in default namespace." in result.stdout + result.stderr
    assert cluster.request_count("/api/v1/namespaces/default/pods") == 1


@needs_kubectl
def test_kubectl_get_crd_resource_by_short_name(tmp_path: Path) -> None:
    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        result = _kubectl(served.kubeconfig_path, tmp_path / "cache", "get", "certs", "-A")
    assert result.returncode == 0, result.stderr
    assert cluster.request_count("/apis/cert-manager.io/v1/certificates") == 1
