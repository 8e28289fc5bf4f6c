"""The fake cluster's object storage: objects by resource, a cluster-wide resourceVersion and a bounded event history.

Mirrors etcd as kube-apiserver uses it: every write (of any object, in any resource) takes the next value of one
counter, so resourceVersions are comparable across resources; watch history is kept for a bounded number of events
and a watch starting before the oldest kept event gets ``410 Gone`` ("too old resource version").

Pure bookkeeping: no HTTP here. The lock is the cluster's; the condition wakes watch streams on every write.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from restmapper.testing.objects.strategy import BUILT_INS_WITH_GENERATION

__all__ = ["APISERVICE_KEY", "CRD_KEY", "EtcdSnapshot", "ObjectStore", "SortedState", "WatchEvent", "now_timestamp",
           "object_key"]

CRD_KEY = "customresourcedefinitions.apiextensions.k8s.io"
APISERVICE_KEY = "apiservices.apiregistration.k8s.io"
_SORTED_STATES_KEPT = 16  # sorted states cached (each a list of references to the stored objects)


def object_key(namespace: str | None, name: str) -> str:
    """Return the key of an object inside its resource bucket (``ns/name`` or ``name``)."""
    return f"{namespace}/{name}" if namespace else name


def now_timestamp() -> str:
    """Return the current time as an RFC 3339 UTC timestamp with seconds precision (``metav1.Time``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One stored change: ``type`` is ``ADDED``, ``MODIFIED`` or ``DELETED``; ``object`` a snapshot; ``prev`` the
    stored object it replaced or deleted (None for ``ADDED``), so the state at an older resourceVersion can be
    rebuilt (see :meth:`ObjectStore.snapshot`)."""

    resource_version: int
    type: str
    key: str
    namespace: str
    object: dict[str, Any]
    prev: dict[str, Any] | None = None
    recorded_at: float = field(default_factory=time.monotonic)  # when it happened (for ``watch_delay``), seconds

    @property
    def object_key(self) -> str:
        """The key of the object inside its bucket (``ns/name`` or ``name``)."""
        return object_key(self.namespace, self.object["metadata"]["name"])


@dataclass(frozen=True)
class SortedState:
    """The objects of one resource at one resourceVersion in key order (etcd's key space): ``keys[i]`` is the
    :func:`object_key` of ``objects[i]``. Shared between reads: never mutate it or its objects."""

    keys: list[str]
    objects: list[dict[str, Any]]


@dataclass(frozen=True)
class EtcdSnapshot:
    """The objects of every resource at one resourceVersion, as ``etcdctl snapshot save`` keeps them (see
    :meth:`FakeCluster.snapshot`). Opaque to tests except for :attr:`resource_version`."""

    resource_version: int
    buckets: dict[str, dict[str, dict[str, Any]]]


class ObjectStore:
    """Objects per storage key (``deployments.apps``), the resourceVersion counter and the watch history.

    Every method must be called with the lock held (the cluster's ``RLock``, also the condition's lock).
    """

    def __init__(self, lock: threading.RLock, history_limit: int) -> None:
        self.cond = threading.Condition(lock)
        self.history_limit = history_limit
        self.buckets: dict[str, dict[str, dict[str, Any]]] = {}
        self.resource_version = 0
        self._history: deque[WatchEvent] = deque()
        self._floor = 0  # every event with resourceVersion > floor is in history
        self.epoch = 0  # bumped by drop_watches/restart: streams opened in an older epoch end
        self.key_epochs: dict[str, int] = {}  # bumped by end_watches(key): that resource's storage was torn down
        self.bookmark_requests = 0  # bumped by request_bookmarks: streams allowing bookmarks send one
        self.open_watches = 0
        self.hooks: list[Callable[[], None]] = []  # run by streams before reading events (lazy APIService sync)
        self.watch_delay = 0.0  # seconds each event is held back from watch streams (a lagging watch cache)
        self.expire_continue_tokens = False  # every continue token answers 410 Expired (compaction outpaces pages)
        self.watches_end_at_once: set[str] = set()  # storage keys ("*": all) whose watches end before any event
        # The resourceVersion of the last event kept per storage key: from it on, the key's state is its bucket.
        self._touched: dict[str, int] = {}
        self._sorted: OrderedDict[tuple[str, int], SortedState] = OrderedDict()  # by (key, resourceVersion)

    def bucket(self, key: str) -> dict[str, dict[str, Any]]:
        """Return the (mutable) objects of ``key``, keyed by :func:`object_key`."""
        return self.buckets.setdefault(key, {})

    def _next(self) -> int:
        self.resource_version += 1
        return self.resource_version

    def put(self, key: str, obj: dict[str, Any], *, bump_generation: bool | None = True) -> tuple[dict[str, Any], str]:
        """Store ``obj`` (created or replaced, by namespace/name) and record the event.

        Fills ``uid``, ``creationTimestamp``, ``generation`` (only for kinds that carry one, see
        :mod:`restmapper.testing.objects.strategy`; bumped when anything but metadata and status changed,
        unless ``bump_generation`` is false; None keeps the ``generation`` the caller set) and a fresh
        ``resourceVersion``. A write equal to the stored object
        (ignoring ``resourceVersion``) is a no-op, as the API server skips no-op updates.

        Returns:
            ``(stored object, event type)``; the type is ``""`` for a no-op.
        """
        meta = obj.setdefault("metadata", {})
        namespace = meta.get("namespace") or ""
        k = object_key(namespace, meta["name"])
        bucket = self.bucket(key)
        old = bucket.get(k)
        tracked = self._sets_generation(key)
        if not tracked:
            meta.pop("generation", None)
        if old is None:
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now_timestamp())
            if tracked:
                meta["generation"] = 1
            event_type = "ADDED"
        else:
            _carry_metadata(old, obj, generation=tracked, bump_generation=bump_generation)
            if obj == old:
                return old, ""
            event_type = "MODIFIED"
        meta["resourceVersion"] = str(self._next())
        bucket[k] = obj  # ``old`` is replaced, never mutated: it stays valid as the event's ``prev``
        self._record(WatchEvent(self.resource_version, event_type, key, namespace, copy.deepcopy(obj), old))
        return obj, event_type

    def _sets_generation(self, key: str) -> bool:
        """True when objects stored under ``key`` carry ``metadata.generation``: a built-in kind whose strategy sets
        it, or a custom resource (stored under its CRD's name)."""
        return key in BUILT_INS_WITH_GENERATION or object_key(None, key) in self.buckets.get(CRD_KEY, {})

    def remove(self, key: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        """Delete an object and record the ``DELETED`` event (its snapshot carries the deletion's resourceVersion).

        Returns:
            The deleted object, or None when it did not exist.
        """
        old = self.bucket(key).pop(object_key(namespace, name), None)
        if old is None:
            return None
        obj = copy.deepcopy(old)
        obj["metadata"]["resourceVersion"] = str(self._next())
        self._record(WatchEvent(self.resource_version, "DELETED", key, namespace or "", copy.deepcopy(obj), old))
        return obj

    def _record(self, event: WatchEvent) -> None:
        self._touched[event.key] = event.resource_version
        self._history.append(event)
        floor = self._floor
        while len(self._history) > self.history_limit:
            self._floor = self._history.popleft().resource_version
        if self._floor != floor:
            self._forget_unreadable_sorted_states()
        self.cond.notify_all()

    def events_since(self, resource_version: int) -> list[WatchEvent] | None:
        """Return the events after ``resource_version``, or None when some of them were compacted away (410)."""
        if resource_version < self._floor:
            return None
        return [e for e in self._history if e.resource_version > resource_version]

    @property
    def oldest_available(self) -> int:
        """The oldest resourceVersion whose state is still known (watch from it or list at it exactly)."""
        return self._floor

    def snapshot(self, key: str, resource_version: int) -> dict[str, dict[str, Any]] | None:
        """Return the objects of ``key`` as they were at ``resource_version`` (by object key), as etcd's MVCC
        serves a read at a revision; None when that revision was compacted away. Do not mutate the result.

        ``resource_version`` must not be above the current one.
        """
        if resource_version < self._floor:
            return None
        state = dict(self.bucket(key))
        for event in reversed(self._history):
            if event.resource_version <= resource_version:
                break
            if event.key != key:
                continue
            k = event.object_key
            if event.prev is None:
                state.pop(k, None)
            else:
                state[k] = event.prev
        return state

    def sorted_state(self, key: str, resource_version: int) -> SortedState | None:
        """Return the objects of ``key`` at ``resource_version`` in key order, or None when that revision was
        compacted away (as :meth:`snapshot`).

        Built once per state and kept (the last few): every page of a paginated list reads its first page's
        resourceVersion, so the pages after the first cost their size (and a binary search for their start),
        not the collection's. A state is named by the resourceVersion of the last change to ``key`` at or before
        ``resource_version`` when that is the latest change (writes to other resources do not rebuild it).
        """
        if resource_version < self._floor:
            return None
        touched = self._touched.get(key, 0)
        at = touched if touched <= resource_version else resource_version
        state = self._sorted.get((key, at))
        if state is not None:
            self._sorted.move_to_end((key, at))
            return state
        objects = self.snapshot(key, resource_version)
        assert objects is not None  # resource_version is not below the floor
        keys = sorted(objects)
        state = SortedState(keys, [objects[k] for k in keys])
        self._sorted[(key, at)] = state
        while len(self._sorted) > _SORTED_STATES_KEPT:
            self._sorted.popitem(last=False)
        return state

    def _forget_unreadable_sorted_states(self) -> None:
        """Drop the kept states no request can read any more: named by a resourceVersion below the oldest kept one
        (a read there gets 410) and not their resource's latest state (that one is read at every newer
        resourceVersion; after :meth:`restore` it is named 0). The object versions only they held are freed."""
        for key, at in [k for k in self._sorted if k[1] < self._floor]:
            if at != self._touched.get(key, 0):
                del self._sorted[(key, at)]

    def _forget_sorted_states(self) -> None:
        """Buckets changed without events (restore, wipe): every kept state may be wrong now."""
        self._sorted.clear()

    def compact(self, resource_version: int | None = None) -> None:
        """Forget the events up to ``resource_version`` (default: every event so far), as an etcd compaction: a
        watch from, or an exact list at, an older resourceVersion now gets 410 Gone."""
        target = self.resource_version if resource_version is None else min(resource_version, self.resource_version)
        while self._history and self._history[0].resource_version <= target:
            self._history.popleft()
        self._floor = max(self._floor, target)
        self._forget_unreadable_sorted_states()

    def end_watches(self, key: str) -> None:
        """End every open watch on resource ``key`` (its storage was torn down, e.g. its CRD changed)."""
        self.key_epochs[key] = self.key_epochs.get(key, 0) + 1
        self.cond.notify_all()

    def request_bookmarks(self) -> None:
        """Make every open watch that allows bookmarks send one now (as the server's periodic bookmark)."""
        self.bookmark_requests += 1
        self.cond.notify_all()

    def drop_watches(self) -> None:
        """End every open watch stream (streams notice at their next wake-up, which this triggers)."""
        self.epoch += 1
        self.cond.notify_all()

    def snapshot_all(self) -> EtcdSnapshot:
        """A deep copy of every object and the current resourceVersion (``etcdctl snapshot save``)."""
        return EtcdSnapshot(self.resource_version, copy.deepcopy(self.buckets))

    def restore(self, snapshot: EtcdSnapshot, bump_revision: int, mark_compacted: bool) -> None:
        """Hold exactly the snapshot's objects again (``etcdutl snapshot restore``), without events.

        The resourceVersion goes back to the snapshot's plus ``bump_revision``; the history is gone, so a watch
        from before it gets 410; with ``mark_compacted`` every resourceVersion up to the new one counts as
        compacted (every watch from a resourceVersion the clients hold gets 410). Buckets are refilled in place
        (the cluster keeps a reference to the CRD bucket).
        """
        for key in list(self.buckets):
            if key not in snapshot.buckets:
                self.buckets[key].clear()
        for key, objects in snapshot.buckets.items():
            bucket = self.bucket(key)
            bucket.clear()
            bucket.update(copy.deepcopy(objects))
        self.resource_version = snapshot.resource_version + bump_revision
        self._history.clear()
        self._touched.clear()  # no event kept: every state is its bucket
        self._forget_sorted_states()
        self._floor = self.resource_version if mark_compacted else snapshot.resource_version
        self.drop_watches()  # kube-apiserver is restarted on the restored etcd

    def wipe(self, keep: Iterable[str]) -> None:
        """Drop every object whose storage key is not in ``keep``, without events (a fresh etcd)."""
        kept = set(keep)
        for key in list(self.buckets):
            if key not in kept:
                del self.buckets[key]
        self._forget_sorted_states()


def _carry_metadata(old: Mapping[str, Any], obj: dict[str, Any], *, generation: bool,
                    bump_generation: bool | None) -> None:
    """Give ``obj``, replacing ``old``, the metadata the server keeps: ``uid``, ``creationTimestamp``, the old
    ``resourceVersion`` (until a new one is taken) and, when the kind carries one (``generation``), the old
    ``generation``, bumped when anything but metadata and status changed (see :meth:`ObjectStore.put`)."""
    meta, old_meta = obj["metadata"], old["metadata"]
    meta["uid"] = old_meta["uid"]
    meta["creationTimestamp"] = old_meta["creationTimestamp"]
    if generation and (bump_generation is not None or not isinstance(meta.get("generation"), int)):
        bumped = bool(bump_generation) and _spec_of(old) != _spec_of(obj)
        meta["generation"] = old_meta.get("generation", 1) + (1 if bumped else 0)
    meta["resourceVersion"] = old_meta.get("resourceVersion")


def _spec_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
