"""kubectl's reading of an argument without dots, straight over the group indexes that may hold it.

:func:`plain_mapping` gives the answer :func:`restmapper.mapper.resolve.mapping_for` gives over a
:class:`~restmapper.mapper.static.StaticRESTMapper` of the same groups, for arguments without dots
(``deploy``, ``pods``, ``Certificate``), touching only the groups given and, in each, only the entries of the name.
It answers matches only: whatever it cannot settle alone (no match, an ambiguity, a short name whose group has no
resource of that name) is None, and the full lookup answers (and words the error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from restmapper.mapper.index import GroupIndex, ResourceEntry, VersionIndex
from restmapper.mapper.shortcut import short_name_warning
from restmapper.model import GroupResource, RESTMapping

__all__ = ["dotted_mapping", "plain_mapping", "resource_hit"]


def plain_mapping(arg: str, indexes: Sequence[GroupIndex]) -> tuple[RESTMapping, tuple[str, ...]] | None:
    """The mapping ``kubectl get ARG`` uses for ``arg`` (no dots) over ``indexes``, with short-name warnings.

    Args:
        arg: a plural, singular or short name, or a kind, without dots.
        indexes: every group that may hold the answer, core first, then in server priority order.

    Returns:
        ``(mapping, warnings)`` when a reading matches; None when the full lookup must answer.

    Mirrors kubectl's ``mappingFor`` over client-go's shortcut expander (:func:`~restmapper.mapper.resolve.
    mapping_for`): a real name beats a short name; the first group claiming a short name wins, the others warn;
    the resource reading ranks core ``v1`` first, then groups in priority order, each by its preferred version;
    without a resource, the kind reading looks in core only (the argument names no group).
    """
    if not any(arg in index.names for index in indexes):
        targets = [(index, plural) for index in indexes for plural in index.short_names.get(arg, ())]
        if targets:
            index, plural = targets[0]
            warnings = tuple(short_name_warning(arg, GroupResource(other.name, p)) for other, p in targets[1:])
            expanded = _kind_reading_of(index, plural.lower())
            return None if expanded is None else (expanded, warnings)
    lowered = arg.lower()
    for index in indexes:  # the resource reading: the first group serving the name ranks first
        if lowered in index.names:
            found = _kind_reading_of(index, lowered)
            return None if found is None else (found, ())
    core = indexes[0] if indexes and not indexes[0].name else None
    found = core.kind_mapping(arg) if core is not None else None
    return None if found is None else (found, ())


_Hits = tuple[VersionIndex, tuple[ResourceEntry, ...]]


def _kind_reading_of(index: GroupIndex, name: str) -> RESTMapping | None:
    """``rest_mapping`` of the kind the resource ``name`` of ``index`` selects (``kind_for`` then the mapping of
    that kind at that version), or None when no version serves the name or its resources differ in kind."""
    return _mapping_of(index, index.first_with_name(name))


def _mapping_of(index: GroupIndex, found: _Hits | None) -> RESTMapping | None:
    if found is None:
        return None
    vindex, hits = found
    kind = hits[0].kind
    if any(hit.kind != kind for hit in hits):
        return None  # several kinds at one priority: ambiguous, the full lookup words it
    return index.kind_mapping(kind, (vindex.group_version.version,))


def dotted_mapping(resource: str, version: str, first: GroupIndex | None, second: GroupIndex | None
                   ) -> tuple[RESTMapping, tuple[str, ...]] | None:
    """The mapping ``kubectl get ARG`` uses for a dotted argument, over the groups its readings name.

    ``ARG`` is ``resource.version.first`` (read first, when ``version`` is given) and ``resource.second`` (so
    ``second`` is ``version.first``); a group is None when the server lists no group of that name and none
    starting with it. The caller makes sure no other group can take part (``second`` does not start with the
    first reading's group).

    Returns:
        ``(mapping, warnings)`` when a reading matches; None when the full lookup must answer.

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
    mapping = first.kind_mapping(resource, (version,)) if version and first is not None else None
    if mapping is None and second is not None:
        mapping = second.kind_mapping(resource)
    return None if mapping is None else (mapping, ())


def _reading_in(index: GroupIndex, resource: str, lowered: str, version: str
                ) -> tuple[RESTMapping, tuple[str, ...]] | Literal[False] | None:
    """One resource reading in one group: the answer, None (the full lookup must answer), or False (no match:
    try the next reading)."""
    if resource not in index.names:
        targets = index.short_names.get(resource, ())
        if targets:
            # Expanded to the group's first claimant (the version is dropped, as client-go's expander does).
            warnings = tuple(short_name_warning(resource, GroupResource(index.name, p)) for p in targets[1:])
            expanded = _kind_reading_of(index, targets[0].lower())
            return None if expanded is None else (expanded, warnings)
    hits = _in_version(index, lowered, version) if version else index.first_with_name(lowered)
    if hits is None:
        return False
    mapping = _mapping_of(index, hits)
    return None if mapping is None else (mapping, ())


def resource_hit(name: str, version: str, indexes: Sequence[GroupIndex]) -> tuple[VersionIndex, ResourceEntry] | None:
    """The resource ``name`` (lowercased; plural or singular) selects over ``indexes`` (core first, then in
    priority order), in ``version`` when given: in the first group serving it, the first version in priority
    order serving it. None when none serves it, or when that version has two resources of that name (ambiguous
    for ``resource_for``, maybe not for ``kind_for``: the full lookup answers).

    Mirrors ``PriorityRESTMapper.ResourceFor``/``KindFor`` with the patterns of client-go
    ``NewDiscoveryRESTMapper`` (core ``v1``, then each group's preferred version and the others in server order).
    """
    for index in indexes:
        if name not in index.names:
            continue
        found = _in_version(index, name, version) if version else index.first_with_name(name)
        if found is None:
            if version:
                continue  # the next group may serve it in that version
            return None
        return (found[0], found[1][0]) if len(found[1]) == 1 else None
    return None


def _in_version(index: GroupIndex, name: str, version: str) -> _Hits | None:
    vindex = index.version(version)
    hits = vindex.match_resource(name) if vindex is not None else ()
    return (vindex, hits) if vindex is not None and hits else None
