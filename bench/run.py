"""Run the benchmark suite: ``python -m bench`` or ``python bench/run.py`` from the repository root.

Prints a markdown table (ours, the peer ``kubernetes.dynamic``, peer/ours ratio, target, PASS/MISS) to stdout
and progress to stderr; ``--output FILE`` also writes a report with the date, machine and command.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import FullDiscovery, cold_rows, full_discovery_rows, warm_rows
from bench.cluster import PeerFactory, build_cluster, served
from bench.footprint import import_rows, memory_rows
from bench.measure import Row, render_table
from bench.storm import storm_rows

__all__ = ["SECTIONS", "Options", "main", "parse_args", "run"]

SECTIONS = ("full", "warm", "cold", "memory", "storm", "dynamic", "import")


@dataclass(frozen=True)
class Options:
    """Sizes and knobs of one run (see ``--help``)."""

    groups: tuple[int, ...]
    latency_ms: float
    storm_seconds: float
    storm_threads: int
    peer_storm_threads: int
    miss_refresh_interval: float
    repeat: int
    budget_s: float
    runs: int
    sections: tuple[str, ...]
    quick: bool


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from exc
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("group counts must be positive")
    return values


def _sections(text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    unknown = [v for v in values if v not in SECTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    return values


def parse_args(argv: Sequence[str] | None = None) -> tuple[Options, Path | None]:
    """Return the options of ``argv`` (None: ``sys.argv[1:]``) and the ``--output`` path; exits 2 on bad arguments."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--groups", type=_int_list, default=None,
                        help="CRD group counts, comma-separated (default 200,1000; --quick: 20)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="latency added to every request, ms")
    parser.add_argument("--quick", action="store_true", help="small sizes and short runs (CI smoke)")
    parser.add_argument("--storm-seconds", type=float, default=None, help="miss storm duration (2; --quick 0.3)")
    parser.add_argument("--storm-threads", type=int, default=32, help="threads in our miss storm (32)")
    parser.add_argument("--peer-storm-threads", type=int, default=None,
                        help="threads in the peer's miss storm (default: as --storm-threads)")
    parser.add_argument("--miss-refresh-interval", type=float, default=1.0,
                        help="our miss_refresh_interval in the storm, seconds (1.0)")
    parser.add_argument("--repeat", type=int, default=None, help="timeit repeats of warm rows (7; --quick 3)")
    parser.add_argument("--only", type=_sections, default=SECTIONS,
                        help=f"comma-separated sections to run ({','.join(SECTIONS)})")
    parser.add_argument("--skip", type=_sections, default=(), help="comma-separated sections to skip")
    parser.add_argument("--output", type=Path, default=None,
                        help="also write a markdown report (date, machine, command, table) to this file")
    ns = parser.parse_args(argv)
    if ns.latency_ms < 0 or ns.miss_refresh_interval <= 0 or ns.storm_threads < 1:
        parser.error("--latency-ms must be >= 0, --miss-refresh-interval > 0, --storm-threads >= 1")
    quick = bool(ns.quick)
    options = Options(
        groups=ns.groups or ((20,) if quick else (200, 1000)),
        latency_ms=ns.latency_ms,
        storm_seconds=ns.storm_seconds if ns.storm_seconds is not None else (0.3 if quick else 2.0),
        storm_threads=ns.storm_threads,
        peer_storm_threads=ns.peer_storm_threads or ns.storm_threads,
        miss_refresh_interval=ns.miss_refresh_interval,
        repeat=max(1, ns.repeat if ns.repeat is not None else (3 if quick else 7)),
        budget_s=0.03 if quick else 0.35,
        runs=1 if quick else 3,
        sections=tuple(s for s in ns.only if s not in ns.skip),
        quick=quick,
    )
    if options.storm_seconds <= 0:
        parser.error("--storm-seconds must be positive")
    output: Path | None = ns.output
    return options, output


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def _dynamic_rows(url: str, repeat: int) -> list[Row]:
    """Rows of ``bench/dynamic_bench.py`` (our drop-in ``dynamic`` layer), when that module exists."""
    try:
        dynamic_bench = importlib.import_module("bench.dynamic_bench")
    except ImportError as exc:
        _progress(f"dynamic: skipped ({exc})")
        return []
    try:
        results = dynamic_bench.run(url, repeat)
    except Exception as exc:  # another helper's module: report, never abort the whole run
        return [Row("dynamic layer (bench/dynamic_bench.py)", None, None, "µs",
                    note=f"failed: {type(exc).__name__}: {exc}")]
    rows = []
    for item in results:
        ours, peer = item.get("ours_us"), item.get("peer_us")
        rows.append(Row(str(item.get("name", "dynamic")), float(ours) if ours is not None else None,
                        float(peer) if peer is not None else None, "µs", note="bench/dynamic_bench.py"))
    return rows


