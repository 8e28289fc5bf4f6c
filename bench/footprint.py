"""Memory held after one lookup and with everything loaded (tracemalloc and RSS, fresh interpreters), import
time and command-line start-up (fresh processes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.cluster import BenchCluster
from bench.measure import Row

__all__ = ["cli_rows", "import_rows", "memory_rows"]

_REPO = Path(__file__).resolve().parents[1]
_MIB = 1024.0 * 1024.0
ISSUE_MEMORY = "issue 10 (lazy conversion, index)"
_CLI_SLOWDOWN = 2.0


def _memproc(bench: BenchCluster, side: str, state: str, method: str, extra: Sequence[str]) -> float:
    out = subprocess.run([sys.executable, "-m", "bench.memproc", bench.url, side, state, method, *extra],
                         cwd=_REPO, capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"bench.memproc {side} {state} {method} failed: {out.stderr.strip()[-500:]}")
    return float(json.loads(out.stdout.strip().splitlines()[-1])["bytes"]) / _MIB


def memory_rows(bench: BenchCluster, methods: Sequence[str] = ("tracemalloc", "rss")) -> list[Row]:
    """Return the memory a new client holds after one lookup and with every group loaded, ours against the peer.

    Aggregated mode, and every group loaded again in legacy mode. One lookup: a GVK of a CRD group; the peer is a
    LazyDiscoverer client. Everything: ours asks one question per group and expands ``all``; the peer is an
    EagerDiscoverer's init. Both sides discover from the served cluster in the measured window, with empty caches:
    a peer started from its cache file instead ends up holding other objects (2.2 MiB more traced at N=1000,
    0.8 MiB more RSS), which is not the same measurement.
    """
    bench.set_mode("aggregated")
    g = bench.shapes[min(7, bench.groups - 1)]
    k = g.kinds[0]
    one = ["--group", g.name, "--kind", k.kind, "--version", k.versions[0]]
    everything = ["--groups", str(bench.groups)]
    rows = []
    for state, label, ours_args, peer_args in (
        ("one", f"after one lookup `rest_mapping(GroupKind('{g.name}','{k.kind}'), '{k.versions[0]}')`", one, one),
        ("all", "with every group loaded", everything, everything),
    ):
        for method, how in (("tracemalloc", "tracemalloc growth over a second build in a fresh interpreter"),
                            ("rss", "RSS growth of a fresh interpreter from imports done to client built")):
            if method not in methods:
                continue
            ours = _memproc(bench, "ours", state, method, ours_args)
            peer = _memproc(bench, "peer", state, method, peer_args)
            peer_form = ("LazyDiscoverer after the same lookup" if state == "one"
                         else "EagerDiscoverer init (empty cache file, as ours starts empty)")
            rows.append(Row(f"memory {label}, aggregated, N={bench.groups} ({method})", ours, peer, "MiB",
                            target="ours ≤ the peer's", passed=ours <= peer, issue=ISSUE_MEMORY, min_ratio=1.0,
                            note=f"{how}; peer: {peer_form}"))
    bench.set_mode("legacy")
    try:
        for method, how in (("tracemalloc", "tracemalloc growth over a second build in a fresh interpreter"),
                            ("rss", "RSS growth of a fresh interpreter from imports done to client built")):
            if method not in methods:
                continue
            ours = _memproc(bench, "ours", "all", method, everything)
            peer = _memproc(bench, "peer", "all", method, everything)
            rows.append(Row(f"memory with every group loaded, legacy, N={bench.groups} ({method})", ours, peer,
                            "MiB", target="ours ≤ the peer's", passed=ours <= peer,
                            issue="issue 26 (legacy mode holds no more than the peer)", min_ratio=1.0,
                            note=f"{how}; the server speaks legacy discovery only, so ours reads every group "
                                 "version document as the peer does; peer: EagerDiscoverer init (empty cache file)"))
    finally:
        bench.set_mode("aggregated")
    return rows


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


def _wall(argv: Sequence[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, int]:
    best, code = float("inf"), 0
    for _ in range(max(runs, 1)):
        t0 = time.perf_counter()
        proc = subprocess.run(list(argv), cwd=_REPO, capture_output=True, timeout=120, check=False, env=env)
        best = min(best, time.perf_counter() - t0)
        code = proc.returncode
    return best, code


def _bytecode_note() -> str:
    """Whether the timed processes load restmapper from cached bytecode or compile its source on every run.

    With ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__`` (an editable install that was never byte-compiled)
    every run compiles restmapper's source (some 600 kB on the kubeconfig path), which an installed wheel (pip
    byte-compiles at install) and kubectl never pay: said in the note, so that figures taken either way are compared
    as what they are.
    """
    import importlib.util

    import restmapper.cli._app as probe

    origin = probe.__file__
    cached = origin is not None and Path(importlib.util.cache_from_source(origin)).exists()
    if cached or not (sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return "restmapper bytecode cached"
    return "restmapper source compiled on every run (PYTHONDONTWRITEBYTECODE, no __pycache__)"


_CLI_ISSUE = ("no open issue (the CLI start-up work of this round; Python with `import kubernetes` alone takes "
              "about 230 ms of it)")


def _byte_compile() -> str:
    """Byte-compile restmapper's package, as ``pip install`` does for a wheel (and has done for ``kubernetes``),
    so that the timed processes do not compile its source on every run; the note for the rows."""
    import compileall

    import restmapper

    folder = Path(restmapper.__file__).parent
    if compileall.compile_dir(str(folder), quiet=1, legacy=False):
        return "restmapper byte-compiled first, as pip does at install"
    return _bytecode_note()


def _restmapper() -> list[str]:
    script = Path(sys.executable).with_name("restmapper")
    return [str(script)] if script.exists() else [sys.executable, "-m", "restmapper.cli"]


def cli_rows(bench: BenchCluster | None, runs: int) -> list[Row]:
    """Return the wall time of command-line start-up, best of ``runs``, against kubectl when it is installed.

    ``restmapper --help`` against ``kubectl --help``; ``restmapper resolve --embedded deploy`` (builds the
    embedded cluster in-process, no network); with a served cluster, ``restmapper resolve --kubeconfig K deploy``
    against ``kubectl get deployments`` with a fresh discovery cache directory (kubectl also lists the objects).
    """
    kubectl = shutil.which("kubectl")
    ours_cmd = _restmapper()
    rows = []
    bytecode = _byte_compile()
    help_s, _ = _wall([*ours_cmd, "--help"], runs)
    kubectl_help = _wall([kubectl, "--help"], runs)[0] if kubectl else None
    row = Row("CLI start-up `restmapper --help` vs `kubectl --help` (start-up only: no discovery, no request)",
              help_s * 1e3, kubectl_help * 1e3 if kubectl_help else None, "ms",
              note=f"fresh process, best of {runs}; {bytecode}; prints help only: the served section times "
                   "`resolve deploy` and `api-resources` against a cluster served by another process",
              issue=_CLI_ISSUE)
    if kubectl_help:
        row.target = f"ours ≤ {_CLI_SLOWDOWN:g}x kubectl's"
        row.passed = help_s <= _CLI_SLOWDOWN * kubectl_help
        row.min_ratio = 1 / _CLI_SLOWDOWN
    rows.append(row)
    embedded_s, code = _wall([*ours_cmd, "resolve", "--embedded", "deploy"], runs)
    rows.append(Row("CLI `restmapper resolve --embedded deploy`", embedded_s * 1e3, None, "ms",
                    target="ours ≤ 500 ms", passed=embedded_s <= 0.5 and code == 0, bound=500.0,
                    issue=_CLI_ISSUE,
                    note=f"fresh process, best of {runs}; builds the embedded cluster in-process; {bytecode}; "
                         f"exit {code}"))
    if bench is not None and bench.url:
        with tempfile.TemporaryDirectory(prefix="restmapper-bench-cli-") as tmp:
            kubeconfig = os.path.join(tmp, "kubeconfig")
            with open(kubeconfig, "w", encoding="utf-8") as f:
                f.write(f"apiVersion: v1\nkind: Config\nclusters:\n- name: b\n  cluster:\n    server: {bench.url}\n"
                        "contexts:\n- name: b\n  context:\n    cluster: b\n    user: b\ncurrent-context: b\n"
                        "users:\n- name: b\n  user: {}\n")
            ours_s, code = _wall([*ours_cmd, "resolve", "--kubeconfig", kubeconfig, "deploy"], runs)
            peer_s = None
            if kubectl:
                times = []
                for i in range(max(runs, 1)):
                    times.append(_wall([kubectl, "--kubeconfig", kubeconfig, "--cache-dir",
                                        os.path.join(tmp, f"cache-{i}"), "get", "deployments"], 1)[0])
                peer_s = min(times)
            row = Row(f"CLI `restmapper resolve --kubeconfig K deploy` vs `kubectl get deployments`, "
                      f"N={bench.groups}", ours_s * 1e3, peer_s * 1e3 if peer_s else None, "ms",
                      issue=_CLI_ISSUE,
                      note=f"fresh process, best of {runs}, aggregated discovery; kubectl with an empty discovery "
                           f"cache directory each time (it also lists the objects); {bytecode}; exit {code}")
            if peer_s:
                row.target = f"ours ≤ {_CLI_SLOWDOWN:g}x kubectl's"
                row.passed = ours_s <= _CLI_SLOWDOWN * peer_s and code == 0
                row.min_ratio = 1 / _CLI_SLOWDOWN
            rows.append(row)
    return rows
