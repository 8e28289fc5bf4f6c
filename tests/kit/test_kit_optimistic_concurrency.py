"""The kit serves every write with kube-apiserver's optimistic concurrency on ``metadata.resourceVersion``.

A write that names a resourceVersion other than the stored one is refused with 409 Conflict and the registry's
message ("the object has been modified; please apply your changes to the latest version and try again"), whatever
the verb (PUT, every patch type, server-side apply, forced or not) and the resource (Leases included). Leases also
refuse an update without a resourceVersion, as their strategy forbids unconditional updates.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from restmapper.testing import FakeCluster

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
MODIFIED = ("Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your "
            "changes to the latest version and try again")


def _send(cluster: FakeCluster, method: str, path: str, body: Any, content_type: str = "application/json",
          **query: str) -> tuple[int, dict[str, Any]]:
    status, _, data = cluster.handle(method, path, query, {"Content-Type": content_type, "Accept": "application/json"},
                                     json.dumps(body).encode())
    return status, json.loads(data)


def _lease(cluster: FakeCluster) -> tuple[dict[str, Any], str]:
    """Create Lease x, then change it once: returns the current object and the resourceVersion before the change."""
    status, first = _send(cluster, "POST", LEASES, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                                    "metadata": {"name": "x"}, "spec": {"holderIdentity": "a"}})
    assert status == 201
    status, current = _send(cluster, "PUT", f"{LEASES}/x", {**first, "spec": {"holderIdentity": "b"}})
    assert status == 200
    assert current["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    return current, first["metadata"]["resourceVersion"]


def _deployment(cluster: FakeCluster) -> tuple[dict[str, Any], str]:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    status, first = _send(cluster, "POST", DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template}})
    assert status == 201
    status, current = _send(cluster, "PUT", f"{DEPLOYMENTS}/web", {**first, "spec": {**first["spec"], "replicas": 2}})
    assert status == 200
    return current, first["metadata"]["resourceVersion"]


def _assert_conflict(status: int, doc: dict[str, Any], resource: str, name: str) -> None:
    assert status == 409, doc
    assert doc["reason"] == "Conflict"
    assert doc["message"] == MODIFIED.format(resource=resource, name=name)


@pytest.mark.parametrize(("content_type", "patch"), [
    ("application/merge-patch+json", {"spec": {"holderIdentity": "c"}}),
    ("application/strategic-merge-patch+json", {"spec": {"holderIdentity": "c"}}),
])
def test_a_lease_patch_naming_a_stale_resource_version_is_a_conflict(content_type: str, patch: dict[str, Any]) -> None:
    cluster = FakeCluster.embedded()
    _, stale = _lease(cluster)
    status, doc = _send(cluster, "PATCH", f"{LEASES}/x", {**patch, "metadata": {"resourceVersion": stale}},
                        content_type)
    _assert_conflict(status, doc, "leases.coordination.k8s.io", "x")


def test_a_lease_json_patch_setting_a_stale_resource_version_is_a_conflict() -> None:
    cluster = FakeCluster.embedded()
    _, stale = _lease(cluster)
    status, doc = _send(cluster, "PATCH", f"{LEASES}/x",
                        [{"op": "replace", "path": "/metadata/resourceVersion", "value": stale}],
                        "application/json-patch+json")
    _assert_conflict(status, doc, "leases.coordination.k8s.io", "x")


def test_a_lease_put_with_a_stale_resource_version_is_a_conflict_and_changes_nothing() -> None:
    cluster = FakeCluster.embedded()
    current, stale = _lease(cluster)
    stale_body = {**current, "metadata": {**current["metadata"], "resourceVersion": stale},
                  "spec": {"holderIdentity": "c"}}
    status, doc = _send(cluster, "PUT", f"{LEASES}/x", stale_body)
    _assert_conflict(status, doc, "leases.coordination.k8s.io", "x")
    assert doc["details"] == {"name": "x", "group": "coordination.k8s.io", "kind": "leases"}
    stored = cluster.get_object("leases.coordination.k8s.io", "x", "default")
    assert stored is not None and stored["spec"]["holderIdentity"] == "b"
    assert stored["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]


@pytest.mark.parametrize("force", ["false", "true"])
def test_server_side_apply_naming_a_stale_resource_version_is_a_conflict(force: str) -> None:
    """kube-apiserver checks the resourceVersion an apply configuration names before merging it, forced or not."""
    cluster = FakeCluster.embedded()
    _, stale = _deployment(cluster)
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "resourceVersion": stale},
              "spec": {"replicas": 3}}
    status, doc = _send(cluster, "PATCH", f"{DEPLOYMENTS}/web", config, "application/apply-patch+yaml",
                        fieldManager="tester", force=force)
    _assert_conflict(status, doc, "deployments.apps", "web")
    stored = cluster.get_object("deployments.apps", "web", "default")
    assert stored is not None and stored["spec"]["replicas"] == 2


def test_server_side_apply_naming_the_current_resource_version_is_applied() -> None:
    cluster = FakeCluster.embedded()
    current, _ = _deployment(cluster)
    config = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "resourceVersion": current["metadata"]["resourceVersion"]},
              "spec": {"replicas": 3}}
    status, doc = _send(cluster, "PATCH", f"{DEPLOYMENTS}/web", config, "application/apply-patch+yaml",
                        fieldManager="tester", force="true")
    assert status == 200, doc
    assert doc["spec"]["replicas"] == 3


def test_a_lease_update_without_a_resource_version_is_invalid() -> None:
    """Leases forbid unconditional updates (their strategy's AllowUnconditionalUpdate is false): 422."""
    cluster = FakeCluster.embedded()
    current, _ = _lease(cluster)
    body = {**current, "metadata": {"name": "x", "namespace": "default"}, "spec": {"holderIdentity": "c"}}
    status, doc = _send(cluster, "PUT", f"{LEASES}/x", body)
    assert status == 422, doc
    assert doc["reason"] == "Invalid"
    assert doc["message"] == ('leases.coordination.k8s.io "x" is invalid: metadata.resourceVersion: Invalid value: '
                              "0x0: must be specified for an update")
    assert doc["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
                                         "message": "Invalid value: 0x0: must be specified for an update"}]


def test_a_configmap_update_without_a_resource_version_is_unconditional() -> None:
    """Most kinds allow an unconditional update: the stored object is replaced."""
    cluster = FakeCluster.embedded()
    status, _ = _send(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    assert status == 201
    status, doc = _send(cluster, "PUT", "/api/v1/namespaces/default/configmaps/c",
                        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "2"}})
    assert status == 200, doc
    assert doc["data"] == {"a": "2"}
