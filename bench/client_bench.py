"""Read-your-writes benchmark: ``python bench/client_bench.py`` (``--quick`` for a smoke run).

On a loopback kit cluster, one ConfigMap is updated then read back through the object cache, N times (1,000 by
default):

- through :class:`restmapper.client.Client`: every read after an update must see the update's resourceVersion
  (target: 0 stale reads); the wait the client adds after the server answered (median and p99), next to
- one watch-event delivery: a plain write through the transport, then the time until the cache holds it (median,
  p99): what any read-your-writes scheme has to wait at least;
- the same cycles without the client (a plain write, then an immediate ``get``): how many reads are stale
  (informational: the problem the client removes).

Also registered as the ``client`` section of ``python -m bench`` (``bench_rows``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import Result, render_results
from restmapper.client import Client
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

NAME, NAMESPACE = "rw", "default"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps/{NAME}"
_JSON = {"Content-Type": "application/json", "Accept": "application/json"}


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def _rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


def run(cycles: int = 1_000, progress: Callable[[str], None] = lambda s: None) -> list[Result]:
    """Measure ``cycles`` update-then-get cycles each way and return the results."""
    cluster = FakeCluster()
    cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": {"i": "0"}})
    with cluster.serve() as served:
        transport = RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1))
        cache = ObjectCache(LazyRESTMapper(DiscoveryClient(transport)))
        try:
            client = Client(cache, timeout=10)
            obj = cache.get("configmaps", NAME, NAMESPACE)  # the informer runs and is synced
            progress(f"client: {cycles} update-then-get cycles through Client")
            stale, added = 0, []
            for i in range(cycles):
                body = {**obj, "data": {"i": str(i)}}
                write = client._object_write("update", "PUT", body, None)
                answer, observation = client._perform(write)
                sent = time.perf_counter()
                client._observe(observation)
                added.append(time.perf_counter() - sent)
                obj = cache.get("configmaps", NAME, NAMESPACE)
                stale += _rv(obj) < _rv(answer)
            progress(f"client: {cycles} plain writes, then the watch event's delivery")
            delivery, plain_stale = [], 0
            for i in range(cycles):
                body = {**obj, "data": {"i": f"p{i}"}}
                answer = json.loads(transport.request("PUT", PATH, _JSON, json.dumps(body).encode()).body)
                sent = time.perf_counter()
                plain_stale += _rv(cache.get("configmaps", NAME, NAMESPACE)) < _rv(answer)
                obj = cache.wait_for("configmaps", NAME, NAMESPACE, resource_version=answer["metadata"][
                    "resourceVersion"], timeout=10)
                delivery.append(time.perf_counter() - sent)
        finally:
            cache.stop()
    ms = 1e3
    return [
        Result(f"read-your-writes: stale reads in {cycles:,} update-then-get cycles (Client + ObjectCache)", stale,
               None, "reads", "0", stale == 0, "a read older than the update's resourceVersion"),
        Result("read-your-writes: wait added per update (median) vs one watch-event delivery",
               statistics.median(added) * ms, statistics.median(delivery) * ms, "ms", "", None,
               "after the server answered, until the cache holds it; loopback kit"),
        Result("read-your-writes: wait added per update (p99) vs one watch-event delivery",
               _p99(added) * ms, _p99(delivery) * ms, "ms", "", None, "same cycles, 99th percentile"),
        Result(f"stale reads without the client (plain write, then get) in {cycles:,} cycles", plain_stale, None,
               "reads", "", None, "informational: what the client's wait removes"),
    ]


def bench_rows(ctx: Any) -> list[Any]:
    """The ``client`` section of ``python -m bench``: these results as ``bench.measure.Row``."""
    from bench.measure import Row

    quick = bool(getattr(ctx, "quick", False))
    results = run(100 if quick else 1_000, progress=getattr(ctx, "progress", lambda s: None))
    return [Row(r.name, r.ours, r.peer, r.unit, target=r.target, passed=r.passed, note=r.note,
                bound=0.0 if r.target == "0" else None) for r in results]


def main(argv: list[str] | None = None) -> int:
    """Run and print the table; exit status 0 even when a target is missed (the table says MISS)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=1_000, help="update-then-get cycles (default 1000)")
    parser.add_argument("--quick", action="store_true", help="smoke size (100 cycles)")
    args = parser.parse_args(argv)
    print(render_results(run(100 if args.quick else args.cycles, progress=lambda s: print(s, file=sys.stderr)),
                         ours_format=",.3f", peer_format=",.3f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
