"""The kit's API server validates ``metadata.name`` and sets ``metadata.generation`` as kube-apiserver's registry
strategies do: most kinds take a DNS-1123 subdomain name, namespaces a DNS-1123 label, services a DNS-1035 label,
RBAC kinds any path segment (``system:controller:x``); a bad name is 422 Invalid with the field in the causes.
``generation`` is set only for kinds with spec/status semantics (workloads, pods, CRDs and custom resources), never
for a ConfigMap, a Secret or a Namespace."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests
from helpers.watch import WIDGET

from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.add_crd(WIDGET)
    with cluster.serve() as s:
        yield s


def _post(served: ServedCluster, path: str, obj: dict[str, Any]) -> requests.Response:
    return requests.post(served.url + path, json=obj, timeout=10)


CM = "/api/v1/namespaces/default/configmaps"


@pytest.mark.parametrize(("path", "kind", "api_version", "name", "rule"), [
    (CM, "ConfigMap", "v1", "Bad_Name", "RFC 1123 subdomain"),
    (CM, "ConfigMap", "v1", "a" * 254, "must be no more than 253 characters"),
    ("/apis/apps/v1/namespaces/default/deployments", "Deployment", "apps/v1", "-web", "RFC 1123 subdomain"),
    ("/api/v1/namespaces", "Namespace", "v1", "a.b", "RFC 1123 label"),
    ("/api/v1/namespaces", "Namespace", "v1", "a" * 64, "must be no more than 63 characters"),
    ("/api/v1/namespaces/default/services", "Service", "v1", "1web", "DNS-1035 label"),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "ClusterRole", "rbac.authorization.k8s.io/v1", "a/b",
     "may not contain '/'"),
    ("/apis/example.com/v1/namespaces/default/widgets", "Widget", "example.com/v1", "Bad_Name", "RFC 1123 subdomain"),
])
def test_an_invalid_name_is_422_with_its_cause(served: ServedCluster, path: str, kind: str, api_version: str,
                                               name: str, rule: str) -> None:
    response = _post(served, path, {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}})
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid" and f'"{name}" is invalid: metadata.name: Invalid value' in status["message"]
    assert rule in status["message"]
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.name",
                                            "message": status["message"].split("metadata.name: ", 1)[1]}]


@pytest.mark.parametrize(("path", "kind", "api_version", "name"), [
    (CM, "ConfigMap", "v1", "web.example-1"),
    ("/api/v1/namespaces", "Namespace", "v1", "team-1"),
    ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "ClusterRole", "rbac.authorization.k8s.io/v1",
     "system:controller:web"),
])
def test_valid_names_are_created(served: ServedCluster, path: str, kind: str, api_version: str, name: str) -> None:
    response = _post(served, path, {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}})
    assert response.status_code == 201, response.text


def test_generation_only_for_kinds_with_spec_semantics(served: ServedCluster) -> None:
    cm = _post(served, CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    assert "generation" not in cm.json()["metadata"]
    replaced = requests.put(f"{served.url}{CM}/c", json={**cm.json(), "data": {"a": "2"}}, timeout=10)
    assert replaced.status_code == 200 and "generation" not in replaced.json()["metadata"]
    applied = served.cluster.apply_object({"apiVersion": "v1", "kind": "Secret",
                                           "metadata": {"name": "s", "namespace": "default"}})
    assert "generation" not in applied["metadata"]
    deploy = _post(served, "/apis/apps/v1/namespaces/default/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}}})
    assert deploy.json()["metadata"]["generation"] == 1
    widget = _post(served, "/apis/example.com/v1/namespaces/default/widgets",
                   {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"x": 1}})
    assert widget.json()["metadata"]["generation"] == 1


def test_a_deletion_held_by_a_finalizer_bumps_a_set_generation_only(served: ServedCluster) -> None:
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    _post(served, widgets, {"apiVersion": "example.com/v1", "kind": "Widget",
                            "metadata": {"name": "held", "finalizers": ["example.com/keep"]}})
    _post(served, CM, {"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "held", "finalizers": ["example.com/keep"]}})
    widget = requests.delete(f"{served.url}{widgets}/held", timeout=10).json()
    cm = requests.delete(f"{served.url}{CM}/held", timeout=10).json()
    assert widget["metadata"]["deletionTimestamp"] and widget["metadata"]["generation"] == 2
    assert cm["metadata"]["deletionTimestamp"] and "generation" not in cm["metadata"]
