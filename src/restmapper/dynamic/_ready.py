"""The drop-in's first-time path: a question answered straight from groups the mapper holds ready (issue 10).

When every group a ``resources.get``/``search`` call can be answered from is loaded, complete, healthy and fresh
(the mapper's *ready* groups: :meth:`~restmapper.mapper.LazyRESTMapper.cached_groups`, and for a call naming no
group, every listed group so, none failed: ``LazyRESTMapper._cached_anywhere``), the answer needs no word from
the cache: no lookup scope, no revalidation, no race retry. :func:`ready_found` computes the matches from those
groups with the same cells recorded as the full lookup records, or returns None, and then the full lookup
answers (it alone decides no-matches, failures and everything that may need I/O).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from kubernetes.dynamic.resource import Resource

from restmapper.cache import GroupEntry
from restmapper.dynamic._index import GroupResources
from restmapper.dynamic._query import Query, collect
from restmapper.mapper import LazyRESTMapper
from restmapper.mapper.merged import Cell, MergedIndex

__all__ = ["any_unsure", "ready_found", "serving"]

Deps = list[tuple[Cell, int]]
Read = list[tuple[GroupEntry, GroupResources]]


def any_unsure(entries: Read) -> bool:
    """Whether a group read has failed versions or is outdated (its lack of a match proves nothing)."""
    for entry, _ in entries:  # noqa: SIM110 (a loop: any() over a generator costs a frame per item)
        if entry.failed or entry.outdated:
            return True
    return False


def serving(trait: dict[str, str]) -> Callable[[MergedIndex, Deps], Collection[str]]:
    """The merged-index pick of :meth:`~restmapper.mapper.LazyRESTMapper.groups_serving` for one trait of a
    :attr:`Query.trait <restmapper.dynamic._query.Query.trait>` (``kind``, ``name``, ``short_name`` or
    ``category``): the groups that may serve a match, recording the cells read."""
    ((term, value),) = trait.items()
    if term == "kind":
        if value.lower().endswith("list"):  # a ...List kind also names its base kind
            return lambda index, deps: {*index.with_kind(value, deps), *index.with_kind(value[:-4], deps)}
        return lambda index, deps: index.with_kind(value, deps)
    if term == "name":
        return lambda index, deps: index.with_name(value, deps)
    if term == "short_name":
        lowered = value.lower()
        return lambda index, deps: index.with_short_name(lowered, deps)
    lowered = value.lower()
    return lambda index, deps: index.with_category(lowered, deps)


def ready_found(mapper: LazyRESTMapper, q: Query, deps: Deps, group_of: Callable[[GroupEntry], GroupResources],
                generic_list: Resource) -> tuple[list[Resource], float, Read] | None:
    """The matches of ``q`` from ready groups, until when (clock seconds) they hold, and the groups read; or None.

    None (with ``deps`` as it was) unless every group the question may be answered from is ready and at least
    one object matches: a no-match, an unreadable or outdated group, a question whose groups are not known
    without reading core (a bare ``api_version``), one that no trait narrows, or an invalidation landing meanwhile
    (for a question naming no group) is left to the full lookup. Never does I/O.

    Args:
        mapper: the mapper whose ready groups are read.
        q: the question.
        deps: receives the cells read, as the full lookup records them.
        group_of: the Resource objects of a cache entry (built once per entry generation).
        generic_list: the generic ``v1 List`` (upstream serves it under ``apis//v1``).
    """
    version = q.version
    if version is not None and "/" in version:
        return None  # a mistake in the call: the full lookup words it
    mark = len(deps)
    if q.group is not None or q.prefix == "api":
        ready = mapper.cached_groups((q.group if q.group is not None else "",), deps)
        invalidations = -1
    elif (version is not None and q.prefix != "apis") or not q.trait:
        return None  # core decides a bare version; no trait: every group is read
    else:
        invalidations = mapper.cache.invalidations
        ready = mapper._cached_anywhere(serving(q.trait), deps)
    if ready is None:
        return None
    entries = [(e, group_of(e)) for e in ready[0]]
    results, failures = collect(entries, q, generic_list)
    if (not results or failures or any_unsure(entries)
            or (invalidations >= 0 and mapper.cache.invalidations != invalidations)):
        del deps[mark:]
        return None
    return results, ready[1], entries
