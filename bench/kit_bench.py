"""The test kit's list cost: ``python bench/kit_bench.py`` (``--quick`` for a smoke run); also the ``kit`` section
of ``python -m bench`` (``bench_rows``).

A :class:`~restmapper.testing.FakeCluster` holds N ConfigMaps (50,000; 5,000 with ``--quick``) in 50 namespaces;
the whole collection is read through the in-process transport (no socket: the kit's own CPU) in pages of 500
(``limit``/``continue``, as client-go's pager) and as one page. Every page reads the first page's snapshot, as
kube-apiserver's etcd range reads at a revision do; one write lands between each two pages, so later pages read
the past. Target: the paginated read costs at most 1.5x the single page (a page costs its size, not the
collection's). The ratio is one page's time over the paginated read's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import Row, render_table
from restmapper.testing import FakeCluster, InProcessTransport

__all__ = ["bench_rows", "main", "run"]

PAGE = 500
NAMESPACES = 50
TARGET_RATIO = 1.5  # paginated / one page
ISSUE = "issue 25 (kit serves big collections)"
PATH = "/api/v1/configmaps"


def _seed(n: int) -> FakeCluster:
    cluster = FakeCluster(history_limit=10_000)
    for ns in range(NAMESPACES):
        cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{ns:02d}"}})
    for i in range(n):
        cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"config-{i:06d}", "namespace": f"team-{i % NAMESPACES:02d}", "labels": {"shard": str(i % 10)}},
            "data": {"key": f"value-{i}" * 4}})
    return cluster


def _read_all(cluster: FakeCluster, limit: int, *, write_between: bool) -> tuple[float, int]:
    """Seconds to read the whole collection in pages of ``limit`` (0: one page) and the items read."""
    transport = InProcessTransport(cluster)
    params = {"limit": str(limit)} if limit else {}
    items, writes = 0, 0
    start = time.perf_counter()
    while True:
        reply = transport.get(PATH, params=params)
        doc: dict[str, Any] = json.loads(reply.body)
        items += len(doc["items"])
        token = doc["metadata"].get("continue")
        if not token:
            break
        params = {"limit": str(limit), "continue": token}
        if write_between:
            writes += 1
            cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": f"config-{writes:06d}", "namespace": "team-00"}, "data": {"key": f"written-{writes}"}})
    return time.perf_counter() - start, items


def run(n: int) -> list[Row]:
    """Seed ``n`` ConfigMaps and return the rows."""
    cluster = _seed(n)
    one, one_items = _read_all(cluster, 0, write_between=False)
    paged, paged_items = _read_all(cluster, PAGE, write_between=True)
    assert one_items == paged_items == n, (one_items, paged_items, n)
    ratio = one / paged
    return [
        Row(f"kit: list {n:,} objects as one page", one * 1e3, None, "ms",
            note="in-process transport, ConfigMaps in 50 namespaces", issue=ISSUE),
        Row(f"kit: list {n:,} objects in pages of {PAGE}", paged * 1e3, one * 1e3, "ms",
            target=f"<= {TARGET_RATIO}x one page", passed=paged <= TARGET_RATIO * one, ratio_value=ratio,
            min_ratio=1 / TARGET_RATIO, note="peer column: one page; a write between pages (reads the past)",
            issue=ISSUE),
    ]


def bench_rows(ctx: Any) -> list[Row]:
    """The ``kit`` section of ``python -m bench``."""
    return run(5_000 if ctx.options.quick else 50_000)


def main(argv: list[str] | None = None) -> int:
    """Print the rows as a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 objects instead of 50,000")
    parser.add_argument("-n", type=int, default=None, help="how many objects")
    args = parser.parse_args(argv)
    n = args.n or (5_000 if args.quick else 50_000)
    print(render_table(run(n)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
