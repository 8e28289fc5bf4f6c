"""Scoped object-cache benchmark: ``python bench/scope_bench.py [--pods N]`` (``--quick`` for a smoke run).

Holding only what a controller reads (issue 24): N realistic Pods (about 8 KB of JSON each: two containers with
env, probes, resources and volume mounts, an owner reference, labels, annotations, status conditions and two
``managedFields`` entries as kube-apiserver writes them; distinct names and uids, 50 namespaces, ``spec.nodeName``
over 300 nodes) are served by the loopback kit **in another process**, and each variant of the cache syncs them in
a fresh interpreter of its own, so the cache's memory is measured alone:

- ``full``: full objects; ``full+strip``: with ``strip_managed_fields``; ``metadata``: ``metadata_only``;
  ``metadata+strip``: both; ``selector``: ``label_selector`` matching 10 % of the Pods; ``namespaces``: 5 of the
  50 namespaces.

Per variant: bytes held per cached Pod (tracemalloc, in a run of its own, and the growth of the resident set in an
untraced run), the total held, the list bytes received, and the initial sync time (untraced run).
Targets: metadata+strip <= 10 % of full's bytes; the 10 % selector holds <= 12 % of full's bytes and receives
<= 12 % of its list bytes; every scoped variant syncs no slower than full. Registered as the ``scope`` section of
``python -m bench`` (``bench_rows``: ``--scope-pods``, 20,000 Pods by default, 2,000 with ``--quick``); ``--pods``
sets the count here. On a 2-core machine the 20,000-Pod run takes about 15 minutes (the kit serving 150 MiB of
Pods six times, twice each).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.pods import NAMESPACES, pod, server

__all__ = ["NAMESPACES", "VARIANTS", "bench_rows", "main", "pod", "run"]

VARIANTS: dict[str, dict[str, Any]] = {
    "full": {},
    "full+strip": {"transform": "strip"},
    "metadata": {"metadata_only": True},
    "metadata+strip": {"metadata_only": True, "transform": "strip"},
    "selector": {"label_selector": "shard=3"},
    "namespaces": {"namespaces": [f"team-{i:02d}" for i in range(5)]},
}
"""Cache options of each variant (``"strip"`` stands for :func:`restmapper.store.strip_managed_fields`)."""


# --- one variant, in a fresh interpreter -----------------------------------------------------------------------------

def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Counting:
    """A transport passing everything on, counting the body bytes of list responses."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.base_url, self.identity = inner.base_url, inner.identity
        self.list_bytes = 0

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        resp = self.inner.get(path, headers, **kw)
        self.list_bytes += len(resp.body)
        return resp

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        return self.inner.stream(path, headers, **kw)

    def close(self) -> None:
        self.inner.close()


def measure(url: str, variant: str, traced: bool) -> dict[str, float]:
    """Sync ``variant``'s cache of Pods from ``url``; its numbers (this process must be fresh)."""
    from restmapper.discovery import DiscoveryClient
    from restmapper.mapper import LazyRESTMapper
    from restmapper.store import ObjectCache, strip_managed_fields
    from restmapper.transport import RequestsTransport

    options = dict(VARIANTS[variant])
    if options.get("transform") == "strip":
        options["transform"] = strip_managed_fields
    mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(url)))
    mapper.resolve("pods")  # discovery is not the cache's memory
    transport = _Counting(mapper.transport)
    gc.collect()
    rss = _rss()
    if traced:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0] if traced else 0
    start = time.perf_counter()
    cache = ObjectCache(mapper, transport=transport, sync_timeout=600.0, page_size=500, watch_list=False,
                        **options)  # the bytes a paginated list receives
    informer = cache.informer("pods")
    assert informer.wait_for_sync(600), informer.last_error
    seconds = time.perf_counter() - start
    gc.collect()
    held = (tracemalloc.get_traced_memory()[0] - base) if traced else _rss() - rss
    objects = informer.stats.objects
    cache.stop()
    return {"seconds": seconds, "bytes": float(held), "objects": float(objects), "list_bytes": transport.list_bytes}


def _child(url: str, variant: str, traced: bool) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-m", "bench.scope_bench", "--measure", url, variant]
                         + (["--traced"] if traced else []), capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1], timeout=1800)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


# --- the run ---------------------------------------------------------------------------------------------------------

