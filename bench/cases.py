"""Lookup and discovery rows: warm lookups, the cold first lookup and full discovery, ours against the peer."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.cluster import PeerFactory, our_discovery, our_mapper
from bench.measure import Row, per_call_us, seconds_best
from restmapper.model import GroupKind
from restmapper.testing import FakeCluster

__all__ = ["FullDiscovery", "cold_rows", "full_discovery_rows", "warm_rows"]

_COLD_TARGETS = {"aggregated": 2, "legacy": 3}
_APPS_DEPLOYMENT = GroupKind("apps", "Deployment")
_CORE_POD = GroupKind("", "Pod")


@dataclass
class FullDiscovery:
    """What the full-discovery rows leave for later rows: the peer's Eager cache file (a fully warm cache)."""

    eager_cache_file: str | None = None


@dataclass(frozen=True)
class _WarmCase:
    name: str
    ours: Callable[[Any], Any]
    peer: Callable[[Any], Any]
    expect: str  # the plural resource both sides must answer
    speedup: float | None
    prebuilt: Callable[[Any], Any] | None = None  # the same lookup with its GroupKind built once, outside the loop


_WARM_CASES = (
    _WarmCase("warm `rest_mapping(GroupKind('apps','Deployment'), 'v1')` vs `get(api_version='apps/v1', "
              "kind='Deployment')`",
              lambda m: m.rest_mapping(GroupKind("apps", "Deployment"), "v1"),
              lambda p: p.resources.get(api_version="apps/v1", kind="Deployment"), "deployments", 3.0,
              lambda m: m.rest_mapping(_APPS_DEPLOYMENT, "v1")),
    _WarmCase("warm kind-only `rest_mapping(GroupKind('','Pod'))` vs `get(api_version='v1', kind='Pod')`",
              lambda m: m.rest_mapping(GroupKind("", "Pod")),
              lambda p: p.resources.get(api_version="v1", kind="Pod"), "pods", 50.0,
              lambda m: m.rest_mapping(_CORE_POD)),
    _WarmCase("warm kind-only `resolve('Pod')` vs `get(kind='Pod')`",
              lambda m: m.resolve("Pod"),
              lambda p: p.resources.get(kind="Pod"), "pods", 50.0),
    _WarmCase("warm short name `resolve('deploy')` vs `get(short_names=['deploy'])`",
              lambda m: m.resolve("deploy"),
              lambda p: p.resources.get(short_names=["deploy"]), "deployments", 50.0),
)


def _plural(answer: Any) -> str:
    resource = getattr(answer, "resource", None)
    if resource is not None and hasattr(resource, "resource"):
        return str(resource.resource)  # our RESTMapping
    return str(getattr(answer, "name", answer))  # the peer's Resource


def warm_rows(url: str, groups: int, factory: PeerFactory, full: FullDiscovery, *, budget_s: float,
              repeat: int) -> list[Row]:
    """Return the warm lookup rows on a cluster with ``groups`` CRD groups (aggregated mode).

    The peer is a ``LazyDiscoverer`` client started from a copy of the Eager cache file when one exists (so it
    is warm without fetching every group again), primed by one call of each lookup like ours.
    """
    mapper = our_mapper(url)
    cache_file = None
    if full.eager_cache_file is not None:
        cache_file = factory.new_cache_file()
        shutil.copyfile(full.eager_cache_file, cache_file)
    peer = factory.client(url, cache_file=cache_file)
    rows = []
    for case in _WARM_CASES:
        ours_answer, peer_answer = _plural(case.ours(mapper)), _plural(case.peer(peer))
        note = f"min of {repeat} batches"
        if ours_answer != case.expect or peer_answer != case.expect:
            note += f"; ANSWERS DIFFER: ours {ours_answer!r}, peer {peer_answer!r}"
        ours_us = per_call_us(lambda c=case: c.ours(mapper), budget_s=budget_s, repeat=repeat)  # type: ignore[misc]
        peer_us = per_call_us(lambda c=case: c.peer(peer), budget_s=budget_s, repeat=repeat)  # type: ignore[misc]
        if case.prebuilt is not None:
            pre_us = per_call_us(lambda c=case: c.prebuilt(mapper), budget_s=budget_s,  # type: ignore[misc]
                                 repeat=repeat)
            note += (f"; ours builds the GroupKind in every call; with it built once: {pre_us:.2f} µs "
                     f"({peer_us / pre_us:.1f}x)")
        row = Row(f"{case.name} (N={groups})", ours_us, peer_us, "µs", note=note)
        if case.speedup is not None:
            row.target = f"ours ≥ {case.speedup:g}x faster"
            row.passed = row.ratio is not None and row.ratio >= case.speedup
        rows.append(row)
    return rows


