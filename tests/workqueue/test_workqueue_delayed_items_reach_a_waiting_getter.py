"""A delayed item that becomes due reaches some waiting ``get`` without any other call to the queue, even when the
getter woken by ``add_after`` leaves first (its own timeout); and the argument checks of adds hold after shutdown.

The queue's clock is a ManualClock (it only schedules the delay); the getters' waits are real, so the tests wait
for the getters to be parked (the queue's waiter list) rather than sleeping.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from prometheus_client import CollectorRegistry

from restmapper.errors import WorkQueueTimeoutError
from restmapper.metrics import WorkqueueMetrics
from restmapper.testing import ManualClock
from restmapper.workqueue import AsyncRateLimitingQueue, RateLimitingQueue


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + 5
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.001)


def test_a_due_item_reaches_an_unbounded_getter_after_the_timed_getter_left() -> None:
    clock = ManualClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue("delayed", clock=clock)
    results: dict[str, object] = {}

    def timed() -> None:
        try:
            results["timed"] = queue.get(timeout=0.2)
        except WorkQueueTimeoutError:
            results["timed"] = "timed out"

    def unbounded() -> None:
        results["unbounded"] = queue.get()

    first = threading.Thread(target=timed)
    second = threading.Thread(target=unbounded, daemon=True)
    parked = queue._ready._waiters  # type: ignore[attr-defined]  # the condition's parked getters
    first.start()
    _until(lambda: len(parked) == 1, "the timed getter never waited")
    second.start()
    _until(lambda: len(parked) == 2, "the unbounded getter never waited")
    queue.add_after("x", 0.05)
    first.join(5)
    assert results["timed"] == "timed out"
    clock.advance(1.0)  # x is due; nobody calls the queue any more
    second.join(5)
    try:
        assert results.get("unbounded") == "x"
    finally:
        queue.shutdown()
        second.join(5)


def test_a_due_item_reaches_an_unbounded_asyncio_getter_after_the_timed_getter_left() -> None:
    async def scenario() -> None:
        clock = ManualClock()
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue("delayed", clock=clock)
        parked = queue._getters  # the parked getters
        timed = asyncio.create_task(queue.get(timeout=0.2))
        while len(parked) < 1:
            await asyncio.sleep(0)
        unbounded = asyncio.create_task(queue.get())
        while len(parked) < 2:
            await asyncio.sleep(0)
        queue.add_after("x", 0.05)
        with pytest.raises(WorkQueueTimeoutError):
            await timed
        clock.advance(1.0)
        try:
            done, _ = await asyncio.wait({unbounded}, timeout=5)
            assert done and unbounded.result() == "x"
        finally:
            queue.shutdown()
            await asyncio.wait({unbounded}, timeout=5)

    asyncio.run(scenario())


@pytest.mark.parametrize("form", [RateLimitingQueue, AsyncRateLimitingQueue])
def test_unhashable_items_are_refused_after_shutdown_and_never_counted(form: type) -> None:
    registry = CollectorRegistry()
    queue = form("edges", clock=ManualClock(), metrics=WorkqueueMetrics(registry))
    for call in (lambda: queue.add_after([1], 1), lambda: queue.add_after([1], 0)):
        with pytest.raises(TypeError):
            call()
    assert registry.get_sample_value("workqueue_retries_total", {"name": "edges"}) == 0
    queue.shutdown()
    for call in (lambda: queue.add([1]), lambda: queue.add_after([1], 1), lambda: queue.add_rate_limited([1])):
        with pytest.raises(TypeError):
            call()
    assert registry.get_sample_value("workqueue_retries_total", {"name": "edges"}) == 0
