"""Handlers bound to leadership: attached while a leader elector leads, detached when it stops (DESIGN 5.9).

When leadership ends, the detach waits (at most the elector's ``renew_deadline``, or :data:`DEFAULT_WAIT`) for a call
of the handlers already in progress to return, so the elector's ``on_stopped_leading`` and its release of the Lease
come after it: a standby never runs its handlers while ours still run.

The informer keeps running whatever the lease does, so a replica that regains the lease resumes from a synced
store: no relist, and the re-attached handlers get synthetic adds for what is held (as any late handler does).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from restmapper.store._handlers import HandlerHandle, OnAdd, OnDelete, OnUpdate

__all__ = ["DEFAULT_WAIT", "Leadership", "LeadershipBinding"]

_log = logging.getLogger("restmapper.store")

DEFAULT_WAIT = 10.0
"""Seconds a detach waits for a handler call in progress when the elector has no ``renew_deadline``."""


@runtime_checkable
class Leadership(Protocol):
    """What a handler binding needs of a leader elector (``restmapper.leader.LeaderElector`` has it)."""

    @property
    def is_leader(self) -> bool:
        """True while leading, at this instant."""
        ...

    def add_leadership_listener(self, on_started: Callable[[], object],
                                on_stopped: Callable[[], object]) -> Callable[[], None]:
        """Call ``on_started`` when leadership starts (at once if leading now) and ``on_stopped`` when it ends,
        both before the elector's own callbacks; return a function that removes the listener. An asyncio elector
        awaits what ``on_stopped`` returns when it is awaitable (a wait that cannot block its loop)."""
        ...


class LeadershipBinding(HandlerHandle):
    """Handlers attached to an informer while ``leadership`` leads (returned by ``add_handler(...,
    while_leading=...)``; pass it to ``remove_handler``).

    ``active`` is True until removed; the handlers themselves are called only while the elector leads.
    """

    __slots__ = ("_attach", "_detach", "_detached", "_inner", "_leadership", "_lock", "_unlisten")

    def __init__(self, leadership: Leadership, attach: Callable[[OnAdd | None, OnUpdate | None, OnDelete | None],
                                                                 HandlerHandle],
                 detach: Callable[..., bool], on_add: OnAdd | None, on_update: OnUpdate | None,
                 on_delete: OnDelete | None, *, on_detached: Callable[[float], object] | None = None) -> None:
        """Follow ``leadership``: ``attach(on_add, on_update, on_delete)`` while it leads, ``detach(handle,
        wait=seconds)`` when it stops, then ``on_detached(seconds)`` (the asyncio cache waits there for a coroutine
        in progress; what it returns goes back to the elector, which awaits it if it is an asyncio elector)."""
        super().__init__(on_add, on_update, on_delete, 0)
        self._leadership = leadership
        self._attach, self._detach, self._detached = attach, detach, on_detached
        self._lock = threading.Lock()  # guards _inner
        self._inner: HandlerHandle | None = None
        self._unlisten = leadership.add_leadership_listener(self._started, self._stopped)

    @property
    def attached(self) -> bool:
        """True while the handlers are registered with the informer (between a start and a stop of leading)."""
        return self._inner is not None

    def remove(self, wait: float | None = None) -> bool:
        """Detach the handlers and stop following the elector; returns True the first time.

        Args:
            wait: None, or seconds to wait for a call of the handlers in progress to return (see
                ``Informer.remove_handler``; no wait on the handlers' own thread).
        """
        if not self.active:
            return False
        self.active = False
        self._unlisten()
        self._detach_inner(wait)
        return True

    def _guarded(self, fn: Callable[..., Any] | None) -> Callable[..., Any] | None:
        if fn is None:
            return None
        leadership = self._leadership

        def call(*args: Any) -> Any:
            if leadership.is_leader:  # between losing the lease and the detach, a change is not handled
                return fn(*args)
            return None

        return call

    def _started(self) -> None:
        with self._lock:
            if self._inner is None and self.active:
                self._inner = self._attach(self._guarded(self.on_add), self._guarded(self.on_update),
                                           self._guarded(self.on_delete))

    def _stopped(self) -> object:
        # Leadership ended: the elector runs this before on_stopped_leading and its release, so a handler call in
        # progress returns first. A handler that never returns is waited for at most the elector's renew_deadline
        # (then logged as an error): the lease is not held past it anyway, so the guarantee ends there.
        bound = getattr(self._leadership, "renew_deadline", None)
        seconds = float(bound) if isinstance(bound, (int, float)) else DEFAULT_WAIT
        self._detach_inner(seconds)
        return self._detached(seconds) if self._detached is not None else None

    def _detach_inner(self, wait: float | None) -> None:
        with self._lock:
            inner, self._inner = self._inner, None
        if inner is not None:
            self._detach(inner, wait=wait)
