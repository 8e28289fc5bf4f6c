"""Rows of the result table, timing helpers and the markdown rendering."""

from __future__ import annotations

import math
import time
import timeit
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Row", "per_call_us", "render_table", "seconds_best"]

_MAX_NUMBER = 1_000_000


@dataclass
class Row:
    """One line of the table.

    Attributes:
        name: what is measured.
        ours: our number (None when not measured).
        peer: the peer's number (None when the peer has no equivalent or was not measured).
        unit: ``µs``, ``ms``, ``s``, ``requests``, ``MiB`` ...
        target: the target in words, empty for an informational row.
        passed: True/False against the target, None without a target.
        note: how it was measured, caveats.
        lower_is_better: for the ratio: True gives peer/ours (times, requests, bytes).
    """

    name: str
    ours: float | None
    peer: float | None
    unit: str
    target: str = ""
    passed: bool | None = None
    note: str = ""
    lower_is_better: bool = True

    @property
    def ratio(self) -> float | None:
        """peer / ours (how many times better we are), None when either side is missing or ours is 0."""
        if self.ours is None or self.peer is None:
            return None
        if self.ours == 0:
            return math.inf if self.peer > 0 else None
        return self.peer / self.ours if self.lower_is_better else self.ours / self.peer

    @property
    def result(self) -> str:
        """``PASS``, ``MISS`` or empty."""
        if self.passed is None:
            return ""
        return "PASS" if self.passed else "MISS"


def per_call_us(fn: Callable[[], Any], *, budget_s: float, repeat: int) -> float:
    """Return the best time of one call of ``fn`` in microseconds (min over ``repeat`` batches, GC disabled).

    The batch size is calibrated so that one batch takes about ``budget_s / repeat`` seconds (at least one call,
    at most a million), so the whole measurement is bounded by roughly ``budget_s`` plus calibration.
    """
    fn()
    timer = timeit.Timer(fn)
    per_batch = max(budget_s / max(repeat, 1), 1e-4)
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= per_batch / 4 or number >= _MAX_NUMBER:
            break
        number = min(_MAX_NUMBER, number * 4 if elapsed < per_batch / 40 else number * 2)
    best = elapsed / number
    if repeat > 1:
        number = max(1, min(_MAX_NUMBER, int(per_batch / max(best, 1e-9))))
        best = min([best, *(t / number for t in timer.repeat(repeat=repeat - 1, number=number))])
    return best * 1e6


def seconds_best(fn: Callable[[], Any], *, runs: int) -> tuple[float, Any]:
    """Run ``fn`` ``runs`` times; return the best wall time in seconds and the first run's result."""
    best = math.inf
    first: Any = None
    for i in range(max(runs, 1)):
        t0 = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - t0
        best = min(best, elapsed)
        if i == 0:
            first = value
    return best, first


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "requests" or unit == "revalidations":
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    if value == 0:
        return f"0 {unit}"
    digits = max(0, 2 - math.floor(math.log10(abs(value)))) if value else 0
    return f"{value:.{min(digits, 3)}f} {unit}"


def _fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "—"
    if math.isinf(ratio):
        return "∞"
    return f"{ratio:.1f}x" if ratio < 100 else f"{ratio:.0f}x"


def render_table(rows: Iterable[Row]) -> str:
    """Return the rows as a markdown table (ratio = peer / ours: above 1 means we are better)."""
    lines = [
        "| Benchmark | Ours | Peer | Ratio (peer/ours) | Target | Result | Notes |",
        "|---|---:|---:|---:|---|:---:|---|",
    ]
    for row in rows:
        cells = [row.name, _fmt(row.ours, row.unit), _fmt(row.peer, row.unit), _fmt_ratio(row.ratio),
                 row.target, row.result, row.note]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
