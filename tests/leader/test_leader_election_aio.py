"""AsyncLeaderElector: the same election on an asyncio loop (Lease requests off the loop, callbacks awaited)."""

from __future__ import annotations

import asyncio
import contextlib

from helpers.leader import NAME, NAMESPACE, holder, lease, mapper_for

from restmapper.leader import AsyncLeaderElector
from restmapper.testing import FakeCluster, ManualClock


def test_turns_callbacks_and_release_on_an_event_loop() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    events: list[str] = []

    async def stopped() -> None:  # a coroutine callback is awaited before the release
        await asyncio.sleep(0)
        events.append(f"a stopped, holder {holder(cluster)}")

    async def scenario() -> None:
        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock,
                               on_started_leading=lambda: events.append("a started"), on_stopped_leading=stopped)
        b = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="b", clock=clock,
                               on_new_leader=lambda who: events.append(f"b sees {who}"),
                               on_started_leading=lambda: events.append("b started"))
        assert await a.tick() == 2.0
        await b.tick()
        assert a.is_leader and not b.is_leader
        await a.stop()
        assert not a.is_leader
        clock.advance(2.0)
        await b.tick()
        assert b.is_leader and b.leader == "b" and b.lease_transitions == 1

    asyncio.run(scenario())
    assert events == ["a started", "b sees a", "a stopped, holder a", "b sees b", "b started"]


def test_start_and_stop_in_a_task() -> None:
    cluster = FakeCluster()

    async def scenario() -> None:
        started = asyncio.Event()
        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", on_started_leading=started.set,
                               lease_duration=3.0, renew_deadline=2.0, retry_period=0.05)
        async with a:
            await asyncio.wait_for(started.wait(), 10)
            assert a.is_leader
        assert not a.is_leader

    asyncio.run(scenario())
    assert lease(cluster)["spec"]["holderIdentity"] == ""


def test_a_cancelled_run_stops_and_releases() -> None:
    cluster = FakeCluster()

    async def scenario() -> None:
        started = asyncio.Event()
        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", on_started_leading=started.set,
                               lease_duration=3.0, renew_deadline=2.0, retry_period=0.05)
        task = asyncio.create_task(a.run())
        await asyncio.wait_for(started.wait(), 10)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert not a.is_leader

    asyncio.run(scenario())
    assert holder(cluster) == ""
