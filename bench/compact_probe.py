"""The object store's compact storage against a plain store of ``json.loads`` dicts, in one process, no server:
``python -m bench.compact_probe [--pods 20000]``.

A quick probe of the store alone (the issue-25 benchmark measures the whole cache against a served cluster): N
realistic ~8 KB Pods (:func:`bench.scope_bench.pod`, 200 ReplicaSets over 50 namespaces) stored by
``ObjectStore.replace`` and by a plain ``{namespace: {name: dict}}``, each measured alone (tracemalloc, then a
full ``gc.collect()``), then the read paths: a warm ``get`` of a recently read Pod, a first ``get`` (against
``json.loads`` of the same Pod's JSON), a label-selector list returning 1 % (against the same filter over the
plain store), and MODIFIED events through ``upsert`` with their changes decoded as a handler gets them.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from bench.scope_bench import pod
from restmapper.store._labels import label_matcher, labels_matcher
from restmapper.store._objects import ObjectStore

__all__ = ["main"]


def _per_call(fn: Callable[[int], Any], n: int, runs: int = 5) -> float:
    """Seconds per call of ``fn(i)``, best of ``runs``."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for i in range(n):
            fn(i)
        best = min(best, (time.perf_counter() - start) / n)
    return best


def _held(build: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(what build() returned, bytes tracemalloc counts it holds, seconds of one full gc.collect())``."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = build()
    gc.collect()
    size = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    start = time.perf_counter()
    gc.collect()
    return held, size, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=20_000)
    n = parser.parse_args(argv).pods
    wire = [json.dumps(pod(i), separators=(",", ":")).encode() for i in range(n)]

    def plain() -> dict[str, dict[str, Any]]:
        by_ns: dict[str, dict[str, Any]] = {}
        for raw in wire:
            obj = json.loads(raw)
            by_ns.setdefault(obj["metadata"]["namespace"], {})[obj["metadata"]["name"]] = obj
        return by_ns

    def compact() -> ObjectStore:
        store = ObjectStore()
        store.replace(json.loads(raw) for raw in wire)
        return store

    _, _, base_gc = _held(lambda: None)  # the process without either store: subtracted from both
    held, plain_bytes, plain_gc = _held(plain)
    del held
    store, store_bytes, store_gc = _held(compact)
    plain_gc, store_gc = max(plain_gc - base_gc, 1e-9), max(store_gc - base_gc, 1e-9)
    estimate = store.bytes_held()
    print(f"bytes per Pod: ours {store_bytes / n:,.0f} (estimate {estimate / n:,.0f}, "
          f"{estimate / store_bytes - 1:+.0%}), plain {plain_bytes / n:,.0f}: {store_bytes / plain_bytes:.1%} "
          f"(target <= 15 %)")
    print(f"full gc.collect() beyond the process's own {base_gc * 1e3:.1f} ms: ours {store_gc * 1e3:.2f} ms, "
          f"plain {plain_gc * 1e3:.1f} ms: {store_gc / plain_gc:.2%} (target <= 5 %)")
    print(f"extrapolated to 100k Pods (bytes and gc time beyond the process's own, times 100k / N): ours "
          f"{store_bytes / n * 1e5 / 2**20:,.0f} MiB, plain {plain_bytes / n * 1e5 / 2**20:,.0f} MiB; gc ours "
          f"{store_gc / n * 1e5 * 1e3:.1f} ms, plain {plain_gc / n * 1e5:.1f} s")

    keys = [(f"team-{i % 50:02d}", json.loads(wire[i])["metadata"]["name"]) for i in range(n)]
    first = _per_call(lambda i: ObjectStore.peek(store, store.objects_by_namespace[keys[i][0]][keys[i][1]]),
                      min(n, 2000), runs=3)
    loads = _per_call(lambda i: json.loads(wire[i]), min(n, 2000), runs=3)
    print(f"first get (decode): {first * 1e6:.1f} us, json.loads of that Pod {loads * 1e6:.1f} us: "
          f"{first / loads:.2f}x (target <= 1.5x)")
    ns, name = keys[7]
    store.get(ns, name)
    warm = _per_call(lambda i: store.get(ns, name), 200_000)
    print(f"warm get of a recently read Pod (ObjectStore.get): {warm * 1e6:.2f} us (target <= 2 us)")

    selector = "app in (web-007, web-008)"  # 2 of 200 ReplicaSets: 1 %
    plain_store = plain()
    matcher = label_matcher(selector)
    plain_list = _per_call(lambda i: [o for objs in plain_store.values() for o in objs.values() if matcher(o)], 1,
                           runs=5)
    labels = labels_matcher(selector)
    ours_list = _per_call(lambda i: store.select(None, labels), 1, runs=5)
    found = len(store.select(None, labels))
    print(f"list(label_selector) returning {found} of {n}: ours {ours_list * 1e3:.1f} ms, plain "
          f"{plain_list * 1e3:.1f} ms: {ours_list / plain_list:.2f}x (target <= 2x)")
    plain_store.clear()
    gc.collect()

    events = [json.loads(raw) for raw in wire[:2000]]
    for i, obj in enumerate(events):
        obj["metadata"]["resourceVersion"] = str(10**6 + i)

    def event(i: int) -> None:
        for change in store.upsert(events[i]):  # the changes as the handler thread decodes them
            assert change[0] == "MODIFIED"

    rate = 1 / _per_call(event, len(events), runs=1)
    lines = [json.dumps({"type": "MODIFIED", "object": o}).encode() for o in events]
    plain_store = plain()

    def plain_event(i: int) -> None:
        new = json.loads(lines[i])["object"]
        objects = plain_store[new["metadata"]["namespace"]]
        old = objects.get(new["metadata"]["name"])
        objects[new["metadata"]["name"]] = new
        assert old is not None

    plain_rate = 1 / _per_call(plain_event, len(lines), runs=1)
    ours_rate = 1 / (1 / rate + loads)
    print(f"MODIFIED events of 8 KB Pods, the line decoded, stored, old and new as a handler gets them: ours "
          f"{ours_rate:,.0f}/s, plain {plain_rate:,.0f}/s: {ours_rate / plain_rate:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
