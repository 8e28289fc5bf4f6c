"""Event handlers of an informer, and the thread that calls them (client-go ``sharedProcessor``, one queue).

Changes are queued by the informer while it holds its store's lock, so the queue order is the store's order.
One dispatch thread per informer calls the handlers in registration order, off the watch thread: a slow handler
delays later handlers of the same informer, never the watch stream (the queue is unbounded, as client-go's
``processorListener`` buffer). A handler added at any time (synced or not) receives synthetic ``on_add`` calls for
the objects held at that moment, queued for it alone; broadcast changes queued before it was added are not
delivered to it (they are already in its synthetic adds), so it sees every object exactly once and in order.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Dispatcher", "HandlerHandle"]

_log = logging.getLogger("restmapper.store")

OnAdd = Callable[[dict[str, Any]], Any]
OnUpdate = Callable[[dict[str, Any], dict[str, Any]], Any]
OnDelete = Callable[[dict[str, Any]], Any]

_STOP = object()
_BATCH = "BATCH"  # the change type of a queue item holding a list of entries (Entry: an object alone is an ADDED)


class HandlerHandle:
    """A registered set of handlers (returned by :meth:`Informer.add_handler`; pass it to ``remove_handler``).

    Attributes:
        on_add: ``on_add(obj)`` or None.
        on_update: ``on_update(old, new)`` or None.
        on_delete: ``on_delete(obj)`` (the last state seen) or None.
        active: False once removed (or the informer stopped); it is then never called again.
    """

    __slots__ = ("active", "on_add", "on_delete", "on_update", "since")

    def __init__(self, on_add: OnAdd | None, on_update: OnUpdate | None, on_delete: OnDelete | None,
                 since: int) -> None:
        self.on_add = on_add
        self.on_update = on_update
        self.on_delete = on_delete
        self.since = since  # broadcast changes with a lower sequence number predate this handler
        self.active = True

    def __repr__(self) -> str:
        return f"HandlerHandle(active={self.active})"


Item = tuple[int, "HandlerHandle | None", str, "dict[str, Any] | None", "dict[str, Any] | None"]


class Dispatcher:
    """The queue and thread delivering one informer's changes to its handlers.

    Attributes:
        handlers: the registered handles, in order (replaced, never mutated, under the informer's lock).
        seq: the sequence number of the last broadcast change queued (guarded by the informer's lock).
    """

    def __init__(self, label: str, *, count: Callable[[str], None], resync: float | None,
                 resync_snapshot: Callable[[], tuple[int, Sequence[dict[str, Any]]] | None], daemon: bool) -> None:
        self.handlers: tuple[HandlerHandle, ...] = ()
        self.seq = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # Changes queued in batches beyond one a batch (written by the queueing side only) and those of them
        # delivered or dropped (by the dispatch thread only): single writers, so the backlog needs no lock.
        self._batched = 0
        self._batched_done = 0
        self._count = count
        self._resync = resync
        self._resync_snapshot = resync_snapshot
        self._label = label
        self._calling: HandlerHandle | None = None  # the handle whose function runs now (dispatch thread)
        self._returned = threading.Condition()  # notified when a handler call returns
        self.thread = threading.Thread(target=self._run, name=f"restmapper-informer-{label}-handlers",
                                       daemon=daemon)

    @property
    def backlog(self) -> int:
        """Queued changes not yet delivered (approximate)."""
        return max(0, self._queue.qsize() + self._batched - self._batched_done)

    def broadcast_entries(self, entries: Sequence[Any]) -> None:
        """Queue the changes ``entries`` (``Entry``: an object alone is its ADDED, else ``(type, old, new)``; a
        sequence that decodes as it is read, such as the store's ``Changes``, is read only when delivered), in
        order, for every handler registered now, as one queue item (informer's lock held)."""
        first = self.seq + 1
        self.seq += len(entries)
        if self.handlers and entries:
            self._put_batch(first, None, entries)

    def _put_batch(self, seq: int, target: HandlerHandle | None, entries: Sequence[Any]) -> None:
        self._batched += len(entries) - 1
        self._queue.put((seq, target, _BATCH, entries, None))

    def add(self, handle: HandlerHandle, existing: Sequence[dict[str, Any]]) -> None:
        """Register ``handle`` and queue synthetic adds of ``existing`` for it alone (informer's lock held)."""
        self.handlers = (*self.handlers, handle)
        if existing:
            self._put_batch(0, handle, existing)

    def remove(self, handle: HandlerHandle) -> bool:
        """Unregister ``handle`` (informer's lock held); True when it was registered."""
        handle.active = False
        if handle not in self.handlers:
            return False
        self.handlers = tuple(h for h in self.handlers if h is not handle)
        return True

    def wait_returned(self, handle: HandlerHandle, timeout: float | None) -> bool:
        """Wait (informer's lock NOT held) until no function of ``handle`` is running; True when none is.

        Called on the dispatch thread (a handler removing itself, or stopping what it is bound to), it does not
        wait (it would wait for itself) and returns True. ``timeout``: seconds, None for no bound.
        """
        if threading.current_thread() is self.thread:
            return True
        with self._returned:
            return self._returned.wait_for(lambda: self._calling is not handle, timeout)

    def stop(self) -> None:
        """Deactivate every handler and end the thread after the item in progress."""
        for handle in self.handlers:
            handle.active = False
        self.handlers = ()
        self._queue.put(_STOP)

    def _run(self) -> None:
        next_resync = time.monotonic() + self._resync if self._resync else None
        while True:
            try:
                if next_resync is None:
                    item = self._queue.get()
                else:
                    item = self._queue.get(timeout=max(0.0, next_resync - time.monotonic()))
            except queue.Empty:
                assert self._resync is not None and next_resync is not None
                next_resync = time.monotonic() + self._resync
                self._resync_now()
                continue
            if item is _STOP:
                return
            if item[2] is _BATCH:
                self._deliver_batch(item[0], item[1], item[3])
            else:
                self._deliver(item)

    def _resync_now(self) -> None:
        # client-go's resync: every handler gets on_update(obj, obj) for every held object. It is numbered after
        # the last change (``seq + 1``, read with the snapshot under the informer's lock): a handler registered
        # after that change (``since == seq + 1``) gets it too, one registered later still has its own adds.
        snapshot = self._resync_snapshot()
        if snapshot is None:
            return
        seq, objects = snapshot
        self._count("resyncs")
        for obj in objects:
            self._deliver((seq + 1, None, "MODIFIED", obj, obj))

    def _deliver_batch(self, seq: int, target: HandlerHandle | None, entries: Sequence[Any]) -> None:
        # Every change of a batch was queued at once: a handler registered after it (since > seq) gets none.
        try:
            for entry in entries:
                if type(entry) is tuple:
                    self._deliver((seq, target, *entry))
                else:
                    self._deliver((seq, target, "ADDED", None, entry))
        finally:
            self._batched_done += len(entries) - 1

    def _deliver(self, item: Item) -> None:
        seq, target, change_type, old, new = item
        for handle in (target,) if target is not None else self.handlers:
            if not handle.active or (target is None and seq < handle.since):
                continue
            with self._returned:
                self._calling = handle
            try:
                _call(handle, change_type, old, new)
            except BaseException:  # SystemExit too: a handler never ends delivery, to itself or to others
                self._count("handler_errors")
                _log.exception("%s handler of the %s informer failed", change_type, self._label)
            finally:
                with self._returned:
                    self._calling = None
                    self._returned.notify_all()


def _call(handle: HandlerHandle, change_type: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
    """Call the function of ``handle`` for a change of ``change_type`` (``ADDED``, ``MODIFIED`` or ``DELETED``),
    if it has one."""
    if change_type == "ADDED":
        if handle.on_add is not None:
            assert new is not None
            handle.on_add(new)
    elif change_type == "MODIFIED":
        if handle.on_update is not None:
            assert old is not None and new is not None
            handle.on_update(old, new)
    elif handle.on_delete is not None:
        assert old is not None
        handle.on_delete(old)
