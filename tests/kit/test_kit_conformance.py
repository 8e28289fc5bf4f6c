"""The same client calls against the kit as a controller author makes against kube-apiserver: kubectl (validation on),
the ``kubernetes`` client, lightkube and our own transport, each checked against the API server's documented
behaviour.

Docs cited: API concepts = https://kubernetes.io/docs/reference/using-api/api-concepts/, SSA =
https://kubernetes.io/docs/reference/using-api/server-side-apply/, Finalizers =
https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/, Labels =
https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from restmapper.testing import FakeCluster, ServedCluster
from restmapper.transport import RequestsTransport, RetryPolicy

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (it is the oracle here)")

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster.embedded().serve() as s:
        yield s


def kubectl(served: ServedCluster, tmp_path: Path, *args: str, stdin: str | None = None
            ) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, "--kubeconfig", str(served.kubeconfig_path), "--cache-dir",
                           str(tmp_path / "kube-cache"), *args], input=stdin, capture_output=True, text=True,
                          timeout=60, check=False)


def manifest(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": data}


# --- kubectl -------------------------------------------------------------------------------------------------------


@needs_kubectl
def test_kubectl_create_apply_and_server_side_apply_with_validation_on(served: ServedCluster, tmp_path: Path) -> None:
    """kubectl validates against ``/openapi/v3`` (server-side field validation); ``apply --server-side`` is SSA
    (SSA, "Using Server-Side Apply in a controller"/"Upgrading from client-side apply"): no conflict when taking
    over fields kubectl's client-side apply set; a conflict with another manager is refused unless forced."""
    first = manifest(tmp_path / "cm.yaml", cm("x", a="1"))
    done = kubectl(served, tmp_path, "create", "-f", first)
    assert done.returncode == 0 and "configmap/x created" in done.stdout, done.stderr
    done = kubectl(served, tmp_path, "apply", "-f", manifest(tmp_path / "cm2.yaml", cm("x", a="2")))
    assert done.returncode == 0 and "configmap/x configured" in done.stdout, done.stderr
    done = kubectl(served, tmp_path, "apply", "--server-side", "-f", manifest(tmp_path / "cm3.yaml", cm("x", a="3")))
    assert done.returncode == 0 and "serverside-applied" in done.stdout, done.stderr
    obj = served.cluster.get_object("configmaps", "x", "default")
    assert obj is not None and obj["data"] == {"a": "3"}
    assert any(e["manager"] == "kubectl" and e["operation"] == "Apply" for e in obj["metadata"]["managedFields"])
    other = kubectl(served, tmp_path, "apply", "--server-side", "--field-manager", "other", "-f",
                    manifest(tmp_path / "cm4.yaml", cm("x", a="4")))
    assert other.returncode != 0 and "conflict" in other.stderr.lower()
    forced = kubectl(served, tmp_path, "apply", "--server-side", "--field-manager", "other", "--force-conflicts",
                     "-f", str(tmp_path / "cm4.yaml"))
    assert forced.returncode == 0, forced.stderr


@needs_kubectl
def test_kubectl_applies_a_crd_and_its_custom_resource(served: ServedCluster, tmp_path: Path) -> None:
    """kubectl's validation finds a CRD's group version in ``/openapi/v3`` once it is served."""
    done = kubectl(served, tmp_path, "apply", "-f", manifest(tmp_path / "crd.yaml", WIDGET_CRD))
    assert done.returncode == 0, done.stderr
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
              "spec": {"size": 1}}
    done = kubectl(served, tmp_path, "apply", "-f", manifest(tmp_path / "w.yaml", widget))
    assert done.returncode == 0 and "widget.example.com/w created" in done.stdout, done.stderr


@needs_kubectl
def test_kubectl_selectors_patches_and_finalizers(served: ServedCluster, tmp_path: Path) -> None:
    """Labels (set-based selectors), ``kubectl patch`` with every type, and deletion held by a finalizer until it
    is removed (Finalizers)."""
    cluster = served.cluster
    for name, tier in (("a", "web"), ("b", "db"), ("c", "cache")):
        cluster.apply_object({**cm(name), "metadata": {"name": name, "namespace": "default",
                                                       "labels": {"tier": tier}}})
    got = kubectl(served, tmp_path, "get", "cm", "-l", "tier in (web,db)", "-o", "name")
    assert got.stdout.split() == ["configmap/a", "configmap/b"], got.stderr
    got = kubectl(served, tmp_path, "get", "cm", "--field-selector", "metadata.name!=a", "-l", "tier", "-o", "name")
    assert got.stdout.split() == ["configmap/b", "configmap/c"], got.stderr
    for kind, patch in (("json", '[{"op":"add","path":"/data","value":{"k":"1"}}]'),
                        ("merge", '{"data":{"m":"2"}}'), ("strategic", '{"metadata":{"finalizers":["x/y"]}}')):
        done = kubectl(served, tmp_path, "patch", "cm", "a", "--type", kind, "-p", patch)
        assert done.returncode == 0, done.stderr
    done = kubectl(served, tmp_path, "delete", "cm", "a", "--wait=false")
    assert done.returncode == 0, done.stderr
    held = cluster.get_object("configmaps", "a", "default")
    assert held is not None and held["metadata"]["deletionTimestamp"] and held["data"] == {"k": "1", "m": "2"}
    done = kubectl(served, tmp_path, "patch", "cm", "a", "--type", "merge", "-p", '{"metadata":{"finalizers":null}}')
    assert done.returncode == 0, done.stderr
    assert cluster.get_object("configmaps", "a", "default") is None


