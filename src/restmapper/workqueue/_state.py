"""The work queue's state and every rule of client-go's ``util/workqueue``, with no lock and no waiting (it says
how long a waiting ``get`` waits; each form waits its own way).

:class:`QueueState` is shared by the thread form (:class:`~restmapper.workqueue.RateLimitingQueue`, which calls it
under its lock) and the asyncio form (which calls it from the event loop): the two forms only add how a caller
waits. The rules, as client-go's ``queue.go`` and ``delaying_queue.go``:

- *dirty* is the set of items that need processing; *queue* is the FIFO of dirty items not being processed (an
  item is in it at most once: adds dedupe); *processing* is the set of items handed out by ``get`` and not yet
  ``done``. An item added while it is processed is dirty but not queued: ``done`` queues it again, so it is never
  handed to two workers at once and never lost.
- *waiting* holds items added with a delay, keyed by item with the earliest time asked (a second ``add_after``
  of a waiting item only ever brings it forward); due items are added as by ``add`` whenever the queue is used.
- Shutting down ignores new adds and drops waiting items; items already queued are still handed out.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from restmapper.errors import InvalidArgumentError, ShutDown, WorkQueueTimeoutError

__all__ = ["MAX_WAIT", "MetricsProvider", "QueueMetrics", "QueueState", "timeout_seconds"]

T = TypeVar("T", bound=Hashable)


class QueueMetrics(Protocol):
    """What a named queue reports to (one per queue, from :meth:`MetricsProvider.queue_metrics`).

    Called with the queue's lock held: implementations must be quick and must not call back into the queue.
    """

    def added(self) -> None:
        """An item became dirty (``workqueue_adds_total`` and ``workqueue_depth`` up by one)."""
        ...

    def got(self, queued_seconds: float) -> None:
        """An item was handed to a worker after ``queued_seconds`` since it became dirty (``workqueue_depth``
        down by one, ``workqueue_queue_duration_seconds`` observed)."""
        ...

    def done(self, work_seconds: float) -> None:
        """A worker finished an item after ``work_seconds`` (``workqueue_work_duration_seconds``)."""
        ...

    def retried(self) -> None:
        """``add_after`` (or ``add_rate_limited``) was called (``workqueue_retries_total``)."""
        ...


class MetricsProvider(Protocol):
    """Makes each named queue's :class:`QueueMetrics` (client-go's ``MetricsProvider``); the Prometheus one is
    ``restmapper.metrics.WorkqueueMetrics``."""

    def queue_metrics(self, name: str, in_flight: Callable[[], tuple[float, float]]) -> QueueMetrics:
        """Return the sink of queue ``name``; ``in_flight()`` returns (the seconds of work in progress summed over
        the items being processed, the longest of them): ``workqueue_unfinished_work_seconds`` and
        ``workqueue_longest_running_processor_seconds``, read when scraped."""
        ...


def delay_seconds(seconds: float, what: str = "a delay") -> float:
    """``seconds`` as a float, else a clear error: :class:`TypeError` for a non-number,
    :class:`InvalidArgumentError` for NaN or infinity (an item that would never, or always, be due)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, got {type(seconds).__name__}")
    if not math.isfinite(seconds):
        raise InvalidArgumentError(f"{what} must be a finite number of seconds, got {seconds!r}")
    return float(seconds)


MAX_WAIT = 10.0
"""While a delayed item waits, the longest a waiting ``get`` sleeps before it looks at the clock again, seconds
(client-go's delaying queue heartbeat): insurance, and the bound after which a waiting ``get`` notices a manually
advanced clock on its own (any call to the queue notices it at once)."""


def timeout_seconds(timeout: float | None) -> float | None:
    """``timeout`` checked: None, or a finite number (a negative one counts as 0, as ``threading.Event.wait``).

    Raises:
        TypeError: not a number.
        InvalidArgumentError: NaN or infinite (wait for ever with None).
    """
    return None if timeout is None else max(0.0, delay_seconds(timeout, "a get timeout"))


