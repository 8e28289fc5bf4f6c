"""The compact form in which an :class:`~restmapper.store._objects.ObjectStore` holds objects, and the bounded set
of decoded objects it keeps for reads.

An object is kept as one **record**: a flat dict whose values are all atomic (bytes, str, int, None), so CPython's
cyclic garbage collector never tracks it (a dict holding only untracked values is created untracked), however
many the store holds. Its keys:

* ``BLOB`` (``"\\x00b"``): the object, ``marshal``-encoded (format 4: exact for every JSON value, unicode, big
  ints, floats, ``True`` distinct from ``1``) and then deflated against a preset dictionary (``zdict``) learned
  from the first object the store encoded: objects of one kind share most of their text (keys, and for Pods of
  one ReplicaSet most values), so an 8 KB Pod is kept in a few hundred bytes. An object ``marshal`` refuses (a
  transform that returned a dict subclass or a non-JSON value) is kept decoded under ``PINNED`` (its record is
  then tracked by the collector), ``BLOB`` being a unique ``str`` token.
* ``SIZE``: the estimated bytes the record costs (:func:`sized`).
* ``RAW``: the length of the ``marshal`` form (what the decoded object costs, about, see
  :data:`DECODED_PER_MARSHALLED`).
* ``UID``, ``RV``, ``GENERATION``: ``metadata.uid``, ``metadata.resourceVersion``, ``metadata.generation`` (what
  writes compare without decoding).
* ``INDEXED`` (only while indexers exist): the object's values of each indexer, ``marshal``-encoded.
* ``LABELS`` (only when ``metadata.labels`` has a key starting with NUL, which no valid label key does, or is not
  a dict): the labels dict itself. Otherwise the labels are the record's other keys: a label selector matches the
  record itself, and never decodes an object it does not return.

Every reserved key starts with NUL, which a label key cannot contain (apimachinery ``IsQualifiedName``).

The decoded objects handed out are built once per compact form and shared by every reader that reads that
version (see :class:`HotObjects`): read-only by contract.
"""

from __future__ import annotations

import marshal
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, overload

__all__ = ["BLOB", "DECODED_PER_MARSHALLED", "GENERATION", "INDEXED", "LABELS", "PINNED", "RAW", "RV", "SIZE", "UID",
           "Change", "ChangeType", "Changes", "Codec", "HotObjects", "Objects", "Record", "labels_of", "make_record",
           "sized"]

BLOB, UID, RV, GENERATION, INDEXED, LABELS = "\x00b", "\x00u", "\x00r", "\x00g", "\x00i", "\x00l"
RAW, PINNED, SIZE = "\x00s", "\x00o", "\x00z"
_RESERVED = frozenset({BLOB, UID, RV, GENERATION, INDEXED, LABELS, RAW, PINNED, SIZE})

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]
Change = tuple[ChangeType, "dict[str, Any] | None", "dict[str, Any] | None"]
"""``(type, old, new)``: ``("ADDED", None, new)``, ``("MODIFIED", old, new)``, ``("DELETED", old, None)``."""

Record = dict[str, Any]
"""One held object in compact form (see the module docstring); never mutated once stored, but for ``INDEXED``."""

_LEVEL = 3  # zlib level: on Pods 1-3 cost the same and 3 is ~20 % smaller; 6+ costs 50 % more for 5 %
_WBITS = -13  # raw deflate, an 8 KB window: a small state to copy per object, and room for the dictionary
_MEM_LEVEL = 6  # a 16 KB hash table: the cheapest copy that still finds the dictionary's matches
_ZDICT_MAX = 1 << -_WBITS  # deflate refers only to the last window of a preset dictionary


