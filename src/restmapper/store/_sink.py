"""What an :class:`~restmapper.store.Informer` does with what its reflectors report (it is their sink): complete
lists stored as they arrive, watch events, bookmarks and state changes.

A complete list (a sync) arrives as a :class:`~restmapper.watch.reflector.Listing`, a page (or a batch of WatchList
initial events) at a time: each page is checked against the mapping and transformed as it arrives, the store reads
the pages without the informer's lock held (:meth:`~restmapper.store._objects.ObjectStore.stage`: reads and events
of other namespaces go on meanwhile), and only the swap and the queueing of its changes to handlers happen in one
critical section, so a handler added meanwhile never hears of an object twice.
"""

from __future__ import annotations

import builtins
import itertools
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from restmapper.errors import InvalidArgumentError, TransformError
from restmapper.store._objects import Change, ObjectStore, disagrees, first_disagreeing, transformed
from restmapper.store._stats import State, Transform
from restmapper.watch.reflector import Listing

if TYPE_CHECKING:
    from restmapper.model import RESTMapping
    from restmapper.store._handlers import Dispatcher
    from restmapper.store._reflectors import ReflectorGroup, SyncModes
    from restmapper.store._scope import Scope

__all__ = ["InformerSink"]

_log = logging.getLogger("restmapper.store")
_READABLE = itertools.count(1)  # the values of Informer._readable while readable (see there)


def _partial(obj: dict[str, Any]) -> bool:
    """True for a ``PartialObjectMetadata`` (what a metadata-only list or watch sends)."""
    return obj.get("kind") == "PartialObjectMetadata" and obj.get("apiVersion") == "meta.k8s.io/v1"