class QueueState(Generic[T]):
    """The sets, FIFO and delay heap of one queue (see the module doc). Not thread-safe: the caller serialises.

    Args:
        name: the queue's name (metrics and messages); None for an unnamed queue.
        clock: a monotonic clock in seconds: when delayed items are due, and the metrics' durations.
        metrics: where a named queue reports; None (or an unnamed queue) reports nothing and keeps no timestamps.

    Raises:
        TypeError: ``name`` is neither a str nor None.
    """

    def __init__(self, name: str | None, clock: Callable[[], float], metrics: MetricsProvider | None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, got {type(name).__name__}")
        self.name = name
        self.clock = clock
        self.queue: deque[T] = deque()
        self.dirty: set[T] = set()
        self.processing: set[T] = set()
        self.shutting_down = False
        self.draining = False  # shutdown_with_drain is waiting for processing to empty
        # waiting: a heap of (due, sequence, item) and the earliest due per item; an entry whose due is not the
        # item's current one is stale (the item was brought forward) and skipped when popped.
        self._heap: list[tuple[float, int, T]] = []
        self._due: dict[T, float] = {}
        self._sequence = itertools.count()
        self.metrics = metrics.queue_metrics(name, self.in_flight) if metrics is not None and name else None
        self._added_at: dict[T, float] = {}  # dirty items -> when they became dirty (metrics only)
        self._started_at: dict[T, float] = {}  # processing items -> when handed out (metrics only)

    def add(self, item: T) -> bool:
        """Mark ``item`` dirty and queue it unless it is queued or processed; return True when it was queued (a
        waiting getter should wake). Ignored once shutting down.

        Raises:
            TypeError: ``item`` is not hashable (also once shutting down).
        """
        hash(item)  # an unhashable item is refused even when the add would be ignored
        if self.shutting_down or item in self.dirty:
            return False
        if self.metrics is not None:
            self.metrics.added()
            self._added_at.setdefault(item, self.clock())
        self.dirty.add(item)
        if item in self.processing:
            return False
        self.queue.append(item)
        return True

    def add_after(self, item: T, seconds: float) -> bool:
        """Add ``item`` once ``seconds`` have passed (now when ``seconds <= 0``); return True when it was queued
        now. Ignored once shutting down. Counted as a retry only when accepted.

        Raises:
            TypeError: ``item`` is not hashable (also once shutting down; nothing is counted).
        """
        hash(item)
        if self.shutting_down:
            return False
        if self.metrics is not None:
            self.metrics.retried()
        if seconds <= 0:
            return self.add(item)
        due = self.clock() + seconds
        current = self._due.get(item)
        if current is None or due < current:
            self._due[item] = due
            heapq.heappush(self._heap, (due, next(self._sequence), item))
        return False

    def promote_due(self) -> int:
        """Add every waiting item whose time has come; return how many were queued."""
        if not self._heap:
            return 0
        now = self.clock()
        queued = 0
        heap, due_of = self._heap, self._due
        while heap and heap[0][0] <= now:
            due, _, item = heapq.heappop(heap)
            if due_of.get(item) != due:
                continue  # stale: the item was brought forward and is already added
            del due_of[item]
            queued += self.add(item)
        return queued

    def next_due(self) -> float | None:
        """Return the seconds until the earliest waiting item is due (0 when due now), None when none waits."""
        heap, due_of = self._heap, self._due
        while heap and due_of.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)  # drop stale entries so the head is a real one
        return max(0.0, heap[0][0] - self.clock()) if heap else None

    def get_wait(self, timeout: float | None, remaining: float | None) -> float | None:
        """Return how long a ``get`` that found nothing queued waits before it looks again, seconds (None: until
        woken): until its deadline or the earliest delayed item's due time, at most :data:`MAX_WAIT` while an item
        waits.

        Args:
            timeout: the get's checked ``timeout`` (for the error); None when it has none.
            remaining: the seconds left before the get's deadline; None when it has none.

        Raises:
            ShutDown: the queue is shutting down (nothing being queued, the worker should return).
            WorkQueueTimeoutError: the deadline has passed.
        """
        if self.shutting_down:
            raise ShutDown(self.name)
        if remaining is not None and remaining <= 0:
            raise WorkQueueTimeoutError(self.name, timeout or 0.0)
        due = self.next_due()
        if due is None:
            return remaining
        return min(MAX_WAIT, due) if remaining is None else min(MAX_WAIT, due, remaining)

    def pop(self) -> T:
        """Hand out the first queued item (the queue must not be empty): it moves from dirty to processing."""
        item = self.queue.popleft()
        self.processing.add(item)
        self.dirty.discard(item)
        if self.metrics is not None:
            now = self.clock()
            self._started_at[item] = now
            added = self._added_at.pop(item, now)
            self.metrics.got(now - added)
        return item

    def done(self, item: T) -> bool:
        """Finish processing ``item``; return True when it was dirty again and is queued (a getter should wake).

        Raises:
            InvalidArgumentError: ``item`` is not being processed (``done`` without ``get``, or twice): queueing
                it again here would put a queued item in the FIFO twice.
        """
        if item not in self.processing:
            raise InvalidArgumentError(
                f"done({item!r}): the item is not being processed by a worker of work queue "
                f"{self.name or '(unnamed)'} (done() without get(), or done() twice)")
        self.processing.discard(item)
        if self.metrics is not None:
            started = self._started_at.pop(item, None)
            if started is not None:
                self.metrics.done(self.clock() - started)
        if item in self.dirty:
            self.queue.append(item)
            return True
        return False

    def shut_down(self, drain: bool) -> None:
        """Stop accepting adds and drop waiting items; ``drain`` says whether a drain is (still) wanted."""
        self.shutting_down = True
        self.draining = drain
        self._heap.clear()
        self._due.clear()

    def in_flight(self) -> tuple[float, float]:
        """Return (seconds of work in progress summed over the items being processed, the longest of them).

        Called by a metrics scrape on another thread, without the queue's lock: copying the dict's values with
        ``list()`` is one step under the GIL, so it never sees the dict change size."""
        now = self.clock()
        ages = [now - started for started in list(self._started_at.values())]
        return (sum(ages), max(ages)) if ages else (0.0, 0.0)

    def __len__(self) -> int:
        return len(self.queue)
