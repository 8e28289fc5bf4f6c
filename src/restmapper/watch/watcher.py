"""The :class:`Watcher`: CRD and APIService watches feeding the mapper's cache and a generation-aware cache."""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from restmapper.errors import APIStatusError, InvalidArgumentError
from restmapper.generation import GenerationCache
from restmapper.transport import check_seconds, end_idle_deadline_thread
from restmapper.transport.base import Transport
from restmapper.transport.retry import RetryPolicy
from restmapper.watch._loop import ResourceLoop
from restmapper.watch._objects import APISERVICES, CRDS
from restmapper.watch.reflector import DEFAULT_IDLE_TIMEOUT

__all__ = ["Handler", "WatchStats", "WatchedMapper", "Watcher"]

_log = logging.getLogger("restmapper.watch")

Handler = Callable[[str, str, Mapping[str, Any]], None]
"""``handler(event_type, kind, obj)``: ``ADDED``/``MODIFIED``/``DELETED``, ``CustomResourceDefinition`` or
``APIService``, the object in wire form (for a deletion found by a relist: a small copy of the last known state)."""


class WatchedMapper(Protocol):
    """What a :class:`Watcher` needs from the mapper it keeps fresh (:class:`~restmapper.mapper.LazyRESTMapper`
    provides it): the transport to list and watch with, and the invalidations."""

    @property
    def transport(self) -> Transport:
        """The transport discovery reads over."""
        ...

    def invalidate_group(self, group: str) -> None:
        """Drop one group; the next lookup that needs it refetches."""
        ...

    def invalidate_all(self) -> None:
        """Drop everything."""
        ...


@dataclass
class WatchStats:
    """Counters of a :class:`Watcher` (they only grow, across restarts).

    Attributes:
        lists: successful full lists (initial, after 410 Gone, after a restart).
        relists: relists the protocol needed: 410 Gone, a too large resourceVersion (an etcd restore), watches
            that ended at once again and again.
        connects: watch streams opened (HTTP 200).
        events: ADDED/MODIFIED/DELETED events received.
        bookmarks: BOOKMARK events received.
        invalidations: groups invalidated in the mapper.
        errors: failed lists or watches (each followed by a backoff).
        malformed: events or list items that could not be read (skipped).
        handler_errors: exceptions raised by handlers, ``SystemExit`` included (logged, never propagated).
        build_errors: exceptions raised while refreshing the generation-aware cache (logged).
    """

    lists: int = 0
    relists: int = 0
    connects: int = 0
    events: int = 0
    bookmarks: int = 0
    invalidations: int = 0
    errors: int = 0
    malformed: int = 0
    handler_errors: int = 0
    build_errors: int = 0


def _join_threads(loops: tuple[ResourceLoop, ...], timeout: float | None) -> bool:
    """Wait for the thread of each of ``loops`` that has one (``timeout`` seconds each, None: without bound);
    True when all of them ended."""
    ended = True
    for loop in loops:
        thread = loop.thread
        if thread is not None:
            thread.join(timeout)
            ended = ended and not thread.is_alive()
    return ended


