"""Smoke test of the object-cache benchmark: ``python bench/store_bench.py --quick`` prints every row.

No timing is asserted (numbers depend on the machine); the table's shape and verdict column are.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("kubernetes.watch")


def test_store_bench_quick_prints_its_rows() -> None:
    proc = subprocess.run([sys.executable, "bench/store_bench.py", "--quick"], cwd=REPO, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    names = "\n".join(rows)
    for expected in ("initial sync of 500 ConfigMaps vs bare paginated list (floor)", "naive kubernetes.watch",
                     "events/s to a handler, scripted transport", "memory per cached object", "warm get(GroupKind"):
        assert expected in names
    assert sum(("PASS" in r or "MISS" in r) for r in rows) == 6