def cold_rows(cluster: FakeCluster, url: str, groups: int, factory: PeerFactory, *, runs: int) -> list[Row]:
    """Return requests and seconds of the first lookup of a CRD kind by a new client, per discovery mode."""
    i = min(7, groups - 1)
    group, kind = f"g{i}.bench.example.com", f"Widget{i}"
    rows = []
    for mode in ("aggregated", "legacy"):
        cluster.mode = mode

        def ours() -> int:
            cluster.clear_requests()
            mapper = our_mapper(url)
            mapping = mapper.rest_mapping(GroupKind(group, kind))
            if mapping.resource.resource != f"widget{i}s":
                raise AssertionError(f"wrong mapping {mapping}")
            return cluster.request_count()

        def peer() -> int:
            cluster.clear_requests()
            client = factory.client(url)
            resource = client.resources.get(api_version=f"{group}/v1", kind=kind)
            if resource.name != f"widget{i}s":
                raise AssertionError(f"wrong resource {resource}")
            return cluster.request_count()

        ours_s, ours_requests = seconds_best(ours, runs=runs)
        peer_s, peer_requests = seconds_best(peer, runs=runs)
        limit = _COLD_TARGETS[mode]
        label = f"cold first lookup `rest_mapping(GroupKind('{group}','{kind}'))`, {mode}, N={groups}"
        rows.append(Row(f"{label}: requests", ours_requests, peer_requests, "requests",
                        target=f"ours ≤ {limit}", passed=ours_requests <= limit,
                        note="new client; peer: LazyDiscoverer, fresh cache file"))
        rows.append(Row(f"{label}: time", ours_s * 1e3, peer_s * 1e3, "ms",
                        note=f"client construction included; best of {runs}"))
    cluster.mode = "aggregated"
    return rows


def full_discovery_rows(cluster: FakeCluster, url: str, groups: int, factory: PeerFactory, full: FullDiscovery,
                        *, runs: int) -> list[Row]:
    """Return requests and seconds of discovering every group version, per mode, against the peer's Eager init.

    The peer speaks legacy discovery only (it never asks for aggregated documents), so it is measured once and
    shown in both modes. Ours is ``DiscoveryClient.server_groups_and_resources()`` on a new client.
    """
    cluster.mode = "legacy"
    cluster.clear_requests()
    t0 = time.perf_counter()
    eager_file = factory.new_cache_file()
    factory.client(url, eager=True, cache_file=eager_file)
    peer_s = time.perf_counter() - t0
    peer_requests = cluster.request_count()
    full.eager_cache_file = eager_file
    rows = []
    for mode in ("aggregated", "legacy"):
        cluster.mode = mode

        def ours() -> tuple[int, int]:
            cluster.clear_requests()
            _, resources = our_discovery(url).server_groups_and_resources()
            return cluster.request_count(), len(resources)

        # Legacy discovery of 1000 groups takes seconds: one run is enough there.
        ours_s, (ours_requests, group_versions) = seconds_best(ours, runs=runs if mode == "aggregated" else 1)
        limit = 2 if mode == "aggregated" else 2 + group_versions
        label = f"full discovery, {mode}, N={groups} ({group_versions} group versions)"
        rows.append(Row(f"{label}: requests", ours_requests, peer_requests, "requests",
                        target=f"ours ≤ kubectl's {limit}", passed=ours_requests <= limit,
                        note="ours: `server_groups_and_resources()`; peer: EagerDiscoverer init (legacy only)"))
        rows.append(Row(f"{label}: time", ours_s * 1e3, peer_s * 1e3, "ms",
                        note="peer measured once, sequential requests; ours: 8 concurrent legacy fetches"))
    cluster.mode = "aggregated"
    return rows
