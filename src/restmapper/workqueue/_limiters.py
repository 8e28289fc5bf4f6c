"""Rate limiters: how long an item waits before it is queued again (client-go ``util/workqueue`` rate limiters)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable
from typing import Protocol

from restmapper.errors import InvalidArgumentError

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]


class RateLimiter(Protocol):
    """What :meth:`RateLimitingQueue.add_rate_limited` asks (client-go's ``TypedRateLimiter``). Thread-safe."""

    def when(self, item: Hashable) -> float:
        """Record one more failure of ``item`` and return how long it should wait before it is queued, seconds."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking ``item`` (it succeeded, or was given up): its next :meth:`when` starts afresh."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """Return how many failures of ``item`` are being tracked."""
        ...


def _seconds(value: float, what: str) -> float:
    """``value`` as a finite, non-negative number of seconds, else :class:`InvalidArgumentError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be a number of seconds, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise InvalidArgumentError(f"{what} must be a finite number of seconds >= 0, got {value!r}")
    return float(value)


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: the n-th failure of an item waits ``base_delay * 2**(n-1)``, at most
    ``max_delay``, as client-go's ``ItemExponentialFailureRateLimiter``.

    Args:
        base_delay: the first failure's wait, seconds (client-go's controller default: 0.005).
        max_delay: the cap, seconds (default 1000).

    Raises:
        InvalidArgumentError: a delay is negative, NaN or infinite, or ``max_delay < base_delay``.
        TypeError: a delay is not a number.

    Example::

        limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
        limiter.when("a"), limiter.when("a"), limiter.when("a")   # 0.005, 0.01, 0.02
        limiter.forget("a")                                       # the next when("a") is 0.005 again
    """

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = _seconds(base_delay, "base_delay")
        self.max_delay = _seconds(max_delay, "max_delay")
        if self.max_delay < self.base_delay:
            raise InvalidArgumentError(f"max_delay ({max_delay}) is less than base_delay ({base_delay})")
        self._lock = threading.Lock()  # guards _failures
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        """Count one failure of ``item``; return ``base_delay * 2**(failures before this one)``, capped, seconds."""
        with self._lock:
            exponent = self._failures.get(item, 0)
            self._failures[item] = exponent + 1
        if exponent >= 1024:  # 2.0 ** 1024 overflows a float; the cap has long been reached
            return self.max_delay
        return min(self.base_delay * 2.0 ** exponent, self.max_delay)

    def forget(self, item: Hashable) -> None:
        """Drop ``item``'s failure count."""
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        """Return ``item``'s failure count (0 when not tracked)."""
        with self._lock:
            return self._failures.get(item, 0)

    def __repr__(self) -> str:
        return f"ItemExponentialFailureRateLimiter({self.base_delay:g}, {self.max_delay:g})"


class BucketRateLimiter:
    """An overall token bucket shared by every item: ``qps`` tokens a second, at most ``burst`` saved up, as
    client-go's ``BucketRateLimiter`` over ``golang.org/x/time/rate``'s ``Limiter.Reserve().Delay()``.

    Each :meth:`when` takes one token, borrowing from the future when none is left: the returned wait is the time
    until that token exists, so waits grow by ``1 / qps`` per call once the burst is spent. Items are not tracked
    (:meth:`forget` does nothing, :meth:`num_requeues` is 0).

    Args:
        qps: tokens per second (client-go's controller default: 10).
        burst: bucket size, the calls answered with no wait from a full bucket (default 100); the bucket starts
            full.
        clock: a monotonic clock in seconds (``restmapper.testing.ManualClock`` in tests).

    Raises:
        InvalidArgumentError: ``qps`` is not a finite number > 0, or ``burst`` < 1.
        TypeError: ``burst`` is not an int.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if _seconds(qps, "qps") == 0:
            raise InvalidArgumentError("qps must be > 0")
        if isinstance(burst, bool) or not isinstance(burst, int):
            raise TypeError(f"burst must be an int, got {type(burst).__name__}")
        if burst < 1:
            raise InvalidArgumentError(f"burst must be >= 1, got {burst}")
        self.qps = float(qps)
        self.burst = burst
        self._clock = clock
        self._lock = threading.Lock()  # guards _tokens and _last
        self._tokens = float(burst)
        self._last = clock()

    def when(self, item: Hashable) -> float:
        """Take a token; return the seconds until it exists (0 while the bucket has one)."""
        with self._lock:
            now = self._clock()
            elapsed = max(0.0, now - self._last)
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps) - 1.0
            self._last = max(now, self._last)
            return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        """Nothing to forget: the bucket is shared by every item."""

    def num_requeues(self, item: Hashable) -> int:
        """Always 0: the bucket does not track items."""
        return 0

    def __repr__(self) -> str:
        return f"BucketRateLimiter(qps={self.qps:g}, burst={self.burst})"


class MaxOfRateLimiter:
    """Combine limiters: the wait is the longest any of them asks, as client-go's ``MaxOfRateLimiter``.

    :meth:`when` asks every limiter (each records the failure), :meth:`forget` forgets in every limiter and
    :meth:`num_requeues` is the largest count.

    Args:
        limiters: at least one :class:`RateLimiter`.

    Raises:
        InvalidArgumentError: no limiter was given.
    """

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise InvalidArgumentError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        """Return the longest wait of the limiters, seconds (every limiter is asked)."""
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: Hashable) -> None:
        """Forget ``item`` in every limiter."""
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        """Return the largest failure count of ``item`` among the limiters."""
        return max(limiter.num_requeues(item) for limiter in self.limiters)

    def __repr__(self) -> str:
        return f"MaxOfRateLimiter({', '.join(map(repr, self.limiters))})"


def default_controller_rate_limiter(clock: Callable[[], float] = time.monotonic) -> MaxOfRateLimiter:
    """Return client-go's ``DefaultControllerRateLimiter``: per-item exponential backoff from 5 ms doubling to
    1000 s, combined (the longer wait wins) with an overall token bucket of 10 qps and a burst of 100.

    Args:
        clock: the bucket's monotonic clock, seconds.
    """
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0),
                            BucketRateLimiter(10.0, 100, clock=clock))
