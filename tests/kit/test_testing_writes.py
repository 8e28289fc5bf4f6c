"""FakeCluster object writes as kube-apiserver's: selectors, patches, server-side apply, finalizers and deletion.

Expected values come from the documented behaviour cited in each test (kubernetes.io concepts and reference pages).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from restmapper.testing import FakeCluster

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
APPLY = "application/apply-patch+yaml"


def call(cluster: FakeCluster, method: str, path: str, body: Any = None, content_type: str = "application/json",
         **query: str) -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, (str, bytes)) or body is None else json.dumps(body)
    with cluster.mock():
        reply = requests.request(method, cluster.base_url + path, data=data, params=query,
                                 headers={"Content-Type": content_type, "User-Agent": "tester/1.0"}, timeout=5)
    return reply.status_code, reply.json()


def cm(name: str, labels: dict[str, str] | None = None, namespace: str = "default", **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, **({"labels": labels} if labels else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def deployment(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "app", "image": "app:1"}, {"name": "side", "image": "side:1"}]}}, **spec}}


@pytest.fixture
def cluster() -> FakeCluster:
    c = FakeCluster.embedded()
    c.apply_object(cm("a", {"tier": "web", "env": "prod"}))
    c.apply_object(cm("b", {"tier": "db", "env": "dev"}))
    c.apply_object(cm("c", {"tier": "cache", "rank": "3"}))
    c.apply_object(cm("d", {}, namespace="other"))
    return c


def names(doc: dict[str, Any]) -> list[str]:
    return [o["metadata"]["name"] for o in doc["items"]]


# --- selectors --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("selector", "expected"), [
    ("tier in (web,db)", ["a", "b"]),
    ("tier notin (web,db)", ["c"]),
    ("env", ["a", "b"]),
    ("!env", ["c"]),
    ("env!=prod", ["b", "c"]),
    ("tier==web,env=prod", ["a"]),
    ("tier in (web, db),!rank", ["a", "b"]),
    ("rank>2", ["c"]),
    ("rank<3", []),
])
def test_label_selectors_equality_and_set_based(cluster: FakeCluster, selector: str, expected: list[str]) -> None:
    """Labels and Selectors concept page: equality-based (``=``, ``==``, ``!=``; ``!=`` matches a missing key) and
    set-based (``in``, ``notin`` (matches a missing key), ``key``, ``!key``) requirements, ANDed by commas;
    ``gt``/``lt`` as apimachinery's ``labels.Parse``."""
    status, doc = call(cluster, "GET", CMS, labelSelector=selector)
    assert status == 200 and names(doc) == expected


def test_field_selectors_on_name_and_namespace(cluster: FakeCluster) -> None:
    """Field Selectors concept page: ``metadata.name`` and ``metadata.namespace`` on every resource, ``=``, ``==``,
    ``!=``; an unsupported field is 400 "field label not supported"."""
    assert names(call(cluster, "GET", "/api/v1/configmaps", fieldSelector="metadata.namespace=other")[1]) == ["d"]
    assert names(call(cluster, "GET", CMS, fieldSelector="metadata.name!=a,metadata.name!=b")[1]) == ["c"]
    status, doc = call(cluster, "GET", CMS, fieldSelector="spec.foo=bar")
    assert status == 400 and doc["message"] == "field label not supported: spec.foo"


@pytest.mark.parametrize("selector", ["tier in (web", "tier in ()", "rank>x", "a b", "bad key!=x"])
def test_malformed_label_selectors_are_400(cluster: FakeCluster, selector: str) -> None:
    """``labels.Parse`` errors answer 400 BadRequest (the selector is not silently ignored)."""
    status, doc = call(cluster, "GET", CMS, labelSelector=selector)
    assert status == 400 and doc["reason"] == "BadRequest"


# --- patches ----------------------------------------------------------------------------------------------------


