"""Big-cluster object-cache benchmark: ``python -m bench.bigcache_bench [--pods N]`` (``--quick``: 1,000 Pods).

What a cache of a big cluster costs (issue 25), ours against a **plain store**: a paginated list with ``requests``
(500 per page, as our informer pages), ``json.loads`` of each page and the items inserted in a dict by
(namespace, name), the floor of every Python client. The same N Pods (20,000 by default: 400 Deployments of 50
replicas over 50 namespaces, about 8 KB of JSON each, replicas sharing their template; :mod:`bench.pods`) are
served by the loopback kit in another process; each side syncs them in fresh interpreters of its own (the
resident set is then the side's alone), timed the same way (wall time from the start of the sync to a complete
store, best of ``--runs``):

- bytes held per Pod: tracemalloc growth over the sync (a traced run of its own) and resident-set growth (an
  untraced run), after ``gc.collect()``;
- one full ``gc.collect()`` with the store populated (best of 3, in the untraced run);
- peak resident-set growth during the initial sync and during the relist after a 410 (``VmHWM``, reset through
  ``/proc/self/clear_refs`` before each), against our steady-state growth;
- initial sync time per sync mode: WatchList when the informer reports it (``informer.stats.sync_mode``), the
  paginated list when the kit refuses WatchList or the informer reports no mode (it has no other);
- ``get`` of a Pod not read before (one call per Pod, median over the sample) against ``json.loads`` of that
  Pod's JSON; warm ``get`` of those Pods again; ``list(label_selector=...)`` against the same filter over the plain
  store;
- events/s to a handler: Pod updates written to the kit with their watch events held back, then streamed at once.

It prints the extrapolation to 100,000 Pods (bytes: per-Pod bytes times 100,000; GC: a full collection visits
every tracked container, so its time is taken as linear in the Pods: the empty process's collection plus the
per-Pod increase times 100,000). Registered as the ``bigcache`` section of ``python -m bench``
(``--bigcache-pods``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.pods import Served, pod, server

__all__ = ["REPLICAS", "SELECTOR", "bench_rows", "measure", "run"]

REPLICAS = 50
PAGE = 500
SELECTOR = ("shard", "0")  # label shard = Deployment index % 100: 4 of 400 Deployments, 1 % of the Pods
SAMPLE = 200  # Pods read by the get rows
EXTRAPOLATE = 100_000
WATCH_LIST, PAGINATED = "WatchList", "paginated list"


# --- measuring in the child process -----------------------------------------------------------------------------

def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> bool:
    """Reset the resident-set high-water mark to the current resident set (Linux 4.0+); False when refused."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _cpu_best(fn: Callable[[], Any], times: int) -> tuple[float, Any]:
    """The least CPU time of this thread (seconds) over ``times`` calls of ``fn``, and its last result.

    Thread CPU time rather than wall time: what ``fn`` costs does not depend on what else the machine runs (a
    loaded machine preempts the process, which wall time would charge to ``fn``); on a quiet machine they agree.
    """
    best, out = float("inf"), None
    for _ in range(times):
        start = time.thread_time()
        out = fn()
        best = min(best, time.thread_time() - start)
    return best, out


def _gc_seconds() -> float:
    return _cpu_best(gc.collect, 3)[0]


def _ask(command: str) -> str:
    """Have the parent run ``command`` on the server (see :class:`bench.pods.Served`); its answer."""
    print("command " + command, flush=True)
    return sys.stdin.readline().strip()


