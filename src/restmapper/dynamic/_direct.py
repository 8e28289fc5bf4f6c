"""The drop-in's direct paths: first-time ``resources.get``/``search`` answers straight from ready groups (issue 10).

A call the memo does not hold is answered here, without :func:`~restmapper.dynamic._query.parse`, a lookup scope
or the generic matching of :mod:`restmapper.dynamic._query`, when it has one of the common shapes
(``get(api_version="group/version", kind=...)``, ``get(kind=...)``, ``search(kind=...)``, ``get(name=...)``,
``get(short_names=[...])``, ``search(name=...)``, ``search(short_names=...)``) and every group it may be answered
from is *ready* (loaded, complete, healthy and fresh: the readiness of
:meth:`~restmapper.mapper._groups.IndexedGroups.ready_entry` and
:meth:`~restmapper.mapper._groups.IndexedGroups.ready_anywhere`, the same the mapper's own direct paths and
:func:`~restmapper.dynamic._ready.ready_found` use). Each path reads the same cells in the same order as the
generic path, gives the same object (the group's :class:`~restmapper.dynamic._index.GroupResources` hold one
Resource object per resource and entry generation, shared by every answer; the direct paths find them kept with the
group's mapper index, :attr:`GroupIndex.layer_memo <restmapper.mapper.index.GroupIndex>`, and read one table of
them, :attr:`~restmapper.dynamic._index.GroupResources.flat`) and memoizes it under the same key with the same
dependencies, so invalidation, healing and TTL behave identically. Anything it cannot settle alone (no
match, several matches, a group not ready, a ``...List`` kind, any other keyword or value) is None: the generic
path answers and words it.

*Ready answers* make a first-time question one dictionary read: what a direct path memoizes for each question it
takes is worked out ahead, under the question's memo key as the server spells its names (the kind, the plural,
the short names, the group version and kind), when every group is first ready (by the lookup that made it so) and
again for a group whose Resource objects are rebuilt (its entry changed), each by the direct path itself. A
question with that memo key then memoizes that very answer (:class:`~restmapper.mapper._memo.Remembered`, with
the cells it read) if it still holds, checked exactly as a memo hit is (every change applied, none of its cells
moved, in time, no reload due for an answer from any group: the discoverer's ``get``/``search``): refreshing
group A leaves the ready answers that read only group B in use, and one that no longer holds is worked out again
by the direct path (which keeps it as the ready answer, as it keeps any answer it works out, up to
:data:`TABLE_LIMIT`). They change no answer, no error and no validity rule:
a ready answer is what the direct path would memoize at that moment. Other spellings take the direct paths.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper.cache import GroupEntry
from restmapper.dynamic._cachefile import Persister
from restmapper.dynamic._index import BASE_RESOURCE, Flavour, GroupResources
from restmapper.dynamic._memo import LIST_TAG, Deps
from restmapper.mapper._groups import IndexedGroups
from restmapper.mapper._memo import Memo, Remembered
from restmapper.mapper._source import CacheSource
from restmapper.mapper.index import GroupIndex
from restmapper.mapper.merged import Cell, MergedIndex

__all__ = ["DirectAnswers"]

_Lookup = Callable[[MergedIndex, str, Deps], Any]
_Found = tuple[list[Resource], float, Deps]
"""The matches (in discovery order), until when (clock seconds) they hold, the cells read."""
_Shape = tuple["_Lookup | None", Any, Any]
"""A direct-path question: the merged-index lookup choosing its groups (None: a question about one group
version), what to look up (the value, or ``(group, version, kind lowered)``) and its key in
:attr:`~restmapper.dynamic._index.GroupResources.flat`."""

TABLE_LIMIT = 1 << 16
"""Ready answers kept per table (:attr:`DirectAnswers._get_table`); beyond it questions take the direct paths."""


def _kind_of(kind: Any) -> str | None:
    """The lowercased kind a direct path answers for (a non-empty str, not a wildcard nor a ``...List`` kind:
    those also name their base kind and the generic ``List``), else None."""
    if kind.__class__ is not str or not kind or kind == "*":
        return None
    lowered: str = kind.lower()
    return None if lowered.endswith("list") else lowered


def _shape(kwargs: dict[str, Any]) -> _Shape | None:
    """The direct-path shape of a call (see :data:`_Shape`), or None when no direct path takes it."""
    size = len(kwargs)
    if size == 2:
        api_version = kwargs.get("api_version")
        kind = _kind_of(kwargs.get("kind"))
        if kind is None or api_version.__class__ is not str:
            return None
        group, slash, version = api_version.partition("/")
        if not slash or not group or not version or "/" in version or version == "*":
            return None  # no group named, or a mistake in the call: the generic path words it
        return None, (group, version, kind), None
    if size != 1:
        return None
    for term, value in kwargs.items():
        if term == "kind":
            kind = _kind_of(value)
            return None if kind is None else (MergedIndex.with_kind, value, "k:" + kind)
        if value.__class__ is str:
            if not value:
                return None
            if term == "name":  # the objects whose plural it is
                return MergedIndex.with_name, value, "N:" + value.lower()
            if term == "short_names":  # one of them: every object claiming it (no filter to apply)
                lowered = value.lower()
                return MergedIndex.with_short_name, lowered, "s:" + lowered
        elif term == "short_names" and value.__class__ in (list, tuple) and value:
            first = value[0]
            if first.__class__ is not str or not first:
                return None
            whole = ("S", *[str(v).lower() for v in value])  # the objects with exactly these short names
            return MergedIndex.with_short_name, first.lower(), whole
    return None


def _shape_of_key(key: str | tuple[str, ...]) -> tuple[_Lookup, str] | None:
    """The lookup and value of the questions naming no group whose answers are under ``key`` of
    :attr:`~restmapper.dynamic._index.GroupResources.flat` (None for the other keys: no direct path reads them)."""
    if isinstance(key, tuple):
        return (MergedIndex.with_short_name, key[1]) if len(key) > 1 and key[1] else None
    tag, value = key[:2], key[2:]
    if not value:
        return None
    if tag == "k:":
        return None if _kind_of(value) is None else (MergedIndex.with_kind, value)
    if tag == "N:":
        return MergedIndex.with_name, value  # lowered: the question spelled so reads the same cells
    if tag == "s:":
        return MergedIndex.with_short_name, value
    return None


class DirectAnswers:
    """The direct paths of :class:`~restmapper.dynamic.discoverer.SelfHealingDiscoverer` (see the module doc)."""

    cache: CacheSource
    _indexed: IndexedGroups
    _clock: Callable[[], float]
    _groups: dict[str, GroupResources]  # the Resource objects of each group, built once per entry generation
    _group: Callable[[GroupEntry], GroupResources]  # builds them (and keeps them in ``_groups``)
    _get_memo: Memo
    _search_memo: Memo
    _flavour: Flavour
    _persister: Persister | None
    _maybe_write: Callable[[], None]  # writes the cache file when it is due
    # Ready answers (see the module doc): a question's memo key -> what a direct path would memoize for it.
    _get_table: dict[Any, Remembered]
    _search_table: dict[Any, Remembered]
    _table_due: bool  # every ready group's answers are to be worked out (first time, or after invalidate_cache)
    _table_pending: set[str]  # groups whose Resource objects were built since: their answers are to be worked out
    _filling: threading.Lock  # held by the one thread filling (others skip: a build while filling is queued)

    def _reset_table(self) -> None:
        """Forget every ready answer; work them out again once every group is ready."""
        self._get_table = {}
        self._search_table = {}
        self._table_due = True
        self._table_pending = set()
        if not hasattr(self, "_filling"):  # one lock for the object's life: a reset while filling keeps it
            self._filling = threading.Lock()

    def _room(self, table: dict[Any, Remembered]) -> bool:
        """Whether ``table`` may take a new key. At :data:`TABLE_LIMIT` its entries no longer current (a group
        rebuilt or removed since: CRD churn) are dropped first, and all of them when the live ones still fill half
        of it (they are worked out again as questions come): a bound, never a table that stops taking new
        groups (review adv4 F1)."""
        if len(table) < TABLE_LIMIT:
            return True
        now = self._clock()
        live = {k: r for k, r in table.items() if now < r.valid_until and r.current()}
        table.clear()
        if len(live) < TABLE_LIMIT // 2:
            table.update(live)
        return True

    # --- entry points ---------------------------------------------------------------------------------------

    def _direct_get(self, kwargs: dict[str, Any], key: Any) -> Resource | None:
        """``get(**kwargs)`` answered and memoized under ``key`` (its memo key) when a direct path settles it;
        else None (nothing recorded: the generic path answers)."""
        epoch = Cell.epoch  # before any cell is read (see _memo.remember)
        shape = _shape(kwargs)
        if shape is None:
            return None
        lookup, value, flat = shape
        if lookup is None:
            group, version, kind = value
            remembered = self._in_group(group, version, kind, epoch)
        else:
            remembered = self._get_of(self._anywhere(lookup, value, flat), epoch)
        if remembered is None:
            return None
        self._get_memo.put(key, remembered)
        if key in self._get_table or self._room(self._get_table):
            self._get_table[key] = remembered  # the ready answer from now on (also of a group ready late)
        self._fill_table()
        return remembered.value  # type: ignore[no-any-return]

    def _direct_search(self, kwargs: dict[str, Any], key: Any) -> list[Resource] | None:
        """``search(**kwargs)``'s matches, memoized under ``key``, when a direct path settles it; else None."""
        epoch = Cell.epoch  # before any cell is read (see _memo.remember)
        if len(kwargs) != 1:
            return None
        shape = _shape(kwargs)
        if shape is None:
            return None
        lookup, value, flat = shape
        found = self._anywhere(lookup, value, flat)  # type: ignore[arg-type]  # one keyword: never None
        if found is None:
            return None
        results, until, deps = found
        remembered = _remembered(results, until, deps, epoch)
        self._search_memo.put(key, remembered)
        if key in self._search_table or self._room(self._search_table):
            self._search_table[key] = remembered
        self._fill_table()
        return results

    # --- the ready answers -------------------------------------------------------------------------------------

    def _fill_table(self) -> None:
        """Work out the ready answers that are due: every built group's once every group is ready (the first
        time), and those of each group built since (its entry changed). Cheap when nothing is due."""
        if not (self._table_pending or self._table_due):
            return
        filling = self._filling
        if not filling.acquire(blocking=False):  # another thread fills: a build meanwhile is queued for it
            return
        try:
            if self._table_due:
                if self._indexed.ready_anywhere(MergedIndex.with_kind, "", [], self._clock()) is None:
                    return  # not every group is ready yet: a later lookup fills
                self._table_due = False
                self._table_pending.clear()
                done: set[Any] = set()
                for res in list(self._groups.values()):
                    self._fill_group(res, done)
            pending = self._table_pending
            while True:
                try:
                    name = pending.pop()
                except KeyError:  # emptied (also by a reset on another thread)
                    break
                built = self._groups.get(name)
                if built is not None:
                    self._fill_group(built, set())
        finally:
            filling.release()

    def _fill_group(self, res: GroupResources, done: set[Any]) -> None:
        """The ready answers of the direct-path questions about the names of ``res`` (its keys of
        :attr:`~restmapper.dynamic._index.GroupResources.flat` in ``done`` aside, and added to it), each worked
        out by the direct path itself as the question would be now, under the memo key of each spelling the
        server uses (another spelling is the direct path's)."""
        get_table, search_table = self._get_table, self._search_table
        for key in res.flat:
            if key in done:
                continue
            done.add(key)
            if not (self._room(get_table) and self._room(search_table)):
                return
            if isinstance(key, str) and key[1:2] != ":":  # "<version>/<kind lowered>"
                version, _, kind = key.partition("/")
                if res.name and _kind_of(kind) is not None:
                    remembered = self._in_group(res.name, version, kind, Cell.epoch)
                    if remembered is not None:
                        # The memo key of get(api_version=..., kind=...) (memo_key's, built directly).
                        get_table[("api_version", "kind", f"{res.name}/{version}", remembered.value.kind)] = remembered
                continue
            shape = _shape_of_key(key)
            if shape is None:
                continue
            epoch = Cell.epoch
            found = self._anywhere(shape[0], shape[1], key)
            if found is None:
                continue
            searched = _remembered(found[0], found[1], found[2], epoch)
            one = self._get_of(found, epoch)
            if one is not None:
                one.deps = searched.deps  # the same cells: one tuple
            for alias in _spellings(key, found[0]):
                search_table[alias] = searched
                if one is not None:
                    get_table[alias] = one

    # --- the paths ---------------------------------------------------------------------------------------------

    def _get_of(self, found: _Found | None, epoch: int) -> Remembered | None:
        """What ``get`` memoizes for the matches of a question naming no group, or None when ``get``'s tie-breaks
        are the generic path's."""
        if found is None:
            return None
        results, until, deps = found
        if len(results) != 1:
            # ``get``'s first tie-break among matches by name or short name drops the ResourceLists (each comes
            # with its resource); anything further is the generic path's.
            listing = self._flavour.resource_list
            kept = [r for r in results if not isinstance(r, listing)]
            if len(kept) != 1:  # (matches by kind hold no ResourceList: their kinds end in List)
                return None
            results = kept
        return _remembered(results[0], until, deps, epoch)

    def _in_group(self, group: str, version: str, kind: str, epoch: int) -> Remembered | None:
        """``get(api_version="group/version", kind=...)``: the one object of that kind in that version of a ready
        group (the generic path reads that group's cell alone, and so does this), as memoized."""
        groups = self._indexed
        if self.cache.generation != groups.generation:
            groups.catch_up()
        ready = groups.ready_entry(group, self._clock())
        if ready is None:
            return None
        index, entry, until, cell, seen = ready
        res = index.layer_memo  # kept with the index: built from its entry
        if not isinstance(res, GroupResources):
            res = self._keep(index, entry)
            if res is None:
                return None
        objs = res.flat.get(f"{version}/{kind}")  # that version's by_kind_lower, in one table
        if objs is None or len(objs) != 1:
            return None  # no match, or several: ``get``'s tie-breaks are the generic path's
        if self._persister is not None:
            self._maybe_write()
        # As _memo.remember records an answer that read one cell.
        return Remembered(objs[0], None, until, (), False, epoch, cell, seen)

    def _keep(self, index: GroupIndex, entry: GroupEntry) -> GroupResources | None:
        """The Resource objects of ``entry`` (the one ``index`` was built from), kept with the index for the next
        question: the index lives as long as the entry's generation, and an entry's generation fixes its content
        and whether it failed or is outdated. None for a failed or outdated entry (what it lacks proves nothing:
        the generic path answers, as :func:`~restmapper.dynamic._ready.ready_found` leaves those to it)."""
        if entry.failed or entry.outdated:
            return None
        res = self._group(entry)
        index.layer_memo = res
        return res

    def _anywhere(self, lookup: _Lookup, value: str, key: str | tuple[str, ...]) -> _Found | None:
        """The objects under ``key`` in :attr:`~restmapper.dynamic._index.GroupResources.flat` of core and the
        groups ``lookup(index, value)`` picks from the merged index, once every group is ready. None when a group
        is not ready, nothing matches or an invalidation landed meanwhile."""
        groups = self._indexed
        cache = self.cache
        invalidations = cache.invalidations
        if cache.generation != groups.generation:
            groups.catch_up()
        deps: Deps = []  # after the marker of an answer from any group, (ANYWHERE, 0), as _memo.remember drops it
        now = self._clock()
        ready = groups.ready_anywhere(lookup, value, deps, now)
        if ready is None:
            return None
        indexes, until = ready
        results: list[Resource] = []
        for index in indexes:
            res = index.layer_memo  # kept with the index: built from its entry
            if not isinstance(res, GroupResources):
                found = groups.ready_entry(index.name, now)
                if found is None or found[0] is not index:
                    return None  # replaced meanwhile
                res = self._keep(index, found[1])
                if res is None:
                    return None
            objs = res.flat.get(key)  # every version's matches, in version order
            if objs is not None:
                results += objs
        if not results or cache.invalidations != invalidations:
            return None
        if self._persister is not None:
            self._maybe_write()
        return results, until, deps