def test_json_patch_supports_every_rfc6902_operation(cluster: FakeCluster) -> None:
    """RFC 6902 (add, remove, replace, move, copy, test); a failed ``test`` rejects the whole patch (422)."""
    ops = [{"op": "add", "path": "/data/x", "value": "1"}, {"op": "copy", "from": "/data/x", "path": "/data/y"},
           {"op": "move", "from": "/data/y", "path": "/data/z"}, {"op": "replace", "path": "/data/x", "value": "2"},
           {"op": "remove", "path": "/metadata/labels/env"}, {"op": "test", "path": "/data/z", "value": "1"}]
    status, doc = call(cluster, "PATCH", CMS + "/a", ops, "application/json-patch+json")
    assert status == 200 and doc["data"] == {"x": "2", "z": "1"} and doc["metadata"]["labels"] == {"tier": "web"}
    status, doc = call(cluster, "PATCH", CMS + "/a", [{"op": "test", "path": "/data/x", "value": "nope"},
                                                      {"op": "remove", "path": "/data/z"}],
                       "application/json-patch+json")
    assert status == 422 and cluster.get_object("configmaps", "a", "default")["data"] == {"x": "2", "z": "1"}


def test_merge_patch_deletes_with_null_and_replaces_lists(cluster: FakeCluster) -> None:
    """RFC 7386: ``null`` removes a key, objects merge recursively, arrays are replaced."""
    cluster.apply_object(deployment())
    patch = {"metadata": {"labels": {"x": "y"}}, "spec": {"replicas": None, "template": {"spec": {"containers": [
        {"name": "only", "image": "only:1"}]}}}}
    status, doc = call(cluster, "PATCH", DEPLOYS + "/web", patch, "application/merge-patch+json")
    assert status == 200 and "replicas" not in doc["spec"]
    assert [c["name"] for c in doc["spec"]["template"]["spec"]["containers"]] == ["only"]


def test_strategic_merge_patch_merges_lists_by_their_merge_key(cluster: FakeCluster) -> None:
    """Strategic merge patch ("Update API Objects in Place Using kubectl patch"): containers merge by ``name``,
    ``$patch: delete`` removes an item, ``finalizers`` merge as a set; custom resources refuse it with 415."""
    cluster.apply_object({**deployment(), "metadata": {"name": "web", "namespace": "default", "finalizers": ["a"]}})
    patch = {"metadata": {"finalizers": ["b"]}, "spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "app:2"}, {"name": "side", "$patch": "delete"}, {"name": "new", "image": "n:1"}]}}}}
    status, doc = call(cluster, "PATCH", DEPLOYS + "/web", patch, "application/strategic-merge-patch+json")
    assert status == 200, doc
    assert doc["spec"]["template"]["spec"]["containers"] == [{"name": "app", "image": "app:2"},
                                                             {"name": "new", "image": "n:1"}]
    assert doc["metadata"]["finalizers"] == ["a", "b"]
    cluster.apply_object({"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
                          "metadata": {"name": "i", "namespace": "default"}, "spec": {}})
    status, doc = call(cluster, "PATCH", "/apis/cert-manager.io/v1/namespaces/default/issuers/i", {"spec": {}},
                       "application/strategic-merge-patch+json")
    assert status == 415 and "application/merge-patch+json" in doc["message"]


# --- server-side apply ------------------------------------------------------------------------------------------


def apply(cluster: FakeCluster, body: dict[str, Any], manager: str, **query: str) -> tuple[int, dict[str, Any]]:
    return call(cluster, "PATCH", CMS + "/" + body["metadata"]["name"], body, APPLY, fieldManager=manager, **query)


def test_apply_creates_and_records_managed_fields(cluster: FakeCluster) -> None:
    """Server-Side Apply reference: an apply to a missing object creates it; ``managedFields`` records the
    manager, ``operation: Apply`` and the owned fields as FieldsV1."""
    status, doc = apply(cluster, cm("new", {"app": "x"}, k="v"), "alice")
    assert status == 201 and doc["data"] == {"k": "v"}
    [entry] = doc["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"], entry["fieldsType"]) == (
        "alice", "Apply", "v1", "FieldsV1")
    assert entry["fieldsV1"] == {"f:data": {"f:k": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}


def test_apply_conflicts_force_and_shared_ownership(cluster: FakeCluster) -> None:
    """Server-Side Apply reference, "Conflicts": changing a field another manager owns is 409 with one
    FieldManagerConflict cause per field, unless ``force=true`` moves ownership; applying the same value shares it."""
    apply(cluster, cm("x", k="1", s="same"), "alice")
    status, doc = apply(cluster, cm("x", k="2", s="same"), "bob")
    assert status == 409 and doc["reason"] == "Conflict"
    assert doc["message"] == 'Apply failed with 1 conflict: conflict with "alice" using v1: .data.k'
    assert doc["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "alice" using v1',
                                         "field": ".data.k"}]
    status, doc = apply(cluster, cm("x", k="2", s="same"), "bob", force="true")
    assert status == 200 and doc["data"]["k"] == "2"
    owned = {e["manager"]: e["fieldsV1"] for e in doc["metadata"]["managedFields"]}
    assert owned["alice"] == {"f:data": {"f:s": {}}}  # k moved to bob, s is shared
    assert owned["bob"] == {"f:data": {"f:k": {}, "f:s": {}}}


