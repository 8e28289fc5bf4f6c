"""The ``served`` section: rows measured against a kit cluster served by another process, over a real socket.

The other sections serve the kit from the benchmark's own process (its server threads share the client's
interpreter). Here :mod:`bench.served_proc` serves it from a process of its own, so what a row times is the client
alone, as against a real API server:

- command-line runs against the benchmark cluster: ``restmapper resolve deploy`` against ``kubectl get
  deployments`` (discovery, then the name resolved; kubectl also lists the objects) and against ``kubectl get --raw
  /apis`` (kubectl's start-up and one request: a floor, not a peer), and ``restmapper api-resources`` against
  ``kubectl api-resources``; kubectl reads the served cluster's kubeconfig with an empty discovery cache directory
  each run, as ours starts with no cache;
- events per second delivered to a handler by our informer when the kit, in its own process, writes the
  ConfigMaps it watches: the socket-and-process form of the store section's scripted-transport row.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from bench.footprint import _byte_compile, _restmapper
from bench.measure import Row

__all__ = ["bench_rows", "served_process"]

_REPO = Path(__file__).resolve().parents[1]
_CLI_SLOWDOWN = 2.0
_EVENTS_TARGET = 10_000.0
ISSUE_CLI = "no open issue (command-line start-up and discovery)"
ISSUE_EVENTS = "issue 8 (object cache)"


class ServedProcess:
    """A running :mod:`bench.served_proc`: its URL, kubeconfig path and a way to send it commands."""

    def __init__(self, proc: subprocess.Popen[str], hello: dict[str, Any]) -> None:
        self.proc = proc
        self.url: str = hello["url"]
        self.kubeconfig: str = hello["kubeconfig"]

    def ask(self, command: str) -> dict[str, Any]:
        """Send one command line and return the server's JSON answer."""
        stdin, stdout = self._pipes()
        stdin.write(command + "\n")
        stdin.flush()
        return _answer(stdout.readline(), command)

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout


def _answer(line: str, what: str) -> dict[str, Any]:
    if not line:
        raise RuntimeError(f"bench.served_proc ended without answering {what!r}")
    value: dict[str, Any] = json.loads(line)
    if "error" in value:
        raise RuntimeError(str(value["error"]))
    return value


