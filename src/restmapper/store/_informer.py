"""One self-healing informer: the objects of one kind, kept by a :class:`~restmapper.watch.reflector.Reflector`.

State machine (``Informer.state``)::

    starting ──list ok──▶ synced ◀──connect ok── failing (errors, backing off; synced data still served)
       │                    │  ▲
       │ no-match      404 / early end: report to the mapper, re-resolve (same kind at another version: relist)
       ▼                    ▼  │
    not_served ◀── the mapper says the kind is not served (handlers see deletes; reads raise the no-match)
       │ served again (watcher CRD event, or a bounded re-probe with backoff) ─▶ starting (backoff reset)
    stopped (only by the cache's stop(); a stopped informer is never handed out again)

A kind listed per namespace (the cache's ``namespaces``) runs one reflector per namespace
(:class:`~restmapper.store._reflectors.ReflectorGroup`): ``namespaces_state`` gives each one's state and ``state``
the worst; a namespace refused by RBAC (403) fails alone while the others are served.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, TypeVar

from restmapper.errors import RestMapperError, TransformError, TransportError, is_no_match
from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.model import GroupKind, RESTMapping
from restmapper.store._args import check_handle, check_selectors
from restmapper.store._errors import InformerStoppedError
from restmapper.store._handlers import Dispatcher, HandlerHandle, OnAdd, OnDelete, OnUpdate
from restmapper.store._objects import IndexFunc, ObjectStore
from restmapper.store._reads import InformerReads, _NotReadable
from restmapper.store._reflectors import NamespaceState, ReflectorGroup, SyncModes
from restmapper.store._scope import Scope
from restmapper.store._sink import InformerSink
from restmapper.store._stats import InformerStats, State, Transform
from restmapper.store._waits import InformerWaits
from restmapper.transport.base import Transport
from restmapper.transport.retry import RetryPolicy
from restmapper.watch.reflector import Reflector

__all__ = ["Informer", "InformerStats", "State", "Transform", "_NotReadable"]

_log = logging.getLogger("restmapper.store")

_T = TypeVar("_T")
_DISCOVERY_POLL = 0.05  # seconds between looks, while joining, at whether the thread waits for discovery


class _InformerThread(threading.Thread):
    """An informer's list/watch thread; ``in_discovery`` is True while it waits for a discovery lookup (the
    mapper's, shared with other callers): :meth:`Informer._join` does not wait for such a thread."""

    in_discovery = False


