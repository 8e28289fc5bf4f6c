"""The reflectors of one informer: one for the whole collection, or one per namespace of the cache's scope.

A kind listed in several namespaces (``ObjectCache(namespaces=[...])``) runs one
:class:`~restmapper.watch.reflector.Reflector` per namespace, as controller-runtime's multi-namespace cache runs one
informer per namespace: each lists and watches ``/.../namespaces/<ns>/<resource>`` on its own thread and fails on
its own (a 403 in one namespace backs that one off and leaves the others served). The first outcome the informer
must act on (a 404 for the type, an early end, an interrupt) ends the run of every reflector of the group; each
keeps its resourceVersion, so the next run resumes its watch unless the informer asks for a relist.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from restmapper.errors import APIStatusError, TransportError
from restmapper.model import GroupVersion
from restmapper.watch.reflector import Listing, Outcome, Reflector

__all__ = ["NamespaceSink", "NamespaceState", "ReflectorGroup", "SyncModes", "permanent_failure"]

NamespaceState = Literal["starting", "synced", "failing"]
"""The state of one namespace's reflector (:attr:`Informer.namespaces_state`)."""


class NamespaceSink(Protocol):
    """What the reflectors of a group report to (the informer); every call is on the reporting reflector's thread."""

    def reflector_replace_in(self, namespace: str, items: Listing) -> None:
        """A complete list of ``namespace`` (``""``: the whole collection), as it arrives."""

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        """One watch event."""

    def reflector_bookmark_in(self, namespace: str, resource_version: str) -> None:
        """A bookmark of ``namespace``'s watch."""

    def reflector_state(self) -> None:
        """A reflector's ``connected``/``failures``/``last_error`` changed."""


class _Forward:
    """The :class:`~restmapper.watch.reflector.ReflectorSink` of one namespace's reflector."""

    def __init__(self, sink: NamespaceSink, namespace: str, group: ReflectorGroup) -> None:
        self._sink = sink
        self._group = group
        self._namespace = namespace
        self.reflector_event = sink.reflector_event
        self.reflector_state = sink.reflector_state
        self.reflector: Reflector | None = None  # set by the group once made
        # The reflector's last_error when it last handed over a complete list: a failure it listed past since.
        self.listed_past: BaseException | None = None

    def reflector_replace(self, items: Listing) -> None:
        if self.reflector is not None:
            self.listed_past = self.reflector.last_error
            if not items.metadata_only:  # what the listing was asked in, not what the reflector asks for now
                self._group.listed_full_objects(self._namespace, self.reflector)
        self._sink.reflector_replace_in(self._namespace, items)

    def reflector_bookmark(self, resource_version: str) -> None:
        self._sink.reflector_bookmark_in(self._namespace, resource_version)


class SyncModes:
    """How the informers of one object cache sync (their reflectors' ``watch_list``), per API group version: by
    WatchList until the server of that group version refused or ignored it once (an aggregated API server may be
    older than kube-apiserver), then by paginated lists for the life of the cache; by paginated lists everywhere
    when the cache's ``watch_list`` is False. Safe from any thread.

    Attributes:
        watch_list: the cache's option.
    """

    def __init__(self, watch_list: bool) -> None:
        self.watch_list = watch_list
        self._lock = threading.Lock()
        self._refused: set[GroupVersion] = set()

    def watch_list_for(self, group_version: GroupVersion) -> bool:
        """True when informers of ``group_version`` sync by WatchList."""
        with self._lock:
            return self.watch_list and group_version not in self._refused

    def refuse(self, group_version: GroupVersion) -> None:
        """``group_version``'s server does not serve WatchList: its informers list in pages from now on."""
        with self._lock:
            self._refused.add(group_version)


def permanent_failure(error: BaseException | None) -> bool:
    """True for a list/watch failure waiting will not cure (403 Forbidden from RBAC, 401, a body over the size
    cap): a non-transient transport error that is not a 404 (a 404 is discovery catching up)."""
    return (isinstance(error, TransportError) and not error.transient
            and not (isinstance(error, APIStatusError) and error.not_found))


def forbidden(reflector: Reflector) -> bool:
    """True when the reflector's last failure is a 403 it has not recovered from."""
    error = reflector.last_error
    return reflector.failures > 0 and isinstance(error, APIStatusError) and error.status == 403


