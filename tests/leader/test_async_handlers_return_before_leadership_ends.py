"""A coroutine handler of the asyncio cache bound to a leader elector returns before leadership ends, as a plain
handler of the threaded cache does: the elector's on_stopped_leading (and its release of the Lease) comes after the
coroutine in progress returned, or, past the elector's renew_deadline, after it was cancelled. Both electors:
AsyncLeaderElector on the loop, LeaderElector on a thread of its own."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from helpers.leader import NAME, NAMESPACE, candidate, mapper_for
from helpers.store import cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.leader import AsyncLeaderElector
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ManualClock

LOOK = 0.2  # seconds: a bounded look that something is still waiting (never a wait for a race to end)


def test_a_lost_lease_awaits_the_running_coroutine_before_on_stopped_leading() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))

    async def scenario(cache: ObjectCache) -> None:
        events: list[str] = []
        entered, release = asyncio.Event(), asyncio.Event()
        elector = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="me", clock=clock,
                                     on_stopped_leading=lambda: events.append("stopped"))

        async def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            entered.set()
            await release.wait()
            events.append("handler returned")

        await AsyncObjectCache(cache).add_handler("configmaps", on_update=on_update, while_leading=elector)
        assert await asyncio.to_thread(cache.wait_for_sync, "configmaps", timeout=10)  # x=1 is an update
        await elector.tick()
        cluster.apply_object(cm("a", x="1"))
        await asyncio.wait_for(entered.wait(), 10)
        cluster.steal_lease(NAME, NAMESPACE, "other")
        clock.advance(2.0)
        losing = asyncio.create_task(elector.tick())
        done, _ = await asyncio.wait({losing}, timeout=LOOK)
        assert not done and events == []  # the turn waits for the handler
        release.set()
        await asyncio.wait_for(losing, 10)
        assert events == ["handler returned", "stopped"]
        await elector.stop()

    with cluster.serve() as served, object_cache(served) as cache:
        asyncio.run(scenario(cache))


def test_a_coroutine_still_running_at_the_renew_deadline_is_cancelled_before_on_stopped_leading() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))

    async def scenario(cache: ObjectCache) -> None:
        events: list[str] = []
        entered = asyncio.Event()
        elector = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="me", clock=clock,
                                     lease_duration=1.0, renew_deadline=0.3, retry_period=0.1,
                                     on_stopped_leading=lambda: events.append("stopped"))

        async def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            entered.set()
            try:
                await asyncio.Event().wait()  # never returns by itself
            except asyncio.CancelledError:
                events.append("handler cancelled")
                raise

        async_cache = AsyncObjectCache(cache)
        await async_cache.add_handler("configmaps", on_update=on_update, while_leading=elector)
        assert await asyncio.to_thread(cache.wait_for_sync, "configmaps", timeout=10)
        await elector.tick()
        cluster.apply_object(cm("a", x="1"))
        await asyncio.wait_for(entered.wait(), 10)
        informer = await async_cache.informer("configmaps")
        errors = informer.stats.handler_errors
        cluster.steal_lease(NAME, NAMESPACE, "other")
        clock.advance(2.0)
        await asyncio.wait_for(elector.tick(), 10)
        assert events == ["handler cancelled", "stopped"]
        assert informer.stats.handler_errors == errors + 1  # counted: it did not return in time
        await elector.stop()

    with cluster.serve() as served, object_cache(served) as cache:
        asyncio.run(scenario(cache))


def test_a_threaded_elector_losing_the_lease_waits_for_the_coroutine_on_the_loop() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))
    leader = candidate(cluster, clock, "A")

    async def scenario(cache: ObjectCache) -> None:
        entered, release = asyncio.Event(), asyncio.Event()
        returned = threading.Event()

        async def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            entered.set()
            await release.wait()
            returned.set()

        await AsyncObjectCache(cache).add_handler("configmaps", on_update=on_update, while_leading=leader.elector)
        assert await asyncio.to_thread(cache.wait_for_sync, "configmaps", timeout=10)
        await asyncio.to_thread(leader.tick)
        cluster.apply_object(cm("a", x="1"))
        await asyncio.wait_for(entered.wait(), 10)
        cluster.steal_lease(NAME, NAMESPACE, "other")
        clock.advance(2.0)
        ticker = threading.Thread(target=leader.elector.tick)
        ticker.start()
        await asyncio.to_thread(ticker.join, LOOK)
        assert ticker.is_alive() and "stopped" not in leader.events
        release.set()
        await asyncio.to_thread(ticker.join, 10)
        assert not ticker.is_alive() and returned.is_set() and leader.events[-1] == "stopped"
        leader.elector.stop()

    with cluster.serve() as served, object_cache(served) as cache:
        asyncio.run(scenario(cache))



def test_a_coroutine_that_stops_its_elector_is_not_waited_for_nor_cancelled() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))

    async def scenario(cache: ObjectCache) -> None:
        returned = asyncio.Event()
        elector = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="me", clock=clock)

        async def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            await elector.stop()  # renew_deadline is 10 s: a wait for itself would not return in time
            returned.set()

        async_cache = AsyncObjectCache(cache)
        await async_cache.add_handler("configmaps", on_update=on_update, while_leading=elector)
        assert await asyncio.to_thread(cache.wait_for_sync, "configmaps", timeout=10)
        await elector.tick()
        cluster.apply_object(cm("a", x="1"))
        await asyncio.wait_for(returned.wait(), 5)
        assert not elector.is_leader
        assert (await async_cache.informer("configmaps")).stats.handler_errors == 0

    with cluster.serve() as served, object_cache(served) as cache:
        asyncio.run(scenario(cache))
