"""First-time answers straight from the group indexes: :class:`DirectPaths`, a part of the answering engine.

A question the memo does not hold is answered here, without building a question or a
:class:`~restmapper.mapper.static.StaticRESTMapper`, when every group that may hold the answer is ready (loaded,
complete, healthy and fresh: :meth:`IndexedGroups.ready`) and the answer is a match: then no certainty rule can
object (DESIGN 5.10) and the cache has nothing to add. Each path gives the answer
:meth:`AnswerEngine._direct <restmapper.mapper._engine.AnswerEngine._direct>` gives over the same groups, reads
the same cells, and memoizes it as :meth:`~restmapper.mapper._engine.AnswerEngine._answer` would. Anything else
(a miss, an ambiguity, a group not ready, a group matched by prefix) is None: the full path answers and words it.
Each path touches only the groups of the question's candidates and, in each, one entry of a flat table
(:attr:`GroupIndex.kind_first <restmapper.mapper.index.GroupIndex>` or ``name_first``); the mapping and
``resolve``'s answer of a resource are built once and shared (kept on its entry).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Literal, TypeVar

from restmapper.mapper._direct import dotted_mapping, plain_mapping, resource_hit
from restmapper.mapper._groups import IndexedGroups
from restmapper.mapper._memo import Memo, Remembered
from restmapper.mapper._source import CacheSource
from restmapper.mapper.index import GroupIndex, ResourceEntry, entry_mapping
from restmapper.mapper.merged import Cell, Dependencies, MergedIndex
from restmapper.mapper.resolve import ResolveResult
from restmapper.mapper.shortcut import expand_category
from restmapper.model import GroupKind, GroupResource, GroupVersionResource, RESTMapping

__all__ = ["DirectPaths"]

T = TypeVar("T")


def _result(entry: ResourceEntry, warnings: tuple[str, ...]) -> ResolveResult:
    """``resolve``'s answer: the mapping of ``entry`` with ``warnings``; without warnings, one shared answer
    per resource (immutable), kept on the entry."""
    if warnings:
        return ResolveResult((entry_mapping(entry),), warnings, None)
    found = entry.resolved_memo
    if not isinstance(found, ResolveResult):
        found = _plain_result(entry_mapping(entry))
        object.__setattr__(entry, "resolved_memo", found)  # idempotent: a racing build makes an equal answer
    return found


_new = object.__new__
_set = object.__setattr__


def _plain_result(mapping: RESTMapping) -> ResolveResult:
    """``ResolveResult((mapping,))`` built without the frozen dataclass's ``__init__`` (a third of the cost of a
    first-time dotted ``resolve`` building its answer): the same fields, a new empty ``failed`` of its own."""
    result = _new(ResolveResult)
    _set(result, "mappings", (mapping,))
    _set(result, "warnings", ())
    _set(result, "category", None)
    _set(result, "failed", {})
    return result


_Candidates = tuple[list[GroupIndex], float, Dependencies, bool]
"""Ready groups in priority order, until when (clock seconds), the cells read, whether from any group."""

_Lookup = Callable[[MergedIndex, str, list[tuple[Cell, int]]], Collection[str]]
"""A lookup of the merged index (``MergedIndex.with_name``...): the groups serving a key, recording its cells."""


def _dotted_parts(arg: str) -> tuple[str, str, str, str] | None:
    """``resource.second`` and, when ``second`` is ``version.first``, that version and group: ``(resource, version,
    second, first)`` (``version`` and ``first`` empty for ``resource.group``); None for a form the full path words
    (an empty part, the ``__internal`` version)."""
    resource, _, second = arg.partition(".")
    version, dot, first = second.partition(".")
    if not dot:
        version = first = ""
    elif not version or not first or version == "__internal":
        return None
    if not resource or not second:
        return None
    return resource, version, second, first


def _dotted_scope(merged: MergedIndex, version: str, second: str, first: str) -> tuple[str | None, bool] | None:
    """Which listed group settles a dotted argument: ``(one_name, extended)``, ``one_name`` None when both
    readings' groups may take part (or neither is listed), ``extended`` when other listed groups extend a named one;
    None when a group named only by prefix takes part (the full path reads those groups).

    Asked in the order that costs least (each read is a cache miss on a large working set): a reading's group that
    is likely unlisted (``v1.example.com`` after a version-like first part, ``example.com`` after any other) is
    asked whether any group starts with it (one read, which also says it is not listed; none for
    ``v1.example.com`` when no group's name starts with ``v1.``); a likely listed one, first whether it is listed.
    """
    versioned = version[:1] == "v" and version[1:2].isdigit()
    if versioned and (merged.under_no_group(version) or merged.prefix_free(second)):
        second_listed = False  # no listed group starts with ``version.`` (the usual), or with ``second``
    else:
        second_listed = merged.listed(second)
        if not second_listed and merged.with_prefix(second):
            return None
    # The usual arguments read one listed group: ``plural.group``, or ``plural.version.group`` where one of
    # ``version.group`` and ``group`` is a listed group and the other no group at all (then the answer also
    # depends on the listing, read first). ``certificates.cert-manager.io`` is the second kind.
    one_name: str | None = second if second_listed else None
    first_listed = False
    if version:
        if versioned or not merged.prefix_free(first):
            first_listed = merged.listed(first)
            if not first_listed and merged.with_prefix(first):
                return None
        if second.startswith(first):
            return None  # the second reading's group would match the first's by prefix
        if second_listed:
            one_name = None if first_listed or merged.indexed_unlisted(first) else second
        elif first_listed and not merged.indexed_unlisted(second):
            one_name = first
    # A listed group that other listed groups extend (``apps`` / ``apps.openshift.io``): unless the resource is
    # a real name there, those groups take part (the expander's prefix step, ResourcesFor's prefix fallback).
    extended = (second_listed and len(merged.with_prefix(second)) > 1) or (
        bool(version) and first_listed and len(merged.with_prefix(first)) > 1)
    return one_name, extended


def _real_reading(index: GroupIndex, resource: str, version: str, group_reading: bool
                  ) -> ResourceEntry | Literal[False] | None:
    """The resource a lower-case real name of ``index`` selects (``group_reading``: ``resource.group``, else at
    ``version``); False when ``resource`` is no lower-case real name (not settled: a kind, a short name, a guessed
    singular that may lose to a short name of the group), None when the reading is ambiguous."""
    lowered = resource.lower()
    if resource != lowered:
        # Typed in another case (``Widget.example.com``, the usual kind-and-group argument): no short name of the
        # group is spelled so (the expander compares as typed), so the group reading matches the lowered name as
        # client-go's mapper does, any singular (guessed ones included) counting.
        if not group_reading or resource in index.short_names:
            return False
    elif index.guessed and resource in index.guessed:
        return False
    if group_reading:  # :func:`~._direct.dotted_mapping`'s group reading, written flat
        named = index.name_first.get(lowered)
        if named is None:
            return False
        return named[1] if isinstance(named, tuple) else named  # :func:`name_reading`
    return index.version_reading(version, resource)  # a resource of that name in that version settles it


class DirectPaths:
    """The direct paths of :class:`~restmapper.mapper._engine.AnswerEngine` (see the module docstring)."""

    cache: CacheSource
    _clock: Callable[[], float]
    _memo: Memo
    _groups: IndexedGroups

    def _remember(self, key: tuple[Any, ...], value: T, epoch: int, until: float, deps: Dependencies,
                  anywhere: bool = False) -> T:
        """Memoize ``value`` as :meth:`_answer` would; ``epoch`` is the index's epoch read before any cell."""
        if len(deps) == 1:  # one group's cell: held flat (see :class:`Remembered`)
            cell, version = deps[0]
            self._memo.put(key, Remembered(value, None, until, (), anywhere, epoch, cell, version))
        else:
            self._memo.put(key, Remembered(value, None, until, deps, anywhere, epoch))
        return value

    def _direct_mapping(self, key: tuple[Any, ...], group_kind: GroupKind, versions: tuple[str, ...]
                        ) -> RESTMapping | None:
        """``rest_mapping(group_kind, *versions)`` when the group is ready and serves the kind: one lock, a few
        dictionary reads and the group's cell (the only one the answer depends on). Written flat: this is also
        the first question about a group right after it refreshed, on memory the reload made cold, where each
        call and object costs."""
        epoch = self._groups.index.epoch  # before any cell is read (see :meth:`Remembered.current`)
        groups = self._groups
        if self.cache.generation != groups.generation:
            groups.catch_up()
        now = self._clock()
        with groups._lock:  # :meth:`IndexedGroups.ready_one`, inlined (one call less on this path)
            if self.cache.generation != groups.generation:
                return None
            one = groups._ready.get(group_kind.group)
            if one is None or one[1] <= now:
                return None
            index, until, _e, cell = one
            version = cell.version
        if not versions:
            entry = index.kind_first.get(group_kind.kind)  # the group's kind priority, one flat table
        elif len(versions) == 1:
            asked = versions[0]
            if asked in ("", "__internal"):
                entry = index.kind_first.get(group_kind.kind)
            else:
                vindex = index.version(asked)
                entry = None if vindex is None else vindex.match_kind(group_kind.kind)
        else:
            mapping = index.kind_mapping(group_kind.kind, tuple(v for v in versions if v and v != "__internal"))
            if mapping is None:
                return None
            self._memo.put(key, Remembered(mapping, None, until, (), False, epoch, cell, version))
            return mapping
        if entry is None:
            return None
        found = entry.mapping_memo  # built with the index
        if found is None:
            found = entry_mapping(entry)
        self._memo.put(key, Remembered(found, None, until, (), False, epoch, cell, version))
        return found

    def _direct_resource(self, key: tuple[Any, ...], resource: GroupVersionResource,
                         pick: Callable[[RESTMapping], T]) -> T | None:
        """``pick`` of the mapping a partial resource selects (``resource_for``, ``kind_for``): in its group when
        one is named and listed, else over core alone when core ``v1`` serves the name (the first priority
        pattern), else over core and the groups serving the name once every group is ready."""
        epoch = self._groups.index.epoch  # before any cell is read (see :meth:`Remembered.current`)
        group, name, version = resource.group, resource.resource, resource.version
        if group:
            # A named, listed group: :meth:`IndexedGroups.ready_one` and :func:`~._direct.resource_hit` over it,
            # written flat (the usual first-time ``resource_for``; each call and object costs on cold memory).
            if version == "__internal":
                return None
            groups = self._groups
            if not groups.index.listed(group):
                return None  # matched by prefix: the full path reads those groups
            now = self._clock()
            with groups._lock:
                if self.cache.generation != groups.generation:
                    return None
                one = groups._ready.get(group)
                if one is None or one[1] <= now:
                    return None
                cell = one[3]  # a ready group's own cell: the answer's only dependency
                seen = cell.version
            lowered = name.lower()
            if version:
                hits = one[0].version_hits(version, lowered)
                if len(hits) != 1:
                    return None  # none (the full path words it) or ambiguous for resource_for
                hit: ResourceEntry | None = hits[0]
            else:
                first = one[0].name_first.get(lowered)
                hit = first[0] if isinstance(first, tuple) else first  # :func:`name_hit`, inlined
            if hit is None:
                return None
            mapping = hit.mapping_memo  # built with the index
            value = pick(mapping if mapping is not None else entry_mapping(hit))
            self._memo.put(key, Remembered(value, None, one[1], (), False, epoch, cell, seen))
            return value
        if version == "__internal":
            return None
        lowered = name.lower()
        core = self._groups.index.index("")
        v1 = core.version("v1") if core is not None and version in ("", "v1") else None
        candidates = self._candidates(v1 is not None and bool(v1.match_resource(lowered)),
                                      MergedIndex.with_name, name)
        if candidates is None:
            return None
        hit = resource_hit(lowered, version, candidates[0])
        if hit is None:
            return None
        mapping = hit.mapping_memo  # built with the index
        return self._remember(key, pick(mapping if mapping is not None else entry_mapping(hit)), epoch,
                              *candidates[1:])

    def _direct_resolve(self, key: tuple[Any, ...], arg: str) -> ResolveResult | None:
        """``resolve(arg)`` (no categories): :func:`~restmapper.mapper._direct.dotted_mapping` over the groups a
        dotted argument names, else :func:`~restmapper.mapper._direct.plain_mapping` over core alone when core
        serves the name (a core name wins by priority), else over core and the groups serving it as a name or a
        short name, once every group is ready."""
        epoch = self._groups.index.epoch  # before any cell is read (see :meth:`Remembered.current`)
        if "." in arg:
            return self._direct_dotted(key, arg)
        core = self._groups.index.index("")
        low = arg.lower()
        candidates = self._candidates(core is not None and core.real_name(low), MergedIndex.with_name_or_short_name,
                                      arg)
        if candidates is None:
            return None
        indexes, until, deps, anywhere = candidates
        hit = plain_mapping(arg, indexes)
        if hit is None:
            return None
        entry, warnings = hit
        result = entry.resolved_memo  # :func:`_result`, inlined for the usual answer (no warnings, kept)
        if warnings or not isinstance(result, ResolveResult):
            result = _result(entry, warnings)
        return self._remember(key, result, epoch, until, deps, anywhere)

    def _direct_dotted(self, key: tuple[Any, ...], arg: str) -> ResolveResult | None:
        """``resolve`` of ``resource.group`` and ``resource.version.group``, when no group takes part by prefix."""
        epoch = self._groups.index.epoch  # before any cell is read (see :meth:`Remembered.current`)
        parts = _dotted_parts(arg)
        if parts is None:
            return None
        resource, version, second, first = parts
        merged = self._groups.index
        listing = merged.listing_cell
        seen = listing.version  # before the listing is read: a listing read after it moved fails the check
        scope = _dotted_scope(merged, version, second, first)
        if scope is None:
            return None
        one_name, extended = scope
        if one_name is None:
            return None if extended else self._direct_dotted_groups(key, resource, version, second, first, epoch)
        return self._direct_dotted_one(key, epoch, resource, version, (second, first, one_name), extended,
                                       (listing, seen))

    def _direct_dotted_one(self, key: tuple[Any, ...], epoch: int, resource: str, version: str,
                           names: tuple[str, str, str], extended: bool, listing_read: tuple[Cell, int]
                           ) -> ResolveResult | None:
        """:meth:`_direct_dotted` when one listed group settles it: ``names`` is the second reading's group, the
        first's, and the one of them that is listed (``one_name``); ``listing_read`` the listing cell as read."""
        second, first, one_name = names
        groups = self._groups
        now = self._clock()
        with groups._lock:  # :meth:`IndexedGroups.ready_one`, inlined (the usual first-time dotted ``resolve``)
            if self.cache.generation != groups.generation:
                return None
            one = groups._ready.get(one_name)
            if one is None or one[1] <= now:
                return None  # not ready: :meth:`IndexedGroups.ready` over the named groups would say so too
            cell = one[3]  # a ready group's own cell
            cell_seen = cell.version
        index = one[0]
        if resource != resource.lower() and (extended or groups.reload_pending):
            # Typed in another case (``Kind.group``): no name is spelled so, so the expander's prefix step reads the
            # short names (as typed) of the groups extending the named one: the full path reads those groups, and
            # a current listing while a reload is due (a group listed since may extend it).
            return None
        entry = _real_reading(index, resource, version, one_name == second)
        if entry is False and (extended or resource not in index.short_names):
            # Neither a real name nor a short name of the group: groups extending it take part (the expander's
            # prefix step, ResourcesFor's prefix fallback), and the listing applied here may predate one listed
            # since (an invalidation of a new group): the full path reads a current listing.
            return None
        real = entry is not False  # else a short name of the group's: it depends on the listing no more than that
        if entry is False:  # a short name of the group: every reading
            found = dotted_mapping(resource, version, index if one_name == first else None,
                                   index if one_name == second else None)
            if found is None:
                return None
            entry, warnings = found
            if warnings:
                return self._remember(key, _result(entry, warnings), epoch, one[1], ((cell, cell_seen), listing_read))
        if entry is None:
            return None
        result = entry.resolved_memo  # :func:`_result`, inlined for the usual answer (no warnings, kept)
        if not isinstance(result, ResolveResult):
            mapping = entry.mapping_memo  # built with the index
            result = _plain_result(mapping if mapping is not None else entry_mapping(entry))
            _set(entry, "resolved_memo", result)  # idempotent: a racing build makes an equal answer
        # The group's cell held flat; with a version reading, the listing too (``version.group`` or ``group``
        # is no group: a listing naming it would change the answer), and for a name typed in another case (a
        # group listed later that extends this one takes part: see above).
        listing_too = version or not real or resource != resource.lower()
        self._memo.put(key, Remembered(result, None, one[1], (listing_read,) if listing_too else (),
                                       False, epoch, cell, cell_seen))
        return result

    def _direct_dotted_groups(self, key: tuple[Any, ...], resource: str, version: str, second: str, first: str,
                              epoch: int) -> ResolveResult | None:
        """:meth:`_direct_dotted` when both readings' groups may take part (or neither is listed)."""
        named = (second, first) if version else (second,)
        read: list[tuple[Cell, int]] = []
        ready = self._groups.ready(named, read, self._clock())  # unlisted names are left out, as :meth:`_direct`
        if ready is None:
            return None
        indexes, until = ready
        first_index = second_index = None  # each named group's index, when listed (a loop: no comprehension)
        for index in indexes:
            if index.name == second:
                second_index = index
            elif version and index.name == first:
                first_index = index
        lowered = resource.lower()
        if not any(i is not None and (i.real_name(lowered) or resource in i.short_names)
                   for i in (first_index, second_index)):
            return None  # settled by no name of the named groups: groups extending them take part (as above)
        found = dotted_mapping(resource, version, first_index, second_index)
        if found is None:
            return None
        return self._remember(key, _result(*found), epoch, until, tuple(dict.fromkeys(read)))

    def _direct_category(self, key: tuple[Any, ...], name: str) -> tuple[GroupResource, ...] | None:
        """``expand_category(name)`` over core and the groups the merged index says have members, once every
        group is ready; None when it has no member (the full path answers) or the groups are not ready."""
        epoch = self._groups.index.epoch  # before any cell is read (see :meth:`Remembered.current`)
        candidates = self._candidates(False, MergedIndex.with_category, name)
        if candidates is None:
            return None
        members = tuple(expand_category(name, candidates[0]))
        return self._remember(key, members, epoch, *candidates[1:]) if members else None

    def _candidates(self, core_only: bool, lookup: _Lookup, key: str) -> _Candidates | None:
        """The ready groups a question that names no group is answered over: core alone (``core_only``: core
        serves the name at the first priority), else core and the groups the merged index's ``lookup`` gives for
        ``key``, once every group is loaded, healthy and fresh. None when they are not ready."""
        groups = self._groups
        now = self._clock()
        if core_only:
            ready = groups.ready_one("", now)
            return None if ready is None else ([ready[0]], ready[1], ((ready[2], ready[3]),), False)
        if not groups.reload_if_due():
            return None
        read: list[tuple[Cell, int]] = []
        found = groups.ready_anywhere(lookup, key, read, now)
        return None if found is None else (found[0], found[1], tuple(read), True)  # each cell read once