def test_apply_removes_fields_the_manager_stopped_applying(cluster: FakeCluster) -> None:
    """Server-Side Apply reference, "Merge strategy": fields the applier owned and omits are removed unless
    another manager owns them too."""
    apply(cluster, cm("y", k="1", gone="1", kept="1"), "alice")
    apply(cluster, cm("y", kept="1"), "bob")
    status, doc = apply(cluster, cm("y", k="1"), "alice")
    assert status == 200 and doc["data"] == {"k": "1", "kept": "1"}


def test_update_takes_ownership_so_a_later_apply_conflicts(cluster: FakeCluster) -> None:
    """Server-Side Apply reference: non-apply writes are recorded with ``operation: Update`` under their
    ``fieldManager`` (or the User-Agent), and own the fields they changed."""
    apply(cluster, cm("z", k="1"), "alice")
    status, doc = call(cluster, "PATCH", CMS + "/z", {"data": {"k": "edited"}}, "application/merge-patch+json")
    assert status == 200
    updater = next(e for e in doc["metadata"]["managedFields"] if e["operation"] == "Update")
    assert updater["manager"] == "tester" and updater["fieldsV1"] == {"f:data": {"f:k": {}}}
    status, doc = apply(cluster, cm("z", k="again"), "alice")
    assert status == 409 and 'conflict with "tester"' in doc["message"]


def test_apply_options_are_validated(cluster: FakeCluster) -> None:
    """apimachinery ``ValidatePatchOptions``: apply needs ``fieldManager``; ``force`` only with apply (422)."""
    status, doc = call(cluster, "PATCH", CMS + "/a", cm("a"), APPLY)
    assert status == 422 and doc["message"].endswith("fieldManager: Required value: is required for apply patch")
    status, doc = call(cluster, "PATCH", CMS + "/a", {}, "application/merge-patch+json", force="true")
    assert status == 422 and "force: Forbidden: may not be specified for non-apply patch" in doc["message"]


def test_apply_accepts_yaml_and_merges_containers_by_name(cluster: FakeCluster) -> None:
    """The apply body is YAML (``application/apply-patch+yaml``); associative lists merge by key."""
    cluster.apply_object(deployment())
    body = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n" \
           "      containers:\n      - {name: app, image: 'app:9'}\n"
    status, doc = call(cluster, "PATCH", DEPLOYS + "/web", body, APPLY, fieldManager="ci", force="true")
    assert status == 200, doc
    assert [(c["name"], c["image"]) for c in doc["spec"]["template"]["spec"]["containers"]] == [
        ("app", "app:9"), ("side", "side:1")]


# --- finalizers and deletion -------------------------------------------------------------------------------------


