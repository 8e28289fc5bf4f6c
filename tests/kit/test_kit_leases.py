"""The kit's leader-election controls: steal, expire and partition a Lease, as seen over HTTP."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.leader import LEASE_PATH, NAME, NAMESPACE, lease

from restmapper.testing import FakeCluster

COLLECTION = LEASE_PATH.rsplit("/", 1)[0]


def _write(cluster: FakeCluster, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status, _, data = cluster.handle(method, path, {}, {"Content-Type": "application/json"}, json.dumps(body).encode())
    return status, json.loads(data)


def _create(cluster: FakeCluster, holder: str) -> dict[str, Any]:
    status, doc = _write(cluster, "POST", COLLECTION, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                                       "metadata": {"name": NAME},
                                                       "spec": {"holderIdentity": holder, "leaseTransitions": 0}})
    assert status == 201
    return doc


def test_steal_takes_the_lease_over_and_counts_a_transition() -> None:
    cluster = FakeCluster()
    before = _create(cluster, "a")
    stolen = cluster.steal_lease(NAME, NAMESPACE, "thief")
    assert stolen["spec"]["holderIdentity"] == "thief" and stolen["spec"]["leaseTransitions"] == 1
    assert stolen["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    status, _ = _write(cluster, "PUT", LEASE_PATH, {**before, "spec": {"holderIdentity": "a"}})
    assert status == 409  # the old holder's next write is based on what it read before


def test_steal_creates_a_missing_lease() -> None:
    cluster = FakeCluster()
    assert cluster.steal_lease(NAME, NAMESPACE, "thief")["spec"]["holderIdentity"] == "thief"


def test_expire_clears_the_holder_and_keeps_the_transitions() -> None:
    cluster = FakeCluster()
    _create(cluster, "a")
    cluster.steal_lease(NAME, NAMESPACE, "b")
    spec = cluster.expire_lease(NAME, NAMESPACE)["spec"]
    assert spec["holderIdentity"] == "" and spec["leaseTransitions"] == 1
    with pytest.raises(KeyError):
        cluster.expire_lease("missing", NAMESPACE)


def test_a_partition_refuses_only_that_candidates_writes_until_healed() -> None:
    cluster = FakeCluster()
    current = _create(cluster, "a")
    with cluster.partition_lease("a") as partition:
        with pytest.raises(ConnectionResetError):  # a renewal
            _write(cluster, "PUT", LEASE_PATH, {**current, "spec": {"holderIdentity": "a"}})
        with pytest.raises(ConnectionResetError):  # a release of the lease it holds
            _write(cluster, "PUT", LEASE_PATH, {**current, "spec": {"holderIdentity": ""}})
        status, _, _ = cluster.handle("GET", LEASE_PATH, {}, {})
        assert status == 200  # reads answer
        status, taken = _write(cluster, "PUT", LEASE_PATH, {**current, "spec": {"holderIdentity": "b"}})
        assert status == 200  # another candidate is not cut off
        assert partition.refused == 2
    status, _ = _write(cluster, "PUT", LEASE_PATH, {**taken, "spec": {"holderIdentity": "a"}})
    assert status == 200
    assert lease(cluster)["spec"]["holderIdentity"] == "a"
