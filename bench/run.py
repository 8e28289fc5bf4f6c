"""Run the benchmark suite: ``python -m bench`` or ``python bench/run.py`` from the repository root.

Prints a markdown table (ours, the peer ``kubernetes.dynamic``, peer/ours ratio, target, PASS/MISS) to stdout
and progress to stderr. ``--write-results`` runs the suite twice and writes ``bench/RESULTS.md`` (machine load,
both passes and their spread, every missed target with the issue that addresses it); ``--output FILE`` writes
the same report elsewhere.

Sections run per cluster size (CRD groups shaped after the real fixtures, see :mod:`bench.shapes`): ``full``
(full discovery), ``warm`` (one question repeated, and the peers' fair forms), ``questions`` (first-time
questions and a working set of distinct questions of every shape), ``refresh`` (questions after one group
refreshed: a never-asked one, median and p99, and ones asked before), ``cold`` (first lookup per discovery mode
and latency, questions naming a group and questions spanning every group), ``memory`` (largest size only); then
on the smallest cluster ``storm``, ``cli`` and the optional modules of :data:`EXTRA_SECTIONS` (``served``: rows against
a cluster served by another process); then ``import``.

Adding a section from another module: put ``bench/<name>.py`` defining ``bench_rows(ctx: Context) ->
list[Row]`` and register it in :data:`EXTRA_SECTIONS` (a missing module is skipped with a note on stderr).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``bench`` importable from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cases import cold_rows, full_discovery_rows, repeated_rows, root_documents_rows
from bench.cluster import BenchCluster, PeerFactory, build_cluster, latency, served
from bench.footprint import cli_rows, import_rows, memory_rows
from bench.measure import Row, render_table
from bench.storm import storm_rows
from bench.workingset import QuestionBench, never_asked_after_refresh_rows, question_rows, refresh_rows, warm_peer

__all__ = ["EXTRA_SECTIONS", "SECTIONS", "Context", "Options", "main", "parse_args", "run"]

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"

EXTRA_SECTIONS: dict[str, str] = {
    "dynamic": "bench.dynamic_bench",
    "store": "bench.store_bench",
    "client": "bench.client_bench",
    "workqueue": "bench.workqueue_bench",
    "leader": "bench.leader_bench",
    "scope": "bench.scope_bench",
    "kit": "bench.kit_bench",
    "bigcache": "bench.bigcache_bench",
    "served": "bench.served_bench",
}
"""Optional sections: name -> module defining ``bench_rows(ctx: Context) -> list[Row]`` (run on the smallest
cluster, served, aggregated mode). ``bench.dynamic_bench`` predates the protocol and is adapted here."""

EXTRA_ISSUES: dict[str, str] = {"store": "issue 8 (object cache)", "client": "issue 28 (read-your-writes client)",
                                "workqueue": "issue 28 (work queue)", "leader": "issue 28 (leader election)",
                                "scope": "issue 24 (scoped object cache)",
                                "kit": "issue 25 (kit serves big collections)",
                                "bigcache": "issue 25 (big-cluster object cache)"}
"""The issue a missed target of an optional section is reported against, when its rows name none."""

SECTIONS = ("full", "warm", "questions", "refresh", "cold", "memory", "storm", "cli", "import", *EXTRA_SECTIONS)


@dataclass(frozen=True)
class Options:
    """Sizes and knobs of one run (see ``--help``)."""

    groups: tuple[int, ...]
    latencies_ms: tuple[float, ...]
    modes: tuple[str, ...]
    working_set: int
    storm_seconds: float
    storm_threads: int
    peer_storm_threads: int
    miss_refresh_interval: float
    repeat: int
    budget_s: float
    runs: int
    sections: tuple[str, ...]
    quick: bool
    passes: int = 1
    scope_pods: int = 20_000
    bigcache_pods: int = 20_000


@dataclass
class Context:
    """What a section gets: the served cluster, peer factory, options and a progress printer."""

    bench: BenchCluster
    factory: PeerFactory
    options: Options
    progress: Callable[[str], None]
    peer_cache: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        """The served cluster's URL."""
        return self.bench.url

    @property
    def quick(self) -> bool:
        """True for ``--quick`` (CI smoke sizes)."""
        return self.options.quick


