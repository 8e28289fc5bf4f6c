"""examples/kopf_operator.py under a real ``kopf run`` against the loopback kit (the fake_cluster_server fixture)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from helpers.kit import kopf_registry as kopf_registry  # a fixture, used by name
from kopf.testing import KopfRunner

from restmapper.testing import ServedCluster, crd_manifest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kopf_operator.py"


def _status(served: ServedCluster, timeout: float = 60.0) -> dict[str, Any]:
    """Bounded polling of the cluster's state (kopf runs in its own thread; this is only a safety net)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        obj = served.cluster.get_object("bundles.example.com", "b1", "default")
        if obj and obj.get("status", {}).get("resolve_bundle"):
            return dict(obj["status"]["resolve_bundle"])
        time.sleep(0.05)
    raise AssertionError("kopf never wrote the handler's status")


@pytest.mark.restmapper(embedded=True, crds=[crd_manifest("example.com", "Bundle")])
@pytest.mark.usefixtures("kopf_registry")
def test_kopf_run_resolves_kinds_through_the_mapper(fake_cluster_server: ServedCluster) -> None:
    fake_cluster_server.cluster.apply_object({
        "apiVersion": "example.com/v1", "kind": "Bundle", "metadata": {"name": "b1", "namespace": "default"},
        "spec": {"resources": ["deploy", "certificates.cert-manager.io", "nope"]}})
    with KopfRunner(["run", "--standalone", "--namespace", "default", str(EXAMPLE)], timeout=120) as runner:
        status = _status(fake_cluster_server)
    assert runner.exception is None and runner.exit_code == 0, runner.stdout
    rows = {row["name"]: row for row in status["resolved"]}
    assert (rows["deploy"]["group"], rows["deploy"]["resource"], rows["deploy"]["namespaced"]) == (
        "apps", "deployments", True)
    assert "error" in rows["nope"]
    assert rows["certificates.cert-manager.io"]["kind"] == "Certificate"
