"""kr8s and lightkube fed by our mapper: their generic resources get the served plural, scope and version."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from restmapper import LazyRESTMapper
from restmapper.adapters import kr8s_class, lightkube_resource
from restmapper.testing import FakeCluster, ServedCluster, crd_manifest


@pytest.fixture
def served() -> Iterator[tuple[ServedCluster, LazyRESTMapper]]:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest("net.example.com", "Gateway", plural="gatewayz", scope="Cluster",
                                 versions=("v1beta1", "v1"), storage="v1"))
    cluster.add_crd(crd_manifest("net.example.com", "Policy", plural="policies", short_names=["pol"]))
    with cluster.serve() as s:
        yield s, LazyRESTMapper.from_kubeconfig(str(s.kubeconfig_path))


def _obj(kind: str, api_version: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}


def test_kr8s_class_uses_served_plural_scope_and_version(served: tuple[ServedCluster, LazyRESTMapper]) -> None:
    import kr8s

    server, mapper = served
    api = kr8s.api(kubeconfig=str(server.kubeconfig_path))
    Gateway = kr8s_class(mapper.resolve("gatewayz"))
    assert (Gateway.endpoint, Gateway.namespaced, Gateway.version) == ("gatewayz", False, "net.example.com/v1")
    Gateway(_obj("Gateway", "net.example.com/v1", "edge"), api=api).create()
    assert [g.name for g in Gateway.list(api=api)] == ["edge"]
    Policy = kr8s_class(mapper.resolve("pol"))
    Policy(_obj("Policy", "net.example.com/v1", "p1", "default"), api=api).create()
    assert [p.name for p in Policy.list(namespace="default", api=api)] == ["p1"]
    assert server.cluster.request_count(prefix="/apis/net.example.com/v1/namespaces/default/policies") >= 2
    Deployment = kr8s_class(mapper.resolve("deploy"))
    assert (Deployment.version, Deployment.endpoint) == ("apps/v1", "deployments")
    with pytest.raises(TypeError):
        kr8s_class("deploy")  # type: ignore[arg-type]


def test_lightkube_resource_uses_served_plural_scope_and_version(
        served: tuple[ServedCluster, LazyRESTMapper]) -> None:
    from lightkube import Client, KubeConfig

    server, mapper = served
    with Client(config=KubeConfig.from_file(str(server.kubeconfig_path))) as client:  # closes its connections
        Gateway = lightkube_resource(mapper.resolve("gatewayz"))
        client.create(Gateway(metadata={"name": "edge"}))  # type: ignore[call-arg]
        assert [g.metadata.name for g in client.list(Gateway)] == ["edge"]
        assert server.cluster.request_count(path="/apis/net.example.com/v1/gatewayz") >= 2
        Policy = lightkube_resource(mapper.resolve("policies.net.example.com"))
        client.create(Policy(metadata={"name": "p1", "namespace": "default"}))  # type: ignore[call-arg]
        assert [p.metadata.name for p in client.list(Policy, namespace="default")] == ["p1"]
        ConfigMap = lightkube_resource(mapper.resolve("cm"))
        assert [c.metadata.name for c in client.list(ConfigMap, namespace="default")] == []
    with pytest.raises(TypeError):
        lightkube_resource(None)  # type: ignore[arg-type]
