"""kubectl's reading of an argument, straight over the group indexes that may hold it.

:func:`plain_mapping` gives the resource whose mapping :func:`restmapper.mapper.resolve.mapping_for` gives over a
:class:`~restmapper.mapper.static.StaticRESTMapper` of the same groups, for arguments without dots
(``deploy``, ``pods``, ``Certificate``); :func:`dotted_mapping` does the same for ``resource.group`` and
``resource.version.group``; :func:`resource_hit` for ``resource_for``/``kind_for``. Each touches only the groups
given and, in each, one entry of a flat table (:attr:`GroupIndex.name_first <restmapper.mapper.index.GroupIndex>`
or ``kind_first``, built with the index). They answer matches only: whatever they cannot settle alone (no match,
an ambiguity, a short name whose group has no resource of that name) is None, and the full lookup answers (and
words the error). They return the :class:`~restmapper.mapper.index.ResourceEntry` whose mapping is the answer
(:func:`~restmapper.mapper.index.entry_mapping`), so the caller can share what it derives from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from restmapper.mapper.index import GroupIndex, ResourceEntry
from restmapper.mapper.shortcut import short_name_warning
from restmapper.model import GroupResource

__all__ = ["dotted_mapping", "plain_mapping", "resource_hit"]

_Found = tuple[ResourceEntry, tuple[str, ...]]
"""The resource whose mapping answers, and the short-name warnings to emit."""


def plain_mapping(arg: str, indexes: Sequence[GroupIndex]) -> _Found | None:
    """The resource whose mapping ``kubectl get ARG`` uses for ``arg`` (no dots) over ``indexes``, with
    short-name warnings.

    Args:
        arg: a plural, singular or short name, or a kind, without dots.
        indexes: every group that may hold the answer, core first, then in server priority order.

    Returns:
        ``(entry, warnings)`` when a reading matches; None when the full lookup must answer.

    Mirrors kubectl's ``mappingFor`` over client-go's shortcut expander (:func:`~restmapper.mapper.resolve.
    mapping_for`): a real name beats a short name; the first group claiming a short name wins, the others warn;
    the resource reading ranks core ``v1`` first, then groups in priority order, each by its preferred version;
    without a resource, the kind reading looks in core only (the argument names no group).
    """
    for index in indexes:
        if arg in index.name_first and not (index.guessed and arg in index.guessed):  # :meth:`GroupIndex.real_name`
            break
    else:
        targets: list[tuple[GroupIndex, str]] = []  # a loop, not a comprehension: no frame on this path
        for index in indexes:
            claimed = index.short_names.get(arg)
            if claimed:
                for plural in claimed:
                    targets.append((index, plural))
        if targets:
            index, plural = targets[0]
            warnings = () if len(targets) == 1 else _other_claims(arg, targets[1:])
            expanded = _reading(index, plural.lower())
            return None if expanded is None else (expanded, warnings)
    lowered = arg.lower()
    for index in indexes:  # the resource reading: the first group serving the name ranks first
        table = index.name_first
        if lowered in table:
            # The kind the name selects, at the first version serving it (:func:`name_reading`, inlined).
            first = table[lowered]
            found = first[1] if isinstance(first, tuple) else first
            return None if found is None else (found, ())
    core = indexes[0] if indexes and not indexes[0].name else None
    entry = core.kind_first.get(arg) if core is not None else None
    return None if entry is None else (entry, ())


def _other_claims(arg: str, others: list[tuple[GroupIndex, str]]) -> tuple[str, ...]:
    """The warnings for the short name ``arg`` that the groups ``others`` (``(index, plural)``) claim too, after
    the first group claiming it won (client-go's shortcut expander warns of each)."""
    return tuple(short_name_warning(arg, GroupResource(other.name, plural)) for other, plural in others)


def dotted_mapping(resource: str, version: str, first: GroupIndex | None, second: GroupIndex | None
                   ) -> _Found | None:
    """The resource whose mapping ``kubectl get ARG`` uses for a dotted argument, over the groups its readings
    name.

    ``ARG`` is ``resource.version.first`` (read first, when ``version`` is given) and ``resource.second`` (so
    ``second`` is ``version.first``); a group is None when the server lists no group of that name and none
    starting with it. The caller makes sure no other group can take part (``second`` does not start with the
    first reading's group).

    Returns:
        ``(entry, warnings)`` when a reading matches; None when the full lookup must answer.

    Mirrors :func:`~restmapper.mapper.resolve.mapping_for`: each resource reading expands a short name of its
    group, then matches the resource in that group (at that version for the first reading); then the kind
    readings, ``Kind.version.group`` and ``Kind.group``, each in its exact group.
    """
    lowered = resource.lower()
    if version and first is not None:
        found = _reading_in(first, resource, lowered, version)
        if found is not False:
            return found
    if second is not None:
        found = _reading_in(second, resource, lowered, "")
        if found is not False:
            return found
    entry = _kind_at(first, resource, version) if version and first is not None else None
    if entry is None and second is not None:
        entry = second.kind_first.get(resource)
    return None if entry is None else (entry, ())


def _reading_in(index: GroupIndex, resource: str, lowered: str, version: str) -> _Found | Literal[False] | None:
    """One resource reading in one group: the answer, None (the full lookup must answer), or False (no match:
    try the next reading)."""
    if resource not in index.name_first or (index.guessed and resource in index.guessed):  # not a real name
        targets = index.short_names.get(resource, ())
        if targets:
            # Expanded to the group's first claimant (the version is dropped, as client-go's expander does).
            warnings = () if len(targets) == 1 else tuple(
                short_name_warning(resource, GroupResource(index.name, p)) for p in targets[1:])
            expanded = _reading(index, targets[0].lower())
            return None if expanded is None else (expanded, warnings)
    if not version:
        table = index.name_first
        if lowered not in table:
            return False
        first = table[lowered]
        found = first[1] if isinstance(first, tuple) else first  # :func:`name_reading`, inlined
        return None if found is None else (found, ())
    hits = _in_version(index, lowered, version)
    if not hits:
        return False
    kind = hits[0].kind
    for hit in hits:
        if hit.kind != kind:
            return None  # several kinds at one priority: ambiguous, the full lookup words it
    entry = _kind_at(index, kind, version)
    return None if entry is None else (entry, ())


def resource_hit(name: str, version: str, indexes: Sequence[GroupIndex]) -> ResourceEntry | None:
    """The resource ``name`` (lowercased; plural or singular) selects over ``indexes`` (core first, then in
    priority order), in ``version`` when given: in the first group serving it, the first version in priority
    order serving it. None when none serves it, or when that version has two resources of that name (ambiguous
    for ``resource_for``, maybe not for ``kind_for``: the full lookup answers).

    Mirrors ``PriorityRESTMapper.ResourceFor``/``KindFor`` with the patterns of client-go
    ``NewDiscoveryRESTMapper`` (core ``v1``, then each group's preferred version and the others in server order).
    """
    for index in indexes:
        if version:
            hits = _in_version(index, name, version)
            if not hits:
                continue  # the next group may serve it in that version
            return hits[0] if len(hits) == 1 else None
        table = index.name_first
        if name in table:
            first = table[name]
            return first[0] if isinstance(first, tuple) else first  # :func:`name_hit`, inlined
    return None


def _reading(index: GroupIndex, name: str) -> ResourceEntry | None:
    found = index.name_first.get(name)
    return found[1] if isinstance(found, tuple) else found  # :func:`name_reading` (None when absent)


def _in_version(index: GroupIndex, name: str, version: str) -> tuple[ResourceEntry, ...]:
    vindex = index.version(version)
    return () if vindex is None else vindex.match_resource(name)


def _kind_at(index: GroupIndex, kind: str, version: str) -> ResourceEntry | None:
    vindex = index.version(version)
    return None if vindex is None else vindex.match_kind(kind)