class Watcher:
    """Lists then watches CRDs and APIServices and invalidates the mapper's cache for what changed.

    One thread per resource type. On a CRD added, deleted, or changed in what discovery serves (generation,
    ``status.acceptedNames``, served versions, ``Established``, deletion) the CRD's group is invalidated and the
    generation-aware cache refreshed (``get`` on add/update, ``forget`` on delete, ``prune`` on relist); on an
    APIService added, deleted, or whose ``Available`` condition (or group/version/priority) changed, its
    ``spec.group`` is invalidated. Status heartbeats and no-op updates invalidate nothing. Survives 410 Gone
    (relist, diffed against known state), dropped connections and server restarts (exponential backoff that a
    successful connect resets; a cleanly ended stream reconnects at once). A 403 on a resource logs one warning
    and disables that loop only: the mapper keeps healing by TTL, 404 eviction and miss revalidation.

    Lifetime: a watcher's lifetime is the process, not a leader-election lease. ``stop()`` ends the threads and
    removes every handler; ``start()`` again relists from scratch and invalidates the mapper's cache, so nothing
    from before the stop is served. Mirrors client-go's reflector protocol; the lesson of docs/design.md §1.3
    decides the lifetime rules.
    """

    def __init__(
        self,
        mapper: WatchedMapper,
        *,
        transport: Transport | None = None,
        generation_cache: GenerationCache[Any, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        watch_timeout: float = 300.0,
        watch_idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        daemon: bool = True,
        sleep: Callable[[threading.Event, float], None] | None = None,
        watch_apiservices: bool = True,
    ) -> None:
        """Create a stopped watcher.

        Args:
            mapper: the mapper whose cache is invalidated (a :class:`~restmapper.mapper.LazyRESTMapper`, or anything
                with the :class:`WatchedMapper` interface).
            transport: the transport to list and watch with; None uses the mapper's (``mapper.transport``).
            generation_cache: a cache of values derived from CRDs (e.g. ``GenerationCache.for_crds(...)``) kept
                fresh from the CRD events, or None.
            clock: monotonic clock in seconds (for ``last_event_at``, a watch that ended at once, and the healthy
                period that resets the backoff).
            backoff_initial: first wait after a failure, seconds; doubled per consecutive failure, plus up to 10 %
                of jitter.
            backoff_max: cap of one wait (before jitter), seconds.
            watch_timeout: ``timeoutSeconds`` asked of the server per watch request, seconds; the stream then
                ends and is reopened at once from the last resource version.
            watch_idle_timeout: seconds a watch may stay silent (no event, no bookmark; kube-apiserver sends a bookmark
                about every minute) before it is reopened at once (not a failure; a reconnect that fails is one).
            daemon: run the threads as daemon threads.
            sleep: ``sleep(stop_event, seconds)`` used for backoff waits (inject a recorder in tests); it should
                return early when ``stop_event`` is set. None waits on the event.
            watch_apiservices: also watch APIServices (aggregated APIs); False watches CRDs only.

        Raises:
            InvalidArgumentError: a negative backoff, a non-positive ``watch_timeout`` or ``watch_idle_timeout``, or
                any of them NaN or infinite.
            TypeError: ``mapper`` lacks the :class:`WatchedMapper` interface (a kubeconfig path, None), or a seconds
                option that is not a number (a bool or a string too).
        """
        needs = ("invalidate_group", "invalidate_all") + (("transport",) if transport is None else ())
        if not all(hasattr(mapper, name) for name in needs):
            hint = "; build one from a kubeconfig with LazyRESTMapper.from_kubeconfig()" \
                if isinstance(mapper, str) else ""
            raise TypeError(f"Watcher() takes a LazyRESTMapper (or an object with {', '.join(needs)}) as its first "
                            f"argument, not {type(mapper).__name__}{hint}")
        check_seconds("Watcher", "backoff_initial", backoff_initial, positive=False)
        check_seconds("Watcher", "backoff_max", backoff_max, positive=False)
        check_seconds("Watcher", "watch_timeout", watch_timeout)
        check_seconds("Watcher", "watch_idle_timeout", watch_idle_timeout)
        if backoff_max < backoff_initial:
            raise InvalidArgumentError("need 0 <= backoff_initial <= backoff_max")
        self.mapper = mapper
        self.transport: Transport = transport if transport is not None else mapper.transport
        self.generation_cache = generation_cache
        self._clock = clock
        self._backoff = RetryPolicy(initial_backoff=backoff_initial, max_backoff=backoff_max)
        self._watch_timeout = watch_timeout
        self._idle_timeout = watch_idle_timeout
        self._daemon = daemon
        self._sleep = sleep  # None: the reflector waits on the stop event
        self._kinds = (CRDS, APISERVICES) if watch_apiservices else (CRDS,)
        # _lock guards _handlers, _loops, _stop, _started, _warned and _stats updates.
        self._lock = threading.Lock()
        # Held while a session's side effects run (invalidation, cache refresh, handlers), so that stop() can wait
        # for one in progress and none starts after it. Re-entrant: a handler may call stop().
        self._dispatch = threading.RLock()
        # Serializes start() and stop() (never taken on a watch thread): a stop() racing a start() must see every
        # thread that start() creates, and never join one that is not started yet.
        self._lifecycle = threading.Lock()
        self._handlers: list[Handler] = []
        self._loops: tuple[ResourceLoop, ...] = ()
        # Loops of earlier sessions whose threads may still be ending (a start() that raced a stop() replaced them
        # before that stop() joined them): every stop() joins these too, so none outlives a stop() that says ended.
        self._retired: list[ResourceLoop] = []
        self._stop = threading.Event()
        self._stop.set()
        self._warned: set[str] = set()
        self._stats = WatchStats()
        self._last_event_at: float | None = None
        # Waiters (wait_for) sleep on this; notified on every invalidation and on health changes.
        self.changed = threading.Condition()
        self._change_count = 0

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> Watcher:
        """Start the threads (a no-op when running); returns self.

        A restart forgets everything known before, invalidates the mapper's whole cache and relists.
        """
        with self._lifecycle:
            with self._lock:
                if not self._stop.is_set():
                    return self
                stop = threading.Event()
                self._stop = stop
                loops = tuple(
                    ResourceLoop(self, kind, self.transport, stop, backoff=self._backoff, sleep=self._sleep,
                                 watch_timeout=self._watch_timeout, idle_timeout=self._idle_timeout,
                                 clock=self._clock, count=self._count) for kind in self._kinds)
                self._retired.extend(self._loops)
                self._loops = loops
            # Anything cached before the watch starts may predate changes no event will report.
            self.mapper.invalidate_all()
            for loop in loops:
                thread = threading.Thread(target=loop.run, name=f"restmapper-watch-{loop.kind.label}",
                                          daemon=self._daemon)
                thread.start()
                loop.thread = thread
        self._notify()
        return self

    def stop(self, timeout: float | None = 10.0) -> bool:
        """Stop the threads, remove every handler, and wait for the threads to end; then end the transports' shared
        request-deadline thread (``restmapper-deadlines``) unless someone else's request is in flight.

        Open watch streams are closed from this thread so blocked readers wake at once. When this returns, no
        handler runs and none will be called again (a handler running when stop() is called finishes first).

        Args:
            timeout: seconds to wait for each thread (a list request in flight cannot be interrupted; its
                result is discarded), or None to wait without bound.

        Returns:
            True when every thread ended within the timeout. Called from a handler (on a watch thread), it stops
            the session without waiting (the threads end as soon as the handler returns) and returns False.
        """
        current = threading.current_thread()
        with self._lock:
            on_watch_thread = any(loop.thread is current for loop in self._loops)
            stop, loops = self._stop, self._loops
            stop.set()
            self._handlers = []
        for loop in loops:
            loop.close_stream()
        if on_watch_thread:
            # This thread holds the dispatch lock the other loop may be waiting for: joining it would deadlock.
            self._notify()
            return False
        with self._lifecycle:
            # A start() in progress has finished creating its threads; wait for a dispatch in progress: later
            # ones see the stop event under the dispatch lock and do nothing.
            with self._lock:
                stop, loops = self._stop, self._loops
                stop.set()
                self._handlers = []
            for loop in loops:
                loop.close_stream()
            with self._dispatch:
                pass
            ended = _join_threads((*self._retired, *loops), timeout)
            self._retired = [loop for loop in self._retired if loop.thread is not None and loop.thread.is_alive()]
        self._notify()
        if ended:
            end_idle_deadline_thread(timeout)  # shared: only when no one else's request is in flight
        return ended

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # --- handlers --------------------------------------------------------------------------------------------

    def add_handler(self, fn: Handler, *, once: bool = False) -> None:
        """Call ``fn(event_type, kind, obj)`` for every CRD/APIService event of this session, after the cache
        was invalidated (so ``fn`` may look the new kind up). Handlers run on the watch threads, one at a time;
        exceptions (``SystemExit`` too) are logged and counted, never end the watch. ``stop()`` removes every handler.

        Args:
            fn: the handler.
            once: add ``fn`` only if it is not registered yet (checked and added under one lock, so a caller
                re-registering a handler never drops events in between, and never registers it twice).
        """
        with self._lock:
            if once and any(h is fn for h in self._handlers):
                return
            self._handlers.append(fn)

    def remove_handler(self, fn: Handler) -> bool:
        """Remove ``fn``; it is never called again once this returns (unless it is running right now on a
        watch thread). Returns True when it was registered."""
        with self._lock:
            if fn not in self._handlers:
                return False
            self._handlers = [h for h in self._handlers if h is not fn]
            return True

    # --- state -----------------------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """True between start() and stop() (also while a loop is disabled by RBAC or backing off)."""
        return not self._stop.is_set()

    @property
    def healthy(self) -> bool:
        """True while running, every enabled loop has listed and has its watch stream open, and at least one
        loop is enabled."""
        loops = self._loops
        enabled = [loop for loop in loops if not loop.disabled]
        return self.running and bool(enabled) and all(loop.synced and loop.connected for loop in enabled)

    @property
    def disabled(self) -> frozenset[str]:
        """The kinds (``CustomResourceDefinition``, ``APIService``) whose loop RBAC disabled in this session."""
        return frozenset(loop.kind.kind for loop in self._loops if loop.disabled)

    def watching(self, kind: str) -> bool:
        """True when the loop for ``kind`` is running, listed and connected (event-driven waits may rely on it)."""
        return self.running and any(loop.kind.kind == kind and not loop.disabled and loop.synced and loop.connected
                                    for loop in self._loops)

    @property
    def last_error(self) -> BaseException | None:
        """The most recent list/watch failure of this session (None when there was none)."""
        errors = [loop.last_error for loop in self._loops if loop.last_error is not None]
        return errors[-1] if errors else None

    @property
    def last_event_at(self) -> float | None:
        """Clock time of the last event, bookmark or list, or None."""
        return self._last_event_at

    @property
    def stats(self) -> WatchStats:
        """A snapshot of the counters."""
        with self._lock:
            return copy.copy(self._stats)

    @property
    def change_count(self) -> int:
        """A number that grows whenever a group is invalidated or the watcher's state changes."""
        return self._change_count

    def wait_for_change(self, after: int, timeout: float | None) -> bool:
        """Block until :attr:`change_count` exceeds ``after`` or ``timeout`` seconds passed.

        Returns:
            True when a change happened.
        """
        with self.changed:
            return self.changed.wait_for(lambda: self._change_count > after, timeout)

    def wait_until_healthy(self, timeout: float | None) -> bool:
        """Block until :attr:`healthy` (every enabled loop listed and connected) or ``timeout`` seconds passed.

        Returns:
            The value of :attr:`healthy` at return (a readiness probe may call this with a short timeout).
        """
        with self.changed:
            self.changed.wait_for(lambda: self.healthy or not self.running, timeout)
        return self.healthy

    # --- called by the loops ---------------------------------------------------------------------------------

    def _count(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self._stats, name, getattr(self._stats, name) + n)
        if name in ("events", "bookmarks", "lists"):
            self._last_event_at = self._clock()

    def _notify(self) -> None:
        with self.changed:
            self._change_count += 1
            self.changed.notify_all()

    def _loop_state(self, loop: ResourceLoop) -> None:
        self._notify()

    def _loop_forbidden(self, loop: ResourceLoop, error: APIStatusError) -> None:
        with self._lock:
            first = loop.kind.kind not in self._warned
            self._warned.add(loop.kind.kind)
        if first:
            _log.warning("not allowed to list/watch %s (%s): watching them is disabled; the mapper still heals "
                         "by TTL, 404 eviction and miss revalidation", loop.kind.path, error)
        self._notify()

    def _loop_relisted(self, loop: ResourceLoop, live: frozenset[str]) -> None:
        if loop.kind is CRDS and self.generation_cache is not None:
            with self._dispatch:
                if not loop.stop.is_set():
                    self.generation_cache.prune(live)
        self._notify()

    def _loop_event(self, loop: ResourceLoop, event_type: str, obj: Mapping[str, Any],
                    groups: frozenset[str], relisted: bool = False) -> None:
        with self._dispatch:
            if loop.stop.is_set():
                return  # an old session's thread, or stopping: never act for it
            for group in sorted(groups):
                self.mapper.invalidate_group(group)
            if groups:
                self._count("invalidations", len(groups))
                self._notify()
            if loop.kind is CRDS and self.generation_cache is not None:
                self._refresh_cache(event_type, obj, relisted)
            with self._lock:
                handlers = list(self._handlers)
            for handler in handlers:
                with self._lock:
                    if handler not in self._handlers:
                        continue  # removed by an earlier handler of this event
                try:
                    handler(event_type, loop.kind.kind, obj)
                except BaseException:  # SystemExit too: a handler never ends the watch thread
                    self._count("handler_errors")
                    _log.exception("watch handler %r failed on %s %s", handler, event_type, loop.kind.kind)

    def _refresh_cache(self, event_type: str, obj: Mapping[str, Any], relisted: bool) -> None:
        cache = self.generation_cache
        assert cache is not None
        try:
            uid = obj.get("metadata", {}).get("uid")
            # A relist is the truth: a CRD listed at a lower generation (etcd restored) replaces the entry.
            if (event_type == "DELETED" or relisted) and isinstance(uid, str):
                cache.forget(uid)
            if event_type != "DELETED":
                cache.get(obj)
        except BaseException as exc:  # user code (a generation cache build), SystemExit too: never ends the loop
            # A failing build must not stop the watch; the next get() by a reader retries it.
            self._count("build_errors")
            _log.warning("refreshing the generation cache for a CRD failed: %s", exc)
