"""The kit's field selectors accept exactly the field labels kube-apiserver's core/v1 field label conversions
accept: Node and Namespace (cluster-scoped) take metadata.name but not metadata.namespace, a ReplicationController
takes status.replicas, a Pod's legacy spec.host reads spec.nodeName; field values hold what the server accepts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


def names(served: ServedCluster, path: str, selector: str) -> list[str] | int:
    answer = requests.get(served.url + path, params={"fieldSelector": selector}, timeout=10)
    if answer.status_code != 200:
        return answer.status_code
    return [o["metadata"]["name"] for o in answer.json()["items"]]


@pytest.mark.parametrize(("path", "selector", "expected"), [
    ("/api/v1/nodes", "metadata.name=n1", ["n1"]),
    ("/api/v1/nodes", "spec.unschedulable=false", ["n1"]),
    ("/api/v1/nodes", "metadata.namespace=", 400),
    ("/api/v1/namespaces", "metadata.name=default", ["default"]),
    ("/api/v1/namespaces", "metadata.namespace=", 400),
    ("/api/v1/namespaces/default/replicationcontrollers", "status.replicas=0", ["rc"]),
    ("/api/v1/namespaces/default/pods", "spec.host=n1", ["p"]),
    ("/api/v1/namespaces/default/pods", "spec.host=n2", []),
    ("/api/v1/nodes", "spec.host=n1", 400),
])
def test_field_labels_follow_the_servers_conversions(served: ServedCluster, path: str, selector: str,
                                                     expected: list[str] | int) -> None:
    cluster = served.cluster
    cluster.apply_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                          "spec": {"unschedulable": False}})
    cluster.apply_object({"apiVersion": "v1", "kind": "ReplicationController",
                          "metadata": {"name": "rc", "namespace": "default"}, "spec": {}, "status": {"replicas": 0}})
    cluster.apply_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}})
    assert names(served, path, selector) == expected