@contextmanager
def served_process(args: Sequence[str]) -> Iterator[ServedProcess]:
    """Start ``python -m bench.served_proc ARGS``, yield it once it serves, and stop it (end of its stdin)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(_REPO / "src"), os.environ.get(
        "PYTHONPATH", "")) if p)}
    proc = subprocess.Popen([sys.executable, "-m", "bench.served_proc", *args], cwd=_REPO, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        yield ServedProcess(proc, _answer(proc.stdout.readline(), "start"))
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- command line --------------------------------------------------------------------------------------------


def _run(argv: Sequence[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=_REPO, capture_output=True, timeout=300, check=False)
    return time.perf_counter() - t0, proc.returncode


def _cli_pairs(kubeconfig: str, cache: str) -> list[tuple[str, list[str], list[list[str]], bool]]:
    """(label, our argv, kubectl argvs with the cache directory as ``{cache}``, whether kubectl is a peer)."""
    ours = _restmapper()
    kubectl = [shutil.which("kubectl") or "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache]
    resolve = [*ours, "resolve", "--kubeconfig", kubeconfig, "deploy"]
    return [
        ("`restmapper resolve deploy` vs `kubectl get deployments`", resolve, [[*kubectl, "get", "deployments"]],
         True),
        ("`restmapper resolve deploy` vs `kubectl get --raw /apis` (kubectl start-up and one request: a floor)",
         resolve, [[*kubectl, "get", "--raw", "/apis"]], False),
        ("`restmapper api-resources` vs `kubectl api-resources`",
         [*ours, "api-resources", "--kubeconfig", kubeconfig], [[*kubectl, "api-resources"]], True),
    ]


def cli_rows(server: ServedProcess, groups: int, runs: int) -> list[Row]:
    """Wall time of each command (fresh process, best of ``runs``, ours and kubectl interleaved)."""
    if shutil.which("kubectl") is None:
        return [Row("CLI against a cluster served by another process", None, None, "ms",
                    note="not measured: kubectl is not installed")]
    bytecode = _byte_compile()
    rows = []
    with tempfile.TemporaryDirectory(prefix="restmapper-bench-served-cli-") as tmp:
        for i, (label, ours_argv, kubectl_argvs, peer) in enumerate(_cli_pairs(server.kubeconfig, "{cache}")):
            ours: list[float] = []
            theirs: list[float] = []
            codes: set[int] = set()
            peer_codes: set[int] = set()
            for run in range(max(runs, 1)):
                seconds, code = _run(ours_argv)
                ours.append(seconds)
                codes.add(code)
                cache = os.path.join(tmp, f"cache-{i}-{run}")
                for argv in kubectl_argvs:
                    seconds, code = _run([cache if a == "{cache}" else a for a in argv])
                    theirs.append(seconds)
                    peer_codes.add(code)
            ours_s, peer_s = min(ours), min(theirs)
            row = Row(f"CLI {label}, N={groups}, cluster served by another process", ours_s * 1e3, peer_s * 1e3,
                      "ms", issue=ISSUE_CLI,
                      note=f"fresh process, best of {runs}, aggregated discovery, kit server in its own process; "
                           f"kubectl with an empty discovery cache directory each run; {bytecode}; exit codes ours "
                           f"{sorted(codes)}, kubectl {sorted(peer_codes)}"
                           + ("" if peer else "; not a peer: kubectl resolves nothing here"))
            if peer:
                row.target = f"ours ≤ {_CLI_SLOWDOWN:g}x kubectl's"
                row.passed = ours_s <= _CLI_SLOWDOWN * peer_s and codes == {0}
                row.min_ratio = 1 / _CLI_SLOWDOWN
            rows.append(row)
    return rows


# --- events per second ---------------------------------------------------------------------------------------


def _events_per_second(url: str, events: int, server: ServedProcess, preloaded: bool) -> tuple[float, float]:
    """Sync an informer on ConfigMaps, then count ``events`` MODIFIED events to its handler; return events/s and
    the kit's own writes/s (inf when preloaded)."""
    from bench.cluster import our_mapper
    from restmapper.model import GroupKind
    from restmapper.store import ObjectCache

    configmap = GroupKind("", "ConfigMap")
    mapper = our_mapper(url)
    mapper.rest_mapping(configmap)  # discovery is not part of the events measured
    if preloaded:
        server.ask(f"preload {events}")
    # A paginated list, then a watch (as the store section's scripted row): the preloaded lines answer that
    # watch, which a WatchList sync would not open.
    cache = ObjectCache(mapper, page_size=500, watch_list=False)
    done, seen, last = threading.Event(), [0], [0.0]

    def on_update(old: Any, new: Any) -> None:
        seen[0] += 1
        if seen[0] == events:
            last[0] = time.perf_counter()
            done.set()

    try:
        informer = cache.informer(configmap)
        informer.add_handler(on_update=on_update)
        if not informer.wait_for_sync(300):
            raise RuntimeError(f"the informer did not sync: {informer.last_error}")
        start = time.perf_counter()  # preloaded: the stream opens right after the list, measured from here
        written = math.inf
        if not preloaded:
            if not server.ask("watchers 1")["ok"]:
                raise RuntimeError("the informer's watch did not open")
            start = time.perf_counter()
            seconds = float(server.ask(f"write {events}")["seconds"])
            written = events / seconds if seconds > 0 else math.inf
        if not done.wait(300):
            raise RuntimeError(f"{seen[0]} of {events} events arrived: {informer.stats}")
        return events / (last[0] - start), written
    finally:
        cache.stop()


def events_rows(objects: int, events: int) -> list[Row]:
    """Events/s to our informer's handler over a real socket from a kit in another process: pre-encoded lines
    (the store section's scripted row, over a socket) and the kit writing (end to end)."""
    rows = []
    what = f"{events:,} MODIFIED events, {objects:,} ConfigMaps"
    with served_process(["--configmaps", str(objects)]) as server:
        rate, _ = _events_per_second(server.url, events, server, preloaded=True)
        rows.append(Row(f"events/s to a handler over a real socket, pre-encoded watch lines sent by another process "
                        f"({what})", rate, None, "events/s", lower_is_better=False,
                        target=f"≥ {_EVENTS_TARGET:,.0f} events/s", passed=rate >= _EVENTS_TARGET,
                        issue=ISSUE_EVENTS,
                        note="the store section's scripted-transport measurement with the lines sent over HTTP by "
                             "the kit's process (encoded before the watch opens): socket read, decode, store, "
                             "handler thread; from the end of the sync to the handler seeing the last event"))
        rate, kit_rate = _events_per_second(server.url, events, server, preloaded=False)
        rows.append(Row(f"events/s to a handler over a real socket, the kit writing in another process ({what})",
                        rate, None, "events/s", lower_is_better=False, issue=ISSUE_EVENTS,
                        note=f"end to end, informational: from the write command to the handler seeing the last "
                             f"event; the kit itself wrote {kit_rate:,.0f} writes/s in its process, so a rate near "
                             "that is the kit's bound, not ours"))
    return rows


def bench_rows(ctx: Any) -> list[Row]:
    """The ``served`` section of ``python -m bench`` (on the smallest cluster size)."""
    quick = bool(getattr(ctx, "quick", False))
    groups = ctx.bench.groups
    ctx.progress(f"served: CLI against a cluster of {groups} groups served by another process")
    with served_process(["--groups", str(groups)]) as server:
        rows = cli_rows(server, groups, runs=1 if quick else 5)
    objects, events = (500, 1_000) if quick else (10_000, 20_000)
    ctx.progress(f"served: events/s over a socket, {events:,} events")
    return rows + events_rows(objects, events)