def _numbers(text: str, cast: Callable[[str], float], least: float, what: str) -> tuple[float, ...]:
    try:
        values = tuple(cast(v) for v in text.split(",") if v.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from exc
    if not values or any(v < least for v in values):
        raise argparse.ArgumentTypeError(f"{what} must be at least {least:g}")
    return values


def _int_list(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in _numbers(text, int, 1, "group counts"))


def _float_list(text: str) -> tuple[float, ...]:
    return _numbers(text, float, 0, "latencies")


def _modes(text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    if not values or any(v not in ("aggregated", "legacy") for v in values):
        raise argparse.ArgumentTypeError("modes are aggregated and legacy")
    return values


def _sections(text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    unknown = [v for v in values if v not in SECTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    return values


def parse_args(argv: Sequence[str] | None = None) -> tuple[Options, Path | None]:
    """Return the options of ``argv`` (None: ``sys.argv[1:]``) and the report path; exits 2 on bad arguments."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=_int_list, default=None,
                        help="CRD group counts, comma-separated (default 200,1000; --quick: 20)")
    parser.add_argument("--latency-ms", type=_float_list, default=None,
                        help="latencies added to every request in the cold rows, ms (default 0,5; --quick 0)")
    parser.add_argument("--modes", type=_modes, default=("aggregated", "legacy"),
                        help="discovery modes of the cold rows (aggregated,legacy)")
    parser.add_argument("--working-set", type=int, default=None,
                        help="distinct questions in the working set (20000; --quick 1000)")
    parser.add_argument("--quick", action="store_true", help="small sizes and short runs (CI smoke)")
    parser.add_argument("--storm-seconds", type=float, default=None, help="miss storm duration (2; --quick 0.3)")
    parser.add_argument("--storm-threads", type=int, default=32, help="threads in our miss storm (32)")
    parser.add_argument("--peer-storm-threads", type=int, default=None,
                        help="threads in the peer's miss storm (default: as --storm-threads)")
    parser.add_argument("--miss-refresh-interval", type=float, default=1.0,
                        help="our miss_refresh_interval in the storm, seconds (1.0)")
    parser.add_argument("--repeat", type=int, default=None, help="timeit repeats of repeated rows (7; --quick 3)")
    parser.add_argument("--passes", type=int, default=None,
                        help="run the whole suite this many times and show the spread (1; --write-results 2)")
    parser.add_argument("--only", type=_sections, default=SECTIONS,
                        help=f"comma-separated sections to run ({','.join(SECTIONS)})")
    parser.add_argument("--skip", type=_sections, default=(), help="comma-separated sections to skip")
    parser.add_argument("--output", type=Path, default=None,
                        help="also write the markdown report (date, machine, load, command, table) to this file")
    parser.add_argument("--scope-pods", type=int, default=None,
                        help="Pods of the scope section (20000; --quick 2000): about 8 KB each, served in a process")
    parser.add_argument("--bigcache-pods", type=int, default=None,
                        help="Pods of the bigcache section (20000; --quick 1000): Deployments of 50 replicas, "
                             "served in a process")
    parser.add_argument("--write-results", action="store_true",
                        help=f"write the report to {RESULTS.relative_to(RESULTS.parents[1])} (2 passes unless "
                             "--passes is given)")
    ns = parser.parse_args(argv)
    if ns.miss_refresh_interval <= 0 or ns.storm_threads < 1:
        parser.error("--miss-refresh-interval must be > 0, --storm-threads >= 1")
    if ns.passes is not None and ns.passes < 1:
        parser.error("--passes must be >= 1")
    quick = bool(ns.quick)
    options = Options(
        groups=ns.groups or ((20,) if quick else (200, 1000)),
        latencies_ms=ns.latency_ms or ((0.0,) if quick else (0.0, 5.0)),
        modes=ns.modes,
        working_set=max(1, ns.working_set or (1000 if quick else 20_000)),
        storm_seconds=ns.storm_seconds if ns.storm_seconds is not None else (0.3 if quick else 2.0),
        storm_threads=ns.storm_threads,
        peer_storm_threads=ns.peer_storm_threads or ns.storm_threads,
        miss_refresh_interval=ns.miss_refresh_interval,
        repeat=max(1, ns.repeat if ns.repeat is not None else (3 if quick else 7)),
        budget_s=0.03 if quick else 0.3,
        runs=1 if quick else 3,
        sections=tuple(s for s in ns.only if s not in ns.skip),
        quick=quick,
        passes=ns.passes or (2 if ns.write_results else 1),
        scope_pods=max(100, ns.scope_pods or (2_000 if quick else 20_000)),
        bigcache_pods=max(100, ns.bigcache_pods or (1_000 if quick else 20_000)),
    )
    if options.storm_seconds <= 0:
        parser.error("--storm-seconds must be positive")
    output: Path | None = RESULTS if ns.write_results else ns.output
    return options, output


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def _extra_rows(name: str, ctx: Context) -> list[Row]:
    """Rows of an optional module (skipped when absent; a failure becomes a row, never aborts the run)."""
    try:
        module = importlib.import_module(EXTRA_SECTIONS[name])
    except ModuleNotFoundError as exc:
        if exc.name != EXTRA_SECTIONS[name]:
            raise
        _progress(f"{name}: skipped ({EXTRA_SECTIONS[name]} does not exist)")
        return []
    try:
        if hasattr(module, "bench_rows"):
            rows = list(module.bench_rows(ctx))
            for row in rows:
                row.issue = row.issue or EXTRA_ISSUES.get(name, "")
            return rows
        results = module.run(ctx.url, 200 if ctx.quick else 2000)  # bench.dynamic_bench's older interface
        return [_older_row(name, item) for item in results]
    except Exception as exc:  # another helper's module: report, never abort the whole run
        return [Row(f"{name} ({EXTRA_SECTIONS[name]})", None, None, "µs",
                    note=f"failed: {type(exc).__name__}: {exc}")]


def _older_row(section: str, item: dict[str, Any]) -> Row:
    """A :class:`Row` of a result of ``bench.dynamic_bench``'s older interface (its target: ``bound_us``)."""
    ours, bound = item.get("ours_us"), item.get("bound_us")
    row = Row(str(item.get("name", section)), ours, item.get("peer_us"), "µs", note=EXTRA_SECTIONS[section])
    if bound is not None:
        row.target, row.bound = f"ours ≤ {bound:g} µs", bound
        row.passed = ours is not None and ours <= bound
    return row


def _cluster_sections(ctx: Context, wanted: set[str], largest: bool) -> list[Row]:
    o, bench, n = ctx.options, ctx.bench, ctx.bench.groups
    rows: list[Row] = []
    bench.set_mode("aggregated")
    if "full" in wanted:
        _progress(f"full discovery, N={n}")
        rows += full_discovery_rows(bench, ctx.factory, runs=o.runs)
    if "warm" in wanted:
        _progress(f"one question repeated and the peers' fair forms, N={n}")
        peer = warm_peer(bench, ctx.factory, ctx.peer_cache)
        rows += repeated_rows(bench, ctx.factory, peer, budget_s=o.budget_s, repeat=o.repeat)
    if wanted & {"questions", "refresh"}:
        _progress(f"first-time questions and the working set, N={n}")
        knobs = QuestionBench(size=o.working_set, passes=1 if o.quick else 3,
                              peer_budget_s=0.05 if o.quick else 0.4)
        question, mapper, asked = question_rows(bench, ctx.factory, ctx.peer_cache, knobs, _progress)
        if "questions" in wanted:
            rows += question
        if "refresh" in wanted:
            _progress(f"a never-asked question after one group refreshed, N={n}")
            rows += never_asked_after_refresh_rows(bench, mapper, asked, samples=20 if o.quick else 300,
                                                   budget_s=1.0 if o.quick else 10.0)
            _progress(f"the question after one group refreshed, N={n}")
            rows += refresh_rows(bench, mapper, samples=10 if o.quick else 100, budget_s=1.0 if o.quick else 5.0)
    if "cold" in wanted:
        for mode in o.modes:
            for ms in o.latencies_ms:
                _progress(f"cold first lookup, {mode}, {ms:g} ms, N={n}")
                with latency(bench, ms):
                    bench.set_mode(mode)
                    rows += cold_rows(bench, ctx.factory, mode=mode, latency_ms=ms, runs=o.runs)
        bench.set_mode("aggregated")
    if "memory" in wanted and largest:
        _progress(f"memory, N={n}")
        rows += memory_rows(bench, ("tracemalloc",) if o.quick else ("tracemalloc", "rss"))
    return rows


def run(options: Options) -> list[Row]:
    """Run the selected sections once and return their rows (the loopback server only listens on 127.0.0.1)."""
    rows: list[Row] = []
    wanted = set(options.sections)
    smallest = min(options.groups)
    per_cluster = {"full", "warm", "questions", "refresh", "cold", "memory"}
    on_smallest = {"storm", "cli", *EXTRA_SECTIONS}
    with tempfile.TemporaryDirectory(prefix="restmapper-bench-") as cache_dir:
        factory = PeerFactory(cache_dir)
        sizes = sorted(set(options.groups))
        for n in sizes:
            if not wanted & per_cluster and not (n == smallest and wanted & on_smallest):
                continue
            _progress(f"building a cluster of {n} CRD groups")
            bench = build_cluster(n)
            with served(bench, 0.0):
                ctx = Context(bench, factory, options, _progress)
                rows += _cluster_sections(ctx, wanted, largest=n == max(sizes))
                if n != smallest:
                    continue
                bench.set_mode("aggregated")
                if "storm" in wanted:
                    _progress(f"miss storm, N={n}, {options.storm_seconds:g} s per side and mode")
                    rows += storm_rows(bench.cluster, bench.url, n, factory, duration_s=options.storm_seconds,
                                       interval_s=options.miss_refresh_interval, threads=options.storm_threads,
                                       peer_threads=options.peer_storm_threads)
                    bench.set_mode("aggregated")
                if "cold" in wanted:
                    for mode in options.modes:
                        for ms in (ms for ms in options.latencies_ms if ms > 0):
                            _progress(f"cold lookup reading both root documents, {mode}, {ms:g} ms")
                            rows += root_documents_rows(factory, mode=mode, latency_ms=ms, runs=options.runs)
                if "cli" in wanted:
                    _progress("command-line start-up")
                    rows += cli_rows(bench, runs=1 if options.quick else 5)
                for name in EXTRA_SECTIONS:
                    if name in wanted:
                        _progress(f"{name} ({EXTRA_SECTIONS[name]})")
                        bench.set_mode("aggregated")
                        rows += _extra_rows(name, ctx)
    if "import" in wanted:
        _progress("import time")
        rows += import_rows(runs=2 if options.quick else 5)
    for row in rows:
        row.key = row.key or row.name
    return rows


def merge_passes(passes: Sequence[Sequence[Row]]) -> list[Row]:
    """Return the first pass's rows with the later passes' values of the same rows attached (by ``key``)."""
    first = list(passes[0])
    for later in passes[1:]:
        by_key = {r.key: r for r in later}
        for row in first:
            other = by_key.get(row.key)
            row.others.append(other.ours if other else None)
            row.other_results.append(other.passed if other else None)
    return first


def _machine() -> str:
    return (f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()}, "
            f"Python {platform.python_version()} ({platform.python_implementation()})")


def _load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _misses(rows: Sequence[Row]) -> list[str]:
    out = []
    for r in rows:
        if r.passed is False or False in r.other_results:
            which = "" if r.passed is False else " (in a later pass only: noise or a real regression)"
            issue = f" Addressed by {r.issue}." if r.issue else ""
            out.append(f"- **{r.name}**{which}: {r.shortfall() or 'missed in a later pass'}; target {r.target}."
                       f"{issue}")
    return out


def report(rows: Sequence[Row], options: Options, command: str, elapsed_s: float, loads: Sequence[str]) -> str:
    """Return the markdown report: date, machine and load, command, options, the table and the misses."""
    import kubernetes

    passed = sum(1 for r in rows if r.passed)
    targets = sum(1 for r in rows if r.passed is not None)
    misses = _misses(rows)
    return "\n".join([
        "# kube-restmapper benchmark results",
        "",
        "Generated by `python -m bench` (bench/run.py); do not edit by hand.",
        "",
        f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {_machine()}",
        f"- Load average (1, 5, 15 min) at the start of each pass and at the end: {'; '.join(loads)} "
        f"(on {os.cpu_count()} CPUs: a load above that count means the numbers are inflated by other work)",
        f"- Peer: kubernetes (Python client) {kubernetes.__version__}, `kubernetes.dynamic`",
        f"- Command: `{command}`",
        f"- Groups: {', '.join(map(str, options.groups))} (shaped after the CRD fixtures, see bench/shapes.py); "
        f"cold rows in {', '.join(options.modes)} mode at {', '.join(f'{v:g}' for v in options.latencies_ms)} ms "
        f"added latency; working set {options.working_set:,} distinct questions; miss storm "
        f"{options.storm_seconds:g} s, {options.storm_threads} threads (peer {options.peer_storm_threads})",
        f"- Passes: {options.passes}; run time {elapsed_s:.0f} s; targets met in the first pass: "
        f"{passed}/{targets}",
        "",
        "Ratio is peer / ours: above 1 means ours is faster, makes fewer requests or holds less memory. All numbers "
        "come from one machine talking to the testing kit's loopback server (`FakeCluster.serve()` on 127.0.0.1), "
        "which serves cached root documents as kube-apiserver does; the server's own time is shown apart in the "
        "cold rows. With several passes, *Spread* is (max - min) / min of ours over the passes: a miss within the "
        "spread may be noise, a miss in every pass is real.",
        "",
        render_table(rows),
        "",
        "## Missed targets",
        "",
        *(misses or ["None."]),
        "",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite, print the table (and write the report); return 0 (misses are reported, not fatal)."""
    options, output = parse_args(argv)
    start = time.perf_counter()
    loads = []
    passes = []
    for i in range(options.passes):
        loads.append(_load())
        if options.passes > 1:
            _progress(f"pass {i + 1}/{options.passes}")
        passes.append(run(options))
    loads.append(_load())
    rows = merge_passes(passes)
    elapsed = time.perf_counter() - start
    args = list(sys.argv[1:] if argv is None else argv)
    command = "python -m bench" + ("" if not args else " " + shlex.join(args))
    text = report(rows, options, command, elapsed, loads)
    print(text)
    if output is not None:
        output.write_text(text, encoding="utf-8")
        _progress(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
