"""One calling convention for both work-queue forms, so each rule is tested once against threads and asyncio."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Iterator
from typing import Any

import pytest

from restmapper.testing import ManualClock
from restmapper.workqueue import AsyncRateLimitingQueue, RateLimiter, RateLimitingQueue


class Form:
    """A queue of one form with blocking-style methods: the asyncio form's coroutines run on a private loop."""

    def __init__(self, kind: str, clock: ManualClock, name: str | None = "test",
                 rate_limiter: RateLimiter | None = None, metrics: Any = None) -> None:
        self.kind = kind
        self.clock = clock
        self.loop: asyncio.AbstractEventLoop | None = None
        if kind == "thread":
            self.queue: Any = RateLimitingQueue(name, rate_limiter, clock=clock, metrics=metrics)
        else:
            self.loop = asyncio.new_event_loop()
            self.queue = AsyncRateLimitingQueue(name, rate_limiter, clock=clock, metrics=metrics)

    def _run(self, value: Any) -> Any:
        if self.loop is None:
            return value
        return self.loop.run_until_complete(value)

    def add(self, item: Hashable) -> None:
        self.queue.add(item)

    def add_after(self, item: Hashable, seconds: float) -> None:
        self.queue.add_after(item, seconds)

    def add_rate_limited(self, item: Hashable) -> None:
        self.queue.add_rate_limited(item)

    def get(self, timeout: float | None = 0) -> Any:
        """Take the next item; by default never waits (``timeout=0``: a WorkQueueTimeoutError when none)."""
        return self._run(self.queue.get(timeout))

    def done(self, item: Hashable) -> None:
        self.queue.done(item)

    def shutdown(self) -> None:
        self.queue.shutdown()

    def len(self) -> int:
        return int(self.queue.len())

    def drain_all(self) -> list[Any]:
        """Get and finish every item ready now, in order."""
        out = []
        while self.len():
            item = self.get()
            self.done(item)
            out.append(item)
        return out

    def close(self) -> None:
        if self.loop is not None:
            self.loop.close()


@pytest.fixture(params=["thread", "asyncio"])
def form(request: pytest.FixtureRequest) -> Iterator[Form]:
    """A named queue of each form on a ManualClock (``form.clock``)."""
    f = Form(request.param, ManualClock())
    yield f
    f.close()
