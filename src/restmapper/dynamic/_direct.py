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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper.cache import GroupEntry
from restmapper.dynamic._cachefile import Persister
from restmapper.dynamic._index import Flavour, GroupResources
from restmapper.dynamic._memo import Deps
from restmapper.mapper._groups import IndexedGroups
from restmapper.mapper._memo import Memo, Remembered
from restmapper.mapper._source import CacheSource
from restmapper.mapper.index import GroupIndex
from restmapper.mapper.merged import Cell, MergedIndex

__all__ = ["DirectAnswers"]

_Lookup = Callable[[MergedIndex, str, Deps], Any]
_Found = tuple[list[Resource], float, Deps]
"""The matches (in discovery order), until when (clock seconds) they hold, the cells read."""


def _kind_of(kind: Any) -> str | None:
    """The lowercased kind a direct path answers for (a non-empty str, not a wildcard nor a ``...List`` kind:
    those also name their base kind and the generic ``List``), else None."""
    if kind.__class__ is not str or not kind or kind == "*":
        return None
    lowered: str = kind.lower()
    return None if lowered.endswith("list") else lowered


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

    # --- entry points ---------------------------------------------------------------------------------------

    def _direct_get(self, kwargs: dict[str, Any], key: Any) -> Resource | None:
        """``get(**kwargs)`` answered and memoized under ``key`` (its memo key) when a direct path settles it;
        else None (nothing recorded: the generic path answers)."""
        epoch = Cell.epoch  # before any cell is read (see _memo.remember)
        size = len(kwargs)
        if size == 2:
            version = kwargs.get("api_version")
            kind = _kind_of(kwargs.get("kind"))
            if kind is None or version.__class__ is not str:
                return None
            group, slash, version = version.partition("/")
            if not slash or not group or not version or "/" in version or version == "*":
                return None  # no group named, or a mistake in the call: the generic path words it
            return self._get_in_group(key, group, version, kind, epoch)
        if size != 1:
            return None
        found = self._anywhere_of(kwargs)
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
        result = results[0]
        self._get_memo.put(key, _remembered(result, until, deps, epoch))
        return result

    def _direct_search(self, kwargs: dict[str, Any], key: Any) -> list[Resource] | None:
        """``search(**kwargs)``'s matches, memoized under ``key``, when a direct path settles it; else None."""
        epoch = Cell.epoch  # before any cell is read (see _memo.remember)
        if len(kwargs) != 1:
            return None
        found = self._anywhere_of(kwargs)
        if found is None:
            return None
        results, until, deps = found
        self._search_memo.put(key, _remembered(results, until, deps, epoch))
        return results

    # --- the paths ---------------------------------------------------------------------------------------------

    def _get_in_group(self, key: Any, group: str, version: str, kind: str, epoch: int) -> Resource | None:
        """``get(api_version="group/version", kind=...)``: the one object of that kind in that version of a ready
        group (the generic path reads that group's cell alone, and so does this)."""
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
        result = objs[0]
        if self._persister is not None:
            self._maybe_write()
        # As _memo.remember records an answer that read one cell.
        self._get_memo.put(key, Remembered(result, None, until, (), False, epoch, cell, seen))
        return result

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

    def _anywhere_of(self, kwargs: dict[str, Any]) -> _Found | None:
        """The matches of a one-keyword call naming no group (``kind``, ``name`` or ``short_names``)."""
        for term, value in kwargs.items():
            if term == "kind":
                kind = _kind_of(value)
                return None if kind is None else self._anywhere(MergedIndex.with_kind, value, "k:" + kind)
            if value.__class__ is str:
                if not value:
                    return None
                if term == "name":  # the objects whose plural it is
                    return self._anywhere(MergedIndex.with_name, value, "N:" + value.lower())
                if term == "short_names":  # one of them: every object claiming it (no filter to apply)
                    lowered = value.lower()
                    return self._anywhere(MergedIndex.with_short_name, lowered, "s:" + lowered)
            elif term == "short_names" and value.__class__ in (list, tuple) and value:
                first = value[0]
                if first.__class__ is not str or not first:
                    return None
                whole = ("S", *[str(v).lower() for v in value])  # the objects with exactly these short names
                return self._anywhere(MergedIndex.with_short_name, first.lower(), whole)
        return None

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