def run(n: int = 20_000, *, runs: int = 1, progress: Any = lambda s: None) -> list[Any]:
    """Measure every variant against ``n`` Pods served from another process; the results (``store_bench.Result``).

    Args:
        n: Pods in the cluster.
        runs: untraced runs per variant (the fastest sync and the smallest RSS growth are kept).
        progress: called with a line of progress.
    """
    from bench.measure import Result

    numbers: dict[str, dict[str, float]] = {}
    progress(f"scope: serving {n} Pods from another process")
    with server(n) as served:
        url = served.url
        for variant in VARIANTS:
            progress(f"scope: {variant}")
            plain = [_child(url, variant, traced=False) for _ in range(runs)]
            traced = _child(url, variant, traced=True)
            numbers[variant] = {"seconds": min(p["seconds"] for p in plain), "rss": min(p["bytes"] for p in plain),
                                "bytes": traced["bytes"], "objects": traced["objects"],
                                "list_bytes": traced["list_bytes"]}
    full = numbers["full"]
    out: list[Result] = []
    for variant, got in numbers.items():
        held = max(got["objects"], 1.0)
        per_pod, full_per_pod = got["bytes"] / held, full["bytes"] / max(full["objects"], 1.0)
        if variant == "metadata+strip":
            target, passed = "<= 10 % of full", got["bytes"] <= 0.10 * full["bytes"]
        else:
            target, passed = "", None
        out.append(Result(f"scope: bytes held per Pod, {variant} (tracemalloc)", per_pod,
                          None if variant == "full" else full_per_pod, "bytes", target, passed,
                          f"{got['objects']:.0f} Pods held, {got['bytes'] / 2**20:.1f} MiB; "
                          f"{got['bytes'] / full['bytes']:.1%} of full"))
        out.append(Result(f"scope: bytes held per Pod, {variant} (RSS growth)", got["rss"] / held,
                          None if variant == "full" else full["rss"] / max(full["objects"], 1.0), "bytes", "", None,
                          f"{got['rss'] / 2**20:.1f} MiB; {got['rss'] / max(full['rss'], 1.0):.1%} of full"))
        if variant == "selector":
            out.append(Result("scope: total bytes held, 10 % label selector (tracemalloc)", got["bytes"] / 2**20,
                              full["bytes"] / 2**20, "MiB", "<= 12 % of full", got["bytes"] <= 0.12 * full["bytes"],
                              f"{got['bytes'] / full['bytes']:.1%} of full"))
            out.append(Result("scope: list bytes received, 10 % label selector", got["list_bytes"] / 2**20,
                              full["list_bytes"] / 2**20, "MiB", "<= 12 % of full",
                              got["list_bytes"] <= 0.12 * full["list_bytes"],
                              f"{got['list_bytes'] / full['list_bytes']:.1%} of full"))
        scoped = variant != "full"
        out.append(Result(f"scope: initial sync of {n} Pods, {variant}", got["seconds"] * 1e3,
                          full["seconds"] * 1e3 if scoped else None, "ms", "<= full" if scoped else "",
                          got["seconds"] <= full["seconds"] if scoped else None,
                          f"best of {runs}; list bytes {got['list_bytes'] / 2**20:.1f} MiB"))
    return out


def bench_rows(ctx: Any) -> list[Any]:
    """The ``scope`` section of ``python -m bench``: these results as ``bench.measure.Row`` (issue 24)."""
    from bench.measure import Row

    quick = bool(getattr(ctx, "quick", False))
    pods = getattr(getattr(ctx, "options", None), "scope_pods", 2_000 if quick else 20_000)
    results = run(pods, progress=getattr(ctx, "progress", lambda s: None))
    return [Row(r.name, r.ours, r.peer, r.unit, target=r.target, passed=r.passed, note=r.note,
                issue="issue 24 (scoped object cache)") for r in results]


def main(argv: list[str] | None = None) -> int:
    """Run and print the table (or serve / measure one variant, the child modes); exit status 0."""
    from bench.measure import render_results

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=20_000, help="Pods in the cluster (default 20000)")
    parser.add_argument("--runs", type=int, default=1, help="untraced runs per variant (best kept)")
    parser.add_argument("--quick", action="store_true", help="smoke size (2,000 Pods)")
    parser.add_argument("--measure", nargs=2, metavar=("URL", "VARIANT"), help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure[0], args.measure[1], args.traced)))
        return 0
    results = run(2_000 if args.quick else args.pods, runs=args.runs, progress=lambda s: print(s, file=sys.stderr))
    print(render_results(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