def _sample_keys(n: int) -> list[tuple[str, str]]:
    """(name, namespace) of up to SAMPLE Pods spread over the collection, none of them matched by SELECTOR."""
    keys = []
    for i in range(0, n, max(1, n // SAMPLE)):
        meta = pod(i, replicas=REPLICAS)["metadata"]
        if meta["labels"][SELECTOR[0]] != SELECTOR[1]:
            keys.append((meta["name"], meta["namespace"]))
    return keys[:SAMPLE]


def _plain_sync(url: str, store: dict[tuple[str, str], Any]) -> str:
    """List the Pods into ``store`` (the plain store's sync); the list's resourceVersion."""
    import requests

    with requests.Session() as session:
        cont = ""
        while True:
            params = {"limit": str(PAGE), **({"continue": cont} if cont else {})}
            doc = json.loads(session.get(url + "/api/v1/pods", params=params, timeout=600).content)
            for item in doc["items"]:
                meta = item["metadata"]
                store[(meta["namespace"], meta["name"])] = item
            cont = doc["metadata"].get("continue") or ""
            if not cont:
                return str(doc["metadata"]["resourceVersion"])


def _plain_events(url: str, store: dict[tuple[str, str], Any], resource_version: str, m: int) -> float:
    """Events/s of the plain side's informer (the floor of every Python peer): one thread reads the watch lines,
    ``json.loads`` each, replaces the object in ``store`` and calls the handler with the old and the new object
    (no handler thread, no checks); from the first to the last of ``m`` updates, as :func:`_events`."""
    import requests

    stamps: list[float] = []

    def on_update(old: Any, new: Any) -> None:
        stamps.append(time.perf_counter())

    with requests.Session() as session:
        params = {"watch": "true", "resourceVersion": resource_version, "timeoutSeconds": "600"}
        with session.get(url + "/api/v1/pods", params=params, stream=True, timeout=600) as resp:
            def read() -> None:
                for line in resp.iter_lines(chunk_size=1 << 16):
                    if not line:
                        continue
                    event = json.loads(line)
                    obj = event["object"]
                    meta = obj["metadata"]
                    key = (meta["namespace"], meta["name"])
                    old = store.get(key)
                    store[key] = obj
                    if event["type"] == "MODIFIED" and old is not None:
                        on_update(old, obj)
                        if len(stamps) >= m:
                            return

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            _ask(f"events {m}")
            reader.join(600)
    if len(stamps) < m:
        raise RuntimeError(f"{len(stamps)} of {m} updates reached the plain handler")
    return (m - 1) / max(stamps[m - 1] - stamps[0], 1e-9)


def _reads(get: Callable[[str, str], Any], keys: list[tuple[str, str]]) -> dict[str, float]:
    """µs per call (thread CPU time): the first get of each key (one pass), json.loads of those Pods' JSON and
    warm gets of them again (best of 5 passes)."""
    first = _cpu_best(lambda: [get(name, ns) for name, ns in keys], 1)[0]
    raws = [json.dumps(get(name, ns), separators=(",", ":")).encode() for name, ns in keys]
    loads = _cpu_best(lambda: [json.loads(raw) for raw in raws], 5)[0]
    warm = _cpu_best(lambda: [get(name, ns) for _ in range(20) for name, ns in keys], 5)[0] / 20
    return {"first_get_us": first / len(keys) * 1e6, "json_loads_us": loads / len(keys) * 1e6,
            "warm_get_us": warm / len(keys) * 1e6}


def _events(informer: Any, m: int) -> float:
    """Events/s from the first to the last of ``m`` Pod updates reaching an ``on_update`` handler."""
    held = informer.stats.objects
    adds, stamps, done = [0], [], threading.Event()

    def on_add(obj: Any) -> None:
        adds[0] += 1

    def on_update(old: Any, new: Any) -> None:
        stamps.append(time.perf_counter())
        if len(stamps) >= m:
            done.set()

    handle = informer.add_handler(on_add=on_add, on_update=on_update)
    deadline = time.monotonic() + 600
    while adds[0] < held and time.monotonic() < deadline:  # a new handler gets on_add for every held Pod first
        time.sleep(0.01)
    _ask(f"events {m}")
    if not done.wait(600):
        raise RuntimeError(f"{len(stamps)} of {m} updates reached the handler: {informer.stats}")
    informer.remove_handler(handle)
    return (m - 1) / max(stamps[m - 1] - stamps[0], 1e-9)


def _relist_peak(cache: Any, informer: Any, kind: Any) -> int:
    """The resident-set high-water mark while the informer relists after a 410 (the kit changes Pod 0 unseen)."""
    meta = pod(0, replicas=REPLICAS)["metadata"]
    relists = informer.stats.relists
    _reset_peak()
    stamp = _ask("relist")
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        seen = cache.get(kind, meta["name"], meta["namespace"])["metadata"].get("annotations", {})
        if informer.stats.relists > relists and seen.get("bench.example.com/relist") == stamp:
            break
        time.sleep(0.01)
    else:
        raise RuntimeError(f"no relist after the 410: {informer.stats}")
    peak = _peak()
    _ask("release")
    return peak


def measure(url: str, side: str, *, traced: bool, n: int, events: int = 0, full: bool = True) -> dict[str, Any]:
    """Sync ``side`` (``ours`` or ``plain``) from ``url`` in this (fresh) process and return its numbers.

    Args:
        url: the served kit.
        side: ``ours`` (an ObjectCache informer of Pods) or ``plain`` (list + json.loads + dict insert).
        traced: measure bytes with tracemalloc (and nothing else: tracing slows everything down).
        n: Pods served.
        events: updates for the events/s figure (ours, untraced); 0 skips it (and the relist).
        full: False measures the sync alone (time and peak).
    """
    from restmapper.discovery import DiscoveryClient
    from restmapper.mapper import LazyRESTMapper
    from restmapper.model import GroupKind
    from restmapper.store import ObjectCache
    from restmapper.transport import RequestsTransport

    # Both sides import the same modules and hold a warm mapper: the collections compare the stores alone.
    mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(url)))
    mapper.resolve("pods")
    pod_kind = GroupKind("", "Pod")
    gc.collect()
    out: dict[str, Any] = {"side": side}
    if not traced and full:
        out["gc_empty_s"] = _gc_seconds()
        out["tracked_empty"] = len(gc.get_objects())
    rss0 = _rss()
    out["peak_measured"] = _reset_peak()
    if traced:
        tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0] if traced else 0
    plain: dict[tuple[str, str], Any] = {}
    cache, informer = None, None
    start, cpu = time.perf_counter(), time.process_time()
    listed_rv = ""
    if side == "plain":
        listed_rv = _plain_sync(url, plain)
    else:
        cache = ObjectCache(mapper, sync_timeout=600.0, page_size=PAGE)
        informer = cache.informer(pod_kind)
        if not informer.wait_for_sync(600):
            raise RuntimeError(f"no sync: {informer.last_error}")
    out["sync_s"] = time.perf_counter() - start
    out["sync_cpu_s"] = time.process_time() - cpu  # every thread of this process: the client's own work
    out["peak_sync"] = _peak() - rss0
    out["objects"] = len(plain) if informer is None else informer.stats.objects
    if informer is not None:
        out["sync_mode"] = getattr(informer.stats, "sync_mode", None)
    gc.collect()
    if traced:
        out["bytes"] = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
    elif full:
        out["rss"] = _rss() - rss0
        out["gc_s"] = _gc_seconds()
        out["tracked"] = len(gc.get_objects())
        keys = _sample_keys(n)

        def labelled(o: dict[str, Any]) -> bool:
            return bool(o["metadata"].get("labels", {}).get(SELECTOR[0]) == SELECTOR[1])

        if cache is None:
            out.update(_reads(lambda name, ns: plain[(ns, name)], keys))
            seconds, hits = _cpu_best(lambda: [o for o in plain.values() if labelled(o)], 5)
            if events:
                out["events_per_s"] = _plain_events(url, plain, listed_rv, events)
        else:
            out.update(_reads(lambda name, ns: cache.get(pod_kind, name, ns), keys))
            selector = f"{SELECTOR[0]}={SELECTOR[1]}"
            seconds, hits = _cpu_best(lambda: cache.list(pod_kind, label_selector=selector), 5)
            if events:
                # The cache as the relist finds it: the reads above left objects decoded (the recently read set,
                # bounded by hot_bytes), which are part of the cache the relist must not multiply.
                gc.collect()
                out["rss_before_relist"] = _rss() - rss0
                out["peak_relist"] = _relist_peak(cache, informer, pod_kind) - rss0
                out["events_per_s"] = _events(informer, events)
        out["list_us"], out["listed"] = seconds * 1e6, len(hits)
    if cache is not None:
        cache.stop()
    return out


