"""Rows of the result table, timing helpers and the markdown rendering."""

from __future__ import annotations

import math
import time
import timeit
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Result", "Row", "per_call_us", "render_results", "render_table", "seconds_best"]

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
        ratio_value: the ratio when it is not peer/ours of the two columns (e.g. computed on the same sampled
            questions on both sides while ``ours`` is the mean over more questions).
        issue: the issue that addresses a miss (shown with the miss in the report).
        key: a stable identity of the row across passes (defaults to ``name``).
        bound: the largest ``ours`` that meets the target, when the target has one (for "missed by how much").
        min_ratio: the smallest ratio that meets the target, when the target has one.
        others: ``ours`` of the same row in later passes of the run (for the spread).
        other_results: ``passed`` of the same row in later passes.
    """

    name: str
    ours: float | None
    peer: float | None
    unit: str
    target: str = ""
    passed: bool | None = None
    note: str = ""
    lower_is_better: bool = True
    ratio_value: float | None = None
    issue: str = ""
    key: str = ""
    bound: float | None = None
    min_ratio: float | None = None
    others: list[float | None] = field(default_factory=list)
    other_results: list[bool | None] = field(default_factory=list)

    def shortfall(self) -> str:
        """Say by how much a missed target is missed ("" when met or without a target)."""
        if self.passed is not False:
            return ""
        parts = []
        if self.bound is not None and self.ours is not None and self.ours > self.bound:
            ours, bound = _fmt_apart(self.ours, self.bound, self.unit), _fmt(self.bound, self.unit)
            over = self.ours / self.bound if self.bound else math.inf
            parts.append(f"ours {ours} is {_fmt_ratio(over)} the bound {bound}" if over >= 1.05
                         else f"ours {ours} is just over the bound {bound}")
        ratio = self.ratio
        if self.min_ratio is not None and (ratio is None or ratio < self.min_ratio):
            parts.append(f"ratio {_fmt_ratio(ratio)} where ≥ {_fmt_ratio(self.min_ratio)} is wanted"
                         + (f" ({_fmt_ratio(self.min_ratio / ratio)} short)" if ratio else ""))
        return "; ".join(parts) or "see the target"

    def spread(self) -> str:
        """The other passes' values and the relative spread of all passes ("" with one pass)."""
        values = [v for v in (self.ours, *self.others) if v is not None]
        if not self.others or len(values) < 2 or min(values) <= 0:
            return ""
        return f"{(max(values) - min(values)) / min(values) * 100:.0f}%"

    @property
    def ratio(self) -> float | None:
        """peer / ours (how many times better we are), None when either side is missing or ours is 0."""
        if self.ratio_value is not None:
            return self.ratio_value
        if self.ours is None or self.peer is None:
            return None
        if self.ours == 0:
            return math.inf if self.peer > 0 else None
        return self.peer / self.ours if self.lower_is_better else self.ours / self.peer

    @property
    def result(self) -> str:
        """``PASS``, ``MISS``, empty without a target, or e.g. ``PASS/MISS`` when the passes disagree."""
        results = [r for r in (self.passed, *self.other_results) if r is not None]
        if not results:
            return ""
        words = ["PASS" if r else "MISS" for r in results]
        return words[0] if len(set(words)) == 1 else "/".join(words)


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


def _fmt_apart(value: float, other: float, unit: str) -> str:
    """``value`` as :func:`_fmt` prints it, with more decimals while it would print as ``other`` does: a miss at
    500.4 ms against a bound of 500 ms reads ``500.4 ms``, not ``500 ms`` (targets compare exact values)."""
    text = _fmt(value, unit)
    if value == other or text != _fmt(other, unit) or unit in ("requests", "revalidations"):
        return text
    for decimals in range(1, 7):
        text = f"{value:.{decimals}f} {unit}"
        if float(f"{value:.{decimals}f}") != other:
            break
    return text


def _fmt_ratio(ratio: float | None) -> str:
    """A ratio with 2 significant digits (3 from 100 on would be noise: whole numbers there), e.g. ``0.67x``."""
    if ratio is None:
        return "—"
    if math.isinf(ratio):
        return "∞"
    if ratio >= 10:
        return f"{ratio:.0f}x"
    return f"{float(f'{ratio:.2g}'):g}x"


def render_table(rows: Iterable[Row]) -> str:
    """Return the rows as a markdown table (ratio = peer / ours: above 1 means we are better).

    With more than one pass, a column shows ours in the later passes and the spread (max - min) / min.
    """
    rows = list(rows)
    passes = any(r.others for r in rows)
    head = "| Benchmark | Ours | Peer | Ratio (peer/ours) | Target | Result |"
    rule = "|---|---:|---:|---:|---|:---:|"
    if passes:
        head += " Ours, later passes | Spread |"
        rule += "---:|---:|"
    lines = [head + " Notes |", rule + "---|"]
    for row in rows:
        ours = _fmt(row.ours, row.unit) if row.ours is None or row.bound is None else (
            _fmt_apart(row.ours, row.bound, row.unit))
        cells = [row.name, ours, _fmt(row.peer, row.unit), _fmt_ratio(row.ratio),
                 row.target, row.result]
        if passes:
            cells += [", ".join(_fmt(v, row.unit) for v in row.others), row.spread()]
        cells.append(row.note)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Result:
    """One measurement of a bench script run on its own (``python bench/<x>_bench.py``): ``ours`` against
    ``peer`` (None: informational), with the target in words and its verdict (None: no target)."""

    name: str
    ours: float
    peer: float | None
    unit: str
    target: str = ""
    passed: bool | None = None
    note: str = ""


def render_results(results: Iterable[Result], *, ours_format: str = ",.2f", peer_format: str = ",.1f") -> str:
    """Return ``results`` as the markdown table a bench script prints, with PASS/MISS; the numbers are written
    with the given format specs."""
    lines = ["| Benchmark | Ours | Reference | Unit | Target | Result | Note |", "|---|---|---|---|---|---|---|"]
    for r in results:
        verdict = "" if r.passed is None else ("PASS" if r.passed else "MISS")
        peer = format(r.peer, peer_format) if r.peer is not None else ""
        lines.append(f"| {r.name} | {format(r.ours, ours_format)} | {peer} | {r.unit} | {r.target} | {verdict} "
                     f"| {r.note} |")
    return "\n".join(lines)
