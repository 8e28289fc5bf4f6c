"""The delivery of one :meth:`AsyncObjectCache.add_handler` registration on its event loop.

The informer's handler thread hands each change to the loop that registered the handlers; one task per
registration runs them there, one change at a time, in order, each coroutine in a task of its own so that what it
raises (``SystemExit``, an escaped ``CancelledError``) is the handler's, never the loop's.

Bound to a leader elector (``while_leading``), the registration is detached when leadership ends, and, as the
threaded cache waits for a handler call in progress, the elector's ``on_stopped_leading`` (and its release of the
Lease) comes only after the coroutine in progress returned: at most ``renew_deadline`` seconds, after which it is
cancelled (the lease is not held past that deadline, so a standby may lead: our handler must not run on).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import logging
from collections.abc import Callable
from typing import Any

from restmapper.store._informer import Informer
from restmapper.store._leading import Leadership

__all__ = ["AsyncHandler", "Delivery"]

_log = logging.getLogger("restmapper.store")

AsyncHandler = Callable[..., Any]
"""A plain function or a coroutine function; called with the same arguments as the sync handlers."""

_MARGIN = 1.0  # seconds a thread waits beyond the bound for the loop to say the handler ended (a busy loop)
_HANDLING: contextvars.ContextVar[Delivery | None] = contextvars.ContextVar("restmapper_async_handler",
                                                                           default=None)
"""The delivery whose handler runs in this context (a handler's task, and threads it starts with to_thread)."""


class Delivery:
    """The handlers of one registration, run on ``loop`` in the order of their changes (see the module docstring).

    Attributes:
        task: the task running them (cancelled by ``AsyncObjectCache.remove_handler``).
    """

    def __init__(self, informer: Informer, loop: asyncio.AbstractEventLoop) -> None:
        """Start delivering on ``loop`` (the running one: call on it)."""
        self._informer = informer
        self._loop = loop
        self._queue: asyncio.Queue[tuple[AsyncHandler, tuple[Any, ...]]] = asyncio.Queue()
        self._running: asyncio.Task[BaseException | None] | None = None  # the coroutine in progress (its task)
        self._cut: asyncio.Task[BaseException | None] | None = None  # cancelled at leadership's end
        self.task = loop.create_task(self._consume(), name=f"restmapper-handlers-{informer.group_kind}")

    def forward(self, fn: AsyncHandler | None, leadership: Leadership | None) -> Callable[..., None] | None:
        """The informer's handler for ``fn``: hands each call to the loop (``fn`` runs there, only while
        ``leadership`` leads when its turn comes, if given)."""
        if fn is None:
            return None
        if leadership is not None:
            fn = _while_leading(leadership, fn)
        loop, queue = self._loop, self._queue

        def hand_off(*args: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is left to call
                loop.call_soon_threadsafe(queue.put_nowait, (fn, args))

        return hand_off

    def stopped_leading(self, bound: float) -> asyncio.Task[None] | None:
        """Leadership ended (the registration is detached already): wait for the coroutine in progress to return,
        at most ``bound`` seconds, then cancel it (logged, counted in ``handler_errors``).

        On the loop's thread the wait cannot block: the returned task does it, and an asyncio elector awaits it
        before its ``on_stopped_leading``. On any other thread (a threaded elector) this blocks until done. A
        handler that ended leadership itself (its elector's ``stop()`` called from it) is not waited for.

        Returns:
            The task waiting (on the loop's thread, when a coroutine is in progress), else None.
        """
        if _HANDLING.get() is self:
            return None  # called from our own handler: it cannot return before this does
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            running = self._running
            return None if running is None or running.done() else self._loop.create_task(self._end(bound))
        if self._loop.is_closed():
            return None  # no handler runs
        try:
            asyncio.run_coroutine_threadsafe(self._end(bound), self._loop).result(bound * 2 + _MARGIN)
        except RuntimeError:
            pass  # the loop closed meanwhile: no handler runs
        except concurrent.futures.TimeoutError:
            _log.error("leadership ended but the event loop of the %s informer's async handlers did not answer "
                       "within %.1f s; going on", self._informer.group_kind, bound * 2 + _MARGIN)
        return None

    async def _end(self, bound: float) -> None:
        running = self._running
        if running is None or running.done():
            return
        done, _ = await asyncio.wait({running}, timeout=bound)
        if done:
            return
        _log.error("leadership ended but an async handler of the %s informer has not returned after %.1f s: "
                   "cancelling it", self._informer.group_kind, bound)
        self._cut = running
        running.cancel()
        done, _ = await asyncio.wait({running}, timeout=bound)
        if not done:
            _log.error("an async handler of the %s informer ignores its cancellation; going on",
                       self._informer.group_kind)

    async def _consume(self) -> None:
        # A handler's failure is counted and logged; it never ends this task (only remove_handler, or the loop
        # closing, cancels it), so later changes still reach every handler of the registration.
        informer = self._informer
        while True:
            fn, args = await self._queue.get()
            try:
                result = fn(*args)
            except BaseException:  # SystemExit, a CancelledError raised by a plain function: still not ours
                informer._count("handler_errors")
                _log.exception("async handler of the %s informer failed", informer.group_kind)
                continue
            if not inspect.isawaitable(result):
                continue
            running = self._running = asyncio.ensure_future(self._contained(result))
            try:
                error = await _outcome(running)
            finally:
                self._running = None
            if running is self._cut:
                self._cut = None
                informer._count("handler_errors")  # did not return in time (logged when cancelled)
            elif error is not None:
                informer._count("handler_errors")
                _log.error("async handler of the %s informer failed", informer.group_kind, exc_info=error)

    async def _contained(self, awaitable: Any) -> BaseException | None:
        """Await ``awaitable``; return what it raised (``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``
        too), None when it returned. Caught in here, so the task running this never sees it: a task whose coroutine
        raises ``SystemExit`` or ``KeyboardInterrupt`` re-raises it out of the event loop, ending
        ``asyncio.run()``."""
        _HANDLING.set(self)  # this task's own context
        try:
            await awaitable
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a handler's failure, whatever it is, is the handler's: counted by the caller
            return exc
        return None


async def _outcome(task: asyncio.Task[BaseException | None]) -> BaseException | None:
    """Wait for a handler's ``task``; return what it raised (None when nothing): a CancelledError it lets escape
    ended that task, not the caller, and is returned as a RuntimeError; cancelling the caller cancels it too."""
    try:
        await asyncio.wait({task})
    except asyncio.CancelledError:
        task.cancel()
        raise
    if task.cancelled():
        return RuntimeError("the handler let a CancelledError escape")
    return task.result()


def _while_leading(leadership: Leadership, fn: AsyncHandler) -> AsyncHandler:
    """``fn``, called only if ``leadership`` still leads when its turn on the loop comes."""

    def call(*args: Any) -> Any:
        return fn(*args) if leadership.is_leader else None

    return call
