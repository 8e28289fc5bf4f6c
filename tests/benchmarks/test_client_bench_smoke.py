"""Smoke test of the read-your-writes benchmark: ``python bench/client_bench.py --quick`` prints every row.

No timing is asserted (numbers depend on the machine); the rows, and the zero-stale-reads verdict, are.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_client_bench_quick_prints_its_rows_and_reads_nothing_stale() -> None:
    proc = subprocess.run([sys.executable, "bench/client_bench.py", "--quick"], cwd=REPO, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 4
    stale = next(r for r in rows if r.startswith("| read-your-writes: stale reads"))
    assert "| 0.000 |" in stale and "PASS" in stale
    assert any("wait added per update (median) vs one watch-event delivery" in r for r in rows)