# --- the kubernetes client ---------------------------------------------------------------------------------


def api_client(served: ServedCluster) -> Any:
    from kubernetes import config

    return config.new_client_from_config(config_file=str(served.kubeconfig_path))


def test_kubernetes_client_pages_lists_and_sees_system_namespaces(served: ServedCluster) -> None:
    """API concepts, chunks: ``limit`` + ``_continue`` page through one snapshot; the system namespaces exist."""
    from kubernetes import client

    for i in range(5):
        served.cluster.apply_object(cm(f"cm{i}"))
    core = client.CoreV1Api(api_client(served))
    seen: list[str] = []
    token = None
    while True:
        page = core.list_namespaced_config_map("default", limit=2, _continue=token)
        seen += [i.metadata.name for i in page.items]
        token = page.metadata._continue
        if not token:
            break
    assert seen == [f"cm{i}" for i in range(5)]
    assert {n.metadata.name for n in core.list_namespace().items} >= {"default", "kube-system", "kube-public",
                                                                       "kube-node-lease"}


def test_kubernetes_client_server_side_apply_and_delete_options(served: ServedCluster) -> None:
    """SSA through ``DynamicClient.server_side_apply`` (create, then conflict 409 for another manager); a delete
    with ``propagation_policy`` on an object with finalizers only marks it (Finalizers)."""
    from kubernetes import client, dynamic
    from kubernetes.client.rest import ApiException

    dyn = dynamic.DynamicClient(api_client(served))
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    created = cms.server_side_apply(body=cm("ssa", k="1"), namespace="default", field_manager="ctrl")
    assert created.data.k == "1" and created.metadata.managedFields[0].manager == "ctrl"
    with pytest.raises(ApiException) as caught:
        cms.server_side_apply(body=cm("ssa", k="2"), namespace="default", field_manager="someone-else")
    assert caught.value.status == 409
    core = client.CoreV1Api(api_client(served))
    core.patch_namespaced_config_map("ssa", "default", {"metadata": {"finalizers": ["example.com/keep"]}})
    core.delete_namespaced_config_map("ssa", "default", body=client.V1DeleteOptions(propagation_policy="Foreground"))
    held = core.read_namespaced_config_map("ssa", "default")
    assert held.metadata.deletion_timestamp is not None


def test_kubernetes_client_watch_gets_410_after_compaction(served: ServedCluster) -> None:
    """API concepts, "410 Gone responses": a watch from a compacted resourceVersion ends with an ERROR event."""
    from kubernetes import client, watch
    from kubernetes.client.rest import ApiException

    core = client.CoreV1Api(api_client(served))
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    served.cluster.apply_object(cm("later"))
    served.cluster.compact()
    with pytest.raises(ApiException) as caught:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version=rv,
                                      timeout_seconds=5):
            pass
    assert caught.value.status == 410


# --- lightkube ----------------------------------------------------------------------------------------------------


def test_lightkube_apply_creates_conflicts_and_forces(served: ServedCluster) -> None:
    """SSA through lightkube's ``Client.apply``: create, a 409 for another manager's change, ``force=True`` wins;
    set-based selectors through ``Client.list``."""
    lightkube = pytest.importorskip("lightkube", reason="lightkube is a test extra")
    from lightkube.core.exceptions import ApiError
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    client = lightkube.Client(config=lightkube.KubeConfig.from_file(str(served.kubeconfig_path)), field_manager="lk")

    def cm_object(value: str, **labels: str) -> Any:
        return ConfigMap(metadata=ObjectMeta(name="lk", namespace="default", labels=labels or None), data={"a": value})

    created = client.apply(cm_object("1", tier="web"))
    assert created.data == {"a": "1"} and created.metadata.managedFields[0].manager == "lk"
    with pytest.raises(ApiError) as caught:
        client.apply(cm_object("2", tier="web"), field_manager="other")
    assert caught.value.status.code == 409
    assert client.apply(cm_object("2", tier="web"), field_manager="other", force=True).data == {"a": "2"}
    listed = client.list(ConfigMap, namespace="default", labels={"tier": ("web", "db")})
    assert [o.metadata.name for o in listed] == ["lk"]


# --- our transport ------------------------------------------------------------------------------------------


def test_our_transport_pages_and_streams_bookmarks(served: ServedCluster) -> None:
    """API concepts: paging with ``limit``/``continue`` and watch bookmarks with ``allowWatchBookmarks``."""
    for i in range(3):
        served.cluster.apply_object(cm(f"t{i}"))
    transport = RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1))
    try:
        path = "/api/v1/namespaces/default/configmaps"
        first = json.loads(transport.get(path, params={"limit": "2"}).body)
        rest = json.loads(transport.get(path, params={"continue": first["metadata"]["continue"]}).body)
        assert [o["metadata"]["name"] for o in first["items"] + rest["items"]] == ["t0", "t1", "t2"]
        assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        stream = transport.stream(path, params={"watch": "1", "resourceVersion": first["metadata"]["resourceVersion"],
                                                "allowWatchBookmarks": "true", "timeoutSeconds": "10"})
        try:
            assert served.cluster.wait_for_watchers(1)
            served.cluster.send_bookmarks()
            line = next(iter(stream.iter_lines()))
            assert json.loads(line)["type"] == "BOOKMARK"
        finally:
            stream.close()
    finally:
        transport.close()
