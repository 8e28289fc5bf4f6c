"""The mapper's view of the cache: group indexes kept in step with cache entries, and the answer memo.

:class:`IndexedGroups` follows the cache's change log (:meth:`DiscoveryCache.changes`) and applies each changed
group to a :class:`~restmapper.mapper.merged.MergedIndex`; nothing is rescanned when one group changes. It hands
out :class:`~restmapper.mapper.static.StaticRESTMapper` snapshots over just the groups a question can match:

- a question naming its groups reads those groups (:meth:`IndexedGroups.scoped`);
- a question that may match any group (``kind_for(pods)``, a short name, a category) first makes sure every group
  is loaded and fresh (O(log n) when nothing changed), then asks the merged index which groups serve the name,
  and reads only those, plus core and any group that failed to load (it might hold the answer)
  (:meth:`IndexedGroups.anywhere`).

Each answer records the cells it read (:data:`~restmapper.mapper.merged.Dependencies`): it is reused while none
of them moved, so refreshing one group invalidates only answers that read it; they are kept in
:class:`~restmapper.mapper._memo.Memo`, bounded without a clear-all cliff.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Protocol, TypeVar

from restmapper.cache import GroupEntry, GroupView
from restmapper.errors import RestMapperError
from restmapper.mapper.index import GroupIndex
from restmapper.mapper.merged import Cell, Dependencies, MergedIndex
from restmapper.mapper.static import StaticRESTMapper
from restmapper.model import parse_resource_arg

__all__ = ["ANYWHERE", "GroupSource", "IndexedGroups", "Prefixed", "by_arg", "by_name",
           "picked_by"]

Picker = Callable[[MergedIndex, list[tuple[Cell, int]]], Collection[str]]
"""Chooses, from the merged index, the groups that could answer a question (recording the cells it read)."""

K = TypeVar("K")


def picked_by(index: MergedIndex, pick: Picker, deps: list[tuple[Cell, int]]) -> Collection[str]:
    """What ``pick`` chooses from ``index``: a :data:`Picker` as the keyed pick of
    :meth:`IndexedGroups.ready_anywhere` (``ready_anywhere(picked_by, pick, deps, now)``)."""
    return pick(index, deps)


class GroupSource(Protocol):
    """What the mapper needs from the discovery cache (:class:`~restmapper.cache.DiscoveryCache` provides it)."""

    generation: int
    clock: Callable[[], float]

    def groups(self, names: Collection[str] | None = None, versions: Sequence[str] | None = None) -> GroupView:
        """The fresh entries of ``names`` (None: all) holding ``versions`` (None: all; ``()``: preferred)."""

    def ensure_all(self) -> float:
        """Make every listed group loaded and fresh; until when (clock seconds) that holds."""

    def changes(self, since: int) -> tuple[int, tuple[str, ...] | None]:
        """Groups whose entry changed since change number ``since`` (None: compare everything)."""

    def entry(self, name: str) -> GroupEntry | None:
        """The current entry of ``name`` (no I/O)."""

    def loaded_names(self) -> tuple[str, ...]:
        """Every loaded group (no I/O)."""

    def listing(self, *, fetch: bool = False, whole: bool = False) -> tuple[str, ...]:
        """Every listed group name, core first, in priority order."""


_INF = float("inf")


def _first(pair: tuple[int, GroupIndex]) -> int:
    return pair[0]


OUTDATED = Cell()
"""Recorded in an answer's dependencies at version -1, which it never has: the answer read an entry the cache had
already replaced or dropped, so it is computed again next time (never remembered as current)."""

ANYWHERE = Cell()
"""Marks, in an answer's dependencies, an answer that may come from any group (its version never moves)."""


def _builder(entry: GroupEntry) -> Callable[[], GroupIndex]:
    return lambda: GroupIndex(entry.group, entry.resources)