# --- the parent ---------------------------------------------------------------------------------------------------

def _child(served: Served, side: str, *, traced: bool, n: int, events: int = 0, full: bool = True) -> dict[str, Any]:
    """Run :func:`measure` in a fresh interpreter, relaying its server commands; its numbers."""
    args = [sys.executable, "-m", "bench.bigcache_bench", "--measure", served.url, side, "--pods", str(n),
            "--events", str(events)] + (["--traced"] if traced else []) + ([] if full else ["--sync-only"])
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith("command "):
                proc.stdin.write(served.command(line[len("command "):].strip()) + "\n")
                proc.stdin.flush()
            elif line.startswith("result "):
                return dict(json.loads(line[len("result "):]))
        raise RuntimeError(f"the {side} measurement ended without a result (exit status {proc.wait(60)})")
    finally:
        proc.stdin.close()
        proc.wait(600)


def _kit_rate(served: Served, m: int) -> float:
    """Events/s the kit streams ``m`` held-back Pod updates to a reader that only splits lines (the ceiling of the
    events row: the kit is Python too)."""
    import requests

    stamps: list[float] = []
    with requests.Session() as session:
        listed = json.loads(session.get(served.url + "/api/v1/pods", params={"limit": "1"}, timeout=600).content)
        params = {"watch": "true", "resourceVersion": listed["metadata"]["resourceVersion"], "timeoutSeconds": "600"}
        with session.get(served.url + "/api/v1/pods", params=params, stream=True, timeout=600) as resp:
            def read() -> None:
                for line in resp.iter_lines(chunk_size=1 << 16):
                    if line:
                        stamps.append(time.perf_counter())
                        if len(stamps) >= m:
                            return

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            served.command(f"events {m}")
            reader.join(600)
    if len(stamps) < m:
        raise RuntimeError(f"the kit streamed {len(stamps)} of {m} events")
    return (m - 1) / max(stamps[-1] - stamps[0], 1e-9)