class Informer(InformerReads, InformerWaits, InformerSink):
    """List-then-watch of one kind into a generation-aware store, with handlers and indexers.

    Get one from :meth:`ObjectCache.informer`; it runs for the life of its cache (see the ``restmapper.store``
    module docstring for the leader-election pattern). Mirrors client-go's ``SharedIndexInformer``; adds healing
    (the kind moving to another version, vanishing and coming back) and read-your-writes (:meth:`wait_for`).

    Attributes:
        group_kind: the kind this informer holds.
    """

    _mismatch = 0  # lists/events in a row whose objects were not what the mapping says (_disagrees); see _readable
    _transform_error: TransformError | None = None  # set by a refused object, cleared by a good list; see _readable
    # While a by_kind key of the cache has not resolved: the cache's scope for this kind, asked again each time the
    # kind starts being served (the key may name it then). A class default: one instance attribute fewer.
    _rescope: Callable[[], Scope] | None = None

    def __init__(self, group_kind: GroupKind, mapper: LazyRESTMapper, transport: Transport, *,
                 scope: Scope, resync: float | None, sync_timeout: float,
                 watch_timeout: float, idle_timeout: float, relist_period: float | None, backoff: RetryPolicy,
                 probe: RetryPolicy, page_size: int,
                 sleep: Callable[[threading.Event, float], None] | None, daemon: bool,
                 watched: Callable[[], bool], sync_modes: SyncModes, announce: bool = False,
                 rescope: Callable[[], Scope] | None = None) -> None:
        self.group_kind = group_kind
        self._label = str(group_kind)
        self._mapper = mapper
        if rescope is not None:
            self._rescope = rescope
        self._scope = scope
        self._namespaces = scope.namespaces
        self._namespace = scope.namespaces[0] if scope.namespaces is not None and len(scope.namespaces) == 1 else None
        self._transform = scope.transform
        self._sync_timeout = sync_timeout
        self._probe = probe
        self._announce = announce  # log at INFO what it lists once it knows the kind's scope
        self._watched = watched  # True while a CRD watcher will wake us when the kind is served again
        self._sync_modes = sync_modes  # the cache's: WatchList or paginated lists, per API group version
        self._store = ObjectStore()
        self._by_ns = self._store.objects_by_namespace  # read-only alias for the warm get path
        # _cond's lock is the store's lock: it guards the fields below, every store write and every queueing.
        self._cond = threading.Condition(self._store.lock)
        self._state: State = "starting"
        # Synced and served (get/list answer from the store): 0 when not, else a number new at every list that
        # makes it readable. A lock-free read that finds the same number before and after its store read answered
        # from one state (see _read). One attribute, not a flag and a counter: beyond 28 instance attributes
        # CPython's attribute access on the warm get path slows down by ~20 %.
        self._readable = 0
        self._mapping: RESTMapping | None = None
        self._namespaced = False
        self._no_match: RestMapperError | None = None
        self._error: BaseException | None = None  # the last lookup error (the reflector keeps its own)
        self._observed_rv = ""
        self._observed_in: dict[str, str] = {}  # per namespace of a per-namespace scope: its reflector's
        self._waiters = 0
        self._listeners: builtins.list[Callable[[], None]] = []
        self._counts = dict.fromkeys((f.name for f in fields(InformerStats) if f.name != "sync_mode"), 0)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._not_found_streak = 0
        # The namespaces whose next list is in another version's representation than what is held (a move).
        self._moved: set[str] = set()

        def reflector(namespace: str, sink: Any) -> Reflector:
            return Reflector(transport, "", sink, self._stop, label=f"{self._label} in {namespace}" if namespace
                             else self._label, backoff=backoff, sleep=sleep, watch_timeout=watch_timeout,
                             idle_timeout=idle_timeout, relist_period=relist_period, page_size=page_size,
                             count=self._count, return_on_early_end=True, params=self._scope.params(),
                             metadata_only=self._scope.metadata_only, page=self._prepare_page,
                             watch_list=sync_modes.watch_list)

        self._group = ReflectorGroup(reflector, self, self._stop)
        self._dispatcher = Dispatcher(self._label, count=self._count, resync=resync,
                                      resync_snapshot=self._resync_snapshot, daemon=daemon)
        self._thread = _InformerThread(target=self._run, name=f"restmapper-informer-{self._label}", daemon=daemon)

    # --- lifecycle (driven by the cache) ----------------------------------------------------------------------------

    def _start(self) -> None:
        self._dispatcher.thread.start()
        self._thread.start()

    def _signal_stop(self) -> None:
        """Tell both threads to end (cuts the list/watch request in flight); returns at once."""
        with self._cond:
            self._state = "stopped"
            self._unreadable()
            self._dispatcher.stop()
            self._changed()
        self._stop.set()
        self._wake.set()
        self._group.halt()

    def _join(self, deadline: float | None) -> bool:
        """Wait for both threads until ``deadline`` (``time.monotonic()`` seconds; None: without bound); True when
        they ended. The list/watch thread inside a discovery lookup is abandoned, not waited for: that request is
        the mapper's (shared, never cancelled: cutting it would fail it for every caller sharing it), it is bounded
        by the transport's request timeout, and the thread ends after it without a request or a change."""
        current = threading.current_thread()
        ended = True
        for thread in (self._dispatcher.thread, self._thread):
            if thread is not current and thread.ident is not None:
                ended = self._join_thread(thread, deadline) and ended
        return ended

    def _join_thread(self, thread: threading.Thread, deadline: float | None) -> bool:
        """Wait for one of the informer's threads (see :meth:`_join`); True when it ended or is left in discovery."""
        def done() -> bool:
            return not thread.is_alive() or (thread is self._thread and self._thread.in_discovery)

        while not done():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            thread.join(_DISCOVERY_POLL if left is None else min(left, _DISCOVERY_POLL))
        return done()

    def _poke(self) -> None:
        """Re-resolve soon (a CRD of this group changed): wake a not-served wait, interrupt a watch."""
        self._wake.set()
        if self._state != "not_served":
            self._group.interrupt()

    # --- state ---------------------------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """``"starting"`` | ``"synced"`` | ``"not_served"`` | ``"failing"`` | ``"stopped"`` (module docstring)."""
        return self._state

    @property
    def namespaces_state(self) -> dict[str, NamespaceState]:
        """Each namespace's state when the kind is listed per namespace (``"starting"``, ``"synced"``, or
        ``"failing"``: backing off, e.g. after a 403 there, whose message :meth:`get`/:meth:`list` of that
        namespace raise); empty for one cluster-wide list. :attr:`state` is the worst of them."""
        return self._group.states()

    @property
    def scope(self) -> Scope:
        """What this informer holds (its namespaces, selectors, metadata-only, transform)."""
        return self._scope

    @property
    def has_synced(self) -> bool:
        """True when the store holds a complete list of a served kind (reads answer from it)."""
        return self._readable != 0

    @property
    def mapping(self) -> RESTMapping | None:
        """The RESTMapping listed and watched now (None before the first resolution and while not served)."""
        return self._mapping

    @property
    def last_error(self) -> BaseException | None:
        """The most recent failure (lookup, transform, list/watch, or the no-match while not served), or None."""
        known = self._error if self._error is not None else self._transform_error
        return known if known is not None else self._group.last_error()

    @property
    def stats(self) -> InformerStats:
        """A snapshot of the counters."""
        with self._cond:
            counts = dict(self._counts, objects=len(self._store), stale_drops=self._store.stale_drops,
                          backlog=self._dispatcher.backlog, bytes=self._store.bytes_held())
            age = self._store.seconds_since_heard()
        counts.pop("last_event_age_seconds", None)
        # "watch-list" only while every reflector (every namespace) syncs by it and the cache has not seen this API
        # group version's server refuse it (a reflector learns that at its next run).
        mapping = self._mapping
        watch_list = all(r.watch_list for r in self._group.all()) and (
            mapping is None or self._sync_modes.watch_list_for(mapping.resource.group_version))
        return InformerStats(**counts, sync_mode="watch-list" if watch_list else "list",
                             last_event_age_seconds=age)

    def wait_for_state(self, *states: State, timeout: float | None) -> bool:
        """Block until :attr:`state` is one of ``states`` or ``timeout`` seconds passed.

        Args:
            states: the :data:`State` names to wait for (``"synced"``, ``"not_served"``, ...).
            timeout: at most this many seconds; None waits without bound.

        Returns:
            True when the state is one of ``states`` at return, False at the timeout (never raises).
        """
        with self._cond:
            return self._cond.wait_for(lambda: self._state in states, timeout)

    def wait_until(self, predicate: Callable[[Informer], bool], timeout: float | None) -> bool:
        """Block until ``predicate(self)`` holds or ``timeout`` seconds passed; True when it holds.

        The predicate is checked at once and after every state change, mapping change, list and event, with the
        informer's lock held: keep it short and non-blocking (reading :attr:`state`, :attr:`mapping`,
        :meth:`get` of a synced informer, :attr:`stats` is fine).

        Args:
            predicate: called with this informer; True ends the wait.
            timeout: at most this many seconds; None waits without bound.

        Returns:
            True when the predicate held, False at the timeout.

        Raises:
            Exception: whatever ``predicate`` raises (the wait ends).
        """
        with self._cond:
            self._waiters += 1
            try:
                return self._cond.wait_for(lambda: predicate(self), timeout)
            finally:
                self._waiters -= 1

    def _unreadable(self) -> None:
        # Lock held: reads wait from now on, and a read in progress that decided before this reads again.
        self._readable = 0

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """Add an index: ``fn(obj)`` returns the index values of ``obj`` (client-go ``IndexFunc``).

        Args:
            name: the index name, for :meth:`by_index` and ``list(index=...)``.
            fn: maps an object (a dict) to the list of str values it is indexed under.

        Raises:
            InvalidArgumentError: the name is taken or ``fn`` is not callable.
            TypeError: ``name`` is not a str.
            Exception: whatever ``fn`` raises on a held object (nothing is added then).
        """
        check_selectors("Informer.add_indexer", None, None, None, name, None)
        self._store.add_indexer(name, fn)

    def by_index(self, name: str, value: str) -> builtins.list[dict[str, Any]]:
        """Return the objects whose index ``name`` holds ``value`` (waits for sync as :meth:`get`; client-go
        ``ByIndex``).

        Args:
            name: an index added with :meth:`add_indexer`.
            value: the index value.

        Returns:
            A new list of the objects (each shared, read-only by contract), ordered by namespace then name.

        Raises:
            InvalidArgumentError: no such index. And as :meth:`get` for the sync.
            TypeError: ``name`` or ``value`` is not a str.
        """
        check_selectors("Informer.by_index", None, None, None, name, value)
        return self._read(self._store.by_index, name, value)

    # --- handlers --------------------------------------------------------------------------------------------------

    def add_handler(self, on_add: OnAdd | None = None, on_update: OnUpdate | None = None,
                    on_delete: OnDelete | None = None) -> HandlerHandle:
        """Register handlers; ``on_add`` is called at once for every object the store holds now, synced or not
        (as client-go's shared informer ``AddEventHandler``): with namespaces listed separately, those already
        listed while another still fails; later changes follow in order, each object added once.

        Handlers run on this informer's handler thread, in registration order, never on the watch thread; any
        exception (``SystemExit`` too) is logged and counted (``stats.handler_errors``) and delivery goes on.
        ``on_delete`` gets the last state seen.
        Handlers survive ``not_served`` periods (they see deletes, then adds when the kind is back).

        Args:
            on_add: ``on_add(obj)``, for each object added (and each held at registration).
            on_update: ``on_update(old, new)``, for each change.
            on_delete: ``on_delete(obj)``, with the last state seen.

        Returns:
            A :class:`HandlerHandle`; pass it to :meth:`ObjectCache.remove_handler` to unregister them.

        Raises:
            InformerStoppedError: the informer is stopped.
            TypeError: a handler that is not callable.
        """
        for fn in (on_add, on_update, on_delete):
            if fn is not None and not callable(fn):
                raise TypeError(f"handlers must be callable, got {type(fn).__name__}")
        with self._cond:
            if self._state == "stopped":
                raise InformerStoppedError(f"the {self._label} informer is stopped; ask the cache again")
            handle = HandlerHandle(on_add, on_update, on_delete, self._dispatcher.seq + 1)
            self._dispatcher.add(handle, self._store.snapshot())
        return handle

    def remove_handler(self, handle: HandlerHandle, *, wait: float | None = None) -> bool:
        """Unregister ``handle``: it is not called once this returns (unless it is running now and ``wait`` is
        None).

        Args:
            handle: what :meth:`add_handler` returned.
            wait: None: return at once. Seconds: also wait, at most that long, for a call of its functions already
                in progress to return (so that, once this returned, none of them runs; a timeout is logged as an
                error). Called from a handler of this informer (its dispatch thread), it does not wait: the
                caller's own call is in progress there.

        Returns:
            True when it was registered.

        Raises:
            TypeError: ``handle`` is not a HandlerHandle (a handler function, say).
            ValueError: ``wait`` is negative or not a number.
        """
        check_handle("Informer.remove_handler", handle, HandlerHandle)
        if wait is not None and (isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0):
            raise ValueError(f"wait must be None or a number of seconds >= 0, got {wait!r}")
        with self._cond:
            removed = self._dispatcher.remove(handle)
        if wait is not None and not self._dispatcher.wait_returned(handle, wait):
            _log.error("a handler of the %s informer still runs %s s after it was removed", self.group_kind, wait)
        return removed

    def _listen(self, fn: Callable[[], None], on: bool = True) -> None:
        """Add (or remove) a callback run, lock held, after every change a waiter may care about (asyncio)."""
        with self._cond:
            self._listeners = [f for f in self._listeners if f is not fn] + ([fn] if on else [])

    def _changed(self) -> None:
        # Lock held: wake blocking waiters and tell listeners (they must only schedule, never block).
        self._cond.notify_all()
        for fn in self._listeners:
            fn()

    # --- the informer thread -----------------------------------------------------------------------------------

    def _count(self, name: str, n: int = 1) -> None:
        with self._cond:
            self._counts[name] += n

    def _run(self) -> None:
        relist = True
        while not self._stop.is_set():
            mapping = self._resolve()
            if mapping is None:
                return
            if mapping != self._mapping:
                if not self._move_to(mapping):
                    continue
                relist = True
            # WatchList while the cache has not seen this API group version's server refuse it (for every
            # reflector: a per-namespace one that found out alone told the cache, see reflector_replace_in).
            self._group.sync_by_watch_list(self._sync_modes.watch_list_for(mapping.resource.group_version))
            outcome = self._group.run(relist)
            if outcome == "stopped":
                return
            relist = self._after_run(outcome, mapping)

    def _move_to(self, mapping: RESTMapping) -> bool:
        """Serve ``mapping`` (the first, or a new one: another version, path or scope): lay out its reflectors and
        make it the informer's; False (the failure recorded, backed off) when the layout failed."""
        if self._mapping is not None:
            self._count("moves")
            _log.info("%s informer moves from %s (%s) to %s (%s)", self._label, self._mapping.resource,
                      self._mapping.scope.value, mapping.resource, mapping.scope.value)
        # Held objects stay for the relist's diff, but are no answer (old version). A kind that changed
        # scope changes layout: one reflector per namespace of the scope, or one for the collection.
        rescoped = self._mapping is None and self._scope_again()
        try:
            self._group.layout(self._namespaces if mapping.namespaced else None, mapping.path,
                               fresh=rescoped)
        except Exception as exc:  # a bug below must not end the thread while `state` says it runs
            _log.error("%s informer cannot lay out its reflectors: %r", self._label, exc)
            self._error = exc
            self._set_state()
            self._group.lead.fail(exc)
            return False
        if self._announce:
            self._announce = False
            _log.info("started the %s informer: %s (%s %s)", self._label,
                      self._scope.describe(mapping.namespaced), mapping.resource.group_version,
                      mapping.resource.resource)
        with self._cond:
            self._unreadable()  # first: a lock-free read must not see the new scope as readable
            self._moved = set(self._group.reflectors) if self._mapping is not None else set()
            self._mapping, self._namespaced = mapping, mapping.namespaced
            self._observed_in.clear()
            if self._mismatch:
                self._mismatch = 0
            self._set_state()  # in the same critical section: never the new mapping with state synced
        return True

    def _after_run(self, outcome: str, mapping: RESTMapping) -> bool:
        """Act on why the reflectors returned (``outcome``, not "stopped") over ``mapping``; whether the next run
        lists again."""
        lead = self._group.lead
        if self._transform_error is not None:
            # A transform refused an object (the list or event that carried it was not stored): back off,
            # then list again, as client-go's reflector does when its store's transform fails.
            self._group.reset()
            lead.fail(self._transform_error)
            return True
        if self._mismatch:
            # The server's objects are not what the mapping says: discovery is stale. Ask it again, list
            # again (what was refused is not held), and back off while it keeps saying the same.
            self._mapper.invalidate_group(mapping.resource.group)
            self._group.reset()
            if self._mismatch > 1:
                lead.fail(TransportError(f"{self._label} objects disagree with discovery", path=lead.path))
            return True
        if outcome == "not_found":
            # A 404 for the resource type: evict the group so the next resolution refetches discovery.
            self._count("not_found")
            self._not_found_streak += 1
            self._mapper.report_not_found(mapping.resource.group_version)
            if self._not_found_streak > 1:
                # Discovery still sends us to a path that 404s (the upgrade race): back off, then retry.
                lead.fail(lead.last_error or TransportError("404", path=""))
            return True
        if outcome == "forbidden":
            relist = not lead.synced
            lead.fail(lead.last_error or TransportError("403", path=""))
            return relist
        if outcome == "ended_early":
            # A stream that ends long before its timeout is how a storage teardown looks (CRD deleted or
            # recreated, version no longer served): ask discovery again before reconnecting, at most once per
            # the mapper's miss_refresh_interval for the group (a flapping endpoint ends every watch early:
            # each must not become a discovery request); the reflector backs off when it keeps happening.
            self._mapper.cache.report_not_found_limited(mapping.resource.group_version)
        return False

    def _resolve(self) -> RESTMapping | None:
        probes = 0
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self._thread.in_discovery = True
                try:
                    mapping = self._mapper.rest_mapping(self.group_kind)
                finally:
                    self._thread.in_discovery = False
            except RestMapperError as exc:
                if is_no_match(exc):
                    self._enter_not_served(exc)
                    probes += 1
                    delay = self._probe.max_backoff if self._watched() else self._probe.backoff(probes)
                    self._wake.wait(delay)
                    continue
                self._error = exc
                self._set_state()
                self._group.lead.fail(exc)  # discovery failed: we cannot tell, keep serving what we hold
                continue
            except Exception as exc:  # a bug below must not end the thread while `state` says it runs
                self._error = exc
                self._set_state()
                self._group.lead.fail(exc)
                continue
            self._error = None
            if self._state == "not_served":
                with self._cond:
                    self._state, self._no_match = "starting", None
                    self._counts["restarts"] += 1
                    self._changed()
                for reflector in self._group.all():
                    reflector.reset_backoff()  # served again: start over with a fresh backoff (§1.3)
            return mapping
        return None

    def _scope_again(self) -> bool:
        """Ask the cache for this kind's scope again (the kind is served now: a ``by_kind`` key that did not
        resolve may name it); True when it changed (informer thread, nothing held: before its first list)."""
        if self._rescope is None:
            return False
        try:
            scope = self._rescope()
        except RestMapperError as exc:
            _log.warning("%s informer keeps its scope: the cache's by_kind could not be resolved (%s)", self._label,
                         exc)
            return False
        if scope == self._scope:
            return False
        with self._cond:
            self._scope, self._namespaces, self._transform = scope, scope.namespaces, scope.transform
            one = scope.namespaces is not None and len(scope.namespaces) == 1
            self._namespace = scope.namespaces[0] if one and scope.namespaces is not None else None
        _log.info("%s informer takes its by_kind scope: %s", self._label, scope.describe())
        return True

    def _enter_not_served(self, exc: RestMapperError) -> None:
        with self._cond:
            if self._state == "stopped":
                return
            first = self._state != "not_served"
            self._unreadable()
            self._state, self._no_match, self._error = "not_served", exc, exc
            if self._transform_error is not None:
                self._transform_error = None
            self._mapping = None
            if self._mismatch:
                self._mismatch = 0
            self._dispatcher.broadcast_entries(self._store.replace_entries([]))
            self._changed()
        self._group.reset()
        if first:
            _log.info("%s is not served (%s): its informer waits for it to come back", self._label, exc)

    def _set_state(self) -> None:
        # Lock held or not: a plain recomputation from the reflector's fields.
        with self._cond:
            if self._state in ("not_served", "stopped"):
                return
            failing = self._group.failing() or self._error is not None or self._transform_error is not None
            synced = self._group.settled() and self._mapping is not None and self._readable
            self._state = "failing" if failing else ("synced" if synced else "starting")
            self._changed()

    def _resync_snapshot(self) -> tuple[int, Sequence[dict[str, Any]]] | None:
        """The objects held now and the sequence number of the last change queued, or None when unreadable."""
        with self._cond:
            return (self._dispatcher.seq, self._store.snapshot()) if self._readable else None

    def __repr__(self) -> str:
        return f"Informer({self._label}, state={self._state}, objects={len(self._store)})"
