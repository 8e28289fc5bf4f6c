"""on_started_leading runs on a thread (asyncio: a task) of its own, as client-go's OnStartedLeading goroutine:
renewals go on while it runs; when leadership ends the elector waits for it (at most renew_deadline) before
on_stopped_leading and the release."""

from __future__ import annotations

import asyncio
import threading

from helpers.leader import LEASE_PATH, NAME, NAMESPACE, holder, mapper_for

from restmapper.leader import AsyncLeaderElector, LeaderElector
from restmapper.testing import FakeCluster, ManualClock

TIMING = {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}


def _puts(cluster: FakeCluster) -> int:
    return sum(1 for r in cluster.requests if r.method == "PUT" and r.path == LEASE_PATH)


def test_a_blocking_on_started_leading_does_not_stop_renewals() -> None:
    cluster, clock = FakeCluster.embedded(), ManualClock()
    entered, release, returned = threading.Event(), threading.Event(), threading.Event()
    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock, **TIMING,
                      on_started_leading=lambda: (entered.set(), release.wait(10), returned.set()))
    a.tick()
    assert entered.wait(10) and not returned.is_set()  # the turn ended while the controller runs, and blocks
    for _ in range(8):  # 16 s: past renew_deadline and lease_duration, renewed every retry_period
        clock.advance(2.0)
        puts = _puts(cluster)
        a.tick()
        assert _puts(cluster) == puts + 1 and a.is_leader
    assert holder(cluster) == "a"
    release.set()
    a.stop()


def test_stop_waits_for_on_started_leading_before_on_stopped_leading_and_the_release() -> None:
    cluster, clock = FakeCluster.embedded(), ManualClock()
    entered, release = threading.Event(), threading.Event()
    events: list[str] = []

    def controller() -> None:
        entered.set()
        release.wait(10)  # a real controller watches is_leader; here the test says when to return
        events.append("controller returned")

    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock, **TIMING,
                      on_started_leading=controller, on_stopped_leading=lambda: events.append("stopped"))
    a.tick()
    assert entered.wait(10)
    puts = _puts(cluster)
    stopper = threading.Thread(target=a.stop)
    stopper.start()
    stopper.join(0.2)  # bounded look: stop() still waits for the controller
    assert stopper.is_alive() and not a.is_leader
    assert events == [] and _puts(cluster) == puts and holder(cluster) == "a"
    release.set()
    stopper.join(10)
    assert not stopper.is_alive()
    assert events == ["controller returned", "stopped"] and holder(cluster) == ""


def test_an_on_started_leading_that_never_returns_is_waited_for_at_most_renew_deadline() -> None:
    cluster, clock = FakeCluster.embedded(), ManualClock()
    entered, release, returned = threading.Event(), threading.Event(), threading.Event()
    stopped: list[str] = []
    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock, lease_duration=1.0,
                      renew_deadline=0.05, retry_period=0.01, on_stopped_leading=lambda: stopped.append("stopped"),
                      on_started_leading=lambda: (entered.set(), release.wait(30), returned.set()))
    a.tick()
    assert entered.wait(10) and not returned.is_set()
    try:
        assert a.stop(timeout=10)
        assert stopped == ["stopped"] and holder(cluster) == ""
    finally:
        release.set()


def test_async_a_blocking_on_started_leading_does_not_stop_renewals_and_is_waited_for() -> None:
    async def scenario() -> None:
        cluster, clock = FakeCluster.embedded(), ManualClock()
        entered, release = asyncio.Event(), asyncio.Event()
        events: list[str] = []

        async def controller() -> None:
            entered.set()
            await release.wait()
            events.append("controller returned")

        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock, **TIMING,
                               on_started_leading=controller, on_stopped_leading=lambda: events.append("stopped"))
        await a.tick()
        await asyncio.wait_for(entered.wait(), 10)
        for _ in range(8):
            clock.advance(2.0)
            puts = _puts(cluster)
            await a.tick()
            assert _puts(cluster) == puts + 1 and a.is_leader
        stopper = asyncio.create_task(a.stop())
        await asyncio.sleep(0)  # let stop() begin: it waits for the controller (nothing else runs it forward)
        done, _ = await asyncio.wait({stopper}, timeout=0.2)
        assert not done and events == [] and holder(cluster) == "a" and not a.is_leader
        release.set()
        await asyncio.wait_for(stopper, 10)
        assert events == ["controller returned", "stopped"] and holder(cluster) == ""

    asyncio.run(scenario())
