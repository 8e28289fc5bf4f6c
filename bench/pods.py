"""Realistic Pods for the object-cache benchmarks, and the loopback kit serving them from another process.

:func:`pod` builds a Pod of about 8 KB of JSON shaped as kube-apiserver serves one of a Deployment: two containers
with env, probes, resources and volume mounts, an owner reference to its ReplicaSet, labels and annotations, status
with conditions and IPs, two ``managedFields`` entries. Two layouts:

- ``replicas=0`` (the ``scope`` section): Pod ``i`` belongs to ReplicaSet ``i % 200`` but its template fields
  (images, env values) vary with ``i``; label ``shard`` is ``i % 10`` (one value selects 10 %).
- ``replicas=R`` (the ``bigcache`` section): Pod ``i`` is replica ``i % R`` of Deployment ``d = i // R`` in
  namespace ``team-{d % 50}``; Pods of one Deployment share their template (spec, labels, annotations, owner) and
  differ in name, uid, node, IPs, timestamps and (set by the kit) resourceVersion; label ``shard`` is ``d % 100``
  (with 400 Deployments of 50 replicas, one value selects 4 Deployments: 1 % of the Pods).

:func:`server` serves N such Pods from a kit (:class:`restmapper.testing.FakeCluster`) in a child process, so the
server's heap and CPU are not the client's; the child also takes commands on its stdin (:class:`Served`).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = ["NAMESPACES", "NODES", "SHARDS", "Served", "pod", "server"]

NAMESPACES = 50
NODES = 300
SHARDS = 10  # replicas=0: label "shard" takes 10 values, one of them selects 10 %
DEPLOYMENT_SHARDS = 100  # replicas=R: label "shard" is the Deployment's index modulo 100


def _fields_v1(container_names: list[str]) -> dict[str, Any]:
    container: dict[str, Any] = {f"f:{k}": {} for k in ("image", "imagePullPolicy", "name", "terminationMessagePath",
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


def _container(name: str, t: int) -> dict[str, Any]:
    return {
        "name": name, "image": f"registry.example.com/team/{name}:1.{t % 40}.{t % 7}",
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": f"ENV_{k}", "value": f"value-{k}-{t % 97}"} for k in range(3)] + [
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


def _timestamp(seconds: int) -> str:
    """2026-01-05T10:00:00Z plus ``seconds`` (under ten hours)."""
    return f"2026-01-05T{10 + seconds // 3600 % 10:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def pod(i: int, *, replicas: int = 0) -> dict[str, Any]:
    """The ``i``-th Pod (about 8 KB of JSON) in the layout of ``replicas`` (see the module docstring).

    Args:
        i: the Pod's index (0 and up).
        replicas: 0 for the ``scope`` layout; else the replicas per Deployment (Pod ``i`` belongs to Deployment
            ``i // replicas`` and shares its template).

    Returns:
        The Pod as a new dict (the kit sets ``resourceVersion``, and replaces ``uid`` and ``creationTimestamp``).
    """
    if replicas:
        d = i // replicas
        t, app, template_hash = d, f"web-{d:03d}", f"{d * 2654435761 % 16**9:09x}"
        ns, shard, owner = f"team-{d % NAMESPACES:02d}", str(d % DEPLOYMENT_SHARDS), d
        when, started = _timestamp(d), _timestamp(3600 + i % 20_000)
    else:
        t, app, template_hash = i, f"web-{i % 200:03d}", "7d9c8b5f4"
        ns, shard, owner = f"team-{i % NAMESPACES:02d}", str(i % SHARDS), i % 200
        when = started = "2026-01-05T10:00:00Z"
    rs = f"{app}-{template_hash}"
    names = ["app", "sidecar"]
    manager = {"apiVersion": "v1", "fieldsType": "FieldsV1", "time": started}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": f"{rs}-{i:05d}", "generateName": f"{rs}-", "namespace": ns, "uid": str(uuid.UUID(int=i + 1)),
            "labels": {"app": app, "pod-template-hash": template_hash, "shard": shard},
            "annotations": {"kubectl.kubernetes.io/restartedAt": when, "prometheus.io/scrape": "true",
                            "prometheus.io/port": "8080"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": str(uuid.UUID(int=10**9 + owner)), "controller": True,
                                 "blockOwnerDeletion": True}],
            "managedFields": [
                {**manager, "manager": "kube-controller-manager", "operation": "Update",
                 "fieldsV1": _fields_v1(names)},
                {**manager, "manager": "kubelet", "operation": "Update", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {f'k:{{"type":"{c}"}}': {
                     ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}
                     for c in ("ContainersReady", "Initialized", "PodScheduled", "Ready")},
                     "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {},
                     "f:startTime": {}}}}],
        },
        "spec": {
            "containers": [_container(n, t) for n in names],
            "volumes": [{"name": "config", "configMap": {"name": f"{app}-config", "defaultMode": 420}},
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
            "startTime": started, "qosClass": "Burstable",
            "conditions": [{"type": c, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
                           for c in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{"name": n, "ready": True, "restartCount": 0, "started": True,
                                   "image": f"registry.example.com/team/{n}:1.{t % 40}.{t % 7}",
                                   "imageID": f"registry.example.com/team/{n}@sha256:{uuid.UUID(int=t).hex * 2}",
                                   "containerID": f"containerd://{uuid.UUID(int=i + 7).hex * 2}",
                                   "state": {"running": {"startedAt": started}}} for n in names],
        },
    }


# --- the server process ---------------------------------------------------------------------------------------------

def _command(cluster: Any, line: str, n: int, replicas: int) -> str:
    """Run one command of :class:`Served` in the server process; the answer line."""
    words = line.split()
    if words == ["relist"]:  # one Pod changes while its event is held back, then the history is compacted
        cluster.delay_watch_events(math.inf)
        stamp = str(time.monotonic_ns())
        changed = pod(0, replicas=replicas)
        changed["metadata"]["annotations"]["bench.example.com/relist"] = stamp
        cluster.apply_object(changed)
        cluster.restart()  # drop every watch, compact: re-watching from the resourceVersion held gets 410
        return stamp  # the change's event stays held until "release"
    if words == ["release"]:
        cluster.delay_watch_events(0)
        return "ok"
    if len(words) == 2 and words[0] == "events":  # M Pod updates, held back and then streamed at once
        cluster.delay_watch_events(math.inf)
        call = time.monotonic_ns()  # a write of what the kit holds already is no change: every call differs
        for k in range(int(words[1])):
            changed = pod(k % n, replicas=replicas)
            changed["metadata"]["annotations"]["bench.example.com/event"] = f"{call}-{k}"
            cluster.apply_object(changed)
        cluster.delay_watch_events(0)
        return "ok"
    if len(words) == 2 and words[0] == "refuse-watch-list":
        if not hasattr(cluster, "watch_list"):  # a kit that cannot refuse WatchList as an older server does
            return "unavailable"
        cluster.watch_list = words[1] != "on"
        return "ok"
    return f"unknown command {line!r}"


def serve(n: int, replicas: int, history: int) -> None:
    """Build ``n`` Pods, serve them, print the URL, then answer commands from stdin until it closes."""
    from restmapper.testing import FakeCluster

    cluster = FakeCluster(history_limit=max(100, history), bookmark_interval=None)
    for i in range(n):
        cluster.apply_object(pod(i, replicas=replicas))
    with cluster.serve() as served:
        print(served.url, flush=True)
        for line in sys.stdin:
            print(_command(cluster, line, n, replicas), flush=True)


@dataclass
class Served:
    """The kit serving Pods in a child process: its URL, and :meth:`command` to change what it serves."""

    url: str
    _stdin: IO[str]
    _stdout: IO[str]

    def command(self, line: str) -> str:
        """Send one command and return the server's answer once it is done.

        Commands: ``relist`` (Pod 0 changes with its watch event held back and the history is compacted: a
        watching informer gets 410 and relists; the answer is the value of Pod 0's annotation
        ``bench.example.com/relist`` after it; ``release`` sends held events again), ``events M`` (M Pod
        updates, streamed to watchers all at once after they were written),
        ``refuse-watch-list on|off`` (answers ``unavailable`` when the kit cannot refuse WatchList).
        """
        self._stdin.write(line + "\n")
        self._stdin.flush()
        return self._stdout.readline().strip()


@contextmanager
def server(n: int, *, replicas: int = 0, history: int = 100) -> Iterator[Served]:
    """``n`` Pods of the ``replicas`` layout served by another process (stopped on exit).

    Args:
        n: Pods.
        replicas: the layout (see :func:`pod`).
        history: watch events the kit keeps (at least the ``events M`` a run will ask for).
    """
    proc = subprocess.Popen([sys.executable, "-m", "bench.pods", "--serve", str(n), "--replicas", str(replicas),
                             "--history", str(history)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    try:
        assert proc.stdin is not None and proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url:
            raise RuntimeError("the benchmark server did not start")
        yield Served(url, proc.stdin, proc.stdout)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(60)


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.pods --serve N [--replicas R] [--history H]``: the server process of :func:`server`."""
    parser = argparse.ArgumentParser(prog="python -m bench.pods")
    parser.add_argument("--serve", type=int, required=True, metavar="N", help="Pods to serve")
    parser.add_argument("--replicas", type=int, default=0, help="replicas per Deployment (0: the scope layout)")
    parser.add_argument("--history", type=int, default=100, help="watch events kept")
    args = parser.parse_args(argv)
    serve(args.serve, args.replicas, args.history)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
