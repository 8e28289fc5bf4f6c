"""The generation-aware object store of one informer (client-go ``tools/cache.threadSafeStore`` + indexers).

Objects are wire-form dicts keyed by ``(namespace, name)`` (``""`` for cluster-scoped), each carrying its
``metadata.uid``. Writes return the changes they made so the informer can hand them to its handlers in order:

* a new key is an ``ADDED``; a known key with the same UID is a ``MODIFIED`` when its resourceVersion differs
  and a silent replacement when it does not (the same object in another version's representation);
* within one watch stream, an object that is *older* than the one held for the same UID (lower
  ``metadata.generation``, or a lower resourceVersion when both are decimal integers) is refused: the store never
  goes back in time on an event;
* a new UID under a held key is a ``DELETED`` of the old incarnation followed by an ``ADDED``;
* a ``DELETED`` for another UID than the one held (a late event about an earlier incarnation) changes nothing;
* :meth:`ObjectStore.replace` (a relist) is the truth: afterwards the store holds exactly the list, whatever the
  resourceVersions and generations say (after an etcd restore they go back). It diffs the list against what is
  held: deletes for what vanished, an update for every object that differs (in resourceVersion, or in content
  under the same resourceVersion, which a restore that reuses resourceVersions makes possible), nothing for what
  did not, a delete and an add for a new UID, never a second ``ADDED`` for a held object. A list in another
  version's representation (a kind that moved) is compared the same way, ``apiVersion``/``kind`` aside: an object
  with the same resourceVersion and content is replaced silently.

Objects are held compact (:mod:`restmapper.store._compact`: encoded bytes plus the few fields writes, label
selectors and indexers read, all invisible to the cyclic garbage collector) and decoded when read; the objects
handed out are shared and read-only by contract. Changes are returned as :class:`Changes`, decoded one at a time
as they are delivered.

No I/O. Writers hold :attr:`ObjectStore.lock`; :meth:`ObjectStore.get` takes no lock (dict reads are atomic, and a
record is never changed once stored, so a read returns the object of one version, whole).
"""

from __future__ import annotations

import itertools
import logging
import marshal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import GroupVersionKind
from restmapper.store._compact import (
    BLOB,
    DECODED_PER_MARSHALLED,
    GENERATION,
    INDEXED,
    LABELS,
    PINNED,
    RAW,
    RV,
    SIZE,
    UID,
    Change,
    Changes,
    Codec,
    HotObjects,
    Objects,
    Record,
    make_record,
    sized,
)
from restmapper.store._transforms import transformed

__all__ = ["Change", "Changes", "Entry", "IndexFunc", "ObjectStore", "Objects", "Record", "Staged", "disagrees",
           "first_disagreeing", "identity", "newer_resource_version", "reached", "resource_version_int", "transformed"]

_log = logging.getLogger("restmapper.store")

Entry = Change
"""A change as :meth:`ObjectStore.replace_entries` returns it (an element of :class:`Changes`)."""

IndexFunc = Callable[[Mapping[str, Any]], Iterable[str]]
"""An indexer: the index values of an object (client-go ``IndexFunc``), e.g. ``lambda o: [o["spec"]["nodeName"]]``."""


def resource_version_int(rv: object) -> int | None:
    """``rv`` as an int when it is a string of decimal digits (etcd revisions are), else None."""
    if isinstance(rv, str) and rv.isdigit() and rv.isascii():
        return int(rv)
    return None


def newer_resource_version(a: object, b: object) -> bool | None:
    """True when resourceVersion ``a`` is newer than ``b``, False when older or equal, None when not comparable.

    resourceVersions are opaque by contract; kube-apiserver's are etcd revisions (decimal integers, one counter
    for the whole cluster), so numeric comparison is right for every real server and is used only when both are
    decimal integers.
    """
    ia, ib = resource_version_int(a), resource_version_int(b)
    if ia is None or ib is None:
        return None
    return ia > ib


def reached(obj: Mapping[str, Any] | None, resource_version: str | None, generation: int | None) -> bool:
    """Whether ``obj`` is at least at ``resource_version`` (equal, or newer when both are decimal) and at least at
    ``generation``; False for None (read-your-writes: :meth:`Informer.wait_for`)."""
    if obj is None:
        return False
    meta = obj["metadata"]
    if resource_version is not None:
        held = meta.get("resourceVersion")
        if held != resource_version and newer_resource_version(held, resource_version) is not True:
            return False
    if generation is not None:
        held_gen = meta.get("generation")
        if not isinstance(held_gen, int) or held_gen < generation:
            return False
    return True


