"""The thread form of the rate-limited work queue."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from restmapper.workqueue._limiters import RateLimiter, default_controller_rate_limiter
from restmapper.workqueue._state import MetricsProvider, QueueState, delay_seconds, timeout_seconds

__all__ = ["RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)

class RateLimitingQueue(Generic[T]):
    """A work queue for controller workers, with client-go's ``util/workqueue`` semantics (rate-limiting queue
    over a delaying queue over the basic queue). Thread-safe.

    - An item waiting in the queue is queued once: adding it again does nothing (adds dedupe).
    - An item is never handed to two workers at once: one added while a worker processes it is queued again when
      that worker calls :meth:`done`, and processed once more.
    - :meth:`add_after` queues an item later; :meth:`add_rate_limited` queues it after the rate limiter's wait
      (by default client-go's: per-item exponential backoff from 5 ms doubling to 1000 s, and an overall token
      bucket of 10 qps with a burst of 100, the longer wait wins); :meth:`forget` resets the item's backoff.
    - :meth:`shutdown` stops accepting items; workers still get the items already queued, then :class:`ShutDown`.
      :meth:`shutdown_with_drain` also waits until no item is being processed.

    Items are any hashable values (keys such as ``"namespace/name"`` are usual: the queue dedupes by equality).
    Every worker loop is::

        while True:
            try:
                key = queue.get()
            except ShutDown:
                return
            try:
                reconcile(key)
                queue.forget(key)           # success: reset its backoff
            except Exception:
                queue.add_rate_limited(key)  # retry later, backing off
            finally:
                queue.done(key)

    Args:
        name: the queue's name: the ``name`` label of its metrics (an unnamed queue reports none, as client-go).
        rate_limiter: what :meth:`add_rate_limited` asks; None: :func:`default_controller_rate_limiter` on
            ``clock``.
        clock: a monotonic clock in seconds (default ``time.monotonic``; ``restmapper.testing.ManualClock`` in
            tests): when delayed items are due, and the metrics' durations. Delayed items become due when the queue
            is next used (any method) or when a waiting :meth:`get` wakes up at their due time.
        metrics: where a named queue reports (``restmapper.metrics.WorkqueueMetrics`` for Prometheus); None
            reports nothing.
    """

    def __init__(self, name: str | None = None, rate_limiter: RateLimiter | None = None, *,
                 clock: Callable[[], float] = time.monotonic, metrics: MetricsProvider | None = None) -> None:
        self._state: QueueState[T] = QueueState(name, clock, metrics)
        self.name = name
        self.rate_limiter: RateLimiter = rate_limiter if rate_limiter is not None else (
            default_controller_rate_limiter(clock))
        self._lock = threading.Lock()  # guards _state; both conditions below share it
        self._ready = threading.Condition(self._lock)  # notified: an item was queued, or shutdown
        self._idle = threading.Condition(self._lock)  # notified: processing emptied, or a drain was cancelled

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing: queue it, unless it is queued already (nothing happens) or being
        processed (it is queued again at its :meth:`done`). Ignored once shut down.

        Raises:
            TypeError: ``item`` is not hashable.
        """
        with self._lock:
            if self._state.add(item):
                self._ready.notify()

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed on the queue's clock (at once when ``seconds <= 0``). An item
        already waiting keeps the earlier of its two due times. Ignored once shut down (waiting items are then
        dropped), as client-go's ``AddAfter``.

        Raises:
            TypeError: ``seconds`` is not a number, or ``item`` is not hashable (also once shut down).
            InvalidArgumentError: ``seconds`` is NaN or infinite.
        """
        seconds = delay_seconds(seconds)
        with self._lock:
            self._promote_due()
            if self._state.add_after(item, seconds):
                self._ready.notify()  # queued now: one waiting get takes it
            elif self._state.next_due() is not None:
                # Every waiting get recomputes how long to sleep: each then wakes by the next due time on its
                # own, so a due item reaches a getter even when the one woken first leaves (its timeout).
                self._ready.notify_all()

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the rate limiter's wait for it (which counts one more failure of it).

        Raises:
            TypeError: ``item`` is not hashable.
        """
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Stop the rate limiter tracking ``item`` (it succeeded or was given up); it still needs :meth:`done`."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return how many failures of ``item`` the rate limiter tracks (rate-limited adds since its last
        :meth:`forget`)."""
        return self.rate_limiter.num_requeues(item)

    def get(self, timeout: float | None = None) -> T:
        """Wait for an item and hand it out; the caller must call :meth:`done` with it when finished.

        Args:
            timeout: the longest to wait, real seconds (as ``queue.Queue.get``; the queue's clock only schedules
                delayed items); None waits until an item or the shutdown comes; 0 never waits.

        Returns:
            The item, now being processed: no other worker gets it until :meth:`done`.

        Raises:
            ShutDown: the queue is shut down and nothing is queued: the worker should return.
            WorkQueueTimeoutError: no item was ready within ``timeout`` (also a ``queue.Empty`` and a
                ``TimeoutError``); raised rather than returning a sentinel, which could be mistaken for an item.
            TypeError, InvalidArgumentError: ``timeout`` is not a number, or is NaN or infinite.
        """
        timeout = timeout_seconds(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        state = self._state
        with self._lock:
            while True:
                self._promote_due(taking=1)
                if state.queue:
                    return state.pop()
                remaining = None if deadline is None else deadline - time.monotonic()
                self._ready.wait(state.get_wait(timeout, remaining))

    def done(self, item: T) -> None:
        """Mark ``item`` processed; if it was added again meanwhile, queue it for another round.

        Raises:
            InvalidArgumentError: ``item`` is not being processed (``done`` without ``get``, or twice).
        """
        with self._lock:
            if self._state.done(item):
                self._ready.notify()
            if not self._state.processing:
                self._idle.notify_all()

    def shutdown(self) -> None:
        """Stop accepting items and drop delayed ones; workers get what is queued, then :class:`ShutDown`. Returns
        at once, and stops a :meth:`shutdown_with_drain` from waiting any longer (client-go's ``ShutDown``)."""
        with self._lock:
            self._state.shut_down(drain=False)
            self._ready.notify_all()
            self._idle.notify_all()

    def shutdown_with_drain(self) -> None:
        """Shut down as :meth:`shutdown`, then wait until no item is being processed (client-go's
        ``ShutDownWithDrain``): every item handed out has been :meth:`done`. Workers must call :meth:`done`, or
        this waits for ever; a later :meth:`shutdown` (from another thread) ends the wait.

        Items still queued but not yet handed out are not waited for (as client-go): workers that keep calling
        :meth:`get` process them, and items re-added during processing are processed again.
        """
        with self._lock:
            self._state.shut_down(drain=True)
            self._ready.notify_all()
            while self._state.processing and self._state.draining:
                self._idle.wait()

    def shutting_down(self) -> bool:
        """Return True once :meth:`shutdown` or :meth:`shutdown_with_drain` was called."""
        with self._lock:
            return self._state.shutting_down

    def len(self) -> int:
        """Return how many items are queued (not processing, not delayed): informational only, as client-go."""
        return len(self)

    def __len__(self) -> int:
        with self._lock:
            self._promote_due()
            return len(self._state)

    def _promote_due(self, taking: int = 0) -> None:
        """Queue the delayed items now due and wake a waiting getter for each (but the ``taking`` the caller
        takes itself). Called with the lock held."""
        promoted = self._state.promote_due() - taking
        if promoted > 0:
            self._ready.notify(promoted)

    def __repr__(self) -> str:
        with self._lock:
            state = self._state
            return (f"RateLimitingQueue(name={self.name!r}, queued={len(state.queue)}, "
                    f"processing={len(state.processing)}, shutting_down={state.shutting_down})")