def run(options: Options) -> list[Row]:
    """Run the selected sections and return their rows (the loopback server only listens on 127.0.0.1)."""
    rows: list[Row] = []
    wanted = set(options.sections)
    with tempfile.TemporaryDirectory(prefix="restmapper-bench-") as cache_dir:
        factory = PeerFactory(cache_dir)
        cluster_sections = wanted & {"full", "warm", "cold", "memory"}
        for n in options.groups if cluster_sections else ():
            cluster = build_cluster(n)
            full = FullDiscovery()
            with served(cluster, options.latency_ms) as url:
                if "full" in wanted:
                    _progress(f"full discovery, N={n}")
                    rows += full_discovery_rows(cluster, url, n, factory, full, runs=options.runs)
                if "warm" in wanted:
                    _progress(f"warm lookups, N={n}")
                    rows += warm_rows(url, n, factory, full, budget_s=options.budget_s, repeat=options.repeat)
                if "cold" in wanted:
                    _progress(f"cold first lookup, N={n}")
                    rows += cold_rows(cluster, url, n, factory, runs=options.runs)
                if "memory" in wanted and n == max(options.groups):
                    _progress(f"memory, N={n}")
                    rows += memory_rows(cluster, url, n, factory, full.eager_cache_file)
        if wanted & {"storm", "dynamic"}:
            n = min(options.groups)
            cluster = build_cluster(n)
            with served(cluster, options.latency_ms) as url:
                if "storm" in wanted:
                    _progress(f"miss storm, N={n}, {options.storm_seconds:g} s per side and mode")
                    rows += storm_rows(cluster, url, n, factory, duration_s=options.storm_seconds,
                                       interval_s=options.miss_refresh_interval, threads=options.storm_threads,
                                       peer_threads=options.peer_storm_threads)
                if "dynamic" in wanted:
                    _progress("dynamic layer (bench/dynamic_bench.py)")
                    rows += _dynamic_rows(url, 200 if options.quick else 2000)
    if "import" in wanted:
        _progress("import time")
        rows += import_rows(runs=2 if options.quick else 5)
    return rows


def _machine() -> str:
    return (f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()}, "
            f"Python {platform.python_version()} ({platform.python_implementation()})")


def report(rows: Sequence[Row], options: Options, command: str, elapsed_s: float) -> str:
    """Return the markdown report: date, machine, command, options, the table and how to read it."""
    import kubernetes

    passed = sum(1 for r in rows if r.passed)
    targets = sum(1 for r in rows if r.passed is not None)
    return "\n".join([
        "# kube-restmapper benchmark results",
        "",
        "Generated by `bench/run.py`; do not edit by hand.",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {_machine()}",
        f"- Peer: kubernetes (Python client) {kubernetes.__version__}, `kubernetes.dynamic`",
        f"- Command: `{command}`",
        f"- Groups: {', '.join(map(str, options.groups))}; added latency {options.latency_ms:g} ms per request; "
        f"miss storm {options.storm_seconds:g} s, {options.storm_threads} threads (peer "
        f"{options.peer_storm_threads}), miss_refresh_interval {options.miss_refresh_interval:g} s",
        f"- Run time: {elapsed_s:.1f} s; targets met: {passed}/{targets}",
        "",
        "Ratio is peer / ours: above 1 means ours is faster, makes fewer requests or holds less memory. All numbers "
        "come from one process talking to the testing kit's loopback server (`FakeCluster.serve()` on 127.0.0.1).",
        "",
        render_table(rows),
        "",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite, print the table (and write ``--output``); return 0 (misses are reported, not fatal)."""
    options, output = parse_args(argv)
    start = time.perf_counter()
    rows = run(options)
    elapsed = time.perf_counter() - start
    args = list(sys.argv[1:] if argv is None else argv)
    command = "python -m bench" + ("" if not args else " " + shlex.join(args))
    text = report(rows, options, command, elapsed)
    print(text)
    if output is not None:
        output.write_text(text, encoding="utf-8")
        _progress(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
