"""Existing ``kubernetes.dynamic`` usage patterns (create, get, list, patch, delete, watch) against the loopback
cluster behave the same with upstream's LazyDiscoverer and with SelfHealingDiscoverer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.dynamic import api_client, crd
from kubernetes import watch
from kubernetes.dynamic import DynamicClient, LazyDiscoverer
from kubernetes.dynamic.exceptions import NotFoundError

from restmapper.dynamic import SelfHealingDiscoverer, SelfHealingDynamicClient
from restmapper.errors import MappingChangedError
from restmapper.testing import FakeCluster


def _session(dc: DynamicClient, api_version: str, kind: str, namespace: str | None) -> list[Any]:
    """One controller-ish session; returns what a caller would observe."""
    res = dc.resources.get(api_version=api_version, kind=kind)
    body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "obj", "labels": {"app": "x"}},
            "data": {"k": "1"}, "spec": {"size": 1}}
    seen: list[Any] = []
    created = res.create(body=body, namespace=namespace)
    seen.append(("create", created.metadata.name, created.kind))
    got = res.get(name="obj", namespace=namespace)
    seen.append(("get", got.metadata.name, got.metadata.labels.app))
    listed = res.get(namespace=namespace, label_selector="app=x")
    seen.append(("list", listed.kind, [i.metadata.name for i in listed.items]))
    patched = res.patch(body={"metadata": {"labels": {"app": "y"}}}, name="obj", namespace=namespace,
                        content_type="application/merge-patch+json")
    seen.append(("patch", patched.metadata.labels.app))
    watcher = watch.Watch()
    for event in res.watch(namespace=namespace, timeout=2, watcher=watcher, resource_version="0"):
        seen.append(("watch", event["type"], event["object"].metadata.name))
        watcher.stop()
        break
    res.delete(name="obj", namespace=namespace)
    with pytest.raises(NotFoundError):
        res.get(name="obj", namespace=namespace)
    seen.append(("deleted",))
    return seen


@pytest.mark.parametrize(("api_version", "kind", "namespace"), [
    ("v1", "ConfigMap", "default"),
    ("example.com/v1", "Widget", "default"),
    ("example.com/v1", "Knob", None),
])
def test_crud_and_watch_parity(tmp_path: Path, api_version: str, kind: str, namespace: str | None) -> None:
    results = []
    for discoverer in (LazyDiscoverer, SelfHealingDiscoverer):
        cluster = FakeCluster.embedded()
        cluster.add_crd(crd("example.com", "Widget"))
        cluster.add_crd(crd("example.com", "Knob", scope="Cluster"))
        with cluster.serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
            dc = DynamicClient(api_client(s.url), cache_file=str(tmp_path / f"{discoverer.__name__}.json"),
                               discoverer=discoverer)
            results.append(_session(dc, api_version, kind, namespace))
    assert results[0] == results[1]
    assert results[1][0] == ("create", "obj", kind)


def test_scenario_2_create_after_crd_recreated_cluster_scoped_is_not_resent(tmp_path: Path) -> None:
    """A create on the old, namespaced mapping after the CRD was recreated cluster-scoped is refused with
    MappingChangedError (never made cluster-scoped behind the caller's back); created on the new mapping, it is."""
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("stuff.example.com", "Gizmo"))
    with cluster.serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = SelfHealingDynamicClient(api_client(s.url))
        gizmo = dc.resources.get(api_version="stuff.example.com/v1", kind="Gizmo")
        assert gizmo.namespaced
        cluster.remove_crd("gizmos.stuff.example.com")
        cluster.add_crd(crd("stuff.example.com", "Gizmo", scope="Cluster"))
        body = {"apiVersion": "stuff.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g1"}}
        with pytest.raises(MappingChangedError) as info:
            gizmo.create(body=body, namespace="default")  # the old, namespaced mapping
        assert info.value.verb == "create" and not info.value.new.namespaced
        posts = [r.path for r in cluster.requests if r.method == "POST"]
        assert posts == ["/apis/stuff.example.com/v1/namespaces/default/gizmos"]
        fresh = dc.resources.get(api_version="stuff.example.com/v1", kind="Gizmo")
        assert fresh.create(body=body).metadata.namespace is None
        assert fresh.get(name="g1").metadata.name == "g1"
