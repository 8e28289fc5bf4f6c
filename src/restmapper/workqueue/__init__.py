"""A rate-limited work queue for controllers, with client-go's ``util/workqueue`` semantics.

:class:`RateLimitingQueue` (threads) and :class:`AsyncRateLimitingQueue` (asyncio) hand keys to workers: a key
waiting in the queue is queued once, a key is never processed by two workers at once, a key added while it is
processed is processed again after :meth:`~RateLimitingQueue.done`, failures back off per key
(:meth:`~RateLimitingQueue.add_rate_limited`, :meth:`~RateLimitingQueue.forget`), and shutdown can wait for the
work in flight. The rate limiters are small public classes (:class:`ItemExponentialFailureRateLimiter`,
:class:`BucketRateLimiter`, :class:`MaxOfRateLimiter`, :func:`default_controller_rate_limiter`). Metrics under
client-go's names come from ``restmapper.metrics.WorkqueueMetrics`` (optional ``prometheus_client``).

Example::

    from restmapper.workqueue import RateLimitingQueue, ShutDown

    queue = RateLimitingQueue("widgets")
    cache.add_handler("widgets.example.com", on_add=lambda obj: queue.add(key_of(obj)))

    def worker():
        while True:
            try:
                key = queue.get()
            except ShutDown:
                return
            try:
                reconcile(key)
                queue.forget(key)
            except Exception:
                queue.add_rate_limited(key)
            finally:
                queue.done(key)
"""

from __future__ import annotations

from restmapper.errors import ShutDown, WorkQueueTimeoutError
from restmapper.workqueue._aio import AsyncRateLimitingQueue
from restmapper.workqueue._limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from restmapper.workqueue._queue import RateLimitingQueue
from restmapper.workqueue._state import MetricsProvider, QueueMetrics

__all__ = [
    "AsyncRateLimitingQueue",
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "QueueMetrics",
    "RateLimiter",
    "RateLimitingQueue",
    "ShutDown",
    "WorkQueueTimeoutError",
    "default_controller_rate_limiter",
]