class ReflectorGroup:
    """The reflectors of one informer, keyed by namespace (``""``: the whole collection or a cluster-scoped kind).

    Attributes:
        reflectors: by namespace; replaced by :meth:`layout` (informer thread only).
        per_namespace: the reflectors are per namespace of the scope (a namespace that never listed because of a
            403 then counts as settled: the others are served).
    """

    def __init__(self, make: Callable[[str, Any], Reflector], sink: NamespaceSink, stop: threading.Event) -> None:
        """Create an empty group.

        Args:
            make: ``make(namespace, sink)`` returns a new reflector reporting to ``sink``.
            sink: the informer.
            stop: the informer's stop event.
        """
        self._make = make
        self._sink = sink
        self._stop = stop
        # _lock guards _run_stop (the event ending the run in progress, set by halt() from any thread) and the
        # representation's fields below (the reflectors' threads update them).
        self._lock = threading.Lock()
        self._run_stop: threading.Event | None = None
        # The representation: metadata_asked once a reflector was made to ask for PartialObjectMetadata;
        # full_objects once one of them fell back to full objects (a 406): every reflector then lists full objects,
        # so that one informer never holds two representations (read by the informer's scope); awaiting_full: the
        # namespaces holding (or listing) metadata-only objects until they list full ones.
        self.metadata_asked = False
        self.full_objects = False
        self._relist_all = False
        self.awaiting_full: set[str] = set()
        self.reflectors: dict[str, Reflector] = {"": self._new("")}
        self.per_namespace = False

    def _new(self, namespace: str) -> Reflector:
        forward = _Forward(self._sink, namespace, self)
        reflector = forward.reflector = self._make(namespace, forward)
        self.metadata_asked = self.metadata_asked or reflector.metadata_only
        return reflector

    @property
    def lead(self) -> Reflector:
        """The reflector whose backoff the informer's own failures (lookups, 404 streaks) use."""
        return next(iter(self.reflectors.values()))

    def all(self) -> list[Reflector]:
        """The reflectors now (a copy: safe from any thread)."""
        return list(self.reflectors.values())

    def layout(self, namespaces: Sequence[str] | None, path: Callable[[str | None], str], *,
               fresh: bool = False) -> None:
        """One reflector per namespace of ``namespaces`` (None: one for the whole collection), each reset to list
        ``path(namespace)`` from scratch (informer thread, between runs). Reflectors of namespaces kept are reused
        (their backoff counts stay) unless ``fresh`` (the scope changed: new ones, made with it); the others are
        dropped."""
        wanted = list(namespaces) if namespaces is not None else [""]
        if fresh:  # made with the new scope: its representation, whatever the old one fell back to
            with self._lock:
                self.metadata_asked = self.full_objects = False
                self.awaiting_full.clear()
        reflectors = {ns: (None if fresh else self.reflectors.get(ns)) or self._new(ns) for ns in wanted}
        for ns, reflector in reflectors.items():
            reflector.path = path(ns or None)
            reflector.reset()
        self.reflectors = reflectors
        self.per_namespace = namespaces is not None

    # --- aggregate state (any thread) ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Make every reflector list from scratch on its next run."""
        for reflector in self.all():
            reflector.reset()

    def failing(self) -> bool:
        """True when any reflector is backing off after a failure."""
        return any(r.failures > 0 for r in self.all())

    def settled(self, listing: str | None = None) -> bool:
        """True when every reflector listed (or, per namespace, is refused by RBAC: the others are served).

        Args:
            listing: the namespace whose reflector is handing over a complete list now (it is synced once that
                returns).
        """
        awaiting = self.awaiting_full
        return all((r.synced and ns not in awaiting) or ns == listing or (self.per_namespace and forbidden(r))
                   for ns, r in list(self.reflectors.items()))

    def last_error(self) -> BaseException | None:
        """The error of a failing reflector (the first), else the lead's last error."""
        return next((r.last_error for r in self.all() if r.failures > 0 and r.last_error is not None),
                    self.lead.last_error)

    def blocking_error(self) -> BaseException | None:
        """The last error of the one reflector; per namespace, the first one's only when every namespace is failing
        before its first list (a read then has nothing to wait for; while one may still list, it waits)."""
        if not self.per_namespace:
            return self.lead.last_error
        reflectors = self.all()
        errors = [r.last_error for r in reflectors if r.failures > 0 and not r.synced and r.last_error is not None]
        return errors[0] if len(errors) == len(reflectors) else None

    def states(self) -> dict[str, NamespaceState]:
        """Each namespace's state (empty unless per namespace)."""
        if not self.per_namespace:
            return {}
        return {ns: "failing" if r.failures > 0 else ("synced" if r.synced else "starting")
                for ns, r in list(self.reflectors.items())}

    def error_in(self, namespace: str) -> BaseException | None:
        """The failure that keeps ``namespace``'s objects from being answered (``""``: the whole collection or a
        cluster-scoped kind), or None: the reflector holding them is failing with a failure waiting will not cure
        (:func:`permanent_failure`: RBAC's 403, a 401, ...), before its first list or on a relist after it (its
        objects are then possibly stale: revoked access hides deletions), until it lists or watches again."""
        reflector = self.reflectors.get(namespace if self.per_namespace else "")
        if reflector is None or reflector.failures == 0:
            return None
        error = reflector.last_error
        if isinstance(reflector.sink, _Forward) and reflector.sink.listed_past is error:
            return None  # listed successfully since (its watch not connected yet): the objects are current
        return error if permanent_failure(error) else None

    def refused(self) -> list[tuple[str, BaseException]]:
        """``(namespace, error)`` of every reflector :meth:`error_in` names, in scope order."""
        return [(ns, error) for ns in list(self.reflectors) if (error := self.error_in(ns)) is not None]

    # --- control (any thread) ------------------------------------------------------------------------------------

    def sync_by_watch_list(self, watch_list: bool) -> None:
        """Make every reflector sync by WatchList (``watch_list``) or by paginated lists (informer thread, between
        runs)."""
        for reflector in self.all():
            reflector.watch_list = watch_list

    def listed_full_objects(self, namespace: str, lister: Reflector) -> None:
        """``lister`` (of ``namespace``) hands over a list of full objects. When the group asked for metadata-only
        objects, the server refused them (406) to ``lister``: make every other reflector list full objects too,
        from scratch (its run ends; the next one relists), and hold their namespaces unsettled until they did."""
        with self._lock:
            self.awaiting_full.discard(namespace)
            if not self.metadata_asked:
                return
            others = {ns: r for ns, r in list(self.reflectors.items()) if r is not lister and r.metadata_only}
            self.full_objects = True
            self._relist_all = self._relist_all or bool(others)
            self.awaiting_full |= set(others)
        for reflector in others.values():
            reflector.metadata_only = False
            reflector.interrupt()

    def stale(self, listed_metadata: bool) -> bool:
        """True for a list or event of metadata-only objects (``listed_metadata``) once the group lists full
        objects: asked for before the fallback, it arrived after it; it is no answer (its reflector relists)."""
        return listed_metadata and self.full_objects

    def interrupt(self) -> None:
        """Make the run in progress return ``"interrupted"`` soon."""
        for reflector in self.all():
            reflector.interrupt()

    def halt(self) -> None:
        """End the run in progress (the informer stops): wake every reflector."""
        with self._lock:
            if self._run_stop is not None:
                self._run_stop.set()
        for reflector in self.all():
            reflector.close_stream()

    # --- the run (informer thread) ------------------------------------------------------------------------------

    def run(self, relist: bool) -> Outcome:
        """Run the reflectors until one returns an outcome the informer must act on; return it.

        One reflector runs on the calling thread (its 403 is returned as ``"forbidden"``); several run on threads
        of their own, each backing off on its own 403, and the first other outcome ends them all.
        """
        with self._lock:
            relist_all, self._relist_all = self._relist_all, False
        if relist_all:
            relist = True
            self.reset()
        reflectors = self.all()
        if len(reflectors) == 1:
            reflectors[0].stop = self._stop
            return reflectors[0].run(relist=relist)
        run_stop = threading.Event()
        with self._lock:
            self._run_stop = run_stop
        if self._stop.is_set():
            run_stop.set()
        outcomes: queue.SimpleQueue[Outcome] = queue.SimpleQueue()

        def run_one(reflector: Reflector) -> None:
            again = relist
            while True:
                outcome = reflector.run(relist=again)
                if outcome != "forbidden":
                    outcomes.put(outcome)
                    return
                again = not reflector.synced
                reflector.fail(reflector.last_error or TransportError("403", path=reflector.path))

        threads = []
        for reflector in reflectors:
            reflector.stop = run_stop
            thread = threading.Thread(target=run_one, args=(reflector,), daemon=True,
                                      name=f"restmapper-reflector-{reflector.label}")
            threads.append(thread)
            thread.start()
        outcome = outcomes.get()
        # End the others: an interrupt first (closes a stream, ends a run after the request in flight; a reflector
        # cancels requests for good once its stop event is set, so that comes second), then the run's stop event
        # (wakes a backoff wait).
        for reflector in reflectors:
            reflector.interrupt()
        run_stop.set()
        for thread in threads:
            thread.join()
        for reflector in reflectors:
            reflector.stop = self._stop  # the informer's own backoff waits (fail()) end with the informer only
            reflector.resume()
        with self._lock:
            self._run_stop = None
        return "stopped" if self._stop.is_set() else outcome
