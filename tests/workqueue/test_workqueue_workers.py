"""Work queues under concurrent workers (threads and asyncio tasks): waiting gets, shutdown with drain, and the
properties that matter to a controller: no item is processed by two workers at once, and every add is followed by
a processing of that item.

Threads are ordered with events and joins, never with sleeps: where a test must know that another thread is
inside a call, it waits for the queue's state that only that call produces.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from restmapper.errors import ShutDown, WorkQueueTimeoutError
from restmapper.testing import ManualClock
from restmapper.workqueue import AsyncRateLimitingQueue, RateLimitingQueue

JOIN = 10.0  # seconds: a bound on joins so a broken queue fails the test instead of hanging the suite


def _wait_until(predicate: Callable[[], bool]) -> None:
    """Yield until ``predicate()`` holds (a state another thread produces), failing after ``JOIN`` seconds."""
    deadline = time.monotonic() + JOIN
    while not predicate():
        assert time.monotonic() < deadline, "the other thread never reached the expected state"
        time.sleep(0)


def _thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Start ``target`` in a thread; the list receives its result or the exception it raised."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(target())
        except BaseException as exc:
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def _joined(thread: threading.Thread) -> None:
    thread.join(JOIN)
    assert not thread.is_alive()


# --- the thread form -------------------------------------------------------------------------------------------


def test_a_waiting_get_returns_the_item_added_later() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    thread, out = _thread(q.get)
    q.add("a")
    _joined(thread)
    assert out == ["a"]


def test_a_waiting_get_is_woken_by_shutdown() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    thread, out = _thread(q.get)
    q.shutdown()
    _joined(thread)
    assert isinstance(out[0], ShutDown)


def test_a_waiting_get_times_out_with_a_typed_error() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    started = time.monotonic()
    try:
        q.get(timeout=0.02)
    except WorkQueueTimeoutError as exc:
        assert exc.timeout == 0.02
    else:
        raise AssertionError("get returned without an item")
    assert time.monotonic() - started >= 0.02


def test_a_waiting_get_wakes_when_a_delayed_item_is_due() -> None:
    """Real clock: nobody touches the queue after add_after; the waiting get wakes at the due time by itself."""
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    q.add_after("a", 0.02)
    assert q.get(timeout=JOIN) == "a"


def test_a_waiting_get_sees_a_manual_clock_advance_at_the_next_call_to_the_queue() -> None:
    """On its own the waiting get would look at the clock again only after MAX_WAIT (10 s, real): the join's bound
    of 5 s fails unless the call to len() wakes it."""
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue("q", clock=clock)
    q.add_after("a", 60.0)
    thread, out = _thread(q.get)
    clock.advance(60.0)
    q.len()  # any call moves due items in and wakes a waiting get
    thread.join(5.0)
    assert out == ["a"]


def test_shutdown_with_drain_waits_until_items_in_flight_are_done() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    q.add("a")
    item = q.get()
    events: list[str] = []
    drainer, _ = _thread(lambda: (q.shutdown_with_drain(), events.append("drained")))
    _wait_until(q.shutting_down)  # the drainer is inside shutdown_with_drain, waiting
    assert events == []
    events.append("done")
    q.done(item)
    _joined(drainer)
    assert events == ["done", "drained"]


def test_shutdown_with_drain_returns_at_once_when_nothing_is_in_flight() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    q.add("queued")  # queued but not handed out: not waited for, as client-go
    q.shutdown_with_drain()
    assert q.get() == "queued"


def test_shutdown_stops_a_drain_from_waiting() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue("q")
    q.add("a")
    q.get()
    drainer, out = _thread(q.shutdown_with_drain)
    _wait_until(q.shutting_down)
    q.shutdown()
    _joined(drainer)
    assert out == [None]


def _check_workers_property(adds: list[int], process: Callable[[RateLimitingQueue[int], int], None] | None = None
                            ) -> None:
    """4 worker threads; the main thread adds ``adds`` (duplicates included) while they run, then drains.

    Checks: no item is ever processed by two workers at once; for every add, the same item starts processing
    after it (the add is logged before it is made, a start after ``get`` returns).
    """
    q: RateLimitingQueue[int] = RateLimitingQueue("workers")
    lock = threading.Lock()
    log: list[tuple[str, int]] = []
    in_flight: set[int] = set()
    overlaps: list[int] = []

    def worker() -> None:
        while True:
            try:
                item = q.get()
            except ShutDown:
                return
            with lock:
                log.append(("start", item))
                if item in in_flight:
                    overlaps.append(item)
                in_flight.add(item)
            if process is not None:
                process(q, item)
            time.sleep(0)  # let other threads run while this item is in flight
            with lock:
                in_flight.discard(item)
            q.done(item)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(4)]
    for thread in threads:
        thread.start()
    for item in adds:
        with lock:
            log.append(("add", item))
        q.add(item)
    q.shutdown_with_drain()
    for thread in threads:
        _joined(thread)
    assert overlaps == []
    last_start: dict[int, int] = {}
    last_add: dict[int, int] = {}
    for index, (event, item) in enumerate(log):
        (last_start if event == "start" else last_add)[item] = index
    late = {item for item, index in last_add.items() if last_start.get(item, -1) < index}
    assert late == set(), f"added but never processed afterwards: {sorted(late)}"
    starts = sum(1 for event, _ in log if event == "start")
    assert len(set(adds)) <= starts
    if process is None:  # without re-adds by workers, never more processing than adds
        assert starts <= len(adds)


@settings(max_examples=25)
@given(st.lists(st.integers(0, 15), min_size=1, max_size=300))
def test_four_worker_threads_never_share_an_item_and_process_every_add(adds: list[int]) -> None:
    _check_workers_property(adds)


def test_four_worker_threads_under_a_long_run_of_re_adds() -> None:
    """A longer run where workers also re-add the item they hold (the re-add-while-processing path)."""
    def readd(q: RateLimitingQueue[int], item: int) -> None:
        if item % 3 == 0:
            q.add(item)  # ignored after the shutdown, processed again after done before it

    _check_workers_property([i % 40 for i in range(20_000)], readd)


# --- the asyncio form ------------------------------------------------------------------------------------------


def test_async_a_waiting_get_returns_the_item_added_later() -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("q")
        getter = asyncio.create_task(q.get())
        await asyncio.sleep(0)  # the getter is now waiting
        assert not getter.done()
        q.add("a")
        assert await getter == "a"

    asyncio.run(main())


def test_async_a_waiting_get_is_woken_by_shutdown_and_times_out() -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("q")
        getter = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        q.shutdown()
        try:
            await getter
        except ShutDown:
            pass
        else:
            raise AssertionError("get returned after shutdown")
        other: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("q")
        try:
            await other.get(timeout=0.01)
        except WorkQueueTimeoutError:
            pass
        else:
            raise AssertionError("get returned without an item")

    asyncio.run(main())


def test_async_a_waiting_get_wakes_when_a_delayed_item_is_due() -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("q")
        q.add_after("a", 0.02)
        assert await q.get(timeout=JOIN) == "a"

    asyncio.run(main())


def test_async_a_cancelled_waiting_get_loses_no_item() -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("q")
        first = asyncio.create_task(q.get())
        second = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        q.add("a")    # wakes the first getter...
        first.cancel()  # ...which is cancelled before it runs: the wake passes to the second
        assert await second == "a"
        assert first.cancelled()
        third = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        third.cancel()
        await asyncio.sleep(0)
        q.add("b")
        assert await q.get(timeout=0) == "b"

    asyncio.run(main())


def test_async_shutdown_with_drain_waits_until_items_in_flight_are_done() -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("q")
        q.add("a")
        item = await q.get()
        drain = asyncio.create_task(q.shutdown_with_drain())
        for _ in range(3):
            await asyncio.sleep(0)
        assert q.shutting_down() and not drain.done()
        q.done(item)
        await asyncio.wait_for(drain, JOIN)
        cancelled = AsyncRateLimitingQueue[str]("q2")
        cancelled.add("b")
        await cancelled.get()
        drain = asyncio.create_task(cancelled.shutdown_with_drain())
        await asyncio.sleep(0)
        assert not drain.done()
        cancelled.shutdown()  # stops the drain from waiting
        await asyncio.wait_for(drain, JOIN)

    asyncio.run(main())


def _check_async_workers_property(adds: list[int]) -> None:
    async def main() -> None:
        q: AsyncRateLimitingQueue[Hashable] = AsyncRateLimitingQueue("workers")
        log: list[tuple[str, Hashable]] = []
        in_flight: set[Hashable] = set()
        overlaps: list[Hashable] = []

        async def worker() -> None:
            while True:
                try:
                    item = await q.get()
                except ShutDown:
                    return
                log.append(("start", item))
                if item in in_flight:
                    overlaps.append(item)
                in_flight.add(item)
                await asyncio.sleep(0)  # other workers and the producer run while this item is in flight
                in_flight.discard(item)
                q.done(item)

        workers = [asyncio.create_task(worker()) for _ in range(4)]
        for index, item in enumerate(adds):
            log.append(("add", item))
            q.add(item)
            if index % 3 == 0:
                await asyncio.sleep(0)
        await q.shutdown_with_drain()
        await asyncio.wait_for(asyncio.gather(*workers), JOIN)
        assert overlaps == []
        last_start: dict[Hashable, int] = {}
        last_add: dict[Hashable, int] = {}
        for index, (event, item) in enumerate(log):
            (last_start if event == "start" else last_add)[item] = index
        assert {item for item, index in last_add.items() if last_start.get(item, -1) < index} == set()

    asyncio.run(main())


@settings(max_examples=25)
@given(st.lists(st.integers(0, 15), min_size=1, max_size=300))
def test_four_worker_tasks_never_share_an_item_and_process_every_add(adds: list[int]) -> None:
    _check_async_workers_property(adds)