def test_finalizers_hold_deletion_until_the_last_one_goes(cluster: FakeCluster) -> None:
    """Finalizers concept page: deleting an object with finalizers sets ``deletionTimestamp`` and keeps it; no new
    finalizer may be added; removing the last finalizer deletes it (watchers see DELETED)."""
    cluster.apply_object({**cm("f"), "metadata": {"name": "f", "namespace": "default",
                                                  "finalizers": ["example.com/a", "example.com/b"]}})
    rv = cluster.resource_version
    status, doc = call(cluster, "DELETE", CMS + "/f", {"propagationPolicy": "Foreground"})
    assert status == 200 and doc["metadata"]["deletionTimestamp"]
    # A ConfigMap has no generation to bump (kube-apiserver bumps only one that is set).
    assert doc["metadata"]["deletionGracePeriodSeconds"] == 0 and "generation" not in doc["metadata"]
    assert cluster.get_object("configmaps", "f", "default") is not None
    assert call(cluster, "DELETE", CMS + "/f")[1]["metadata"]["deletionTimestamp"] == doc["metadata"][
        "deletionTimestamp"]
    status, refused = call(cluster, "PATCH", CMS + "/f", {"metadata": {"finalizers": ["example.com/a", "x/new"]}},
                           "application/merge-patch+json")
    assert status == 422 and "no new finalizers can be added" in refused["message"]
    ops = [{"op": "remove", "path": "/metadata/finalizers/0"}]
    assert call(cluster, "PATCH", CMS + "/f", ops, "application/json-patch+json")[0] == 200
    assert cluster.get_object("configmaps", "f", "default") is not None
    status, doc = call(cluster, "PATCH", CMS + "/f", {"metadata": {"finalizers": None}}, "application/merge-patch+json")
    assert status == 200 and cluster.get_object("configmaps", "f", "default") is None
    with cluster.mock():
        events = requests.get(cluster.base_url + CMS, params={"watch": "1", "resourceVersion": rv}, timeout=5).text
    assert [json.loads(line)["type"] for line in events.splitlines()] == ["MODIFIED", "MODIFIED", "DELETED"]


def test_delete_options_are_validated_and_preconditions_checked(cluster: FakeCluster) -> None:
    """DeleteOptions (API reference): ``propagationPolicy`` is Orphan, Background or Foreground (else 422);
    ``preconditions.uid``/``resourceVersion`` that do not match are 409 Conflict."""
    status, doc = call(cluster, "DELETE", CMS + "/a", propagationPolicy="Sometimes")
    assert status == 422 and 'Unsupported value: "Sometimes"' in doc["message"]
    status, doc = call(cluster, "DELETE", CMS + "/a", {"preconditions": {"uid": "not-it"}})
    assert status == 409 and "Precondition failed: UID in precondition: not-it" in doc["message"]
    for policy in ("Orphan", "Background"):
        name = "a" if policy == "Orphan" else "b"
        status, doc = call(cluster, "DELETE", CMS + "/" + name, propagationPolicy=policy)
        assert status == 200 and cluster.get_object("configmaps", name, "default") is None


def test_deleting_a_namespace_terminates_it_until_its_objects_are_gone(cluster: FakeCluster) -> None:
    """Namespaces concept page ("Deleting a namespace"): the namespace goes ``Terminating``, everything in it is
    deleted; an object held by a finalizer keeps the namespace until the finalizer is removed."""
    cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"},
                          "spec": {"finalizers": ["kubernetes"]}})
    cluster.apply_object({**cm("held"), "metadata": {"name": "held", "namespace": "other", "finalizers": ["x/y"]}})
    status, doc = call(cluster, "DELETE", "/api/v1/namespaces/other")
    assert status == 200 and doc["status"]["phase"] == "Terminating" and doc["metadata"]["deletionTimestamp"]
    assert cluster.get_object("configmaps", "d", "other") is None  # deleted by the namespace controller
    held = cluster.get_object("configmaps", "held", "other")
    assert held is not None and held["metadata"]["deletionTimestamp"]
    assert cluster.get_object("namespaces", "other") is not None
    status, _ = call(cluster, "PATCH", "/api/v1/namespaces/other/configmaps/held", {"metadata": {"finalizers": None}},
                     "application/merge-patch+json")
    assert status == 200
    assert cluster.get_object("configmaps", "held", "other") is None
    assert cluster.get_object("namespaces", "other") is None


def test_deleting_an_empty_namespace_removes_it_at_once(cluster: FakeCluster) -> None:
    cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "empty"},
                          "spec": {"finalizers": ["kubernetes"]}})
    status, _ = call(cluster, "DELETE", "/api/v1/namespaces/empty")
    assert status == 200 and cluster.get_object("namespaces", "empty") is None