def _mode_of(reported: Any) -> str:
    """The sync mode a reported ``stats.sync_mode`` names (WATCH_LIST or PAGINATED)."""
    return WATCH_LIST if "watch" in str(reported).lower() else PAGINATED


def run(n: int = 20_000, *, events: int = 5_000, runs: int = 1, progress: Callable[[str], None] = lambda s: None
        ) -> list[Any]:
    """Measure both sides against ``n`` Pods served from another process; the rows (``bench.measure.Row``).

    Args:
        n: Pods (Deployments of 50 replicas).
        events: Pod updates for the events/s row.
        runs: untraced runs per side (the best sync time of each side is kept, the first run's other figures).
        progress: called with a line of progress.
    """
    from bench.measure import Row

    progress(f"bigcache: serving {n} Pods ({n // REPLICAS} Deployments of {REPLICAS}) from another process")
    with server(n, replicas=REPLICAS, history=events + 100) as served:
        progress("bigcache: plain store, untraced and traced")
        plain = [_child(served, "plain", traced=False, n=n, events=events if i == 0 else 0) for i in range(runs)]
        plain_traced = _child(served, "plain", traced=True, n=n)
        progress("bigcache: our cache, untraced (with the relist and the events) and traced")
        ours = [_child(served, "ours", traced=False, n=n, events=events if i == 0 else 0) for i in range(runs)]
        ours_traced = _child(served, "ours", traced=True, n=n)
        refused = served.command("refuse-watch-list on") == "ok"
        paginated = None
        if refused:
            progress("bigcache: our cache, the kit refusing WatchList")
            paginated = [_child(served, "ours", traced=False, n=n, full=False) for _ in range(runs)]
            served.command("refuse-watch-list off")
        progress("bigcache: the kit's own event rate")
        ceiling = _kit_rate(served, events)
    p, o = plain[0], ours[0]
    pods = max(o["objects"], 1)
    mib = 2**20
    rows: list[Row] = []

    def row(name: str, ours_v: float | None, plain_v: float | None, unit: str, target: str = "",
            passed: bool | None = None, note: str = "", **kw: Any) -> None:
        rows.append(Row(f"bigcache: {name}", ours_v, plain_v, unit, target=target, passed=passed, note=note,
                        issue="issue 25 (big-cluster object cache)", **kw))

    where = f"{n:,} Pods ({n // REPLICAS} Deployments of {REPLICAS}, 50 namespaces) from the kit in another process"
    per_t, plain_t = ours_traced["bytes"] / pods, plain_traced["bytes"] / max(p["objects"], 1)
    row("bytes held per Pod (tracemalloc)", per_t, plain_t, "bytes", "<= 15 % of plain", per_t <= 0.15 * plain_t,
        f"{per_t / plain_t:.1%} of plain; {where}; growth over the sync, after gc.collect()")
    per_r, plain_r = o["rss"] / pods, p["rss"] / max(p["objects"], 1)
    row("bytes held per Pod (RSS growth)", per_r, plain_r, "bytes", "<= 15 % of plain", per_r <= 0.15 * plain_r,
        f"{per_r / plain_r:.1%} of plain; untraced run, fresh process per side")
    row("one full gc.collect(), cache populated", o["gc_s"] * 1e3, p["gc_s"] * 1e3, "ms", "<= 5 % of plain",
        o["gc_s"] <= 0.05 * p["gc_s"],
        f"{o['gc_s'] / p['gc_s']:.1%} of plain; thread CPU time, best of 3; GC-tracked objects per Pod: ours "
        f"{(o['tracked'] - o['tracked_empty']) / pods:.1f}, plain {(p['tracked'] - p['tracked_empty']) / pods:.1f}; "
        f"empty process {o['gc_empty_s'] * 1e3:.1f} ms")
    steady = o["rss"]
    if o["peak_measured"]:
        row("peak RSS growth during the initial sync", o["peak_sync"] / mib, p["peak_sync"] / mib, "MiB",
            "<= 1.5x our steady state", o["peak_sync"] <= 1.5 * steady,
            f"{o['peak_sync'] / steady:.2f}x our steady state ({steady / mib:.0f} MiB); VmHWM over the start")
        if "peak_relist" in o:
            held = o["rss_before_relist"]
            row("peak RSS growth during a relist after a 410", o["peak_relist"] / mib, None, "MiB",
                "<= 1.5x our steady state", o["peak_relist"] <= 1.5 * held,
                f"{o['peak_relist'] / held:.2f}x our steady state just before the relist ({held / mib:.0f} MiB: "
                f"after the sync and the read rows, whose recently read objects stay decoded); "
                f"{o['peak_relist'] / steady:.2f}x the state right after the sync; the kit changed one Pod unseen "
                "and compacted")
    else:
        row("peak RSS growth during the initial sync", None, None, "MiB", "<= 1.5x our steady state", None,
            "n/a (not available): /proc/self/clear_refs refused")
    plain_s = min(r["sync_s"] for r in plain)
    reported = o.get("sync_mode")
    by_mode: dict[str, tuple[list[dict[str, Any]], str]] = {}
    if reported is None:
        by_mode[PAGINATED] = (ours, "the informer reports no sync mode: it has only the paginated list")
    else:
        by_mode[_mode_of(reported)] = (ours, f"stats.sync_mode {reported!r}")
    if paginated is not None and _mode_of(paginated[0].get("sync_mode")) == PAGINATED:
        by_mode.setdefault(PAGINATED, (paginated, f"kit refusing WatchList; stats.sync_mode "
                                                  f"{paginated[0].get('sync_mode')!r}"))
    for mode in (WATCH_LIST, PAGINATED):
        name = f"initial sync of {n:,} Pods, {mode} (plain: list + json.loads + dict insert)"
        if mode not in by_mode:
            row(name, None, plain_s * 1e3, "ms", "<= plain", None,
                "n/a (not available)" + ("" if refused or mode == WATCH_LIST else ": the kit cannot refuse WatchList"))
            continue
        got, how = by_mode[mode]
        ours_s = min(r["sync_s"] for r in got)
        ours_cpu, plain_cpu = min(r["sync_cpu_s"] for r in got), min(r["sync_cpu_s"] for r in plain)
        row(name, ours_s * 1e3, plain_s * 1e3, "ms", "<= plain", ours_s <= plain_s,
            f"{how}; best of {runs} each, fresh process per run" + (f", pages of {PAGE}" if mode == PAGINATED else "")
            + f"; client CPU time (every thread of the syncing process) ours {ours_cpu:.2f} s, plain "
              f"{plain_cpu:.2f} s ({plain_cpu / max(ours_cpu, 1e-9):.2f}x): the rest of the wall time is the kit "
              "serving, which a loaded machine slows for both sides alike")
    row("warm get of a recently read Pod", o["warm_get_us"], p["warm_get_us"], "µs", "<= 2 µs",
        o["warm_get_us"] <= 2.0, "cache.get(POD, name, namespace), POD a prebuilt GroupKind; plain: dict lookup; "
        f"{SAMPLE} Pods read 20 times; thread CPU time, best of 5")
    row("first get of a Pod not read before", o["first_get_us"], o["json_loads_us"], "µs", "<= 1.5x json.loads",
        o["first_get_us"] <= 1.5 * o["json_loads_us"],
        f"peer column: json.loads of the same Pods' JSON (best of 5 passes); mean over {SAMPLE} Pods, one get "
        "each; thread CPU time")
    share = o["listed"] / pods
    row(f"list(label_selector='{SELECTOR[0]}={SELECTOR[1]}') returning {o['listed']:,} Pods ({share:.1%})",
        o["list_us"] / 1e3, p["list_us"] / 1e3, "ms", "<= 2x plain", o["list_us"] <= 2 * p["list_us"],
        "plain: the same equality filter over the dict's values; thread CPU time, best of 5")
    if "events_per_s" in o:
        floor = p.get("events_per_s")
        row("events/s to a handler", o["events_per_s"], floor, "events/s", ">= 10,000 events/s",
            o["events_per_s"] >= 10_000,
            (f"{o['events_per_s'] / floor:.0%} of plain; " if floor else "") +
            f"{events:,} Pod updates written to the kit in another process with their watch events held back, "
            "then streamed at once; first to last on_update; peer column: the plain side's informer in its own "
            "process (read lines, json.loads, dict insert, on_update(old, new) on the reading thread: the floor "
            f"of a Python informer); the kit streams {ceiling:,.0f} events/s to a reader that only splits lines "
            "(the ceiling)", lower_is_better=False)
    scale = EXTRAPOLATE / pods
    row(f"extrapolated to {EXTRAPOLATE:,} Pods: bytes held", ours_traced["bytes"] * scale / mib,
        plain_traced["bytes"] * EXTRAPOLATE / max(p["objects"], 1) / mib, "MiB", "", None,
        f"tracemalloc bytes per Pod x {EXTRAPOLATE:,}")

    def gc_of(r: dict[str, Any]) -> float:
        return float(r["gc_empty_s"] + max(r["gc_s"] - r["gc_empty_s"], 0.0) / max(r["objects"], 1) * EXTRAPOLATE)

    row(f"extrapolated to {EXTRAPOLATE:,} Pods: one full gc.collect()", gc_of(o), gc_of(p), "s", "", None,
        f"linear: empty-process collection + (populated - empty) / {n:,} Pods x {EXTRAPOLATE:,} (a full "
        "collection visits every tracked container)")
    return rows