def disagrees(obj: object, kind: GroupVersionKind, namespaced: bool, *, metadata: bool = False) -> bool:
    """True when the server's object ``obj`` (raw) is not a ``kind`` of that scope: it has (or lacks) a namespace
    the scope does not, or an ``apiVersion``/``kind`` that is not ``kind``'s (absent ones agree: built-in types
    list their items without them). With ``metadata``, a ``meta.k8s.io/v1`` ``PartialObjectMetadata`` agrees too
    (what a metadata-only list holds)."""
    return first_disagreeing((obj,), kind, namespaced, metadata=metadata) is not None


def first_disagreeing(objs: Iterable[object], kind: GroupVersionKind, namespaced: bool, *,
                      metadata: bool = False) -> object | None:
    """The first of ``objs`` (raw) for which :func:`disagrees` holds, or None: one pass over a list page, the
    expected ``apiVersion`` computed once (not once an object)."""
    api_version = f"{kind.group}/{kind.version}" if kind.group else kind.version  # GroupVersion.__str__
    for obj in objs:
        if isinstance(obj, dict) and _disagreeing(obj, api_version, kind.kind, namespaced, metadata):
            return obj
    return None


def _disagreeing(obj: dict[str, Any], api_version: str, kind: str, namespaced: bool, metadata: bool) -> bool:
    """:func:`disagrees` of one object, the kind's ``apiVersion`` and ``kind`` given."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and bool(meta.get("namespace")) != namespaced:
        return True
    if metadata and obj.get("kind") == "PartialObjectMetadata" and obj.get("apiVersion") == "meta.k8s.io/v1":
        return False
    got = obj.get("apiVersion")
    if got is not None and got != api_version:
        return True
    got = obj.get("kind")
    return got is not None and got != kind


def identity(obj: object) -> tuple[str, str, str | None, Mapping[str, Any]]:
    """Return ``(namespace, name, uid, metadata)`` of a wire-form object.

    Raises:
        InvalidArgumentError: not a JSON object, no ``metadata`` object, no non-empty string ``metadata.name``, or
            a namespace or UID that is not a string.
    """
    if not isinstance(obj, dict):
        raise InvalidArgumentError(f"object must be a JSON object, got {type(obj).__name__}")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise InvalidArgumentError("object without metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError("object without metadata.name")
    ns = meta.get("namespace") or ""
    uid = meta.get("uid")
    if not isinstance(ns, str) or (uid is not None and not isinstance(uid, str)):
        raise InvalidArgumentError(f"object {name!r}: metadata.namespace and metadata.uid must be strings")
    return ns, name, uid or None, meta


def _new_incarnation(record: Record, held: Record) -> bool:
    """Whether ``record`` is another object than ``held`` under the same key (both have UIDs, and they differ)."""
    return record[UID] is not None and held[UID] is not None and record[UID] != held[UID]


def _older(meta: Mapping[str, Any], held: Record) -> bool:
    gen_new, gen_old = meta.get("generation"), held[GENERATION]
    if isinstance(gen_new, int) and isinstance(gen_old, int) and gen_new < gen_old:
        return True
    return newer_resource_version(held[RV], meta.get("resourceVersion")) is True


def _same_content(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``a == b`` but for ``apiVersion``/``kind`` (list items of built-in types come without them, events with)."""
    return all(a.get(k) == b.get(k) for k in (a.keys() | b.keys()) - {"apiVersion", "kind"})


LabelTest = Callable[[Mapping[str, Any]], bool]
"""A test of an object's labels (``restmapper.store._labels.labels_matcher``)."""

_pinned_tokens = itertools.count()