class IndexedGroups:
    """Group indexes in step with a cache, merged for questions that may match any group.

    Thread-safe: one lock guards the merged index and the sync position; it is never held across I/O (the
    cache is asked for entries before taking it, or only for what it already holds).

    Attributes:
        index: the merged index.
        generation: the cache generation the index was last brought up to date with.
    """

    def __init__(self, cache: GroupSource) -> None:
        self.cache = cache
        self.index = MergedIndex()
        self.generation = -1
        self._lock = threading.Lock()
        self._since = 0
        # Every loaded group is indexed (set by the first question that may match any group; until then only
        # groups that were asked about are, so one lookup in a thousand groups builds one index).
        self._complete = False
        self._troubled: set[str] = set()  # groups with versions that failed or are served stale
        # Moves whenever a group enters or leaves :attr:`_troubled`: every answer that may come from any group
        # reads it, because a troubled group may outrank the answer (or hold a name a no-match denies) without
        # serving any key the answer read.
        self.troubled_cell = Cell()
        self._troubled_read: Dependencies = ((self.troubled_cell, 0),)  # the troubled cell as it is now
        # A group was dropped or invalidated since every group was last loaded: before an answer that may come
        # from any group is reused, every group is loaded again (:meth:`reload`), so its new names are indexed.
        self.reload_pending = False
        # Groups a question may be answered from without asking the cache: name -> (index, until when (clock
        # seconds), entry, the group's cell). Only complete, healthy entries (nothing failed, stale or unread)
        # whose index is current; a group leaves it as soon as a change to it is applied.
        self._ready: dict[str, tuple[GroupIndex, float, GroupEntry, Cell]] = {}
        # Until when every listed group is loaded and fresh (:meth:`candidates`), barring changes: any dropped
        # group or new listing resets it.
        self._all_until = -_INF
        self._drops = 0  # groups dropped so far: an ``until`` read before a drop is void

    def catch_up(self) -> None:
        """Apply the cache's changes since the last call (O(changed groups)); no I/O."""
        with self._lock:
            self._catch_up_locked()

    def _catch_up_locked(self) -> None:
        generation = self.cache.generation
        if generation == self.generation:
            return
        since, names = self.cache.changes(self._since)
        if names is None:
            names = tuple(dict.fromkeys(self.index.names + self.cache.loaded_names()))
        for name in names:
            entry = self.cache.entry(name)
            self._apply_locked(name, entry)
        self._since = since
        self.generation = generation
        self._set_listing_locked(self.cache.listing())

    def _set_listing_locked(self, listing: Sequence[str]) -> None:
        before = self.index.listing_cell.version
        self.index.set_listing(listing)
        if self.index.listing_cell.version != before:
            # A newly listed group may not be loaded yet: the next :meth:`candidates` (or :meth:`reload`) checks.
            self._all_until = -_INF

    def _not_all_loaded_locked(self) -> None:
        self._all_until = -_INF
        self._drops += 1

    def _all_loaded_locked(self, until: float, drops: int, listing: int) -> None:
        """Every group listed when :meth:`GroupSource.ensure_all` ran was loaded and fresh until ``until``; it ran
        when :attr:`_drops` was ``drops`` and the listing cell's version ``listing`` (both read before it).

        Recorded when no group was dropped since and, should the listing applied have moved since, every group it
        lists is indexed: a listing fetched after ``ensure_all`` returned (another thread's miss revalidation) may
        name a group nobody loaded, which an answer from the indexes would leave out."""
        if self._drops != drops:
            return
        if self.index.listing_cell.version != listing and not self.index.every_listed_indexed():
            return
        self._all_until = until

    def _apply_locked(self, name: str, entry: GroupEntry | None) -> None:
        self._ready.pop(name, None)
        if entry is None:
            self._not_all_loaded_locked()
            known = self.index.index(name) is not None or self.index.listed(name)
            self.index.remove(name)
            self.index.touch(name)
            self._set_troubled_locked(name, False)
            if not known:
                # A group nobody had seen (a new CRD group) or the whole cache was invalidated: answers about
                # unlisted groups may change.
                self.index.moved(self.index.listing_cell)
            # Dropped or invalidated: its new content may claim any name; any-group answers reload it first.
            self._reload_due_locked(self._complete or not known)
            return
        self._set_troubled_locked(name, bool(entry.failed or entry.stale))
        if entry.unread:
            # Read in part (legacy: only the versions a question needed, maybe by another mapper on this cache,
            # right after the group was dropped, which this mapper then never sees): the versions left unread may
            # claim any name, as a dropped group's new content may. Any-group answers read it whole first.
            self._not_all_loaded_locked()
            self._reload_due_locked(self._complete)
        if self._complete:
            self._indexes_locked((entry,), self._all_until)  # fresh as every group, barring further changes
        elif self.index.generation(name) != entry.generation:
            self.index.remove(name)  # rebuilt when a question needs it
            self.index.touch(name)

    def _reload_due_locked(self, due: bool) -> None:
        """Make a reload due when ``due``. Becoming due moves the index's epoch: a group dropped without a cell
        (listed, never loaded) moves no cell of its own, and every remembered answer checks its cells again."""
        if due and not self.reload_pending:
            self.reload_pending = True
            self.index.moved()

    def _set_troubled_locked(self, name: str, troubled: bool) -> None:
        """Record whether group ``name`` has failed or stale-served versions; a change moves the troubled cell."""
        if troubled == (name in self._troubled):
            return
        if troubled:
            self._troubled.add(name)
        else:
            self._troubled.discard(name)
        self.index.moved(self.troubled_cell)
        self._troubled_read = ((self.troubled_cell, self.troubled_cell.version),)

    def _indexes_locked(self, entries: tuple[GroupEntry, ...], until: float,
                        deps: list[tuple[Cell, int]] | None = None) -> list[GroupIndex]:
        """The indexes of ``entries`` (built when new); healthy ones are remembered as ready until ``until``.

        An entry the cache no longer holds (read just before another thread refreshed or evicted its group) is
        indexed for this answer alone, never installed, and marks ``deps`` with :data:`OUTDATED`: the answer
        came from what this lookup read, but it is not remembered as current (the group's cell may already have
        moved past that entry).
        """
        out = []
        cache = self.cache
        for e in entries:
            held = cache.entry(e.name)
            if held is None or held.generation != e.generation:
                out.append(GroupIndex(e.group, e.resources))
                if deps is not None:
                    deps.append((OUTDATED, -1))
                continue
            index = self.index.put(e.name, e.generation, _builder(e))
            out.append(index)
            if not (e.failed or e.stale or e.unread) and self.index.generation(e.name) == e.generation:
                self._ready[e.name] = (index, until, e, self.index.cell(e.name))
        return out

    def ready(self, names: Collection[str], deps: list[tuple[Cell, int]], now: float, *, prefixed: bool = False
              ) -> tuple[list[GroupIndex], float] | None:
        """The indexes of ``names`` in server priority order and until when they hold, when every one of them
        is ready (loaded, complete, healthy and fresh at clock reading ``now``, every change applied): an answer
        over them needs no word from the cache. Records the cells read in ``deps``. None when one is not ready
        (then ask the cache: :meth:`scoped`).

        ``prefixed``: ``names`` were chosen by prefix from the listing applied (a group and the groups extending
        it), so the answer also depends on the listing: its cell is recorded, and while a reload is due (a group
        was invalidated: a new one may extend the name) the listing is not vouched for and None is returned.
        """
        with self._lock:
            if prefixed:
                if self.reload_pending:
                    return None
                listing = self.index.listing_cell
                deps.append((listing, listing.version))
            return self._ready_locked(names, deps, now)

    def _ready_locked(self, names: Collection[str], deps: list[tuple[Cell, int]], now: float
                      ) -> tuple[list[GroupIndex], float] | None:
        if self.cache.generation != self.generation:
            return None
        ready = self._ready
        index = self.index
        if len(names) == 1:  # most questions name one group
            for name in names:
                one = ready.get(name)
                if one is None or one[1] <= now:
                    break
                self._depend_locked(names, deps)
                return [one[0]], one[1]
        held: list[tuple[int, GroupIndex]] = []
        until = _INF
        unlisted = named = False
        for name in names:
            found = ready.get(name)
            if found is None:
                if name and not index.listed(name) and index.index(name) is None:
                    unlisted = True  # the cache would leave it out too; the answer depends on the listing
                    continue
                return None
            if found[1] <= now:
                return None
            named = named or bool(name)
            held.append((index.position(name), found[0]))
            until = min(until, found[1])
        if unlisted and not named:
            return None  # only a fresh named group vouches for the listing of named groups
        held.sort(key=_first)
        self._depend_locked(names, deps)
        return [index for _, index in held], until

    def ready_one(self, name: str, now: float) -> tuple[GroupIndex, float, Cell, int] | None:
        """As :meth:`ready` for the one group ``name``: its index, until when it holds, and the cell an answer
        over it reads with the version seen (its only dependency); None when the group is not ready."""
        with self._lock:
            if self.cache.generation != self.generation:
                return None
            one = self._ready.get(name)
            if one is None or one[1] <= now:
                return None
            cell = one[3]  # a ready group is indexed: its own cell (as :meth:`_depend_locked`)
            return one[0], one[1], cell, cell.version

    def note_read(self, entries: Iterable[GroupEntry], until: float) -> None:
        """Index ``entries`` a layer just read from the cache (valid until clock reading ``until``), so the next
        question about them finds them ready (:meth:`ready_entries`) instead of asking the cache again. An entry
        the cache no longer holds is skipped, as :meth:`_indexes_locked` skips it."""
        with self._lock:
            self._catch_up_locked()
            self._indexes_locked(tuple(entries), until)

    def ready_entries(self, names: Collection[str], now: float, deps: list[tuple[Cell, int]] | None = None
                      ) -> tuple[list[GroupEntry], float] | None:
        """As :meth:`ready`, the cache entries of ``names`` (the ready ones; unlisted names are left out, as
        :meth:`DiscoveryCache.groups` does), or None. Records the cells read in ``deps`` when given."""
        if deps is None:
            deps = []
        with self._lock:
            found = self._ready_locked(names, deps, now)
            if found is None:
                return None
            ready = self._ready
            return [ready[i.name][2] for i in found[0]], found[1]

    def ready_anywhere(self, pick: Callable[[MergedIndex, K, list[tuple[Cell, int]]], Collection[str]], key: K,
                       deps: list[tuple[Cell, int]], now: float) -> tuple[list[GroupIndex], float] | None:
        """As :meth:`ready` for the groups ``pick(index, key, deps)`` chooses (plus core, first), when every
        listed group is loaded and fresh and none failed (:meth:`anywhere` otherwise). Reads each chosen group's
        entry once (the groups a pick chooses are indexed, so one not ready means ask the cache). ``pick`` is
        typically a :class:`MergedIndex` lookup and ``key`` its name (no closure to build and call on a
        first-time question); :func:`picked_by` turns a :data:`Picker` into one."""
        with self._lock:
            if (not self._complete or self.reload_pending or self._troubled or now >= self._all_until
                    or self.cache.generation != self.generation):
                return None
            ready = self._ready
            core = ready.get("")
            if core is None or core[1] <= now:
                return None
            troubled = self.troubled_cell
            deps.append((troubled, troubled.version))
            picked = pick(self.index, key, deps)
            cell = core[3]
            deps.append((cell, cell.version))
            until = self._all_until
            if core[1] < until:
                until = core[1]
            chosen = [core[0]]
            for name in picked:
                if not name:
                    continue  # core: first already
                found = ready.get(name)
                if found is None or found[1] <= now:
                    return None
                cell = found[3]
                deps.append((cell, cell.version))
                if found[1] < until:
                    until = found[1]
                chosen.append(found[0])
            if len(chosen) > 2:  # most names are served by one group: nothing to rank
                # Ranked as :meth:`MergedIndex.position` ranks (unlisted last, in pick order), sorted in C: a
                # key function would cost two calls per group (a category spans a few). The answer depends on
                # that order: a re-list that reorders the groups (an APIService's priority) moves the listing.
                listing = self.index.listing_cell
                deps.append((listing, listing.version))
                ranks = self.index.ranks
                last = len(ranks)
                tagged = []
                for i in range(1, len(chosen)):
                    one = chosen[i]
                    tagged.append((ranks.get(one.name, last), i, one))
                tagged.sort()
                chosen[1:] = [t[2] for t in tagged]
            return chosen, until

    def reload(self) -> None:
        """Load every group again after an invalidation (I/O when due), then index what changed.

        The reload stays due until it is done: while its I/O runs, an answer that may come from any group
        is not offered from the memo or the indexes (other callers reload too, sharing the fetches), so a name a
        new group claims is never answered from the groups as they were before the invalidation.
        """
        drops, listing = self._drops, self.index.listing_cell.version
        try:
            until = self.cache.ensure_all()
        except BaseException:
            with self._lock:
                self._reload_due_locked(True)
            raise
        with self._lock:
            self._catch_up_locked()
            self._all_loaded_locked(until, drops, listing)
            if self._drops == drops:  # nothing dropped meanwhile: this reload saw every change
                self.reload_pending = False

    def reload_if_due(self) -> bool:
        """:meth:`reload` when one is due (a group was dropped or invalidated since every group was loaded), so a
        question that may match any group is answered from the indexes again: no I/O when every dropped group was
        loaded again since (the cache knows that without a scan), else the missing groups are loaded (miss ->
        reload -> retry). True when no reload is due after it; False when it failed (the caller's general path
        reads the groups and raises what the cache raises)."""
        if self.reload_pending:
            try:
                self.reload()
            except RestMapperError:
                return False
        return not self.reload_pending

    def listed(self, *, fetch: bool = True, whole: bool = False) -> MergedIndex:
        """The merged index with the server's current group listing (fetching ``/apis`` when due; ``whole``: a
        cold fetch reads every group's resources, for a lookup that will read several groups)."""
        listing = self.cache.listing(fetch=fetch, whole=whole)
        with self._lock:
            self._catch_up_locked()
            self._set_listing_locked(listing)
        return self.index

    def scoped(self, names: Collection[str], deps: list[tuple[Cell, int]], versions: Sequence[str] | None = None
               ) -> tuple[StaticRESTMapper, tuple[GroupEntry, ...], float]:
        """A mapper over the groups ``names`` (loaded and fresh), their entries, and until when it is valid.

        ``versions`` (None: all; ``()``: the preferred one) are the versions that must be loaded; with legacy
        discovery the others may be unread, so a no-match is final only for those versions.
        """
        view = self.cache.groups(names, versions)
        with self._lock:
            self._catch_up_locked()
            indexes = self._indexes_locked(view.entries, view.valid_until, deps)
            self._depend_locked(names, deps)
        return StaticRESTMapper(indexes), view.entries, view.valid_until

    def candidates(self, pick: Picker, deps: list[tuple[Cell, int]]) -> tuple[set[str], float]:
        """The groups ``pick`` chooses among all (loaded, fresh) groups, plus core and failed groups.

        Returns:
            ``(names, until)``: until when (clock seconds) every group stays loaded and fresh.
        """
        deps.append((ANYWHERE, 0))
        now = self.cache.clock()
        troubled = self.troubled_cell
        with self._lock:
            self._catch_up_locked()
            if self._complete and not self.reload_pending and now < self._all_until:
                # Every group is known loaded and fresh: no need to ask the cache.
                deps.append((troubled, troubled.version))
                return {"", *pick(self.index, deps), *self._troubled}, self._all_until
        drops, listing = self._drops, self.index.listing_cell.version
        until = self.cache.ensure_all()
        with self._lock:
            self._catch_up_locked()
            self.reload_pending = False
            if not self._complete:
                for name in self.cache.loaded_names():
                    self._apply_locked_complete(name, until)
                self._complete = True
            self._all_loaded_locked(until, drops, listing)  # once every loaded group is indexed
            deps.append((troubled, troubled.version))
            return {"", *pick(self.index, deps), *self._troubled}, until

    def anywhere(self, pick: Picker, deps: list[tuple[Cell, int]]
                 ) -> tuple[StaticRESTMapper, tuple[GroupEntry, ...], float]:
        """A mapper over the groups ``pick`` chooses among all groups, plus core and failed groups."""
        names, until = self.candidates(pick, deps)
        view = self.cache.groups(names)
        until = min(until, view.valid_until)
        with self._lock:
            self._catch_up_locked()
            indexes = self._indexes_locked(view.entries, until, deps)
            self._depend_locked(names, deps)
            if sum(1 for name in names if name) > 1:  # ranked by the listing (see :meth:`ready_anywhere`)
                listing = self.index.listing_cell
                deps.append((listing, listing.version))
        return StaticRESTMapper(indexes), view.entries, until

    def _apply_locked_complete(self, name: str, until: float) -> None:
        entry = self.cache.entry(name)
        if entry is not None:
            self._indexes_locked((entry,), until)
            if entry.failed or entry.stale:
                self._set_troubled_locked(name, True)

    def depend(self, names: Collection[str] | None, deps: list[tuple[Cell, int]]) -> None:
        """Record in ``deps`` the cells an answer reading the groups ``names`` depends on, as they are now (every
        change applied); None: every group (with the listing, the troubled cell and the anywhere marker)."""
        with self._lock:
            self._catch_up_locked()
            if names is None:
                deps.append((ANYWHERE, 0))
                for cell in (self.index.listing_cell, self.troubled_cell):
                    deps.append((cell, cell.version))
                names = (*self.cache.listing(), *self.cache.loaded_names())
            self._depend_locked(names, deps)

    def _depend_locked(self, names: Collection[str], deps: list[tuple[Cell, int]]) -> None:
        index = self.index
        for name in names:
            cell = index.cell(name) if index.listed(name) or index.index(name) is not None else index.listing_cell
            deps.append((cell, cell.version))


# --- picks: which groups could answer a question that names no group -----------------------------------


class Prefixed(set[str]):
    """Groups chosen by prefix (``storageclasses.storage``): the answer also depends on the group listing."""


def by_name(name: str) -> Picker:
    """Groups serving ``name`` as a plural or singular resource name (any case)."""
    return lambda index, deps: index.with_name(name, deps)


def by_arg(arg: str, *, expand_categories: bool) -> Picker:
    """Groups that could answer ``kubectl get ARG``: every reading's resource as a name or short name, a category."""
    gvr, gr = parse_resource_arg(arg)
    resources = {arg, gr.resource} | ({gvr.resource} if gvr is not None else set())

    def pick(index: MergedIndex, deps: list[tuple[Cell, int]]) -> set[str]:
        found: set[str] = set()
        for resource in resources:
            found.update(index.with_name(resource, deps))
            found.update(index.with_short_name(resource, deps))
        if expand_categories:
            found.update(index.with_category(arg, deps))
        return found

    return pick
