"""Stopping an elector while a Lease request is in flight: on_started_leading never runs after stop() returned,
is_leader never turns True after the end, the release is never undone by the interrupted turn, and a cancelled
asyncio task finishes the election as a stop.

A request is held in flight by the kit (an injected latency whose ``sleep`` hook acts, then lets it go on).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from helpers.kit import wait_until
from helpers.leader import LEASE_PATH, NAME, NAMESPACE, holder, lease_or_none, mapper_for

from restmapper.leader import AsyncLeaderElector, LeaderElector
from restmapper.testing import FakeCluster, ManualClock

TIMING = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


def held_cluster() -> tuple[FakeCluster, list[Callable[[], None]]]:
    """A cluster whose delayed requests run the hooks in ``during`` (first in, first run) before answering."""
    during: list[Callable[[], None]] = []

    def before_answer(_seconds: float) -> None:
        if during:
            during.pop(0)()

    return FakeCluster.embedded(sleep=before_answer), during


def elector(cluster: FakeCluster, events: list[str], **options: object) -> LeaderElector:
    return LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", **TIMING,  # type: ignore[arg-type]
                         on_started_leading=lambda: events.append("started"),
                         on_stopped_leading=lambda: events.append("stopped"), **options)  # type: ignore[arg-type]


def test_a_stop_during_the_acquire_on_the_election_thread_never_starts_leading() -> None:
    """As a signal handler interrupting run(): stop() returns, the acquire then completes, nobody leads."""
    cluster, during = held_cluster()
    events: list[str] = []
    a = elector(cluster, events, clock=ManualClock())
    returned: list[bool] = []
    during.append(lambda: returned.append(a.stop()))
    cluster.inject(LEASE_PATH, latency=1e-9, times=1)  # the acquire's first request
    a.tick()
    assert returned == [False]  # asked from inside the turn: the elector finished when the turn ended
    assert events == [] and not a.is_leader
    assert holder(cluster) in (None, "")


def test_run_stopped_during_the_acquire_returns_without_leading() -> None:
    cluster, during = held_cluster()
    events: list[str] = []
    a = elector(cluster, events)
    during.append(lambda: (a.stop(), events.append("stop() returned")))
    cluster.inject(LEASE_PATH, latency=1e-9, times=1)
    a.run()
    assert events == ["stop() returned"] and not a.is_leader
    assert holder(cluster) in (None, "")


def test_a_stop_during_a_renewal_is_not_undone_by_it() -> None:
    """The renewal in flight lands after stop(): the release follows it, and nothing re-acquires."""
    cluster, during = held_cluster()
    events: list[str] = []
    clock = ManualClock()
    a = elector(cluster, events, clock=clock)
    a.tick()
    assert wait_until(lambda: events == ["started"], 10)  # on_started_leading runs on its own thread
    clock.advance(0.5)
    during.append(lambda: events.append(f"stop() -> {a.stop()}"))
    cluster.inject(LEASE_PATH, latency=1e-9, times=1)  # the renewal
    a.tick()
    assert events == ["started", "stop() -> False", "stopped"]
    assert holder(cluster) == "" and not a.is_leader


def test_async_run_cancelled_during_a_renewal_releases_after_it() -> None:
    async def scenario() -> None:
        cluster, during = held_cluster()
        in_flight, go_on = threading.Event(), threading.Event()
        started = asyncio.Event()
        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", on_started_leading=started.set,
                               **TIMING)  # type: ignore[arg-type]
        task = asyncio.create_task(a.run())
        await started.wait()
        during.append(lambda: (in_flight.set(), go_on.wait(30)))
        cluster.inject(LEASE_PATH, latency=1e-9, times=1)  # the next renewal
        await asyncio.to_thread(in_flight.wait, 30)
        task.cancel()
        await asyncio.sleep(0)
        go_on.set()
        await asyncio.wait([task])
        await asyncio.get_running_loop().shutdown_default_executor()  # every worker thread ended
        assert task.cancelled()
        assert holder(cluster) == "" and not a.is_leader

    asyncio.run(scenario())


def test_async_run_cancelled_during_the_acquire_never_leads() -> None:
    async def scenario() -> None:
        cluster, during = held_cluster()
        in_flight, go_on = threading.Event(), threading.Event()
        events: list[str] = []
        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a",
                               on_started_leading=lambda: events.append("started"), **TIMING)  # type: ignore[arg-type]
        during.append(lambda: (in_flight.set(), go_on.wait(30)))
        cluster.inject(LEASE_PATH, latency=1e-9, times=1)  # the acquire's first request
        task = asyncio.create_task(a.run())
        await asyncio.to_thread(in_flight.wait, 30)
        task.cancel()
        await asyncio.sleep(0)
        go_on.set()
        await asyncio.wait([task])
        await asyncio.get_running_loop().shutdown_default_executor()
        assert events == [] and not a.is_leader
        assert lease_or_none(cluster) is None or holder(cluster) == ""

    asyncio.run(scenario())


def test_a_start_task_cancelled_by_asyncio_run_finishes_as_a_stop() -> None:
    cluster = FakeCluster.embedded()
    events: list[str] = []

    async def lead() -> AsyncLeaderElector:
        started = asyncio.Event()

        def on_started() -> None:
            events.append("started")
            started.set()

        a = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", on_started_leading=on_started,
                               on_stopped_leading=lambda: events.append("stopped"), **TIMING)  # type: ignore[arg-type]
        a.add_leadership_listener(lambda: events.append("listener started"),
                                  lambda: events.append("listener stopped"))
        await a.start()
        await started.wait()
        return a  # asyncio.run cancels the elector's task on the way out

    a = asyncio.run(lead())
    assert events == ["listener started", "started", "listener stopped", "stopped"]
    assert holder(cluster) == "" and not a.is_leader
    asyncio.run(a.stop())  # no CancelledError for a caller that was not cancelled
    assert events[-1] == "stopped" and len(events) == 4


def test_a_listener_is_added_without_waiting_for_the_request_in_flight() -> None:
    cluster, during = held_cluster()
    a = elector(cluster, [], clock=ManualClock())
    in_flight, go_on = threading.Event(), threading.Event()
    waited_in_vain: list[bool] = []
    during.append(lambda: (in_flight.set(), waited_in_vain.append(not go_on.wait(10))))
    cluster.inject(LEASE_PATH, latency=1e-9, times=1)
    ticking = threading.Thread(target=a.tick)
    ticking.start()
    assert in_flight.wait(30)  # the tick's request is held by the hook until go_on
    calls: list[str] = []
    a.add_leadership_listener(lambda: calls.append("started"), lambda: calls.append("stopped"))
    go_on.set()
    ticking.join(30)
    assert waited_in_vain == [False]  # added while the request was held, not after the hook gave up
    assert calls == ["started"]
