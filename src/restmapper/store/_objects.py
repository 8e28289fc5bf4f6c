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

No I/O. Writers hold :attr:`ObjectStore.lock`; :meth:`ObjectStore.get` takes no lock (dict reads are atomic).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from restmapper.errors import InvalidArgumentError, TransformError
from restmapper.model import GroupVersionKind

__all__ = ["Change", "Entry", "IndexFunc", "ObjectStore", "Staged", "disagrees", "first_disagreeing", "identity",
           "newer_resource_version", "reached", "resource_version_int", "transformed"]

_log = logging.getLogger("restmapper.store")

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]
Change = tuple[ChangeType, "dict[str, Any] | None", "dict[str, Any] | None"]
"""``(type, old, new)``: ``("ADDED", None, new)``, ``("MODIFIED", old, new)``, ``("DELETED", old, None)``."""

Entry = dict[str, Any] | Change
"""A change as :meth:`ObjectStore.replace_entries` returns it: an object alone is its ``ADDED`` (a relist into an
empty store is then just the list of objects: no tuple an object to keep alive until the handlers ran), anything
else a :data:`Change`."""

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
    kind_name = kind.kind
    for obj in objs:
        if not isinstance(obj, dict):
            continue
        meta = obj.get("metadata")
        if isinstance(meta, dict) and bool(meta.get("namespace")) != namespaced:
            return obj
        if metadata and obj.get("kind") == "PartialObjectMetadata" and obj.get("apiVersion") == "meta.k8s.io/v1":
            continue
        got = obj.get("apiVersion")
        if got is not None and got != api_version:
            return obj
        got = obj.get("kind")
        if got is not None and got != kind_name:
            return obj
    return None


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


_KEPT = ("name", "namespace", "uid", "resourceVersion")
"""The metadata a transform must keep: how the store keys, replaces and orders objects."""


def _callable_name(fn: object) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module else str(name)


def transformed(transform: Callable[[dict[str, Any]], Any], obj: dict[str, Any], kind: str) -> dict[str, Any]:
    """Return ``transform(obj)`` once checked to be the same object: a dict whose ``metadata`` keeps the ``name``,
    ``namespace``, ``uid`` and ``resourceVersion`` of ``obj`` (absent and ``""`` count alike). An ``obj`` without
    a ``metadata`` object is returned as it is (the store refuses it as the server's malformed object).

    Args:
        transform: the cache's transform.
        obj: a wire-form object as the server sent it (the transform may change it in place).
        kind: the informer's kind, for the error.

    Raises:
        TransformError: ``transform`` raised (the cause), or returned anything else (None, a list, a dict without
            metadata, another name, namespace, uid or resourceVersion).
    """
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return obj
    before = [meta.get(field) or None for field in _KEPT]  # read first: the transform may change obj in place
    name, namespace = str(before[0] or ""), str(before[1] or "")
    try:
        result = transform(obj)
    except BaseException as exc:  # user code on a worker thread: SystemExit too must not end the informer
        raise TransformError(kind, _callable_name(transform), namespace, name,
                             f"raised {type(exc).__name__}: {exc}") from exc
    problem = ""
    new_meta = result.get("metadata") if isinstance(result, dict) else None
    if not isinstance(result, dict):
        problem = f"returned {'None' if result is None else 'a ' + type(result).__name__}, not the object"
    elif not isinstance(new_meta, dict):
        problem = "returned an object without metadata"
    else:
        for field, old in zip(_KEPT, before, strict=True):
            new = new_meta.get(field) or None
            if new != old:
                problem = (f"dropped metadata.{field}" if new is None else
                           f"changed metadata.{field} from {old!r} to {new!r}")
                break
    if problem:
        raise TransformError(kind, _callable_name(transform), namespace, name, problem)
    assert isinstance(result, dict)
    return result


def _older(new_meta: Mapping[str, Any], old_meta: Mapping[str, Any]) -> bool:
    gen_new, gen_old = new_meta.get("generation"), old_meta.get("generation")
    if isinstance(gen_new, int) and isinstance(gen_old, int) and gen_new < gen_old:
        return True
    return newer_resource_version(old_meta.get("resourceVersion"), new_meta.get("resourceVersion")) is True