class ObjectStore:
    """Objects of one resource type, generation-aware, with optional indexes (see the module docstring).

    Objects are held compact (:mod:`restmapper.store._compact`); reads decode them. The objects returned are
    shared (the decoded form of a version is built once and handed to every reader while it is among the most
    recently read, see ``hot_bytes``): read-only by contract.

    Args:
        hot_bytes: the budget, in bytes (estimated: :data:`DECODED_PER_MARSHALLED` times the marshal length), of
            the recently read objects kept decoded: 32 MiB by default. Two generations of half the budget each:
            objects read over and over in turn stay decoded up to half the budget, about 340 Pods of 8 KB of JSON
            or 8,000 small ConfigMaps (a larger set read in turn is decoded on every read).
        clock: seconds, monotonic: when the last event, list or bookmark arrived (:meth:`seconds_since_heard`).

    Attributes:
        lock: held by every writer (re-entrant: the informer holds it while it also queues the changes).
        stale_drops: objects refused because they were older than the held one.
        index_errors: indexer calls that raised (the object is then not indexed by that indexer).
        objects_by_namespace: namespace -> name -> record (compact); read with :meth:`decoded`, never mutated.
    """

    def __init__(self, *, hot_bytes: int = 32 << 20, clock: Callable[[], float] = time.monotonic) -> None:
        self.lock = threading.RLock()
        self._by_ns: dict[str, dict[str, Record]] = {}
        self.objects_by_namespace = self._by_ns
        self._size = 0
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, dict[tuple[str, str], Record]]] = {}
        self.stale_drops = 0
        self.index_errors = 0
        self._codec = Codec()
        self._hot = HotObjects(hot_bytes)
        self._bytes = 0  # the SIZE of every held record
        self._clock = clock
        self._heard: float | None = None

    # --- reads ----------------------------------------------------------------------------------------------

    def decoded(self, record: Record, *, keep: bool = True) -> dict[str, Any]:
        """The object ``record`` holds, shared when it was read recently; with ``keep``, kept decoded for the next
        reads (lock-free)."""
        blob = record[BLOB]
        obj = self._hot.get(blob)
        if obj is None:
            if type(blob) is not bytes:
                return record[PINNED]  # type: ignore[no-any-return]
            obj = self._codec.decode(blob)
            if keep:
                self._hot.put(blob, obj, record[RAW] * DECODED_PER_MARSHALLED)
        return obj  # type: ignore[no-any-return]

    def peek(self, record: Record) -> dict[str, Any]:
        """The object ``record`` holds, not kept decoded for later reads (what handlers are handed)."""
        return self.decoded(record, keep=False)

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The object ``namespace/name`` (``""`` for cluster-scoped), or None. Lock-free; shared, read-only."""
        objects = self._by_ns.get(namespace)
        record = objects.get(name) if objects is not None else None
        return self.decoded(record) if record is not None else None

    def __len__(self) -> int:
        return self._size

    def _records(self, namespace: str | None) -> list[Record]:
        with self.lock:
            if namespace is not None:
                objects = self._by_ns.get(namespace)
                return [objects[n] for n in sorted(objects)] if objects else []
            return [objs[n] for ns in sorted(self._by_ns) for objs in (self._by_ns[ns],) for n in sorted(objs)]

    def snapshot(self, namespace: str | None = None) -> Objects:
        """The objects (of one namespace, or all) held now, ordered by namespace then name, decoded as read."""
        return Objects(self.peek, self._records(namespace))

    def select(self, namespace: str | None = None, labels: LabelTest | None = None) -> list[dict[str, Any]]:
        """The objects (of one namespace, or all) whose labels pass ``labels`` (all without), ordered by namespace
        then name. Only the objects returned are decoded (shared, read-only)."""
        decoded = self.decoded
        if labels is None:
            return [decoded(r) for r in self._records(namespace)]
        return [decoded(r) for r in self._records(namespace) if labels(r.get(LABELS, r))]

    def by_index(self, index: str, value: str, labels: LabelTest | None = None,
                 namespace: str | None = None) -> list[dict[str, Any]]:
        """The objects whose indexer ``index`` returned ``value`` (of ``namespace`` only when given, and whose
        labels pass ``labels``), ordered by namespace then name. Only the objects returned are decoded (shared,
        read-only).

        Raises:
            InvalidArgumentError: no indexer of that name.
        """
        with self.lock:
            if index not in self._indices:
                raise InvalidArgumentError(f"no indexer named {index!r}")
            hits = self._indices[index].get(value, {})
            records = [hits[k] for k in sorted(hits) if namespace is None or k[0] == namespace]
        return [self.decoded(r) for r in records if labels is None or labels(r.get(LABELS, r))]

    # --- accounting -----------------------------------------------------------------------------------------------

    def bytes_held(self) -> int:
        """An estimate of the bytes the store holds: its records, its dicts, its indexes and the objects it keeps
        decoded (those at :data:`DECODED_PER_MARSHALLED` times their marshal length)."""
        with self.lock:
            size = self._bytes + sys.getsizeof(self._by_ns)
            size += sum(sys.getsizeof(ns) + sys.getsizeof(objects) for ns, objects in self._by_ns.items())
            for index in self._indices.values():
                size += sys.getsizeof(index) + sum(sys.getsizeof(hits) for hits in index.values())
            return size + self._hot.bytes

    def heard(self) -> None:
        """Note that the server just spoke (an event, a list or a bookmark)."""
        self._heard = self._clock()

    def seconds_since_heard(self) -> float | None:
        """Seconds since the last event, list or bookmark (by the store's clock); None before any."""
        heard = self._heard
        return None if heard is None else max(0.0, self._clock() - heard)

    # --- indexes ----------------------------------------------------------------------------------------------

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """Add an indexer and index every held object with it (decoding each once).

        Raises:
            InvalidArgumentError: an indexer of that name exists, or ``fn`` is not callable.
            Exception: whatever ``fn`` raises on a held object (nothing is added then).
        """
        if not callable(fn):
            raise InvalidArgumentError("an indexer must be callable")
        with self.lock:
            if name in self._indexers:
                raise InvalidArgumentError(f"an indexer named {name!r} exists already")
            index: dict[str, dict[tuple[str, str], Record]] = {}
            values_of: list[tuple[str, Record, tuple[str, ...]]] = []
            for ns, objects in self._by_ns.items():
                for obj_name, record in objects.items():
                    values = tuple(self._values(fn, self.decoded(record, keep=False), strict=True))
                    values_of.append((obj_name, record, values))
                    for value in values:
                        index.setdefault(value, {})[(ns, obj_name)] = record
            for obj_name, record, values in values_of:  # records are shared with queued changes: only INDEXED changes
                before = marshal.loads(record[INDEXED]) if INDEXED in record else ()
                record[INDEXED] = marshal.dumps((*before, values))
                sized(obj_name, record)
            self._indexers[name] = fn
            self._indices[name] = index
            self._bytes = sum(r[SIZE] for objs in self._by_ns.values() for r in objs.values())

    def _values(self, fn: IndexFunc, obj: Mapping[str, Any], *, strict: bool = False) -> Iterable[str]:
        try:
            values = fn(obj)
            if isinstance(values, (str, bytes)) or not all(isinstance(v, str) for v in values):
                raise InvalidArgumentError("an indexer must return an iterable of strings")
            return set(values)
        except BaseException:  # user code on the informer thread: SystemExit too is the indexer's failure
            if strict:
                raise
            self.index_errors += 1
            _log.warning("indexer failed on an object; it is not indexed", exc_info=True)
            return ()

    def _index_values(self, obj: Mapping[str, Any]) -> bytes:
        """The INDEXED entry of ``obj``: its values of each indexer, in the order they were added."""
        return marshal.dumps(tuple(tuple(self._values(fn, obj)) for fn in self._indexers.values()))

    def _index(self, key: tuple[str, str], old: Record | None, new: Record | None) -> None:
        for position, index in enumerate(self._indices.values()):
            if old is not None:
                for value in marshal.loads(old[INDEXED])[position]:
                    hits = index.get(value)
                    if hits is not None:
                        hits.pop(key, None)
                        if not hits:
                            del index[value]
            if new is not None:
                for value in marshal.loads(new[INDEXED])[position]:
                    index.setdefault(value, {})[key] = new

    # --- writes (lock held by the caller) --------------------------------------------------------------------------

    def _record(self, obj: dict[str, Any], meta: Mapping[str, Any]) -> Record:
        """``obj`` in compact form (indexed by the indexers present)."""
        encoded = self._codec.encode(obj)
        if encoded is None:
            record = make_record(f"pinned-{next(_pinned_tokens)}", 0, meta)
            record[PINNED] = obj
        else:
            record = make_record(encoded[0], encoded[1], meta)
        if self._indexers:
            record[INDEXED] = self._index_values(obj)
        return sized(meta["name"], record)

    def _put(self, ns: str, name: str, record: Record, old: Record | None) -> None:
        objects = self._by_ns.get(ns)
        if objects is None:
            objects = self._by_ns[ns] = {}
        if self._indexers and len(marshal.loads(record.get(INDEXED, b"N")) or ()) != len(self._indexers):
            record[INDEXED] = self._index_values(self.decoded(record, keep=False))  # staged before an indexer came
            sized(name, record)
        objects[name] = record
        self._bytes += record[SIZE]
        if old is None:
            self._size += 1
        else:
            self._bytes -= old[SIZE]
        if self._indexers:
            self._index((ns, name), old, record)

    def _pop(self, ns: str, name: str) -> Record | None:
        objects = self._by_ns.get(ns)
        if objects is None:
            return None
        old = objects.pop(name, None)
        if old is not None:
            self._size -= 1
            self._bytes -= old[SIZE]
            if not objects:
                del self._by_ns[ns]
            if self._indexers:
                self._index((ns, name), old, None)
        return old

    def upsert(self, obj: dict[str, Any]) -> Changes:
        """Store ``obj`` (an ADDED or MODIFIED event, or a list item) and return the changes made. ``obj`` is what
        handlers get as the new object, and what reads of that version return when the old one was among the
        recently read (it takes its place there): the caller must not change it afterwards.

        Raises:
            InvalidArgumentError: ``obj`` has no usable identity (see :func:`identity`); nothing changes.
        """
        ns, name, _, meta = identity(obj)
        changes = Changes(self.peek)
        with self.lock:
            self.heard()
            record = self._record(obj, meta)
            objects = self._by_ns.get(ns)
            old = objects.get(name) if objects is not None else None
            if old is None or _new_incarnation(record, old):
                self._put_new(ns, name, record, old, changes, obj)
            elif _older(meta, old):
                self.stale_drops += 1
            else:
                self._put(ns, name, record, old)
                # A version read recently is replaced by the new one among the recently read (the next read and
                # the next update's old need no decoding); an object nobody read is not kept decoded for a write.
                was_read = self._hot.pop(old[BLOB], old[RAW] * DECODED_PER_MARSHALLED)
                if was_read is not None and type(record[BLOB]) is bytes:
                    self._hot.put(record[BLOB], obj, record[RAW] * DECODED_PER_MARSHALLED)
                if old[RV] != record[RV]:
                    changes.modified(old, record, was_read, obj)
        return changes

    def _put_new(self, ns: str, name: str, record: Record, old: Record | None, out: Changes,
                 obj: dict[str, Any] | None = None) -> None:
        """Store ``record``, an object not held (``old`` None) or a new incarnation of ``old`` (another UID: a
        delete of it first); ``obj``: its object, decoded, when at hand."""
        if old is not None:
            self._pop(ns, name)
            out.deleted(old)
        self._put(ns, name, record, None)
        out.added(record, obj)

    def delete(self, obj: dict[str, Any]) -> Changes:
        """Apply a DELETED event and return the changes made (the event's object is the final state).

        Raises:
            InvalidArgumentError: ``obj`` has no usable identity; nothing changes.
        """
        ns, name, uid, _ = identity(obj)
        with self.lock:
            self.heard()
            objects = self._by_ns.get(ns)
            old = objects.get(name) if objects is not None else None
            changes = Changes(self.peek)
            if old is None or (uid is not None and old[UID] is not None and uid != old[UID]):
                return changes  # unknown, or about an earlier incarnation: the one held came after it
            self._pop(ns, name)
            changes.final(obj)
            return changes

    def replace(self, objs: Iterable[dict[str, Any]], *, representation_changed: bool = False) -> Changes:
        """Make the store hold exactly ``objs`` (a relist: the truth, see the module docstring) and return the
        changes: deletes for held objects that are absent first, then adds and updates. Objects without identity
        are skipped. ``representation_changed``: the list is in another version than what is held (an object
        with the same resourceVersion and content but for ``apiVersion``/``kind`` is replaced silently)."""
        return self.replace_entries(objs, representation_changed=representation_changed)

    def replace_entries(self, objs: Iterable[dict[str, Any]], namespace: str | None = None, *,
                        representation_changed: bool = False) -> Changes:
        """:meth:`replace`; with ``namespace``, replace what is held of that namespace only (a per-namespace
        list): objects of other namespaces are neither listed nor deleted.

        ``objs`` is read once, as it comes (a generator of list pages is fine): each object is encoded as it
        arrives and the decoded one is not kept, so a sync never holds the whole list decoded; the store then
        changes at once, under its lock (a read sees the old list or the new one). A listed object identical to
        the held one is not stored twice.
        """
        return self.replace_staged(self.stage(objs, namespace), representation_changed=representation_changed)

    def stage(self, objs: Iterable[dict[str, Any]], namespace: str | None = None) -> Staged:
        """The first half of :meth:`replace_entries`, without the lock: read ``objs`` to the end (a list arriving
        page by page is encoded as it arrives) into what :meth:`replace_staged` makes the store hold. What reading
        ``objs`` raises propagates, and the store is unchanged."""
        staged, order = self._stage(objs, namespace)
        return Staged(namespace, staged, order)

    def replace_staged(self, staged: Staged, *, representation_changed: bool = False) -> Changes:
        """The second half of :meth:`replace_entries`: make the store hold what :meth:`stage` read (takes the lock;
        a caller that must queue the changes in the same critical section holds it)."""
        with self.lock:
            self.heard()
            if not self._by_ns and not self._indexers:
                return self._adopt(staged.records, staged.order)
            return self._diff(staged.records, staged.order, staged.namespace, representation_changed)

    def _stage(self, objs: Iterable[dict[str, Any]], namespace: str | None
               ) -> tuple[dict[str, dict[str, Record]], list[tuple[str, str]]]:
        """The listed objects as records per namespace and name, and their keys in list order (a key listed
        twice: its first place, its last object). Objects without identity are skipped with a warning."""
        staged: dict[str, dict[str, Record]] = {}
        order: list[tuple[str, str]] = []
        for obj in objs:
            key = _listed_key(obj)
            if key is None or (namespace is not None and key[0] != namespace):
                continue
            ns, name = key
            record = self._record(obj, obj["metadata"])
            held = self._by_ns.get(ns)
            old = held.get(name) if held is not None else None
            if old is not None and old[BLOB] == record[BLOB]:
                record = old  # the same object: share the held record (a relist of an unchanged list is free)
            names = staged.get(ns)
            if names is None:
                names = staged[ns] = {}
            if name not in names:
                order.append(key)
            names[name] = record
        return staged, order

    def _adopt(self, staged: dict[str, dict[str, Record]], order: list[tuple[str, str]]) -> Changes:
        # Into an empty store without indexers (the first list): every object is an ADDED, no lookups of what is
        # held; the staged dicts become the store's (same keys, order and records as putting them one by one).
        self._by_ns.update(staged)
        self._size = len(order)
        self._bytes = sum(r[SIZE] for names in staged.values() for r in names.values())
        changes = Changes(self.peek)
        for ns, name in order:
            changes.added(staged[ns][name])
        return changes

    def _diff(self, staged: dict[str, dict[str, Record]], order: list[tuple[str, str]], namespace: str | None,
              representation_changed: bool) -> Changes:
        changes = Changes(self.peek)
        by_ns = self._by_ns
        for ns in (list(by_ns) if namespace is None else [namespace]):
            kept = staged.get(ns)
            for name in list(by_ns.get(ns, ())):
                if kept is None or name not in kept:
                    changes.deleted(self._pop(ns, name))  # type: ignore[arg-type]  # held: popped
        for ns, name in order:
            self._put_listed(ns, name, staged[ns][name], changes, representation_changed)
        return changes

    def _put_listed(self, ns: str, name: str, record: Record, out: Changes, representation_changed: bool) -> None:
        # A listed object is the truth: never refused as older, an update whenever it differs (by resourceVersion
        # or by content but for apiVersion/kind); with representation_changed, an unchanged object is still
        # replaced, silently, to hold the new version's apiVersion.
        objects = self._by_ns.get(ns)
        old = objects.get(name) if objects is not None else None
        if old is record:
            return
        if old is None or _new_incarnation(record, old):
            self._put_new(ns, name, record, old, out)
        elif old[RV] != record[RV] or not self._same(old, record):
            self._put(ns, name, record, old)
            out.modified(old, record)
        elif representation_changed:
            self._put(ns, name, record, old)  # the same content in the new version's apiVersion

    def _same(self, a: Record, b: Record) -> bool:
        """Whether two records hold the same object but for ``apiVersion``/``kind``."""
        return a[BLOB] == b[BLOB] or _same_content(self.decoded(a, keep=False), self.decoded(b, keep=False))


@dataclass
class Staged:
    """A list read by :meth:`ObjectStore.stage`, for :meth:`ObjectStore.replace_staged`: its records per namespace
    and name, and their keys in list order."""

    namespace: str | None
    records: dict[str, dict[str, Record]]
    order: list[tuple[str, str]]


def _listed_key(obj: object) -> tuple[str, str] | None:
    """``(namespace, name)`` of a listed object, or None (logged) when it has no usable identity."""
    # identity() inlined for the common case; anything it would refuse goes to it for the reason.
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict):
        name, ns, uid = meta.get("name"), meta.get("namespace") or "", meta.get("uid")
        if isinstance(name, str) and name and isinstance(ns, str) and (uid is None or isinstance(uid, str)):
            return ns, name
    try:
        identity(obj)  # refuses it (it accepts only what the check above accepts): the reason
    except InvalidArgumentError as exc:
        _log.warning("ignoring a listed object: %s", exc)
    return None
