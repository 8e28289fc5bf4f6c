"""How a failing list/watch is logged: a WARNING on the 1st, 2nd, 4th, 8th... failure in a row (with the count and
the last error) and at least every 300 s while it keeps failing, DEBUG in between, and one INFO when it works
again. A flapping endpoint (every watch ends at once) fails every few seconds for as long as it lasts: one line per
failure would flood the log, one line in all would hide that it is still failing."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
from helpers.store import cm, object_cache
from helpers.watch import make_mapper, running

from restmapper.testing import FakeCluster, ManualClock, ServedCluster
from restmapper.watch import Watcher


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


class Gate:
    """A ``sleep(stop, seconds)`` counting backoff waits; at the ``park``-th it parks until released (or stopped),
    and each wait first advances ``clock`` by ``step`` seconds when given one."""

    def __init__(self, park: int, clock: ManualClock | None = None, step: float = 0.0) -> None:
        self.waits = 0
        self.parked = threading.Event()
        self.release = threading.Event()
        self._park, self._clock, self._step = park, clock, step

    def __call__(self, stop: threading.Event, seconds: float) -> None:
        if self._clock is not None:
            self._clock.advance(self._step)
        self.waits += 1
        if self.waits >= self._park and not self.release.is_set():
            self.parked.set()
            while not (self.release.is_set() or stop.is_set()):
                stop.wait(0.01)


def _failing_lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "restmapper.watch" and r.levelno == level and "failing" in r.getMessage()]


def test_failures_in_a_row_warn_at_powers_of_two_and_healing_is_logged(
        served: ServedCluster, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="restmapper.watch")
    cluster = served.cluster
    gate = Gate(park=9)
    with object_cache(served, sleep=gate) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
        cluster.end_watches_at_once("configmaps")
        cluster.drop_watches()
        assert gate.parked.wait(10)
        warnings = _failing_lines(caplog, logging.WARNING)
        assert [w.split(" failing (")[1].split(" failure")[0] for w in warnings] == ["1", "2", "4", "8"], warnings
        assert "watch ended after" in warnings[-1]  # the last error is named
        assert len(_failing_lines(caplog, logging.DEBUG)) == 5  # the 3rd, 5th, 6th, 7th and 9th
        cluster.end_watches_at_once("configmaps", on=False)
        gate.release.set()
        assert cluster.wait_for_watchers(1, 10)
        cluster.apply_object(cm("healed"))  # a change the open watch delivers
        assert cache.wait_for("cm", "healed", "default", timeout=10)
    # Stopped (its thread joined): the reflector has logged what followed that event.
    healed = [r for r in caplog.records if r.name == "restmapper.watch" and r.levelno == logging.INFO
                  and "works again" in r.getMessage()]
    assert len(healed) == 1 and "after 9 failures" in healed[0].getMessage()


def test_a_failing_watch_warns_at_least_every_five_minutes(
        served: ServedCluster, caplog: pytest.LogCaptureFixture) -> None:
    """Each backoff lasts 200 s by the watcher's clock: besides the 1st, 2nd, 4th and 8th failure, the 6th warns
    (400 s after the 4th's warning)."""
    caplog.set_level(logging.DEBUG, logger="restmapper.watch")
    cluster = served.cluster
    clock = ManualClock()
    gate = Gate(park=8, clock=clock, step=200.0)
    watcher = Watcher(make_mapper(served.url), sleep=gate, watch_apiservices=False, clock=clock)
    with running(watcher, cluster, 1):
        cluster.end_watches_at_once()
        cluster.drop_watches()
        assert gate.parked.wait(10)
    warnings = _failing_lines(caplog, logging.WARNING)
    assert [w.split(" failing (")[1].split(" failure")[0] for w in warnings] == ["1", "2", "4", "6", "8"], warnings