class ObjectStore:
    """Objects of one resource type, generation-aware, with optional indexes (see the module docstring).

    Attributes:
        lock: held by every writer (re-entrant: the informer holds it while it also queues the changes).
        stale_drops: objects refused because they were older than the held one.
        index_errors: indexer calls that raised (the object is then not indexed by that indexer).
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._by_ns: dict[str, dict[str, dict[str, Any]]] = {}
        self.objects_by_namespace = self._by_ns  # namespace -> name -> object; readers must not mutate it
        self._size = 0
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, dict[tuple[str, str], dict[str, Any]]]] = {}
        self.stale_drops = 0
        self.index_errors = 0

    # --- reads ----------------------------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The object ``namespace/name`` (``""`` for cluster-scoped), or None. Lock-free."""
        objects = self._by_ns.get(namespace)
        return objects.get(name) if objects is not None else None

    def __len__(self) -> int:
        return self._size

    def snapshot(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """The objects (of one namespace, or all), ordered by namespace then name."""
        with self.lock:
            if namespace is not None:
                objects = self._by_ns.get(namespace)
                return [objects[n] for n in sorted(objects)] if objects else []
            return [objs[n] for ns in sorted(self._by_ns) for objs in (self._by_ns[ns],) for n in sorted(objs)]

    def by_index(self, index: str, value: str) -> list[dict[str, Any]]:
        """The objects whose indexer ``index`` returned ``value``, ordered by namespace then name.

        Raises:
            InvalidArgumentError: no indexer of that name.
        """
        with self.lock:
            if index not in self._indices:
                raise InvalidArgumentError(f"no indexer named {index!r}")
            hits = self._indices[index].get(value, {})
            return [hits[k] for k in sorted(hits)]

    # --- indexes ----------------------------------------------------------------------------------------------

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        """Add an indexer and index every held object with it.

        Raises:
            InvalidArgumentError: an indexer of that name exists, or ``fn`` is not callable.
            Exception: whatever ``fn`` raises on a held object (nothing is added then).
        """
        if not callable(fn):
            raise InvalidArgumentError("an indexer must be callable")
        with self.lock:
            if name in self._indexers:
                raise InvalidArgumentError(f"an indexer named {name!r} exists already")
            index: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
            for ns, objects in self._by_ns.items():
                for obj_name, obj in objects.items():
                    for value in self._values(fn, obj, strict=True):
                        index.setdefault(value, {})[(ns, obj_name)] = obj
            self._indexers[name] = fn
            self._indices[name] = index

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

    def _index(self, key: tuple[str, str], old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            if old is not None:
                for value in self._values(fn, old):
                    hits = index.get(value)
                    if hits is not None:
                        hits.pop(key, None)
                        if not hits:
                            del index[value]
            if new is not None:
                for value in self._values(fn, new):
                    index.setdefault(value, {})[key] = new

    # --- writes (lock held by the caller) --------------------------------------------------------------------------

    def _put(self, ns: str, name: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        objects = self._by_ns.get(ns)
        if objects is None:
            objects = self._by_ns[ns] = {}
        objects[name] = obj
        if old is None:
            self._size += 1
        if self._indexers:
            self._index((ns, name), old, obj)

    def _pop(self, ns: str, name: str) -> dict[str, Any] | None:
        objects = self._by_ns.get(ns)
        if objects is None:
            return None
        old = objects.pop(name, None)
        if old is not None:
            self._size -= 1
            if not objects:
                del self._by_ns[ns]
            if self._indexers:
                self._index((ns, name), old, None)
        return old

    def upsert(self, obj: dict[str, Any]) -> list[Change]:
        """Store ``obj`` (an ADDED or MODIFIED event, or a list item) and return the changes made.

        Raises:
            InvalidArgumentError: ``obj`` has no usable identity (see :func:`identity`); nothing changes.
        """
        ns, name, uid, meta = identity(obj)
        changes: list[Entry] = []
        with self.lock:
            self._upsert(ns, name, uid, meta, obj, changes)
        return [_change(e) for e in changes]

    def _upsert(self, ns: str, name: str, uid: str | None, meta: Mapping[str, Any], obj: dict[str, Any],
                out: list[Entry], *, listed: Literal["", "content", "representation"] = "") -> None:
        # Lock held; the identity is obj's (validated). Appends the changes made to ``out`` (an ADDED as obj alone).
        # ``listed``: obj comes from a relist, the truth: never refused as older, an update whenever it differs
        # (by resourceVersion or by content but for apiVersion/kind); "representation": an unchanged object is
        # still replaced, silently, to hold the new version's apiVersion.
        objects = self._by_ns.get(ns)
        old = objects.get(name) if objects is not None else None
        if old is None:
            self._put(ns, name, obj, None)
            out.append(obj)
            return
        old_meta = old["metadata"]
        old_uid = old_meta.get("uid")
        if uid is not None and old_uid is not None and uid != old_uid:
            self._pop(ns, name)
            self._put(ns, name, obj, None)
            out.append(("DELETED", old, None))
            out.append(obj)
            return
        if listed:
            if old_meta.get("resourceVersion") != meta.get("resourceVersion") or not _same_content(old, obj):
                self._put(ns, name, obj, old)
                out.append(("MODIFIED", old, obj))
            elif listed == "representation":
                self._put(ns, name, obj, old)  # the same content in the new version's apiVersion
            return
        if _older(meta, old_meta):
            self.stale_drops += 1
            return
        self._put(ns, name, obj, old)
        if old_meta.get("resourceVersion") != meta.get("resourceVersion"):
            out.append(("MODIFIED", old, obj))

    def delete(self, obj: dict[str, Any]) -> list[Change]:
        """Apply a DELETED event and return the changes made (the event's object is the final state).

        Raises:
            InvalidArgumentError: ``obj`` has no usable identity; nothing changes.
        """
        ns, name, uid, _ = identity(obj)
        with self.lock:
            old = self.get(ns, name)
            if old is None:
                return []
            old_uid = old["metadata"].get("uid")
            if uid is not None and old_uid is not None and uid != old_uid:
                return []  # about an earlier incarnation: the one held was created after it
            self._pop(ns, name)
            return [("DELETED", obj, None)]

    def replace(self, objs: Iterable[dict[str, Any]], *, representation_changed: bool = False) -> list[Change]:
        """Make the store hold exactly ``objs`` (a relist: the truth, see the module docstring) and return the
        changes: deletes for held objects that are absent first, then adds and updates. Objects without identity
        are skipped. ``representation_changed``: the list is in another version than what is held (an object
        with the same resourceVersion and content but for ``apiVersion``/``kind`` is replaced silently)."""
        return [_change(e) for e in self.replace_entries(objs, representation_changed=representation_changed)]

    def replace_entries(self, objs: Iterable[dict[str, Any]], namespace: str | None = None, *,
                        representation_changed: bool = False) -> list[Entry]:
        """:meth:`replace`, its changes as :data:`Entry` (an ``ADDED`` is the object alone).

        With ``namespace``, replace what is held of that namespace only (a per-namespace list): objects of other
        namespaces are neither listed nor deleted.
        """
        return self.replace_staged(self.stage(objs, namespace), representation_changed=representation_changed)

    def stage(self, objs: Iterable[dict[str, Any]], namespace: str | None = None) -> Staged:
        """The first half of :meth:`replace_entries`, without the lock: read ``objs`` to the end (a list arriving
        page by page is stored as it arrives) into what :meth:`replace_staged` makes the store hold. What reading
        ``objs`` raises propagates, and the store is unchanged."""
        # Staged per namespace, in list order (a key listed twice: its first place, its last object), with no
        # tuple an object: a relist must not add a container an object to what the garbage collector walks.
        fresh: dict[str, dict[str, dict[str, Any]]] = {}
        order_ns: list[str] = []
        order_names: list[str] = []
        for obj in objs:
            # identity() inlined (no tuple an object); anything it would refuse goes to it for the reason.
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            if isinstance(meta, dict):
                name, ns, uid = meta.get("name"), meta.get("namespace") or "", meta.get("uid")
            else:
                name = ns = uid = None
            if not (isinstance(name, str) and name and isinstance(ns, str) and (uid is None or isinstance(uid, str))):
                try:
                    ns, name, _, _ = identity(obj)
                except InvalidArgumentError as exc:
                    _log.warning("ignoring a listed object: %s", exc)
                    continue
            if namespace is not None and ns != namespace:
                continue
            names = fresh.get(ns)
            if names is None:
                names = fresh[ns] = {}
            if name not in names:
                order_ns.append(ns)
                order_names.append(name)
            names[name] = obj
        return Staged(namespace, fresh, order_ns, order_names)

    def replace_staged(self, staged: Staged, *, representation_changed: bool = False) -> list[Entry]:
        """The second half of :meth:`replace_entries`: make the store hold what :meth:`stage` read (takes the lock;
        a caller that must queue the changes in the same critical section holds it)."""
        namespace, fresh, order_ns, order_names = staged.namespace, staged.fresh, staged.order_ns, staged.order_names
        changes: list[Entry] = []
        with self.lock:
            by_ns = self._by_ns
            if not by_ns and not self._indexers:
                # Into an empty store (the first list): every object is an ADDED; no lookups of what is held.
                # The staged dicts become the store's (same keys, order and objects as putting them one by one).
                by_ns.update(fresh)
                self._size = len(order_names)
                return [fresh[ns][name] for ns, name in zip(order_ns, order_names, strict=True)]
            for ns in (list(by_ns) if namespace is None else [namespace]):
                kept = fresh.get(ns)
                for name in list(by_ns.get(ns, ())):
                    if kept is None or name not in kept:
                        changes.append(("DELETED", self._pop(ns, name), None))
            for ns, name in zip(order_ns, order_names, strict=True):
                obj = fresh[ns][name]
                meta = obj["metadata"]
                self._upsert(ns, name, meta.get("uid") or None, meta, obj, changes,
                             listed="representation" if representation_changed else "content")
        return changes


@dataclass
class Staged:
    """A list read by :meth:`ObjectStore.stage`, for :meth:`ObjectStore.replace_staged`: the objects per namespace,
    and their keys in list order."""

    namespace: str | None
    fresh: dict[str, dict[str, dict[str, Any]]]
    order_ns: list[str]
    order_names: list[str]


def _same_content(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``a == b`` but for ``apiVersion``/``kind`` (list items of built-in types come without them, events with)."""
    return all(a.get(k) == b.get(k) for k in (a.keys() | b.keys()) - {"apiVersion", "kind"})


def _change(entry: Entry) -> Change:
    return entry if isinstance(entry, tuple) else ("ADDED", None, entry)
