"""Election failures are logged once per interval per reason, with a count: an election retries every retry_period
(about 2 s), and a failing server must not write a warning each time. Repeats in between are at DEBUG; the next
warning of that reason says how many there were; another reason is warned about at once. Driven by a ManualClock."""

from __future__ import annotations

import logging

import pytest
from helpers.leader import LEASE_PATH, candidate

from restmapper.testing import FakeCluster, ManualClock

EVERY = 60.0  # seconds: the documented interval


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "restmapper.leader" and r.levelno >= logging.WARNING]


def test_a_failing_renewal_warns_once_per_interval_with_the_count_of_repeats(
        caplog: pytest.LogCaptureFixture) -> None:
    cluster, clock = FakeCluster(), ManualClock()
    leader = candidate(cluster, clock, "a")
    caplog.set_level(logging.DEBUG, "restmapper.leader")
    fault = cluster.inject(LEASE_PATH, status=500, body="etcdserver: request timed out")
    for _ in range(10):  # 10 attempts in 20 s
        leader.tick()
        clock.advance(2.0)
    assert len(warnings(caplog)) == 1
    assert "acquire or renew failed" in warnings(caplog)[0] and "HTTP 500" in warnings(caplog)[0]
    repeats = [r for r in caplog.records if r.levelno == logging.DEBUG and "acquire or renew failed" in r.message]
    assert len(repeats) == 9  # not lost: at DEBUG

    clock.advance(EVERY)  # the interval since the warning passed
    leader.tick()
    assert len(warnings(caplog)) == 2
    assert "9 more times since the last warning" in warnings(caplog)[1]

    fault.remove()
    cluster.inject(LEASE_PATH, status=503, body="unavailable")  # another reason: warned about at once
    clock.advance(2.0)
    leader.tick()
    assert len(warnings(caplog)) == 3 and "HTTP 503" in warnings(caplog)[2]
    assert "more times" not in warnings(caplog)[2]
    assert leader.elector.last_error is not None  # every failure is still recorded


def test_a_failure_after_a_quiet_interval_warns_without_a_count(caplog: pytest.LogCaptureFixture) -> None:
    cluster, clock = FakeCluster(), ManualClock()
    leader = candidate(cluster, clock, "a")
    caplog.set_level(logging.DEBUG, "restmapper.leader")
    fault = cluster.inject(LEASE_PATH, status=500, body="etcdserver: request timed out", times=1)
    leader.tick()
    assert fault.hits == 1
    clock.advance(2.0)
    leader.tick()  # works
    assert leader.elector.is_leader
    clock.advance(EVERY + 1.0)
    cluster.inject(LEASE_PATH, status=500, body="etcdserver: request timed out", times=1)
    leader.tick()
    assert len(warnings(caplog)) == 2 and "more times" not in warnings(caplog)[1]
