"""The table of loaded group entries, with what lets readers avoid scanning it.

:class:`EntryTable` holds one :class:`~restmapper.cache.GroupEntry` per loaded group and keeps, next to it:

* a change log (which groups got new content or were dropped, in order), so a reader that derives state from
  entries (the mapper's merged index) updates only what changed since it last looked;
* the entries' fetch times in a heap, so "when does the first entry expire" costs O(log n), not a scan;
* a count of drops, so "is every listed group still loaded" is known without a scan when nothing was dropped.

Guarded by the cache's lock like every other piece of cache state.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Collection, ItemsView, Iterator, Mapping, ValuesView

from restmapper.cache._freshness import Timing
from restmapper.cache._roots import ROOTS
from restmapper.cache._types import Backoff, GroupEntry, RootSlot
from restmapper.discovery import RootDiscovery
from restmapper.model import APIGroup, APIResourceList, GroupVersion
from restmapper.wire import GroupResourceLists, LazyResourceLists

__all__ = ["EVERYTHING", "EntryTable", "GroupLists", "kept_resources", "listed_groups", "renewable", "same_resources"]

_LOG_LIMIT = 1 << 16

EVERYTHING = "\x00*"
"""Logged by :meth:`EntryTable.clear`: not a group name; every group may have changed, the listing too."""


class EntryTable:
    """Loaded group entries by name, with a change log and an expiry heap (caller holds the cache's lock).

    Attributes:
        drops: how many entries were dropped so far (eviction, invalidation, no longer listed).
    """

    __slots__ = ("_all_loaded", "_base", "_entries", "_expiry", "_listing", "_log", "_missing", "_partial", "drops")

    def __init__(self) -> None:
        self._entries: dict[str, GroupEntry] = {}
        self._log: list[str] = []
        self._base = 0  # change number of _log[0]
        self._expiry: list[tuple[float, str]] = []
        self.drops = 0
        self._partial: set[str] = set()  # groups with unread versions (legacy: only some versions fetched)
        # The listing (group names) when every listed group was last seen loaded, and the groups dropped since (a
        # group loaded again leaves it: one group invalidated and loaded again needs no scan of every group).
        self._all_loaded: tuple[str, ...] | None = None
        self._missing: set[str] = set()
        self._listing: tuple[RootDiscovery | None, RootDiscovery | None, tuple[str, ...]] | None = None

    def check_all_loaded(self, core: RootSlot | None, named: RootSlot | None) -> None:
        """Remember that every group the root documents list is loaded, if it is (one scan)."""
        if core is not None and named is not None and all(
                g.name in self._entries for g in listed_groups(core, named, None)):
            self._all_loaded = self.listing(core, named)
            self._missing.clear()

    def all_fresh_until(self, core: RootSlot | None, named: RootSlot | None, timing: Timing,
                        backoff: Mapping[str, Backoff]) -> float | None:
        """Until when every listed group stays loaded and fresh, if that is known without a scan, else None.

        Known when the root documents list the same groups as when :meth:`check_all_loaded` found every listed
        group loaded, and every group dropped since was loaded again: then the oldest fetch, the roots' fetches and
        pending retries bound it.
        """
        if core is None or named is None or not self._still_all_loaded(core, named):
            return None
        oldest = self.oldest_fetch()
        until = timing.expires_at(min(core.fetched_at, named.fetched_at, math.inf if oldest is None else oldest))
        for b in backoff.values():
            until = min(until, b.retry_at)
        return until

    def _still_all_loaded(self, core: RootSlot, named: RootSlot) -> bool:
        """True when :meth:`check_all_loaded` found every listed group loaded, every group dropped since was loaded
        again, none is left partly read, neither root document expired and they list the same groups."""
        checked = self._all_loaded
        if checked is None or core.expired or named.expired or self._partial or self._missing:
            return False
        listing = self.listing(core, named)  # the same tuple while the roots are unchanged: no comparison
        return listing is checked or listing == checked

    def listing(self, core: RootSlot | None, named: RootSlot | None) -> tuple[str, ...]:
        """Every group name the root documents list, core first; the same tuple while they are unchanged."""
        key = (None if core is None else core.root, None if named is None else named.root)
        held = self._listing
        if held is not None and held[0] is key[0] and held[1] is key[1]:
            return held[2]
        names = tuple(g.name for g in listed_groups(core, named, None))
        self._listing = (key[0], key[1], names)
        return names

    def get(self, name: str) -> GroupEntry | None:
        """The entry of group ``name``, or None."""
        return self._entries.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> ItemsView[str, GroupEntry]:
        """``(name, entry)`` pairs."""
        return self._entries.items()

    def values(self) -> ValuesView[GroupEntry]:
        """The entries."""
        return self._entries.values()

    def set(self, entry: GroupEntry) -> None:
        """Install ``entry``; a new generation (new content) is logged as a change."""
        old = self._entries.get(entry.name)
        self._entries[entry.name] = entry
        self._missing.discard(entry.name)
        if entry.unread:
            self._partial.add(entry.name)
        else:
            self._partial.discard(entry.name)
        if old is None or old.generation != entry.generation:
            self._changed(entry.name)
        if old is None or old.fetched_at != entry.fetched_at:
            heapq.heappush(self._expiry, (entry.fetched_at, entry.name))
            if len(self._expiry) > 4 * len(self._entries) + 64:
                self._expiry = [(e.fetched_at, n) for n, e in self._entries.items()]
                heapq.heapify(self._expiry)

    def drop(self, name: str) -> GroupEntry | None:
        """Remove the entry of ``name``; returns it, or None when there was none."""
        old = self._entries.pop(name, None)
        self._partial.discard(name)
        if old is not None:
            self.drops += 1
            self._missing.add(name)
            self._changed(name)
        return old

    def touch(self, name: str) -> None:
        """Log a change of ``name`` without an entry (a group invalidated before it was loaded)."""
        self._changed(name)

    def clear(self) -> int:
        """Remove every entry; returns how many there were (the log says "everything changed")."""
        count = len(self._entries)
        for name in self._entries:
            self._changed(name)
        self._changed(EVERYTHING)
        self._entries.clear()
        self._expiry.clear()
        self._partial.clear()
        self._all_loaded = None
        self.drops += count
        return count

    def _changed(self, name: str) -> None:
        self._log.append(name)
        if len(self._log) > _LOG_LIMIT:
            half = len(self._log) // 2
            del self._log[:half]
            self._base += half

    @property
    def change_number(self) -> int:
        """The number of changes logged so far."""
        return self._base + len(self._log)

    def changes(self, since: int) -> tuple[int, tuple[str, ...] | None]:
        """The groups whose entry changed (new content, or dropped) after change number ``since``.

        Returns:
            ``(now, names)``: pass ``now`` as ``since`` next time. ``names`` is None when the log no longer
            reaches back to ``since``: the caller must compare everything.
        """
        now = self._base + len(self._log)
        if since < self._base:
            return now, None
        return now, tuple(dict.fromkeys(self._log[since - self._base:]))

    def oldest_fetch(self) -> float | None:
        """The earliest ``fetched_at`` among the entries, or None when there are none."""
        heap = self._expiry
        while heap:
            fetched_at, name = heap[0]
            entry = self._entries.get(name)
            if entry is not None and entry.fetched_at == fetched_at:
                return fetched_at
            heapq.heappop(heap)
        return None


def listed_groups(core: RootSlot | None, named: RootSlot | None,
                  names: Collection[str] | None) -> list[APIGroup]:
    """The groups of ``names`` (None: all) the root documents list, in priority order (core first).

    Costs O(len(names)) once the slots' name indexes exist (built on first use, one pass per document).
    """
    if names is None:
        return _every_listed(core, named)
    found: list[tuple[int, int, APIGroup]] = []
    for rank, (doc, slot) in enumerate(zip(ROOTS, (core, named), strict=True)):
        if slot is not None:
            index = slot.group_index()
            found += [(rank, index[name], slot.root.groups[index[name]]) for name in names
                      if doc.lists(name) and name in index]
    found.sort(key=lambda t: (t[0], t[1]))
    return [g for _, _, g in found]


def _every_listed(core: RootSlot | None, named: RootSlot | None) -> list[APIGroup]:
    out: list[APIGroup] = list(core.root.groups) if core is not None else []
    if named is not None:
        out.extend(g for g in named.root.groups if g.name != "")
    return out


class GroupLists(Mapping[GroupVersion, APIResourceList]):
    """The resource lists of one group's versions, read through from a (lazily converted) root document.

    Installing a thousand groups from one aggregated document converts nothing: a group's lists are built when a
    lookup first reads them. Two views over equal JSON compare equal without converting either. A view of a
    :class:`~restmapper.wire.LazyResourceLists` keeps only its group's part of it: an entry that outlives its
    document (a group unchanged by a refetch keeps its entry) keeps that group's content alive, not the document.
    """

    __slots__ = ("_gvs", "_lists")

    def __init__(self, lists: Mapping[GroupVersion, APIResourceList], gvs: Collection[GroupVersion]) -> None:
        """``lists``: a document's resource lists; ``gvs``: the versions of one group to read from it."""
        gvs = tuple(gv for gv in gvs if gv in lists)
        if isinstance(lists, LazyResourceLists):
            lists = lists.group(gvs[0].group) if gvs else {}
        self._lists = lists
        self._gvs = gvs

    def __getitem__(self, gv: GroupVersion) -> APIResourceList:
        if gv not in self._gvs:
            raise KeyError(gv)
        return self._lists[gv]

    def __iter__(self) -> Iterator[GroupVersion]:
        return iter(self._gvs)

    def __len__(self) -> int:
        return len(self._gvs)

    def __contains__(self, gv: object) -> bool:
        return gv in self._gvs


def renewable(entry: GroupEntry, group: APIGroup, part: GroupResourceLists) -> bool:
    """True when installing ``group`` from a document whose part for it is ``part`` would change nothing in
    ``entry`` but its fetch time: the entry is healthy (nothing failed, stale, unread or outdated), lists the
    same versions and reads that very part (the same parsed document: a 304, or one installed again)."""
    resources = entry.resources
    return (type(resources) is GroupLists and resources._lists is part and not entry.failed and not entry.stale
            and not entry.unread and not entry.outdated and entry.group == group)


def kept_resources(old: Mapping[GroupVersion, APIResourceList], new: Mapping[GroupVersion, APIResourceList]
                   ) -> Mapping[GroupVersion, APIResourceList]:
    """The lists an entry keeps when ``new`` (just read) equals ``old`` (:func:`same_resources` said so).

    Views of two aggregated documents: ``new``, so the entry reads the current document (a later 304 renews it:
    :func:`renewable`; the old document's part is released), at no cost: the comparison moved any converted
    version onto ``new``'s part. Anything else: ``old``, the objects the group's index was built from (reading
    equal new ones would keep two copies alive).
    """
    if (isinstance(old, GroupLists) and isinstance(new, GroupLists) and isinstance(old._lists, GroupResourceLists)
            and isinstance(new._lists, GroupResourceLists)):
        return new
    return old


def same_resources(a: Mapping[GroupVersion, APIResourceList], b: Mapping[GroupVersion, APIResourceList]) -> bool:
    """True when two groups' resource lists are equal (as JSON where both documents still hold it)."""
    if a is b:
        return True
    if isinstance(a, GroupLists) and isinstance(b, GroupLists):
        la, lb = a._lists, b._lists
        if isinstance(la, GroupResourceLists) and isinstance(lb, GroupResourceLists):
            return a._gvs == b._gvs and all(la.same_at(gv, lb) for gv in a._gvs)
    return dict(a) == dict(b)