class InformerSink:
    """The reflectors' sink of an informer (mixed into ``Informer``, which owns the fields below: see there)."""

    _cond: threading.Condition
    _store: ObjectStore
    _dispatcher: Dispatcher
    _group: ReflectorGroup
    _sync_modes: SyncModes
    _scope: Scope
    _transform: Transform | None
    _label: str
    _state: State
    _readable: int
    _mapping: RESTMapping | None
    _namespaced: bool
    _mismatch: int
    _transform_error: TransformError | None
    _moved: set[str]
    _observed_rv: str
    _observed_in: dict[str, str]
    _waiters: int
    _listeners: builtins.list[Callable[[], None]]
    _not_found_streak: int

    if TYPE_CHECKING:  # the Informer's
        def _unreadable(self) -> None: ...
        def _set_state(self) -> None: ...
        def _changed(self) -> None: ...
        def _count(self, name: str, n: int = 1) -> None: ...

    def _queue(self, changes: Sequence[Change]) -> None:
        # One batch: the store's Changes decode on the handler thread, and only when a handler is registered.
        self._dispatcher.broadcast_entries(changes)

    def _transformed(self, obj: Any) -> dict[str, Any] | None:
        """``obj`` after the transform (checked: :func:`transformed`), None when it is not a JSON object: the one
        place a server's object becomes what the store holds, for lists and events alike.

        Raises:
            TransformError: the transform refused ``obj``; the informer is then unreadable and interrupted (its
                loop backs off and lists again), and reads raise the error meanwhile.
        """
        if not isinstance(obj, dict):
            return None
        if self._transform is None:
            return obj
        try:
            return transformed(self._transform, obj, self._label)
        except TransformError as exc:
            with self._cond:
                self._transform_error = exc
                self._unreadable()
                self._set_state()
            self._group.interrupt()
            raise

    def _prepare_page(self, items: builtins.list[Any]) -> builtins.list[Any]:
        """One list page (or batch of initial events), checked and transformed as it arrives (the reflector's
        thread): the raw list is never held whole.

        Raises:
            InvalidArgumentError: an object of the page is not what the mapping says (:meth:`_disagrees`: the
                informer is unreadable and interrupted, and re-resolves); the sync ends, nothing of it stored.
            TransformError: the transform refused an object (see :meth:`_transformed`).
        """
        mapping = self._mapping
        if mapping is not None:
            # PartialObjectMetadata agree while the informer asked for them: a page of a metadata-only list asked
            # before a fallback to full objects may arrive after it (not stored: see reflector_replace_in).
            bad = first_disagreeing(items, mapping.group_version_kind, self._namespaced,
                                    metadata=self._group.metadata_asked)
            if bad is not None:
                with self._cond:
                    if self._state not in ("stopped", "not_served"):
                        self._disagrees(bad)
                raise InvalidArgumentError(f"{self._label}: the server listed an object that is not a {mapping}")
        if self._transform is None:
            return items
        return [o for o in map(self._transformed, items) if o is not None]

    # --- ReflectorSink ---------------------------------------------------------------------------------------------

    def reflector_replace_in(self, namespace: str, items: Listing) -> None:
        """Reflector sink protocol (called by the reflector; not for users): replace what ``namespace`` (``""``:
        the whole list) holds with ``items``, a complete list, as client-go's ``Store.Replace``."""
        self._full_objects_now()
        if self._group.stale(items.metadata_only):
            return  # asked for before the fallback to full objects: no answer (its reflector lists again)
        # Read as it arrives, without the lock (pages checked and transformed by _prepare_page); what the reading
        # raises leaves the store as it was.
        staged = self._store.stage((o for o in items if isinstance(o, dict)),
                                   namespace if self._group.per_namespace else None)
        reflector = self._group.reflectors.get(namespace)
        if reflector is not None and not reflector.watch_list and self._mapping is not None:
            self._sync_modes.refuse(self._mapping.resource.group_version)  # the server does not serve WatchList
        self._full_objects_now()
        with self._cond:
            if self._state in ("stopped", "not_served") or self._group.stale(items.metadata_only):
                return  # (stale: another namespace fell back to full objects while this list was read)
            self._dispatcher.broadcast_entries(self._store.replace_staged(
                staged, representation_changed=namespace in self._moved))
            self._moved.discard(namespace)
            self._observed_rv = items.resource_version
            self._observed_in[namespace] = items.resource_version
            self._transform_error = None  # a complete list went in: the transform and the mapping agreed with it
            self._mismatch = 0
            self._settle(namespace)

    def _full_objects_now(self) -> None:
        """Once a reflector fell back to full objects (the server refused metadata-only objects with a 406), the
        informer holds full ones (its scope says so) and answers nothing until every namespace listed them: never
        two representations at once (the first list or event after the fallback does this)."""
        if self._group.full_objects and self._scope.metadata_only:
            with self._cond:
                if self._scope.metadata_only:
                    self._unreadable()
                    self._set_state()
                    self._scope = replace(self._scope, metadata_only=False)
                    self._moved |= self._group.awaiting_full

    def _settle(self, listing: str | None) -> None:
        """Readable once every reflector listed (per namespace: or is refused there by RBAC); lock held."""
        if self._group.settled(listing):
            self._readable = next(_READABLE)
            self._state = "failing" if self._group.failing() else "synced"
        self._changed()

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        """Reflector sink protocol (called by the reflector; not for users): apply one watch event
        (``"ADDED"``, ``"MODIFIED"`` or ``"DELETED"``) of ``obj``."""
        if self._group.full_objects and _partial(obj):
            return  # from a metadata-only stream opened before the fallback to full objects (it lists again)
        transformed = self._transformed(obj)
        if transformed is None:
            return
        try:
            with self._cond:
                if self._disagrees(obj):
                    return
                changes = (self._store.delete(transformed) if event_type == "DELETED"
                           else self._store.upsert(transformed))
                self._queue(changes)
                self._observed(transformed["metadata"])
                if self._waiters or self._listeners:
                    self._changed()
        except InvalidArgumentError as exc:
            self._count("malformed")
            _log.warning("ignoring a %s event on %s: %s", event_type, self._label, exc)

    def _observed(self, meta: dict[str, Any]) -> None:
        """Note the resourceVersion of an event's object (``meta``: its metadata) as the one observed (lock held)."""
        rv = meta.get("resourceVersion")
        if isinstance(rv, str) and rv:
            self._observed_rv = rv
            if self._group.per_namespace:
                self._observed_in[meta.get("namespace") or ""] = rv

    def _disagrees(self, obj: object) -> bool:
        """True, and the informer made unreadable and told to re-resolve, when the server's object ``obj`` is not
        what the mapping says: another scope, apiVersion or kind (lock held). A CRD deleted and recreated while our
        watch was down (or answered 410) lists at the same path with another scope or kind: stored under the old
        mapping, its objects answer "not found" for objects the server has, or as the wrong kind (DESIGN 5.10)."""
        mapping = self._mapping
        if mapping is None or not disagrees(obj, mapping.group_version_kind, self._namespaced,
                                            metadata=self._scope.metadata_only):
            return False
        if not self._mismatch:
            _log.info("%s: the server sent an object that is not a %s: re-resolving", self._label, mapping)
        self._mismatch += 1
        self._unreadable()
        self._set_state()
        self._group.interrupt()
        return True

    def reflector_bookmark_in(self, namespace: str, resource_version: str) -> None:
        """Reflector sink protocol (called by the reflector; not for users): the watch of ``namespace`` reached
        ``resource_version`` (a BOOKMARK event)."""
        with self._cond:
            self._store.heard()
            self._observed_rv = resource_version
            self._observed_in[namespace] = resource_version
            if self._waiters or self._listeners:
                self._changed()

    def reflector_state(self) -> None:
        """Reflector sink protocol (called by the reflector; not for users): a reflector connected, failed or
        stopped; recompute :attr:`Informer.state`."""
        if any(r.connected for r in self._group.all()):
            # Only a watch that opened proves the path serves (a list may succeed where the watch 404s).
            self._not_found_streak = 0
        with self._cond:
            if not self._readable and self._mapping is not None and self._group.per_namespace and \
                    self._state not in ("not_served", "stopped") and self._group.settled():
                self._settle(None)  # the last namespace to settle was refused by RBAC: serve the others
        self._set_state()
