"""Release hygiene a user notices: the package logs nowhere by itself and runs as ``python -m restmapper``."""

from __future__ import annotations

import logging
import subprocess
import sys

import restmapper


def test_library_logger_has_a_null_handler() -> None:
    handlers = logging.getLogger("restmapper").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)
    assert restmapper.__name__ == "restmapper"


def test_python_dash_m_restmapper_runs_the_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "restmapper", "resolve", "--embedded", "hpa"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "horizontalpodautoscalers" in done.stdout and "autoscaling" in done.stdout