def bench_rows(ctx: Any) -> list[Any]:
    """The ``bigcache`` section of ``python -m bench`` (``--bigcache-pods``; ``--quick``: 1,000 Pods)."""
    quick = bool(getattr(ctx, "quick", False))
    pods = getattr(getattr(ctx, "options", None), "bigcache_pods", 1_000 if quick else 20_000)
    return run(pods, events=500 if quick else 5_000, progress=getattr(ctx, "progress", lambda s: None))


def main(argv: list[str] | None = None) -> int:
    """Run and print the table (or measure one side, the child mode); exit status 0."""
    from bench.measure import render_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=20_000, help="Pods in the cluster (default 20000)")
    parser.add_argument("--events", type=int, default=5_000, help="Pod updates for the events/s row (5000)")
    parser.add_argument("--runs", type=int, default=1, help="untraced runs per side (best sync kept)")
    parser.add_argument("--quick", action="store_true", help="smoke size (1,000 Pods, 500 events)")
    parser.add_argument("--measure", nargs=2, metavar=("URL", "SIDE"), help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sync-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure is not None:
        got = measure(args.measure[0], args.measure[1], traced=args.traced, n=args.pods, events=args.events,
                      full=not args.sync_only)
        print("result " + json.dumps(got), flush=True)
        return 0
    n, events = (1_000, 500) if args.quick else (args.pods, args.events)
    rows = run(n, events=events, runs=max(1, args.runs), progress=lambda s: print(s, file=sys.stderr, flush=True))
    print(render_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
