"""The big-cluster object-cache benchmark measures what it says: its Pods are Deployments' replicas sharing a template,
about 8 KB of JSON each, and a tiny run prints every row next to its target (no timing or memory asserted)."""

from __future__ import annotations

import json

import pytest

from bench.bigcache_bench import REPLICAS, SELECTOR, run
from bench.pods import pod

pytest.importorskip("requests")

PER_POD = ("uid", "name", "nodeName", "hostIP", "podIP", "startTime", "containerID")


def _without(obj: object, keys: tuple[str, ...]) -> object:
    if isinstance(obj, dict):
        return {k: _without(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [_without(v, keys) for v in obj]
    return obj


def test_replicas_of_one_deployment_share_their_template() -> None:
    a, b = pod(REPLICAS * 7 + 1, replicas=REPLICAS), pod(REPLICAS * 7 + 2, replicas=REPLICAS)
    assert 7_000 <= len(json.dumps(a)) <= 9_000
    assert len(a["spec"]["containers"]) == 2 and len(a["metadata"]["managedFields"]) == 2
    assert a["metadata"]["ownerReferences"] and a["status"]["conditions"] and a["status"]["podIP"]
    for field in PER_POD[:2]:
        assert a["metadata"][field] != b["metadata"][field]
    assert a["spec"]["nodeName"] != b["spec"]["nodeName"] and a["status"]["podIP"] != b["status"]["podIP"]
    assert a["status"]["startTime"] != b["status"]["startTime"]
    times = ("time", "lastTransitionTime", "startedAt")
    assert _without(a, PER_POD + times) == _without(b, PER_POD + times)
    other = pod(REPLICAS * 8, replicas=REPLICAS)
    assert other["spec"]["containers"] != a["spec"]["containers"]


def test_the_full_size_is_400_deployments_over_50_namespaces_and_the_selector_takes_one_percent() -> None:
    firsts = [pod(d * REPLICAS, replicas=REPLICAS)["metadata"] for d in range(20_000 // REPLICAS)]
    assert len({m["labels"]["app"] for m in firsts}) == 400
    assert len({m["namespace"] for m in firsts}) == 50
    assert sum(m["labels"][SELECTOR[0]] == SELECTOR[1] for m in firsts) * REPLICAS == 200


def test_a_tiny_run_prints_every_row_next_to_its_target() -> None:
    rows = run(200, events=20)
    names = "\n".join(r.name for r in rows)
    for expected in ("bytes held per Pod (tracemalloc)", "bytes held per Pod (RSS growth)",
                     "one full gc.collect(), cache populated", "peak RSS growth during the initial sync",
                     "initial sync of 200 Pods, WatchList", "initial sync of 200 Pods, paginated list",
                     "warm get of a recently read Pod", "first get of a Pod not read before",
                     "list(label_selector='shard=0') returning 50 Pods", "events/s to a handler",
                     "extrapolated to 100,000 Pods: bytes held", "extrapolated to 100,000 Pods: one full gc.collect()"):
        assert expected in names, expected
    for row in rows:
        if row.ours is None:
            assert row.note.startswith("n/a (not available)"), row.name
        elif row.target:
            assert row.passed is not None and row.result in ("PASS", "MISS"), row.name
        assert row.ours is None or row.ours > 0, row.name
    assert any(r.name.endswith("a relist after a 410") for r in rows) or "clear_refs refused" in "".join(
        r.note for r in rows)
