"""Running inside a pod: in-cluster settings, the config-resolution order, and a simulated pod over TLS."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from restmapper import LazyRESTMapper
from restmapper.cli import run
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDynamicClient
from restmapper.errors import ConfigError, TransportError
from restmapper.model import GroupKind
from restmapper.testing import FakeCluster, ServedCluster, ServiceAccount
from restmapper.transport import RequestsTransport, RetryPolicy, incluster_config, resolve_config

POD_ENV = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


@pytest.fixture(autouse=True)
def _no_kubeconfig(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def service_account_dir(tmp_path: Path, *, token: str = "tok-1", namespace: str | None = "team-a",
                        ca: bool = True) -> Path:
    folder = tmp_path / "sa"
    folder.mkdir()
    (folder / "token").write_text(token)
    if namespace is not None:
        (folder / "namespace").write_text(namespace + "\n")
    if ca:
        (folder / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    return folder


def write_kubeconfig(path: Path, server: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "ns-from-ctx"}}],
    }))
    return path


# --- in-cluster settings ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("host", "url"), [
    ("10.96.0.1", "https://10.96.0.1:443"),
    ("fd00:10:96::1", "https://[fd00:10:96::1]:443"),
    ("[fd00:10:96::1]", "https://[fd00:10:96::1]:443"),
    ("kubernetes.default.svc", "https://kubernetes.default.svc:443"),
])
def test_incluster_server_url_brackets_ipv6_hosts(tmp_path: Path, host: str, url: str) -> None:
    config = incluster_config(service_account_dir(tmp_path), {**POD_ENV, "KUBERNETES_SERVICE_HOST": host})
    assert config.server == url
    assert RequestsTransport.from_config(config).base_url == url


def test_incluster_reads_token_file_ca_and_namespace(tmp_path: Path) -> None:
    folder = service_account_dir(tmp_path)
    config = incluster_config(folder, POD_ENV)
    assert (config.source, config.namespace, config.context) == ("in-cluster", "team-a", None)
    assert config.options["token_file"] == str(folder / "token")
    assert config.options["verify"] == str(folder / "ca.crt")
    assert "tok-1" not in repr(config)


def test_incluster_namespace_prefers_pod_namespace_then_file_then_default(tmp_path: Path) -> None:
    folder = service_account_dir(tmp_path, namespace=None)
    assert incluster_config(folder, POD_ENV).namespace == "default"
    (folder / "namespace").write_text("from-file")
    assert incluster_config(folder, POD_ENV).namespace == "from-file"
    assert incluster_config(folder, {**POD_ENV, "POD_NAMESPACE": "from-env"}).namespace == "from-env"


def test_incluster_without_ca_file_verifies_against_system_cas(tmp_path: Path) -> None:
    config = incluster_config(service_account_dir(tmp_path, ca=False), POD_ENV)
    assert "verify" not in config.options


@pytest.mark.parametrize(("env", "token", "match"), [
    ({}, "t", "not running in a pod"),
    ({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "t", "not running in a pod"),
    ({**POD_ENV, "KUBERNETES_SERVICE_PORT": "https"}, "t", "invalid KUBERNETES_SERVICE_PORT"),
    (POD_ENV, None, "token file .* cannot be read"),
    (POD_ENV, "  \n", "token file .* is empty"),
])
def test_incluster_failures_are_config_errors(tmp_path: Path, env: dict[str, str], token: str | None,
                                              match: str) -> None:
    folder = service_account_dir(tmp_path)
    if token is None:
        (folder / "token").unlink()
    else:
        (folder / "token").write_text(token)
    with pytest.raises(ConfigError, match=match):
        incluster_config(folder, env)


# --- resolution order (controller-runtime GetConfig) ---------------------------------------------------------

@pytest.fixture
def in_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = service_account_dir(tmp_path)
    for name, value in POD_ENV.items():
        monkeypatch.setenv(name, value)
    return folder


def test_in_cluster_wins_over_home_kubeconfig(in_pod: Path, tmp_path: Path) -> None:
    write_kubeconfig(tmp_path / "home" / ".kube" / "config", "https://home.example:6443")
    config = resolve_config(service_account_dir=in_pod)
    assert (config.source, config.server) == ("in-cluster", "https://10.96.0.1:443")


def test_kubeconfig_env_and_explicit_path_win_over_in_cluster(in_pod: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = write_kubeconfig(tmp_path / "env-config", "https://env.example:6443")
    monkeypatch.setenv("KUBECONFIG", str(env_file))
    config = resolve_config(service_account_dir=in_pod)
    assert (config.source, config.server, config.namespace) == ("kubeconfig", "https://env.example:6443",
                                                                "ns-from-ctx")
    explicit = write_kubeconfig(tmp_path / "explicit", "https://explicit.example:6443")
    assert resolve_config(str(explicit), service_account_dir=in_pod).server == "https://explicit.example:6443"


def test_named_context_skips_in_cluster(in_pod: Path, tmp_path: Path) -> None:
    write_kubeconfig(tmp_path / "home" / ".kube" / "config", "https://home.example:6443")
    assert resolve_config(context="c", service_account_dir=in_pod).server == "https://home.example:6443"


def test_home_kubeconfig_is_the_last_resort(tmp_path: Path) -> None:
    write_kubeconfig(tmp_path / "home" / ".kube" / "config", "https://home.example:6443")
    assert resolve_config().source == "kubeconfig"


def test_nothing_usable_lists_every_source_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")  # half a pod: the port is missing
    with pytest.raises(ConfigError) as caught:
        resolve_config(service_account_dir=tmp_path)
    message = str(caught.value)
    assert "$KUBECONFIG: not set" in message
    assert "in-cluster: not running in a pod" in message
    assert str(tmp_path / "home" / ".kube" / "config") + ": does not exist" in message


def test_named_source_that_fails_does_not_fall_through(in_pod: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    with pytest.raises(ConfigError, match="KUBECONFIG"):
        resolve_config(service_account_dir=in_pod)
    with pytest.raises(ConfigError, match="not found"):
        resolve_config(str(tmp_path / "absent"), service_account_dir=in_pod)


# --- a simulated pod: TLS loopback server, service-account folder, no kubeconfig ---------------------------

@pytest.fixture
def pod(tmp_path: Path) -> Iterator[tuple[ServedCluster, ServiceAccount]]:
    account = ServiceAccount(tmp_path / "serviceaccount", namespace="operators")
    with FakeCluster.embedded().serve(tls=True, authorize=account.authorize) as served, \
            account.simulate_pod(served):
        yield served, account


def test_tls_server_requires_the_generated_ca(pod: tuple[ServedCluster, ServiceAccount]) -> None:
    served, account = pod
    untrusted = RequestsTransport(served.url, token=account.token, retry=RetryPolicy.no_retry())
    with pytest.raises(TransportError) as caught:
        untrusted.get("/version")
    assert "TLS error" in str(caught.value)
    trusted = RequestsTransport(served.url, token=account.token, verify=str(served.ca_file))
    assert trusted.get("/version").status == 200
    assert RequestsTransport(served.url, token="forged", verify=str(served.ca_file)).get("/version").status == 401


def test_mapper_from_kubeconfig_without_arguments_works_in_a_pod(pod: tuple[ServedCluster, ServiceAccount]) -> None:
    served, _ = pod
    mapper = LazyRESTMapper.from_kubeconfig()
    mapping = mapper.rest_mapping(GroupKind("apps", "Deployment"))
    assert (mapping.resource.resource, mapping.resource.version) == ("deployments", "v1")
    assert LazyRESTMapper.from_incluster().resolve("certificates.cert-manager.io").resource.group == \
        "cert-manager.io"
    assert DiscoveryClient.from_incluster().transport.base_url == served.url  # type: ignore[attr-defined]


def test_token_rotation_is_followed(pod: tuple[ServedCluster, ServiceAccount]) -> None:
    _, account = pod
    now = [0.0]
    transport = RequestsTransport.from_incluster(clock=lambda: now[0], retry=RetryPolicy.no_retry())
    assert transport.get("/api").status == 200
    account.rotate()  # the old token is revoked at once
    assert transport.get("/api").status == 401  # still within the minute the old token is trusted for
    now[0] += 60.0
    assert transport.get("/api").status == 200
    assert account.token not in repr(transport)


def test_cli_runs_in_a_pod_without_kubeconfig(pod: tuple[ServedCluster, ServiceAccount]) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["resolve", "deploy", "certificates"], stdout=out, stderr=err) == 0, err.getvalue()
    assert "deployments" in out.getvalue() and "cert-manager.io" in out.getvalue()


def test_dynamic_client_from_incluster(pod: tuple[ServedCluster, ServiceAccount]) -> None:
    for client in (SelfHealingDynamicClient.from_kubeconfig(), SelfHealingDynamicClient.from_incluster()):
        deployments = client.resources.get(api_version="apps/v1", kind="Deployment")
        assert deployments.name == "deployments"
        assert client.get(deployments, namespace="default").kind == "DeploymentList"


def test_simulated_pod_restores_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from restmapper.transport import config

    monkeypatch.setenv("KUBECONFIG", "/somewhere")
    account = ServiceAccount(tmp_path / "sa")
    with FakeCluster.empty().serve(tls=True) as served:
        with account.simulate_pod(served) as variables:
            assert "KUBECONFIG" not in os.environ
            assert str(tmp_path / "sa") == config.SERVICE_ACCOUNT_DIR
            assert variables["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
        with FakeCluster.empty().serve() as plain, pytest.raises(ValueError, match="TLS"), \
                account.simulate_pod(plain):
            pass
    assert os.environ["KUBECONFIG"] == "/somewhere"
    assert config.SERVICE_ACCOUNT_DIR == "/var/run/secrets/kubernetes.io/serviceaccount"


def test_watch_streams_over_tls_and_ends_when_the_client_leaves(tmp_path: Path) -> None:
    from restmapper.testing import embedded_crd_manifests

    cluster = FakeCluster.empty()
    with cluster.serve(tls=True) as served:
        transport = RequestsTransport(served.url, verify=str(served.ca_file))
        stream = transport.stream("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                  params={"watch": "1", "timeoutSeconds": "30"})
        cluster.add_crd(embedded_crd_manifests()[0])
        first = next(iter(stream.iter_lines()))
        assert b'"ADDED"' in first
        stream.close()
        assert transport.get("/version").status == 200  # the server is still answering


def test_object_cache_works_in_a_pod(pod: tuple[ServedCluster, ServiceAccount]) -> None:
    from restmapper.store import ObjectCache

    served, account = pod
    served.cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "settings", "namespace": "operators"}, "data": {"a": "1"}})
    for cache in (ObjectCache.from_kubeconfig(), ObjectCache.from_incluster()):
        try:
            assert cache.get("configmaps", "settings", "operators")["data"] == {"a": "1"}
            assert [o["metadata"]["name"] for o in cache.list("cm", namespace="operators")] == ["settings"]
        finally:
            cache.stop()
    assert account.token not in repr(cache)