def _remembered(value: Any, until: float, deps: Deps, epoch: int) -> Remembered:
    """What :func:`~restmapper.dynamic._memo.remember` memoizes for an answer from any group that read ``deps``
    (after the marker of such answers; each cell once, in the order read)."""
    return Remembered(value, None, until, tuple(dict.fromkeys(deps)), True, epoch)


def _spellings(key: str | tuple[str, ...], results: list[Resource]) -> list[Any]:
    """The memo keys (:func:`~restmapper.dynamic._memo.memo_key`, built directly) of the questions naming no group
    whose answer is under ``key`` of :attr:`~restmapper.dynamic._index.GroupResources.flat` (found as
    ``results``), as the server spells them: the kinds, the plural (lower case: another spelling reads other
    cells), the short names of the objects found (a ResourceList's are its resource's). Each reads the same cells
    as ``key``'s lookup (kinds and short names are looked up lowered)."""
    whole: tuple[str, ...] = ()
    lowered = ""
    if isinstance(key, tuple):
        tag, whole = "S", key[1:]
    else:
        tag, lowered = key[:2], key[2:]
    if tag == "N:":
        return [("name", lowered)]
    out: dict[Any, None] = {}
    for obj in results:
        attrs = obj.__dict__.get(BASE_RESOURCE, obj).__dict__
        if tag == "k:":
            out[("kind", obj.kind)] = None
            continue
        short = attrs.get("short_names")
        if short.__class__ is not list:
            continue
        if tag == "S":
            if tuple(str(s).lower() for s in short) == whole:
                listed = ("short_names", LIST_TAG, *short)
                out[listed] = None
        else:
            for s in short:
                if s.__class__ is str and s.lower() == lowered:
                    out[("short_names", s)] = None
    return list(out)
