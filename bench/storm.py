"""The miss storm: many threads looking up a kind that does not exist, with the real clock."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.cluster import PeerFactory, our_mapper
from bench.measure import Row
from restmapper.errors import NoKindMatchError
from restmapper.model import GroupKind
from restmapper.testing import FakeCluster

__all__ = ["StormResult", "run_storm", "storm_rows"]

_NOPE = GroupKind("nope.example.com", "Nope")
_MAX_CALLS_PER_THREAD = 2_000_000
_JOIN_GRACE_S = 30.0


@dataclass
class StormResult:
    """What a storm did: lookups made, unexpected errors (type name -> count), whether every thread ended."""

    calls: int
    errors: dict[str, int]
    finished: bool


def run_storm(lookup: Callable[[], Any], expected: type[BaseException], *, threads: int,
              duration_s: float) -> StormResult:
    """Run ``lookup`` from ``threads`` threads, released together, until ``duration_s`` seconds have passed.

    Each thread also stops after ``_MAX_CALLS_PER_THREAD`` calls; ``expected`` exceptions are the normal outcome,
    other exceptions are counted by type.
    """
    barrier = threading.Barrier(threads + 1)
    lock = threading.Lock()
    calls = [0]
    errors: dict[str, int] = {}
    deadline = [0.0]

    def worker() -> None:
        barrier.wait()
        n = 0
        while n < _MAX_CALLS_PER_THREAD and time.monotonic() < deadline[0]:
            n += 1
            try:
                lookup()
            except expected:
                pass
            except Exception as exc:  # the peer is not thread-safe: count, keep going
                with lock:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
        with lock:
            calls[0] += n

    pool = [threading.Thread(target=worker, name=f"bench-storm-{i}", daemon=True) for i in range(threads)]
    for t in pool:
        t.start()
    deadline[0] = time.monotonic() + duration_s
    barrier.wait()
    end = time.monotonic() + duration_s + _JOIN_GRACE_S
    for t in pool:
        t.join(max(0.0, end - time.monotonic()))
    return StormResult(calls[0], errors, not any(t.is_alive() for t in pool))


def _note(result: StormResult, threads: int, whose: str) -> str:
    """``threads`` and lookups of one side's storm; its unexpected errors named as ``whose`` ("ours", "peer")."""
    text = f"{threads} threads, {result.calls} lookups"
    if result.errors:
        text += f"; {whose} errors: " + ", ".join(f"{k} x{v}" for k, v in sorted(result.errors.items()))
    if not result.finished:
        text += "; some threads still running after the grace period"
    return text


def storm_rows(cluster: FakeCluster, url: str, groups: int, factory: PeerFactory, *, duration_s: float,
               interval_s: float, threads: int, peer_threads: int) -> list[Row]:
    """Return request and revalidation counts of a miss storm, ours per mode, the peer's LazyDiscoverer once.

    A revalidation is counted as one ``GET /apis`` (both sides re-read it on a miss of a named group). Ours may
    revalidate once at the start and then once per ``interval_s``: the limit is ``floor(duration/interval) + 1``
    revalidations and that many times the requests one revalidation costs (measured alone first).
    """
    from kubernetes.dynamic.exceptions import ResourceNotFoundError

    intervals = duration_s / interval_s
    max_revalidations = math.floor(intervals) + 1
    cluster.mode = "aggregated"
    peer = factory.client(url)
    peer.resources.get(api_version="apps/v1", kind="Deployment")
    cluster.clear_requests()
    peer_result = run_storm(lambda: peer.resources.get(api_version="nope.example.com/v1", kind="Nope"),
                            ResourceNotFoundError, threads=peer_threads, duration_s=duration_s)
    peer_requests = cluster.request_count()
    peer_revalidations = cluster.request_count(path="/apis")
    peer_note = _note(peer_result, peer_threads, "peer")
    rows = []
    for mode in ("aggregated", "legacy"):
        cluster.mode = mode
        single = our_mapper(url, miss_refresh_interval=interval_s)
        single.rest_mapping(GroupKind("apps", "Deployment"))
        cluster.clear_requests()
        with contextlib.suppress(NoKindMatchError):
            single.rest_mapping(_NOPE)
        per_revalidation = max(1, cluster.request_count())

        mapper = our_mapper(url, miss_refresh_interval=interval_s)
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
        cluster.clear_requests()
        result = run_storm(lambda m=mapper: m.rest_mapping(_NOPE), NoKindMatchError,  # type: ignore[misc]
                           threads=threads, duration_s=duration_s)
        requests = cluster.request_count()
        revalidations = cluster.request_count(path="/apis")
        limit = max_revalidations * per_revalidation
        label = f"miss storm `rest_mapping(GroupKind('nope.example.com','Nope'))`, {mode}, N={groups}, {duration_s:g} s"
        rows.append(Row(f"{label}: requests", requests, peer_requests, "requests",
                        target=f"ours ≤ {limit} ({max_revalidations} revalidations x {per_revalidation})",
                        passed=requests <= limit and result.finished and not result.errors,
                        note=f"ours: {_note(result, threads, 'our')}; peer: {peer_note}"))
        rows.append(Row(f"{label}: revalidations (GET /apis)", revalidations, peer_revalidations, "revalidations",
                        target=f"ours ≤ 1 per {interval_s:g} s interval + 1 at start = {max_revalidations}",
                        passed=revalidations <= max_revalidations,
                        note="the peer (LazyDiscoverer) invalidates its whole cache on every miss"))
    cluster.mode = "aggregated"
    return rows
