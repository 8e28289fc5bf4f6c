"""Smoke test of the benchmark suite: ``python -m bench`` runs end to end with tiny sizes and prints its table.

No timing is asserted (the numbers depend on the machine); the request-count targets are deterministic but are
the subject of the mapper's own tests, so only the table's shape is checked here.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("kubernetes.dynamic")


@pytest.fixture(autouse=True)
def _bench_needs_fixtures(fixtures_dir: Path) -> None:
    """The bench builds its clusters from ``../shared/fixtures/crds``: skip (with the reason) where it is absent."""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)


def test_python_m_bench_quick_prints_the_table(tmp_path: Path) -> None:
    # Sections whose quick run has a smoke test of its own (cli and served below; bigcache, client and store in
    # their files) are skipped here, and the scope section serves its smallest cluster (its quick size, 2,000 Pods
    # of 8 KB synced six times over, took most of this test's time).
    output = tmp_path / "RESULTS.md"
    proc = _run("-m", "bench", "--quick", "--groups", "3", "--storm-seconds", "0.1", "--storm-threads", "4",
                "--repeat", "1", "--working-set", "200", "--scope-pods", "100",
                "--skip", "import,cli,bigcache,served,store,client", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    assert lines[0].startswith("| Benchmark | Ours | Peer | Ratio")
    body = lines[2:]
    names = "\n".join(body)
    for expected in ("full discovery, aggregated", "full discovery, legacy", "memoized GVK `rest_mapping",
                     "(fair)", "(flattering)", "first-time GVK", "working set of", "after one group refreshed",
                     "cold first lookup", "aggregated, N=3, 0 ms latency: wall time", "legacy, N=3",
                     "memory after one lookup", "memory with every group loaded", "miss storm",
                     "GroupKind built in each call", "a never-asked question about another group",
                     "(spans every group)", "client time", "`resolve('Kind.group')`", "every shape",
                     "memory with every group loaded, legacy"):
        assert expected in names, expected
    assert "import restmapper" not in names
    assert "ANSWERS DIFFER" not in names
    assert "OUR ERRORS" not in names
    assert all(line.count("|") >= 8 for line in body)
    assert any("PASS" in line or "MISS" in line for line in body)
    text = output.read_text(encoding="utf-8")
    assert text.startswith("# kube-restmapper benchmark results")
    assert "Load average" in text and "## Missed targets" in text


def test_two_passes_show_each_rows_spread() -> None:
    proc = _run("-m", "bench", "--quick", "--groups", "2", "--only", "cold", "--modes", "legacy", "--passes", "2")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("|")]
    assert "Ours, later passes | Spread" in lines[0]
    assert any("%" in line for line in lines[2:])


def test_cli_start_up_rows_compare_with_kubectl() -> None:
    proc = _run("-m", "bench", "--quick", "--groups", "1", "--only", "cli")
    assert proc.returncode == 0, proc.stderr
    assert "CLI start-up `restmapper --help`" in proc.stdout
    assert "resolve --embedded deploy" in proc.stdout
    assert "exit 0" in proc.stdout


def test_served_section_times_commands_and_events_against_another_process() -> None:
    proc = _run("-m", "bench", "--quick", "--groups", "1", "--only", "served")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    names = "\n".join(rows)
    assert "failed:" not in names
    expected = ["pre-encoded watch lines sent by another process", "the kit writing in another process"]
    if shutil.which("kubectl"):
        expected += ["`restmapper resolve deploy` vs `kubectl get deployments`", "`kubectl get --raw /apis`",
                     "`restmapper api-resources` vs `kubectl api-resources`"]
    for label in expected:
        assert label in names, label


@pytest.mark.parametrize("args", [["--groups", "0"], ["--only", "nonsense"], ["--latency-ms", "-1"],
                                  ["--modes", "sideways"], ["--passes", "0"]])
def test_invalid_options_exit_with_status_2(args: list[str]) -> None:
    proc = _run("-m", "bench", *args)
    assert proc.returncode == 2
    assert "error" in proc.stderr


def test_script_entry_point_runs_one_section() -> None:
    proc = _run("bench/run.py", "--quick", "--groups", "2", "--only", "cold", "--repeat", "1", "--modes",
                "aggregated")
    assert proc.returncode == 0, proc.stderr
    assert "cold first lookup" in proc.stdout


def test_an_extra_section_module_adds_its_rows_and_a_missing_or_failing_one_does_not_abort(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    monkeypatch.syspath_prepend(str(REPO))
    from bench import run as bench_run
    from bench.measure import Row

    good = types.ModuleType("bench_fake_good")
    good.bench_rows = lambda ctx: [Row("fake row", 1.0, 2.0, "µs", issue="the object-cache issue")]  # type: ignore[attr-defined]
    bad = types.ModuleType("bench_fake_bad")

    def boom(ctx: object) -> list[Row]:
        raise RuntimeError("broken section")

    bad.bench_rows = boom  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench_fake_good", good)
    monkeypatch.setitem(sys.modules, "bench_fake_bad", bad)
    monkeypatch.setitem(bench_run.EXTRA_SECTIONS, "good", "bench_fake_good")
    monkeypatch.setitem(bench_run.EXTRA_SECTIONS, "bad", "bench_fake_bad")
    monkeypatch.setitem(bench_run.EXTRA_SECTIONS, "absent", "bench_fake_absent_module")
    ctx = object()
    assert [r.name for r in bench_run._extra_rows("good", ctx)] == ["fake row"]  # type: ignore[arg-type]
    failed = bench_run._extra_rows("bad", ctx)  # type: ignore[arg-type]
    assert len(failed) == 1 and "broken section" in failed[0].note
    assert bench_run._extra_rows("absent", ctx) == []  # type: ignore[arg-type]
