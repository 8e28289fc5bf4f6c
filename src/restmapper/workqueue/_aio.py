"""The asyncio form of the rate-limited work queue."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from restmapper.workqueue._limiters import RateLimiter, default_controller_rate_limiter
from restmapper.workqueue._state import MetricsProvider, QueueState, delay_seconds, timeout_seconds

__all__ = ["AsyncRateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class AsyncRateLimitingQueue(Generic[T]):
    """The asyncio form of :class:`~restmapper.workqueue.RateLimitingQueue`: the same rules (client-go's
    ``util/workqueue``), the same arguments and methods; :meth:`get` and :meth:`shutdown_with_drain` are coroutines,
    the others return at once.

    Not thread-safe, as ``asyncio.Queue``: call it from its event loop's thread (from another thread, use
    ``loop.call_soon_threadsafe(queue.add, item)``). A worker is a task::

        async def worker():
            while True:
                try:
                    key = await queue.get()
                except ShutDown:
                    return
                try:
                    await reconcile(key)
                    queue.forget(key)
                except Exception:
                    queue.add_rate_limited(key)
                finally:
                    queue.done(key)

    Args:
        name: the queue's name: the ``name`` label of its metrics (an unnamed queue reports none).
        rate_limiter: what :meth:`add_rate_limited` asks; None: client-go's default on ``clock``.
        clock: a monotonic clock in seconds (``restmapper.testing.ManualClock`` in tests): when delayed items are
            due, and the metrics' durations.
        metrics: where a named queue reports (``restmapper.metrics.WorkqueueMetrics``); None reports nothing.
    """

    def __init__(self, name: str | None = None, rate_limiter: RateLimiter | None = None, *,
                 clock: Callable[[], float] = time.monotonic, metrics: MetricsProvider | None = None) -> None:
        self._state: QueueState[T] = QueueState(name, clock, metrics)
        self.name = name
        self.rate_limiter: RateLimiter = rate_limiter if rate_limiter is not None else (
            default_controller_rate_limiter(clock))
        self._getters: deque[asyncio.Future[None]] = deque()  # waiting get() calls, oldest first
        self._drainers: list[asyncio.Future[None]] = []  # waiting shutdown_with_drain() calls

    def _wake_getters(self, count: int = 1) -> None:
        while count > 0 and self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                count -= 1

    def _wake_all(self, waiters: list[asyncio.Future[None]] | deque[asyncio.Future[None]]) -> None:
        for waiter in waiters:
            _wake(waiter)
        waiters.clear()

    def _promote_due(self, taking: int = 0) -> None:
        self._wake_getters(self._state.promote_due() - taking)

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing (see :meth:`RateLimitingQueue.add`).

        Raises:
            TypeError: ``item`` is not hashable.
        """
        if self._state.add(item):
            self._wake_getters()

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed on the queue's clock (see :meth:`RateLimitingQueue.add_after`).

        Raises:
            TypeError: ``seconds`` is not a number, or ``item`` is not hashable.
            InvalidArgumentError: ``seconds`` is NaN or infinite.
        """
        seconds = delay_seconds(seconds)
        self._promote_due()
        if self._state.add_after(item, seconds):
            self._wake_getters()  # queued now: one waiting get takes it
        elif self._state.next_due() is not None:
            # Every waiting get recomputes how long to sleep (see RateLimitingQueue.add_after).
            self._wake_all(self._getters)

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the rate limiter's wait for it (which counts one more failure of it)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Stop the rate limiter tracking ``item``; it still needs :meth:`done`."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return how many failures of ``item`` the rate limiter tracks."""
        return self.rate_limiter.num_requeues(item)

    async def get(self, timeout: float | None = None) -> T:
        """Wait for an item and hand it out; call :meth:`done` with it when finished.

        Args:
            timeout: the longest to wait, real seconds (the event loop's time); None waits for an item or the
                shutdown; 0 never waits.

        Returns:
            The item, now being processed: no other worker gets it until :meth:`done`.

        Raises:
            ShutDown: the queue is shut down and nothing is queued: the worker should return.
            WorkQueueTimeoutError: no item was ready within ``timeout`` (also ``queue.Empty`` and ``TimeoutError``).
            TypeError, InvalidArgumentError: ``timeout`` is not a number, or is NaN or infinite.
        """
        timeout = timeout_seconds(timeout)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        state = self._state
        while True:
            self._promote_due(taking=1)
            if state.queue:
                return state.pop()
            wait = state.get_wait(timeout, None if deadline is None else deadline - loop.time())
            waiter: asyncio.Future[None] = loop.create_future()
            self._getters.append(waiter)
            timer = None if wait is None else loop.call_later(wait, self._time_up, waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_getters()  # we were woken for an item we will not take: pass it on
                else:
                    self._forget_getter(waiter)
                raise
            finally:
                if timer is not None:
                    timer.cancel()

    def _forget_getter(self, waiter: asyncio.Future[None]) -> None:
        with contextlib.suppress(ValueError):  # already woken, and so removed
            self._getters.remove(waiter)

    def _time_up(self, waiter: asyncio.Future[None]) -> None:
        """A waiting get's timer fired (its timeout, or a delayed item's due time): it looks again."""
        self._forget_getter(waiter)
        _wake(waiter)

    def done(self, item: T) -> None:
        """Mark ``item`` processed; if it was added again meanwhile, queue it for another round.

        Raises:
            InvalidArgumentError: ``item`` is not being processed (``done`` without ``get``, or twice).
        """
        if self._state.done(item):
            self._wake_getters()
        if not self._state.processing:
            self._wake_all(self._drainers)

    def shutdown(self) -> None:
        """Stop accepting items and drop delayed ones; getters get what is queued, then :class:`ShutDown`; a
        waiting :meth:`shutdown_with_drain` returns."""
        self._state.shut_down(drain=False)
        self._wake_all(self._getters)
        self._wake_all(self._drainers)

    async def shutdown_with_drain(self) -> None:
        """Shut down as :meth:`shutdown`, then wait until no item is being processed (see
        :meth:`RateLimitingQueue.shutdown_with_drain`); a later :meth:`shutdown` ends the wait."""
        self._state.shut_down(drain=True)
        self._wake_all(self._getters)
        loop = asyncio.get_running_loop()
        while self._state.processing and self._state.draining:
            waiter: asyncio.Future[None] = loop.create_future()
            self._drainers.append(waiter)
            await waiter

    def shutting_down(self) -> bool:
        """Return True once :meth:`shutdown` or :meth:`shutdown_with_drain` was called."""
        return self._state.shutting_down

    def len(self) -> int:
        """Return how many items are queued (not processing, not delayed): informational only."""
        return len(self)

    def __len__(self) -> int:
        self._promote_due()
        return len(self._state)

    def __repr__(self) -> str:
        state = self._state
        return (f"AsyncRateLimitingQueue(name={self.name!r}, queued={len(state.queue)}, "
                f"processing={len(state.processing)}, shutting_down={state.shutting_down})")