class Codec:
    """Encode objects to compact bytes and back, against one preset dictionary learned from the first object.

    Thread-safe: the dictionary is chosen once (under a lock) and never changes, so every blob of the store
    decodes with it. Each encoding copies a compressor primed with the dictionary (measured on Pods: a copy costs
    a third of setting the dictionary again).
    """

    __slots__ = ("_deflate", "_learn", "_zdict")

    def __init__(self) -> None:
        self._zdict: bytes | None = None
        self._deflate: Any = None  # zlib's Compress, primed with the dictionary
        self._learn = threading.Lock()

    def encode(self, obj: Any) -> tuple[bytes, int] | None:
        """``(blob, raw_length)``: ``obj`` compact, and the length of its ``marshal`` form (an estimate of its
        decoded size); None when ``marshal`` refuses it (not a tree of exact JSON types)."""
        try:
            raw = marshal.dumps(obj, 4)
        except ValueError:
            return None
        primed = self._deflate
        if primed is None:
            with self._learn:
                if self._deflate is None:
                    self._zdict = raw[-_ZDICT_MAX:]
                    self._deflate = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL,
                                                     zlib.Z_DEFAULT_STRATEGY, self._zdict)
                primed = self._deflate
        deflate = primed.copy()
        return deflate.compress(raw) + deflate.flush(), len(raw)

    def decode(self, blob: bytes) -> Any:
        """The object ``blob`` encodes (a new one each call)."""
        zdict = self._zdict
        assert zdict is not None  # a blob exists only once a dictionary was learned
        return marshal.loads(zlib.decompressobj(_WBITS, zdict).decompress(blob))


