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
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

__all__ = ["VARIANTS", "bench_rows", "main", "pod", "run"]

NAMESPACES = 50
NODES = 300
SHARDS = 10  # label "shard" takes 10 values: one of them selects 10 %
VARIANTS: dict[str, dict[str, Any]] = {
    "full": {},
    "full+strip": {"transform": "strip"},
    "metadata": {"metadata_only": True},
    "metadata+strip": {"metadata_only": True, "transform": "strip"},
    "selector": {"label_selector": "shard=3"},
    "namespaces": {"namespaces": [f"team-{i:02d}" for i in range(5)]},
}
"""Cache options of each variant (``"strip"`` stands for :func:`restmapper.store.strip_managed_fields`)."""


def _fields_v1(container_names: list[str]) -> dict[str, Any]:
    container = {f"f:{k}": {} for k in ("image", "imagePullPolicy", "name", "terminationMessagePath",
                                        "terminationMessagePolicy")}
    container.update({"f:env": {f'k:{{"name":"ENV_{i}"}}': {".": {}, "f:name": {}, "f:value": {}}
                                for i in range(5)},
                      "f:ports": {'k:{"containerPort":8080,"protocol":"TCP"}': {".": {}, "f:containerPort": {},
                                                                                "f:name": {}, "f:protocol": {}}},
                      "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}},
                                      "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}},
                      "f:readinessProbe": {".": {}, "f:httpGet": {".": {}, "f:path": {}, "f:port": {}}},
                      "f:volumeMounts": {'k:{"mountPath":"/etc/config"}': {".": {}, "f:mountPath": {},
                                                                          "f:name": {}}}})
    return {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {},
                                                              "f:shard": {}},
                           "f:ownerReferences": {".": {}, 'k:{"uid":"x"}': {}}},
            "f:spec": {"f:containers": {f'k:{{"name":"{n}"}}': container for n in container_names},
                       "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:volumes": {}}}


def _container(name: str, i: int) -> dict[str, Any]:
    return {
        "name": name, "image": f"registry.example.com/team/{name}:1.{i % 40}.{i % 7}",
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{i % 97}"} for k in range(3)] + [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}}],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
                          "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/config", "readOnly": True},
                         {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
    }


def pod(i: int) -> dict[str, Any]:
    """The ``i``-th Pod: about 8 KB of JSON, shaped as kube-apiserver stores a Deployment's Pod."""
    ns = f"team-{i % NAMESPACES:02d}"
    rs = f"web-{i % 200:03d}-7d9c8b5f4"
    when = "2026-01-05T10:00:00Z"
    names = ["app", "sidecar"]
    manager = {"apiVersion": "v1", "fieldsType": "FieldsV1", "time": when}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"{rs}-{i:05d}", "generateName": f"{rs}-", "namespace": ns, "uid": str(uuid.UUID(int=i + 1)),
            "labels": {"app": f"web-{i % 200:03d}", "pod-template-hash": "7d9c8b5f4", "shard": str(i % SHARDS)},
            "annotations": {"kubectl.kubernetes.io/restartedAt": when, "prometheus.io/scrape": "true",
                            "prometheus.io/port": "8080"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": str(uuid.UUID(int=10**9 + i % 200)), "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [
                {**manager, "manager": "kube-controller-manager", "operation": "Update",
                 "fieldsV1": _fields_v1(names)},
                {**manager, "manager": "kubelet", "operation": "Update", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {f'k:{{"type":"{t}"}}': {
                     ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}
                     for t in ("ContainersReady", "Initialized", "PodScheduled", "Ready")},
                     "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {},
                     "f:startTime": {}}}}],
        },
        "spec": {
            "containers": [_container(n, i) for n in names],
            "volumes": [{"name": "config", "configMap": {"name": f"web-{i % 200:03d}-config", "defaultMode": 420}},
                        {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt",
                                                                                   "path": "ca.crt"}]}}]}}],
            "nodeName": f"node-{i % NODES:03d}", "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30, "priority": 0, "enableServiceLinks": True,
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
        },
        "status": {
            "phase": "Running", "hostIP": f"10.0.{i % NODES // 250}.{i % 250}",
            "podIP": f"10.244.{i // 250 % 250}.{i % 250}",
            "startTime": when, "qosClass": "Burstable",
            "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": when}
                           for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": n, "ready": True, "restartCount": 0, "started": True,
                                   "image": f"registry.example.com/team/{n}:1.{i % 40}.{i % 7}",
                                   "imageID": f"registry.example.com/team/{n}@sha256:{uuid.UUID(int=i).hex * 2}",
                                   "containerID": f"containerd://{uuid.UUID(int=i + 7).hex * 2}",
                                   "state": {"running": {"startedAt": when}}} for n in names],
        },
    }


# --- the server process ---------------------------------------------------------------------------------------------

def serve(n: int) -> None:
    """Build ``n`` Pods, serve them, print the URL and serve until stdin closes."""
    from restmapper.testing import FakeCluster

    cluster = FakeCluster(history_limit=100, bookmark_interval=None)
    for i in range(n):
        cluster.apply_object(pod(i))
    with cluster.serve() as served:
        print(served.url, flush=True)
        sys.stdin.read()


@contextmanager
def server(n: int) -> Iterator[str]:
    """The URL of ``n`` Pods served by another process (stopped on exit)."""
    proc = subprocess.Popen([sys.executable, "-m", "bench.scope_bench", "--serve", str(n)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1])
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError("the benchmark server did not start")
        yield url
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(60)


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
    with server(n) as url:
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
    parser.add_argument("--serve", type=int, metavar="N", help=argparse.SUPPRESS)
    parser.add_argument("--measure", nargs=2, metavar=("URL", "VARIANT"), help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        serve(args.serve)
        return 0
    if args.measure is not None:
        print(json.dumps(measure(args.measure[0], args.measure[1], args.traced)))
        return 0
    results = run(2_000 if args.quick else args.pods, runs=args.runs, progress=lambda s: print(s, file=sys.stderr))
    print(render_results(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
