"""The work queue's errors (published by :mod:`restmapper.errors`, their one import path; :mod:`restmapper.workqueue`
re-exports them)."""

from __future__ import annotations

import queue

from restmapper.errors._core import RestMapperError, WaitTimeoutError


class ShutDown(RestMapperError):
    """``get()`` on a work queue that is shut down and has nothing left to hand out: the worker should return.

    As client-go's ``Get`` returning ``shutdown == true`` (and Python 3.13's ``queue.ShutDown``): items still
    queued when the queue was shut down are handed out first; this is raised only once none is left.

    Attributes:
        name: the queue's name, or None for an unnamed queue.
    """

    def __init__(self, name: str | None) -> None:
        self.name = name
        super().__init__(f"work queue {name or '(unnamed)'!s} is shut down and drained: the worker should return")


class WorkQueueTimeoutError(WaitTimeoutError, queue.Empty):
    """``get(timeout=...)`` on a work queue found no item ready within the timeout.

    A :class:`WaitTimeoutError` (so a ``TimeoutError``), as every "waited and gave up" error of restmapper, and a
    ``queue.Empty``, what the standard library's ``queue.Queue.get(timeout=...)`` raises, so code written for either
    catches it. The queue is unchanged: nothing was taken.

    Attributes:
        target: the queue's name, or None for an unnamed queue.
        timeout: the timeout, seconds.
    """

    def __init__(self, name: str | None, timeout: float) -> None:
        super().__init__(name, timeout, None)
        self.args = (f"no item of work queue {name or '(unnamed)'!s} was ready within {timeout:g}s",)
