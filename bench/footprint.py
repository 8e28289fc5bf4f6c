"""Memory held by a warm cache (tracemalloc) and import time (fresh interpreters)."""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.cluster import PeerFactory, our_mapper
from bench.measure import Row
from restmapper.testing import FakeCluster

__all__ = ["import_rows", "memory_rows", "retained_bytes"]

_REPO = Path(__file__).resolve().parents[1]
_MIB = 1024.0 * 1024.0


def retained_bytes(build: Callable[[], Any], cleanup: Callable[[], None]) -> tuple[int, int]:
    """Return (bytes traced memory grew by while the built object is alive, bytes freed when it is dropped).

    ``build`` runs once untraced first, so lazy imports and the server's own response caches are not charged to
    it; ``cleanup`` runs before each reading (it forgets the server's request log).
    """
    obj = build()
    del obj
    cleanup()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        obj = build()
        cleanup()
        gc.collect()
        alive = tracemalloc.get_traced_memory()[0]
        del obj
        gc.collect()
        dropped = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return alive - base, alive - dropped


def memory_rows(cluster: FakeCluster, url: str, groups: int, factory: PeerFactory,
                eager_cache_file: str | None) -> list[Row]:
    """Return the memory held by a mapper that loaded every group, against the peer's warm EagerDiscoverer.

    Ours: a new mapper after ``expand_category('all')`` (every group fetched and indexed), aggregated mode. The
    peer: a DynamicClient with EagerDiscoverer, started from a copy of its own full cache file when one exists
    (the same objects as a fresh Eager init, without its thousand requests), else a fresh Eager init.
    """
    cluster.mode = "aggregated"

    def ours() -> Any:
        mapper = our_mapper(url)
        mapper.expand_category("all")
        return mapper

    def peer() -> Any:
        cache_file = None
        if eager_cache_file is not None:
            cache_file = factory.new_cache_file()
            shutil.copyfile(eager_cache_file, cache_file)
        return factory.client(url, eager=True, cache_file=cache_file)

    ours_alive, ours_freed = retained_bytes(ours, cluster.clear_requests)
    peer_alive, peer_freed = retained_bytes(peer, cluster.clear_requests)
    return [Row(f"memory held by a warm cache of every group, N={groups}", ours_alive / _MIB, peer_alive / _MIB,
                "MiB", note=f"tracemalloc growth while alive; freed on drop: ours {ours_freed / _MIB:.2f} MiB, "
                            f"peer {peer_freed / _MIB:.2f} MiB")]


def _import_seconds(statement: str, runs: int) -> float:
    code = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)"
    best = float("inf")
    for _ in range(max(runs, 1)):
        out = subprocess.run([sys.executable, "-c", code], cwd=_REPO, capture_output=True, text=True, timeout=120,
                             check=True)
        best = min(best, float(out.stdout.strip().splitlines()[-1]))
    return best


def import_rows(runs: int) -> list[Row]:
    """Return import times in fresh interpreters (best of ``runs``) against ``import kubernetes.dynamic``."""
    peer = _import_seconds("import kubernetes.dynamic", runs) * 1e3
    rows = []
    for label, statement in (
        ("`import restmapper`", "import restmapper"),
        ("`import restmapper.mapper, restmapper.discovery, restmapper.transport` (what mapping needs)",
         "import restmapper.mapper, restmapper.discovery, restmapper.transport"),
    ):
        ours = _import_seconds(statement, runs) * 1e3
        rows.append(Row(f"{label} vs `import kubernetes.dynamic`", ours, peer, "ms",
                        note=f"fresh interpreter, best of {runs}"))
    return rows
