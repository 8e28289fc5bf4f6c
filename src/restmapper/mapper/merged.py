"""Lookup tables over every loaded group, maintained group by group: :class:`MergedIndex`.

A lazy mapper answers questions that name no group (``kind_for(pods)``, ``resolve("deploy")``, a category) by
asking *which groups could hold the answer* before it reads any group. :class:`MergedIndex` keeps, for each
plural and singular name, short name, category and lowercased kind, the set of groups that serve it. Changing
one group (add, refresh, evict) touches only that group's keys, so a question costs time proportional to its
matches, never to the number of groups.

Every key is a :class:`Cell` with a version number that changes whenever a group joins or leaves the key or a
member group changes; every group has its own cell too. An answer records the cells it read and the versions it
saw: it stays valid exactly as long as none of them moved, so refreshing group A never invalidates an answer
that only read group B.

The index's :attr:`~MergedIndex.epoch` moves after any of its cells moved: a reader that saw the epoch at
``e``, then found its cells unchanged, may skip checking them again while the epoch is still ``e`` (the memo's
fast check). It belongs to one index, so one mapper's changes never make another mapper's answers check again.

Not thread-safe on its own: the mapper serialises :meth:`MergedIndex.put`/:meth:`MergedIndex.remove` and reads
under one lock (every operation is a few dictionary updates).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Collection, Iterable, Sequence

from restmapper.mapper.index import GroupIndex

__all__ = ["Cell", "Dependencies", "MergedIndex", "joined"]


_STAMPS = itertools.count(1)


class Cell:
    """A version number that moves whenever what it stands for changes (a key's groups, a group's content).

    Cells are moved by their :class:`MergedIndex`, which then moves its :attr:`MergedIndex.epoch`.
    """

    __slots__ = ("version",)

    def __init__(self) -> None:
        self.version = 0

    def bump(self) -> None:
        """Mark a change (the owning index moves its epoch after it: :meth:`MergedIndex.moved`)."""
        self.version += 1


class _Bucket(Cell):
    """The groups serving one key (a name, short name, category or kind) and its version.

    Most keys have one or two groups: they are held as a tuple (48 bytes for one, against 216 for a set); a key
    shared by many groups (the ``all`` category) switches to a set, so adding a group stays O(1).
    """

    __slots__ = ("groups",)

    def __init__(self) -> None:
        super().__init__()
        self.groups: tuple[str, ...] | set[str] = ()

    def add(self, name: str) -> None:
        groups = self.groups
        if name in groups:
            return
        if isinstance(groups, set):
            groups.add(name)
        elif len(groups) < _SMALL_BUCKET:
            self.groups = (*groups, name)
        else:
            self.groups = {*groups, name}
        self.bump()

    def discard(self, name: str) -> None:
        groups = self.groups
        if name not in groups:
            return
        if isinstance(groups, set):
            groups.discard(name)
        else:
            self.groups = tuple(g for g in groups if g != name)
        self.bump()


def joined(first: Collection[str], second: Collection[str]) -> Collection[str]:
    """The groups in ``first`` or ``second`` (either one itself when the other is empty: no copy)."""
    if not second:
        return first
    if not first:
        return second
    return {*first, *second}


_SMALL_BUCKET = 8
"""Groups a key holds in a tuple before it switches to a set."""


Dependencies = tuple[tuple[Cell, int], ...]
"""The cells an answer read, each with the version it saw."""


_Table = dict[str, _Bucket]


def _version_like(label: str) -> bool:
    """Whether a group name's first label reads like a version (``v`` and a digit): see
    :meth:`MergedIndex.under_no_group`."""
    return label[:1] == "v" and label[1:2].isdigit()


_ABSENT_SHARDS = 1024
"""Cells standing for keys no group serves (a bounded number, however many distinct misses are asked)."""
_ABSENT_MASK = _ABSENT_SHARDS - 1  # a power of two

_HEAD = 6
"""Characters of a group name :meth:`MergedIndex.with_prefix` narrows by before it compares names."""


class MergedIndex:
    """Per-group :class:`~restmapper.mapper.index.GroupIndex` es merged into lookup tables.

    Tables (each key maps to the groups serving it): plural and singular names as discovered and lowercased;
    short names (case-sensitive, as client-go's expander); categories; kinds lowercased. Group priority is the
    server's listing order (:meth:`set_listing`), core first.

    Attributes:
        builds: how many group indexes were built (each :meth:`put` of a new generation builds one).
    """

    __slots__ = (
        "_absent",
        "_categories",
        "_cells",
        "_groups",
        "_kinds",
        "_listed",
        "_listing",
        "_names",
        "_position",
        "_short",
        "_sorted",
        "_sorted_by_head",
        "_unlisted",
        "_version_labels",
        "builds",
        "epoch",
        "listing_cell",
    )

    def __init__(self) -> None:
        self._groups: dict[str, tuple[int, GroupIndex]] = {}
        self._cells: dict[str, Cell] = {}
        self._names: _Table = {}
        self._short: _Table = {}
        self._categories: _Table = {}
        self._kinds: _Table = {}
        # Read by answers about keys no group serves: a new key moves the cell of its shard only.
        self._absent = tuple(Cell() for _ in range(_ABSENT_SHARDS))
        self.listing_cell = Cell()
        self._listing: tuple[str, ...] = ()
        self._listed: frozenset[str] = frozenset()
        self._position: dict[str, int] = {}
        self._sorted: list[str] = []
        # Listed names by their first _HEAD characters (those shorter are left out: :meth:`with_prefix` bisects
        # for a short prefix), each list in name order: a prefix no group starts with costs one dictionary miss.
        # Built on the first prefix question, paired with the sorted list it was built from (a lookup about one
        # listed group never needs it: 0.2 MiB at 1,000 groups).
        self._sorted_by_head: tuple[list[str], dict[str, list[str]]] | None = None
        # Indexed groups the listing does not name (nearly always none): :meth:`indexed_unlisted`.
        self._unlisted: set[str] = set()
        # The version-like first labels of listed names (``v1`` of a group ``v1.example.com``; nearly always none):
        # :meth:`under_no_group`.
        self._version_labels: frozenset[str] = frozenset()
        self.builds = 0
        # Moves after any cell of this index moved, to a value never used before (``itertools.count`` is atomic
        # under the GIL), so a late or racing write never brings back a value a reader recorded.
        self.epoch = next(_STAMPS)

    # --- maintenance ----------------------------------------------------------------------------------------

    def set_listing(self, names: Sequence[str]) -> None:
        """Record the groups the server lists, in priority order (core ``""`` first when listed)."""
        listing = tuple(names)
        if listing == self._listing:
            return
        self._listing = listing
        self._listed = frozenset(listing)
        self._position = {name: i for i, name in enumerate(listing)}
        self._sorted = sorted(self._listed)
        self._sorted_by_head = None
        self._unlisted = {name for name in self._groups if name not in self._listed}
        labels = (name.partition(".") for name in listing)
        self._version_labels = frozenset(label for label, dot, _ in labels if dot and _version_like(label))
        self.moved(self.listing_cell)

    def generation(self, name: str) -> int | None:
        """The cache generation the index of group ``name`` was built from, or None when it is not indexed."""
        held = self._groups.get(name)
        return None if held is None else held[0]

    def put(self, name: str, generation: int, build: Callable[[], GroupIndex]) -> GroupIndex:
        """Index group ``name`` at ``generation``; ``build`` is called only when the generation is new.

        Returns:
            The group's index.
        """
        held = self._groups.get(name)
        if held is not None and held[0] == generation:
            return held[1]
        index = build()
        self.builds += 1
        if held is not None and held[0] > generation:
            return index  # an older entry raced a refresh: answer from it, keep the newer index
        if held is not None:
            self._unlink(name, held[1])
        self._groups[name] = (generation, index)
        if name not in self._listed:
            self._unlisted.add(name)
        self._link(name, index)
        self.moved(self.cell(name))
        return index

    def remove(self, name: str) -> None:
        """Forget group ``name`` (evicted, or no longer listed)."""
        held = self._groups.pop(name, None)
        self._unlisted.discard(name)
        if held is not None:
            self._unlink(name, held[1])
            self.moved(self.cell(name))

    def _keys(self, index: GroupIndex) -> Iterable[tuple[_Table, str]]:
        for name in index.names:
            yield self._names, name
            yield self._names, name.lower()
        # Lower-cased too: callers that match without case (the dynamic drop-in) narrow with them as well.
        for short in index.short_names:
            yield self._short, short
            yield self._short, short.lower()
        for category in index.categories:
            yield self._categories, category
            yield self._categories, category.lower()
        for vindex in index.version_indexes:
            for entry in vindex.entries:
                if entry.kind:
                    yield self._kinds, entry.kind.lower()

    def _link(self, name: str, index: GroupIndex) -> None:
        for table, key in self._keys(index):
            bucket = table.get(key)
            if bucket is None:
                bucket = table[key] = _Bucket()
                self._absent_cell(table, key).bump()
            bucket.add(name)

    def _unlink(self, name: str, index: GroupIndex) -> None:
        for table, key in self._keys(index):
            bucket = table.get(key)
            if bucket is not None:
                bucket.discard(name)
                if not bucket.groups:
                    del table[key]

    # --- reading ----------------------------------------------------------------------------------------------

    def _absent_cell(self, table: _Table, key: str) -> Cell:
        return self._absent[(hash(key) ^ (id(table) >> 4)) & _ABSENT_MASK]

    def moved(self, cell: Cell | None = None) -> None:
        """Move ``cell`` (one of this index's, or one its owner reads with them) and then :attr:`epoch`; without a
        cell, only the epoch: every remembered answer checks its own cells again on its next hit."""
        if cell is not None:
            cell.version += 1
        self.epoch = next(_STAMPS)

    def touch(self, name: str) -> None:
        """Move the cell of group ``name`` if it has one (without one, no answer read it)."""
        cell = self._cells.get(name)
        if cell is not None:
            self.moved(cell)

    def cell(self, name: str) -> Cell:
        """The cell of group ``name`` (moves when the group is indexed, re-indexed or removed)."""
        cell = self._cells.get(name)
        if cell is None:
            cell = self._cells[name] = Cell()
        return cell

    def index(self, name: str) -> GroupIndex | None:
        """The index of group ``name``, or None when it is not indexed."""
        held = self._groups.get(name)
        return None if held is None else held[1]

    def _lookup(self, table: _Table, key: str, deps: list[tuple[Cell, int]]) -> Collection[str]:
        bucket = table.get(key)
        if bucket is None:
            cell = self._absent_cell(table, key)
            deps.append((cell, cell.version))
            return ()
        deps.append((bucket, bucket.version))
        return bucket.groups

    def with_name(self, name: str, deps: list[tuple[Cell, int]]) -> Collection[str]:
        """Groups serving ``name`` (as given, or lowercased) as a plural or singular resource name.

        The collections these methods return are the index's own: read them, never change them.
        """
        names = self._names
        bucket = names.get(name)  # :meth:`_lookup`, written out: every first-time resource question asks this
        if bucket is None:
            cell = self._absent[(hash(name) ^ (id(names) >> 4)) & _ABSENT_MASK]  # as :meth:`_absent_cell`
            deps.append((cell, cell.version))
            found: Collection[str] = ()
        else:
            deps.append((bucket, bucket.version))
            found = bucket.groups
        lowered = name.lower()
        if lowered != name:
            found = joined(found, self._lookup(names, lowered, deps))
        return found

    def with_name_or_short_name(self, arg: str, deps: list[tuple[Cell, int]]) -> Collection[str]:
        """The groups that may answer ``resolve(arg)`` for an argument without dots: those serving ``arg`` as a
        name (as given, or lowercased) or claiming it as a short name (as given).

        :meth:`with_name` and :meth:`with_short_name` written out in one call (every first-time ``resolve``
        asks both), reading the same cells; they are recorded in ``deps``.
        """
        names = self._names
        absent = self._absent
        bucket = names.get(arg)
        if bucket is None:
            cell = absent[(hash(arg) ^ (id(names) >> 4)) & _ABSENT_MASK]  # as :meth:`_absent_cell`
            deps.append((cell, cell.version))
            found: Collection[str] = ()
        else:
            deps.append((bucket, bucket.version))
            found = bucket.groups
        lowered = arg.lower()
        if lowered != arg:
            bucket = names.get(lowered)
            if bucket is None:
                cell = absent[(hash(lowered) ^ (id(names) >> 4)) & _ABSENT_MASK]
                deps.append((cell, cell.version))
            else:
                deps.append((bucket, bucket.version))
                found = joined(found, bucket.groups)
        short = self._short
        bucket = short.get(arg)
        if bucket is None:
            cell = absent[(hash(arg) ^ (id(short) >> 4)) & _ABSENT_MASK]
            deps.append((cell, cell.version))
            return found
        deps.append((bucket, bucket.version))
        return joined(found, bucket.groups)

    def with_short_name(self, short_name: str, deps: list[tuple[Cell, int]]) -> Collection[str]:
        """Groups with a resource claiming ``short_name`` (case-sensitive, as client-go's shortcut expander)."""
        return self._lookup(self._short, short_name, deps)

    def with_category(self, category: str, deps: list[tuple[Cell, int]]) -> Collection[str]:
        """Groups with a resource in ``category``."""
        return self._lookup(self._categories, category, deps)

    def with_kind(self, kind: str, deps: list[tuple[Cell, int]]) -> Collection[str]:
        """Groups serving ``kind`` (compared lowercased)."""
        return self._lookup(self._kinds, kind.lower(), deps)

    def holders(self, lowered: str) -> set[str]:
        """Groups with a plural, singular, short name or kind whose lower-case form is ``lowered`` (every group
        whose names a question spelled in any case may read)."""
        out: set[str] = set()
        for table in (self._names, self._short, self._kinds):
            bucket = table.get(lowered)
            if bucket is not None:
                out.update(bucket.groups)
        return out

    def listed(self, name: str) -> bool:
        """True when the server lists group ``name``."""
        return name in self._listed

    def every_listed_indexed(self) -> bool:
        """True when every group the listing names is indexed (one pass over the listing)."""
        groups = self._groups
        return all(name in groups for name in self._listing)

    def indexed_unlisted(self, name: str) -> bool:
        """True when group ``name`` is indexed but the listing does not name it: for a name known not to be
        listed, ``index(name) is not None``, read from a set that is nearly always empty (no read of the table of
        every group)."""
        return name in self._unlisted

    def with_prefix(self, prefix: str) -> list[str]:
        """Listed named groups whose name starts with ``prefix`` (never core), in name order."""
        names = self._sorted
        if len(prefix) >= _HEAD:  # the usual case (``resource.group`` readings): no bisection over every name
            out = []  # a loop, not a comprehension: no call for the usual head no group has
            for name in self._by_head().get(prefix[:_HEAD], ()):
                if name.startswith(prefix):
                    out.append(name)
            return out
        out = []
        for i in range(bisect.bisect_left(names, prefix), len(names)):  # no copy of the tail: O(matches)
            name = names[i]
            if not name.startswith(prefix):
                break
            if name:
                out.append(name)
        return out

    def under_no_group(self, label: str) -> bool:
        """True when ``label`` looks like a version (``v1``, ``v2beta1``: what the second part of a
        ``resource.version.group`` argument is) and no listed group's name starts with ``label.``, so no listed
        group starts with ``label.group`` for any group (:meth:`prefix_free` of it), read from a set that is nearly
        always empty; False when not known (any other label: ask :meth:`prefix_free`)."""
        return label[:1] == "v" and label[1:2].isdigit() and label not in self._version_labels

    def prefix_free(self, prefix: str) -> bool:
        """True when no listed named group starts with ``prefix`` (so none is named ``prefix`` either): ``not
        with_prefix(prefix)``, in one dictionary read for the usual ``prefix`` (a dotted argument's reading of a
        group no server lists: ``v1.example.com`` in ``widgets.v1.example.com``)."""
        if len(prefix) >= _HEAD:
            held = self._sorted_by_head
            by_head = held[1] if held is not None and held[0] is self._sorted else self._by_head()
            candidates = by_head.get(prefix[:_HEAD])
            return candidates is None or not any(name.startswith(prefix) for name in candidates)
        return not self.with_prefix(prefix)

    def _by_head(self) -> dict[str, list[str]]:
        """Listed names by their first _HEAD characters (see ``_sorted_by_head``), built for the current listing."""
        names = self._sorted
        held = self._sorted_by_head
        if held is None or held[0] is not names:  # built from this very list (a new listing makes another)
            by_head: dict[str, list[str]] = {}
            for name in names:
                if len(name) >= _HEAD:
                    by_head.setdefault(name[:_HEAD], []).append(name)
            self._sorted_by_head = held = (names, by_head)
        return held[1]

    @property
    def ranks(self) -> dict[str, int]:
        """Listed group name -> its priority rank (core first): what :meth:`position` reads (read it, never
        change it)."""
        return self._position

    def position(self, name: str) -> int:
        """The priority rank of group ``name`` in the server's listing (core first); unlisted ones rank last."""
        return self._position.get(name, len(self._position))

    def ordered(self, names: Iterable[str]) -> list[GroupIndex]:
        """The indexes of ``names`` that are indexed, in server priority order (core first)."""
        position = self._position
        held = [(position.get(n, len(position)), n) for n in names if n in self._groups]
        held.sort()
        return [self._groups[n][1] for _, n in held]

    @property
    def names(self) -> tuple[str, ...]:
        """Every indexed group name."""
        return tuple(self._groups)
