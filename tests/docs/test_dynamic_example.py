"""The drop-in example runs, shows upstream wedged on the removed version and ours recovering."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dynamic_drop_in.py"


def test_dynamic_drop_in_example_recovers() -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SelfHealingDiscoverer    last successful list: example.com/v1" in proc.stdout
    assert "upstream LazyDiscoverer  last successful list: example.com/v1alpha1" in proc.stdout
