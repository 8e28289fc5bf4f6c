"""Lease leader election on an asyncio event loop: :class:`AsyncLeaderElector`."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from restmapper._public import repr_when_unfinished
from restmapper.errors import InvalidArgumentError
from restmapper.leader._election import Election, Turn
from restmapper.leader._lock import LeaseLock, check_mapper
from restmapper.leader.elector import JITTER, ElectionView, validate_options, validate_timing
from restmapper.mapper.lazy import LazyRESTMapper

__all__ = ["AsyncLeaderElector"]

_log = logging.getLogger("restmapper.leader")


async def _call(name: str, callback: Callable[..., Any] | None, *args: Any) -> Exception | None:
    """Run (and await) ``callback``; log and return what it raised (never stops the election loop)."""
    if callback is None:
        return None
    try:
        result = callback(*args)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        _log.exception("leader election callback %s raised", name)
        return exc
    return None


def _call_now(name: str, callback: Callable[[], object]) -> object:
    """Run ``callback``; return what it returned (None when it raised: logged, never stops the election loop)."""
    try:
        return callback()
    except Exception:  # a listener's failure must not stop the election loop
        _log.exception("leader election callback %s raised", name)
        return None


class AsyncLeaderElector(ElectionView):
    """:class:`~restmapper.leader.LeaderElector` for asyncio: the same election, constructor and guarantees.

    The Lease requests run in a worker thread (:func:`asyncio.to_thread`), never on the event loop; callbacks run
    on the loop and may be plain functions or coroutine functions (awaited). ``on_started_leading`` runs in a task
    of its own (client-go's ``OnStartedLeading`` goroutine): a coroutine may run the controller for as long as we
    lead, renewals go on meanwhile; it must watch :attr:`is_leader` and return once it is False. When leadership
    ends the elector waits for it at most ``renew_deadline`` seconds (then logs an error), then awaits
    ``on_stopped_leading``, then (on a stop) releases the Lease. A plain function blocks the loop while it runs:
    keep plain callbacks, ``on_stopped_leading`` and ``on_new_leader`` short (the lease is not renewed while they
    run). ``is_leader`` is a plain property, exact at every instant.

    Example::

        elector = AsyncLeaderElector(mapper, "my-controller", "kube-system", on_started_leading=start_workers)
        await elector.start()
        ...
        await elector.stop()    # on_stopped_leading is awaited, then the Lease is released
    """

    def __init__(
        self,
        mapper: LazyRESTMapper,
        name: str,
        namespace: str,
        *,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        on_started_leading: Callable[[], object] | None = None,
        on_stopped_leading: Callable[[], object] | None = None,
        on_new_leader: Callable[[str], object] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Configure an elector; arguments as :class:`~restmapper.leader.LeaderElector`.

        Raises:
            InvalidArgumentError, TypeError: as :class:`~restmapper.leader.LeaderElector`.
        """
        check_mapper("AsyncLeaderElector", mapper)
        validate_timing(lease_duration, renew_deadline, retry_period)
        identity = validate_options(identity, release_on_cancel, clock, {
            "on_started_leading": on_started_leading, "on_stopped_leading": on_stopped_leading,
            "on_new_leader": on_new_leader})
        self.identity = identity
        self.name = name
        self.namespace = namespace
        self.release_on_cancel = release_on_cancel
        self.renew_deadline = renew_deadline
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._election = Election(LeaseLock(mapper, name, namespace), identity, lease_duration=lease_duration,
                                  renew_deadline=renew_deadline, retry_period=retry_period,
                                  clock=clock if clock is not None else time.monotonic)
        self._turn_lock: asyncio.Lock | None = None  # created on the loop that drives us
        self._stopping: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._in_turn: asyncio.Task[Any] | None = None  # the task running a turn now (turn lock held), or None
        self._running = False
        self._finished = False
        self._listeners: list[tuple[Callable[[], object], Callable[[], object]]] = []
        self._announced = False  # on_started_leading ran, on_stopped_leading not yet (changed on the loop only)
        self._term = 0  # counts starts of leading: a late failure of an earlier on_started_leading is ignored
        self._started_task: asyncio.Task[None] | None = None  # runs on_started_leading
        self._started_returned: asyncio.Event | None = None  # set when that returned

    def add_leadership_listener(self, on_started: Callable[[], object],
                                on_stopped: Callable[[], object]) -> Callable[[], None]:
        """Call ``on_started`` when we start leading (at once if we lead now) and ``on_stopped`` when we stop, on
        the loop, before the coroutine callbacks (see :meth:`LeaderElector.add_leadership_listener`). Call it on
        the loop that drives this elector. What ``on_stopped`` returns, when awaitable, is awaited before
        ``on_stopped_leading`` (the asyncio cache's wait for a handler coroutine in progress; keep it bounded).

        Returns:
            A function removing the listener.
        """
        pair = (on_started, on_stopped)
        self._listeners.append(pair)
        if self._announced:
            _call_now("leadership listener", on_started)

        def remove() -> None:
            if pair in self._listeners:
                self._listeners.remove(pair)

        return remove

    async def tick(self) -> float:
        """Run one turn now and return seconds until the next is due (see :meth:`LeaderElector.tick`).

        Raises:
            InvalidArgumentError: the elector was stopped.
        """
        async with self._lock():
            if self._finished:
                raise InvalidArgumentError(f"leader elector {self.identity!r} was stopped")
            turn = await self._turn()
        if self._event().is_set():  # stop() was called during the turn (from a callback)
            await self._finish()
        return turn.delay

    async def start(self) -> AsyncLeaderElector:
        """Run the election in a task on the running loop and return self.

        When that task is cancelled (``asyncio.run`` ending, a ``TaskGroup`` cancelling), the elector finishes as
        on :meth:`stop`: ``is_leader`` False, listeners and ``on_stopped_leading`` told, the Lease released with
        ``release_on_cancel``.

        Raises:
            InvalidArgumentError: already started, or stopped.
        """
        self._claim()
        self._task = asyncio.create_task(self._run_then_finish(), name=f"restmapper-leader-{self.name}")
        return self

    async def run(self) -> None:
        """Run the election until :meth:`stop` is called or the calling task is cancelled (then as a stop).

        Raises:
            InvalidArgumentError: already started, or stopped.
        """
        self._claim()
        await self._run_then_finish()

    async def stop(self) -> None:
        """Stop: ``is_leader`` turns False at once; if we were leading, ``on_stopped_leading`` runs (awaited) and
        then, with ``release_on_cancel``, the Lease is released, after the turn in flight (a request in a worker
        thread) ended. Once this returned, ``on_started_leading`` never runs. Idempotent; it does not raise the
        ``CancelledError`` of a cancelled :meth:`start` task.

        Called from a callback during a turn, it only asks for the stop: the elector finishes when the turn ends.
        """
        self._election.close()
        self._event().set()
        if self._in_turn is not None and self._in_turn is asyncio.current_task():
            return
        task = self._task
        if task is not None and task is not asyncio.current_task() and not task.done():
            await asyncio.wait([task])
        await self._finish()

    async def __aenter__(self) -> AsyncLeaderElector:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @repr_when_unfinished
    def __repr__(self) -> str:
        return (f"AsyncLeaderElector({self.namespace}/{self.name}, identity={self.identity!r}, "
                f"leading={self.is_leader})")

    # --- internals -------------------------------------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        if self._turn_lock is None:
            self._turn_lock = asyncio.Lock()
        return self._turn_lock

    def _event(self) -> asyncio.Event:
        if self._stopping is None:
            self._stopping = asyncio.Event()
        return self._stopping

    def _claim(self) -> None:
        if self._finished and not self._running:
            raise InvalidArgumentError(f"leader elector {self.identity!r} was stopped before it was started: "
                                       "an elector runs once, create a new one")
        if self._running or self._finished:
            raise InvalidArgumentError(f"leader elector {self.identity!r} was already started")
        self._running = True

    async def _run_then_finish(self) -> None:
        try:
            await self._loop()
        finally:  # also when cancelled: finish as a stop (the turn in flight, if any, ends before the release)
            self._election.close()
            await asyncio.shield(self._finish())

    async def _turn(self) -> Turn:
        """One turn (its requests in a worker thread) and its callbacks (turn lock held)."""
        self._in_turn = asyncio.current_task()
        try:
            turn = await asyncio.to_thread(self._election.turn)
            await self._callbacks(turn)
        finally:
            self._in_turn = None
        return turn

    async def _loop(self) -> None:
        stopping = self._event()
        while not stopping.is_set():
            async with self._lock():
                if stopping.is_set():
                    break
                turn = await self._turn()
            delay = turn.delay
            if not self._election.leading:
                delay *= 1 + JITTER * random.random()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stopping.wait(), delay)

    async def _callbacks(self, turn: Turn) -> None:
        if turn.new_leader is not None:
            await _call("on_new_leader", self._on_new_leader, turn.new_leader)
        if turn.started and not self._election.closed:  # never start after a stop
            _log.info("leader election %s/%s: %s started leading", self.namespace, self.name, self.identity)
            await self._announce(started=True)
        if turn.stopped and self._announced:
            _log.info("leader election %s/%s: %s stopped leading", self.namespace, self.name, self.identity)
            await self._announce(started=False)

    async def _announce(self, *, started: bool) -> None:
        """Run the listeners, then the user's callback, of a start or a stop (turn lock held); as
        :meth:`LeaderElector._announce`: a start runs ``on_started_leading`` in a task of its own, a stop waits for it
        (at most ``renew_deadline`` seconds) before ``on_stopped_leading``."""
        self._announced = started
        waits = []
        for on_started, on_stopped in list(self._listeners):
            result = _call_now("leadership listener", on_started if started else on_stopped)
            if inspect.isawaitable(result):  # a listener's wait that cannot block the loop (bounded by it)
                waits.append(asyncio.ensure_future(result))
        if waits:
            await asyncio.wait(waits)
        if started:
            self._term += 1
            self._started_returned = asyncio.Event()
            self._started_task = asyncio.create_task(self._run_started(self._term, self._started_returned),
                                                     name=f"restmapper-leader-{self.name}-started")
            return
        returned = self._started_returned
        if returned is not None and asyncio.current_task() is not self._started_task:
            try:
                await asyncio.wait_for(returned.wait(), self._election.renew_deadline)
            except asyncio.TimeoutError:
                _log.error("leader election %s/%s: %s stopped leading but on_started_leading has not returned after "
                           "%s s (it must return once is_leader is False); going on", self.namespace, self.name,
                           self.identity, self._election.renew_deadline)
        await _call("on_stopped_leading", self._on_stopped)

    async def _run_started(self, term: int, returned: asyncio.Event) -> None:
        """The task of ``on_started_leading``; when it raises, hand the lease over (see LeaderElector)."""
        try:
            failure = await _call("on_started_leading", self._on_started)
        finally:
            returned.set()
        if failure is None:
            return
        async with self._lock():
            if self._term == term and self._announced and not self._finished:
                await self._announce(started=False)
                await asyncio.to_thread(self._election.resign, failure)

    async def _finish(self) -> None:
        if self._finished:
            return
        async with self._lock():
            if self._finished:
                return
            self._finished = True
            self._election.close()
            if self._announced:
                await self._announce(started=False)
            if self.release_on_cancel:  # after the callback returned; release() waits for the turn in flight
                await asyncio.to_thread(self._election.release)
