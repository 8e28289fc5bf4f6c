"""The scoped object-cache benchmark measures what the issue describes: its Pod is about 8 KB of JSON shaped as
kube-apiserver stores one, and each variant's cache syncs the right Pods (no timing or memory asserted)."""

from __future__ import annotations

import json

import pytest

from bench.scope_bench import NAMESPACES, VARIANTS, measure, pod
from restmapper.testing import FakeCluster


def test_the_pod_is_realistic() -> None:
    p = pod(7)
    size = len(json.dumps(p))
    assert 7_000 <= size <= 9_000
    assert len(p["spec"]["containers"]) == 2 and len(p["metadata"]["managedFields"]) == 2
    assert p["metadata"]["ownerReferences"] and p["status"]["conditions"]
    assert {pod(i)["metadata"]["namespace"] for i in range(200)} == {f"team-{i:02d}" for i in range(NAMESPACES)}
    assert len({pod(i)["metadata"]["uid"] for i in range(100)}) == 100


@pytest.mark.parametrize(("variant", "held"), [("full", 100), ("metadata+strip", 100), ("selector", 10),
                                               ("namespaces", 10)])
def test_each_variant_holds_its_pods(variant: str, held: int) -> None:
    assert variant in VARIANTS
    cluster = FakeCluster(bookmark_interval=None)
    for i in range(100):
        cluster.apply_object(pod(i))
    with cluster.serve() as served:
        got = measure(served.url, variant, traced=False)
    assert got["objects"] == held and got["list_bytes"] > 0 and got["seconds"] > 0
