"""FakeCluster serves scoped reads as kube-apiserver: PartialObjectMetadata, selector watches whose objects move in
and out of the selection, field selectors each kind supports, and per-namespace RBAC denial."""

from __future__ import annotations

import json
from typing import Any

import pytest

from restmapper.testing import FakeCluster, crd_manifest

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
META_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"
CMS = "/api/v1/namespaces/default/configmaps"


def cm(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels}, "data": {"k": "v"}}


def get(cluster: FakeCluster, path: str, accept: str | None = None, **query: str) -> tuple[int, Any]:
    status, _, body = cluster.handle("GET", path, query, {"Accept": accept} if accept else {})
    return status, json.loads(body)


def watch(cluster: FakeCluster, path: str, accept: str | None = None, **query: str) -> list[dict[str, Any]]:
    status, body = cluster.handle("GET", path, {"watch": "1", **query}, {"Accept": accept} if accept else {})[::2]
    assert status == 200, body
    return [json.loads(line) for line in body.splitlines()]


def test_metadata_list_get_and_watch_are_partial_object_metadata() -> None:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", app="web"))
    status, listed = get(cluster, CMS, META_LIST)
    assert status == 200
    assert listed["kind"] == "PartialObjectMetadataList" and listed["apiVersion"] == "meta.k8s.io/v1"
    assert listed["metadata"]["resourceVersion"] == cluster.resource_version
    item = listed["items"][0]
    assert set(item) == {"kind", "apiVersion", "metadata"} and item["kind"] == "PartialObjectMetadata"
    assert item["metadata"]["labels"] == {"app": "web"} and item["metadata"]["uid"]
    status, one = get(cluster, CMS + "/a", META_ONE)
    assert status == 200 and one == item
    events = watch(cluster, CMS, META_ONE)
    assert events[0]["type"] == "ADDED" and events[0]["object"] == item


def test_plain_json_is_the_full_object_and_table_alone_is_not_acceptable() -> None:
    cluster = FakeCluster()
    cluster.apply_object(cm("a"))
    assert get(cluster, CMS, "application/json")[1]["items"][0]["data"] == {"k": "v"}
    status, doc = get(cluster, CMS, TABLE)
    assert status == 406 and doc["reason"] == "NotAcceptable"
    assert doc["message"].startswith("only the following media types are accepted")
    status = cluster.handle("GET", CMS, {"watch": "1"}, {"Accept": TABLE})[0]
    assert status == 406


def test_label_selector_watch_sends_deleted_when_an_object_stops_matching_and_added_when_it_starts() -> None:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", tier="gold"))
    rv = cluster.resource_version
    cluster.apply_object(cm("a", tier="silver"))   # leaves tier=gold
    cluster.apply_object(cm("a", tier="silver", x="1"))  # not selected before or after: nothing
    cluster.apply_object(cm("a", tier="gold"))     # enters again
    cluster.apply_object(cm("a", tier="gold", x="2"))  # selected before and after: MODIFIED
    events = watch(cluster, CMS, labelSelector="tier=gold", resourceVersion=rv)
    assert [(e["type"], e["object"]["metadata"]["labels"]) for e in events] == [
        ("DELETED", {"tier": "silver"}), ("ADDED", {"tier": "gold"}), ("MODIFIED", {"tier": "gold", "x": "2"})]


def test_field_selector_watch_follows_a_pod_moving_between_nodes() -> None:
    cluster = FakeCluster()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}}
    cluster.apply_object(pod)
    rv = cluster.resource_version
    cluster.apply_object({**pod, "spec": {**pod["spec"], "nodeName": "n2"}})
    path = "/api/v1/pods"
    assert [e["type"] for e in watch(cluster, path, fieldSelector="spec.nodeName=n1", resourceVersion=rv)] == [
        "DELETED"]
    assert [e["type"] for e in watch(cluster, path, fieldSelector="spec.nodeName=n2", resourceVersion=rv)] == [
        "ADDED"]
    status, listed = get(cluster, path, fieldSelector="status.phase=Running,spec.nodeName=n2")
    assert status == 200 and [i["metadata"]["name"] for i in listed["items"]] == ["p"]


@pytest.mark.parametrize(("path", "selector", "ok"), [
    (CMS, "metadata.name=a", True),
    (CMS, "metadata.namespace=default", True),
    (CMS, "data.k=v", False),
    ("/api/v1/pods", "spec.nodeName=n1", True),
    ("/api/v1/pods", "status.phase=Running", True),
    ("/api/v1/pods", "spec.hostNetwork=true", True),
    ("/api/v1/pods", "spec.priority=1", False),
    ("/apis/example.com/v1/widgets", "spec.color=red", True),
    ("/apis/example.com/v1/widgets", "spec.size=big", False),
])
def test_field_selectors_each_resource_supports(path: str, selector: str, ok: bool) -> None:
    widget = crd_manifest("example.com", "Widget")
    widget["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".spec.color"}]
    cluster = FakeCluster(crds=[widget])
    for query in ({"fieldSelector": selector}, {"fieldSelector": selector, "watch": "1"}):
        status, _, body = cluster.handle("GET", path, query, {})
        if ok:
            assert status == 200, body
        else:
            doc = json.loads(body)
            assert status == 400 and doc["reason"] == "BadRequest"
            assert doc["message"] == f"field label not supported: {selector.split('=')[0]}"


def test_crd_selectable_field_filters_lists() -> None:
    widget = crd_manifest("example.com", "Widget")
    widget["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".spec.color"}]
    cluster = FakeCluster(crds=[widget])
    for name, color in (("w1", "red"), ("w2", "blue")):
        cluster.apply_object({"apiVersion": "example.com/v1", "kind": "Widget",
                              "metadata": {"name": name, "namespace": "default"}, "spec": {"color": color}})
    _, listed = get(cluster, "/apis/example.com/v1/widgets", fieldSelector="spec.color=red")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["w1"]


def test_forbidden_namespace_is_a_403_there_and_at_the_cluster_scope_only() -> None:
    cluster = FakeCluster()
    cluster.forbid_namespace("b", user="system:serviceaccount:ops:ctrl")
    status, doc = get(cluster, "/api/v1/namespaces/b/configmaps")
    assert status == 403 and doc["reason"] == "Forbidden"
    assert doc["message"] == ('configmaps is forbidden: User "system:serviceaccount:ops:ctrl" cannot list resource '
                              '"configmaps" in API group "" in the namespace "b"')
    assert doc["details"] == {"kind": "configmaps"}
    status, doc = get(cluster, "/apis/apps/v1/namespaces/b/deployments", watch="1")
    assert status == 403 and doc["message"] == (
        'deployments.apps is forbidden: User "system:serviceaccount:ops:ctrl" cannot watch resource "deployments" '
        'in API group "apps" in the namespace "b"')
    status, doc = get(cluster, "/api/v1/configmaps")
    assert status == 403 and doc["message"].endswith("at the cluster scope")
    assert get(cluster, "/api/v1/namespaces/a/configmaps")[0] == 200
    assert get(cluster, "/api/v1/nodes")[0] == 200  # cluster-scoped kinds are not namespace grants
    cluster.allow_namespace("b")
    assert get(cluster, "/api/v1/namespaces/b/configmaps")[0] == 200


def test_forbidden_namespace_for_named_resources_only() -> None:
    cluster = FakeCluster()
    cluster.forbid_namespace("b", resources=["secrets"])
    assert get(cluster, "/api/v1/namespaces/b/secrets")[0] == 403
    assert get(cluster, "/api/v1/namespaces/b/configmaps")[0] == 200
    assert get(cluster, "/api/v1/configmaps")[0] == 200
