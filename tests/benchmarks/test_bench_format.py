"""The bench report says why a target was missed in numbers a reader can check."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.measure import Row, render_table  # noqa: E402
from bench.storm import StormResult, _note  # noqa: E402


def test_a_miss_just_over_its_bound_prints_the_digits_that_miss() -> None:
    row = Row("cli", 500.4, None, "ms", target="ours ≤ 500 ms", passed=False, bound=500.0)
    assert row.shortfall() == "ours 500.4 ms is just over the bound 500 ms"
    assert "| 500.4 ms |" in render_table([row])
    far = Row("cli", 612.3, None, "ms", target="ours ≤ 500 ms", passed=False, bound=500.0)
    assert far.shortfall() == "ours 612 ms is 1.2x the bound 500 ms"


def test_ratios_print_with_two_significant_digits() -> None:
    row = Row("cold", 1.0, 0.3, "ms", target="ours ≤ 1.5x the peer's", passed=False, min_ratio=1 / 1.5)
    assert row.shortfall() == "ratio 0.3x where ≥ 0.67x is wanted (2.2x short)"
    assert "| 0.3x |" in render_table([row])


def test_storm_errors_say_whose_they_are() -> None:
    note = _note(StormResult(93, {"KeyError": 24}, True), 4, "peer")
    assert note == "4 threads, 93 lookups; peer errors: KeyError x24"