class HotObjects:
    """Decoded objects recently read, by compact form (blob), within a budget of (estimated) bytes: two
    generations of at most half the budget each.

    A new object goes to the young generation; when it is full it becomes the old one (the previous old one is
    dropped) and a hit in the old generation moves the object back to the young one. A hit costs one dictionary
    lookup (``cachetools.LRUCache`` costs a Python-level call and a move-to-end per hit: several times more on the
    warm ``get`` path). Keyed by the blob, a hit is always the object of exactly that version: a write stores a
    new blob, so no entry ever needs invalidating and a read can never return a stale object. Lock-free: a race
    between two inserts may drop an entry (it is decoded again), never return a wrong one.

    Args:
        budget: bytes (estimated) of decoded objects to keep at most.
    """

    __slots__ = ("_old", "_old_bytes", "_young", "_young_bytes", "budget")

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._young: dict[bytes | str, Any] = {}
        self._old: dict[bytes | str, Any] = {}
        self._young_bytes = self._old_bytes = 0

    def get(self, blob: bytes | str) -> Any:
        """The object held for ``blob``, or None."""
        found = self._young.get(blob)
        if found is None:
            old = self._old
            found = old.get(blob)
            if found is not None:
                self.put(blob, found, self._old_bytes // (len(old) or 1))
        return found

    def pop(self, blob: bytes | str, size: int) -> Any:
        """Remove and return the object held for ``blob`` (about ``size`` bytes, as it was put), or None."""
        found = self._young.pop(blob, None)
        if found is not None:
            self._young_bytes = max(0, self._young_bytes - size)
            return found
        found = self._old.pop(blob, None)
        if found is not None:
            self._old_bytes = max(0, self._old_bytes - size)
        return found

    def put(self, blob: bytes | str, obj: Any, size: int) -> None:
        """Keep ``obj`` (about ``size`` bytes) as the decoded form of ``blob``."""
        young = self._young
        if self._young_bytes + size > self.budget // 2 and young:
            self._old, self._old_bytes = young, self._young_bytes
            self._young = young = {}
            self._young_bytes = 0
        young[blob] = obj
        self._young_bytes += size

    @property
    def bytes(self) -> int:
        """The estimated bytes of the objects kept."""
        return self._young_bytes + self._old_bytes

    def __len__(self) -> int:
        return len(self._young) + len(self._old)


def make_record(blob: bytes | str, raw: int, meta: Mapping[str, Any]) -> Record:
    """The record of an object whose compact form is ``blob`` (``raw``: its marshal length) and whose metadata is
    ``meta`` (see the module docstring)."""
    labels = meta.get("labels")
    record: Record = {}
    if type(labels) is dict:
        for key in labels:
            if not isinstance(key, str) or key.startswith("\x00"):
                record[LABELS] = dict(labels)
                break
        else:
            record.update(labels)
    elif labels is not None:  # as a selector reads it (_labels in _labels.py): a mapping, or no labels
        record[LABELS] = dict(labels) if isinstance(labels, Mapping) else {}
    record[BLOB] = blob
    record[RAW] = raw
    record[UID] = meta.get("uid") or None
    record[RV] = meta.get("resourceVersion")
    record[GENERATION] = meta.get("generation")
    return record


def labels_of(record: Record) -> Mapping[str, Any]:
    """The labels of a record, as a label selector reads them."""
    labels = record.get(LABELS)
    return labels if labels is not None else record


def sized(name: str, record: Record) -> Record:
    """``record`` (held under ``name``) with its ``SIZE``: an estimate of the bytes it costs, the record, its values
    and its label strings (the reserved keys are shared constants). A pinned object is not counted. Call again
    after changing the record."""
    record.pop(SIZE, None)
    size = sys.getsizeof(record) + sys.getsizeof(name)
    for key, value in record.items():
        if key not in _RESERVED:
            size += sys.getsizeof(key)
        if value is not None and not isinstance(value, bool) and key != PINNED:
            size += sys.getsizeof(value)
    record[SIZE] = size + sys.getsizeof(size)
    return record


_ADDED, _MODIFIED, _DELETED, _FINAL = "ADDED", "MODIFIED", "DELETED", "FINAL"  # markers in Changes' flat list


class Changes(Sequence[Change]):
    """The changes a write made, in order, as :data:`Change` tuples decoded one at a time when read.

    They hold the records (compact) of the objects involved, or the decoded object where the write had it at
    hand (the event's object, or the old version when it was among the recently read), in one flat list (an
    ``ADDED`` of a record is the record alone, else a marker and its objects; a decoded object is wrapped in a
    1-tuple, as a record is a dict too): a relist of N objects queues N references and no container an object,
    and a handler thread decodes each change as it delivers it (the ``old`` of an update is the object as it was:
    records are never changed). Each read decodes again: iterate once (indexing decodes every change before the
    one asked for). Equal to any sequence of equal changes. Built by the store with :meth:`added`,
    :meth:`modified`, :meth:`deleted` and :meth:`final`.
    """

    __slots__ = ("_count", "_decode", "_items")

    def __init__(self, decode: Callable[[Record], dict[str, Any]]) -> None:
        self._decode = decode
        self._items: list[Any] = []
        self._count = 0

    def added(self, record: Record, obj: dict[str, Any] | None = None) -> None:
        """Append the ``ADDED`` of ``record`` (``obj``: its object, decoded, when at hand)."""
        if obj is None:
            self._items.append(record)
        else:
            self._items += (_ADDED, (obj,))
        self._count += 1

    def modified(self, old: Record, new: Record, old_obj: dict[str, Any] | None = None,
                 new_obj: dict[str, Any] | None = None) -> None:
        """Append the ``MODIFIED`` from ``old`` to ``new`` (``old_obj``, ``new_obj``: their objects, decoded, when
        at hand)."""
        self._items += (_MODIFIED, old if old_obj is None else (old_obj,), new if new_obj is None else (new_obj,))
        self._count += 1

    def deleted(self, old: Record) -> None:
        """Append the ``DELETED`` of ``old``."""
        self._items += (_DELETED, old)
        self._count += 1

    def final(self, obj: dict[str, Any]) -> None:
        """Append a ``DELETED`` whose object is ``obj`` as it is (a delete event's final state)."""
        self._items += (_FINAL, obj)
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Change]:
        decode = self._decode

        def read(item: Any) -> dict[str, Any]:  # a record, or a decoded object in a 1-tuple
            return item[0] if type(item) is tuple else decode(item)

        items = iter(self._items)
        for item in items:
            if type(item) is dict:
                yield "ADDED", None, decode(item)
            elif item is _ADDED:
                yield "ADDED", None, read(next(items))
            elif item is _MODIFIED:
                old = read(next(items))
                yield "MODIFIED", old, read(next(items))
            elif item is _DELETED:
                yield "DELETED", decode(next(items)), None
            else:
                yield "DELETED", next(items), None

    @overload
    def __getitem__(self, i: int) -> Change: ...

    @overload
    def __getitem__(self, i: slice) -> list[Change]: ...

    def __getitem__(self, i: int | slice) -> Change | list[Change]:
        return list(self)[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Changes({list(self)!r})"


class Objects(Sequence[dict[str, Any]]):
    """Objects held at one moment, decoded one at a time when read (what a new handler's synthetic adds and a
    resync deliver: never all decoded at once). Each read decodes again (shared when the object is among the
    recently read). Equal to any sequence of equal objects."""

    __slots__ = ("_decode", "_records")

    def __init__(self, decode: Callable[[Record], dict[str, Any]], records: list[Record]) -> None:
        self._decode = decode
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        decode = self._decode
        for record in self._records:
            yield decode(record)

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(i, slice):
            return [self._decode(r) for r in self._records[i]]
        return self._decode(self._records[i])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Objects({list(self)!r})"



DECODED_PER_MARSHALLED = 8
"""About how many bytes a decoded object costs per byte of its ``marshal`` form (8.3 on realistic Pods): the
estimate of the decoded objects the store keeps for reads."""
