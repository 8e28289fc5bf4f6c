"""Priority patterns and narrowing, as apimachinery ``meta.PriorityRESTMapper``.

A pattern is a GroupVersionResource or GroupVersionKind whose parts may be ``"*"`` (:data:`ANY`). Candidates
are narrowed pattern by pattern: a pattern that matches none is skipped, one that matches several keeps those
for the next pattern, and the first pattern that leaves exactly one candidate picks it. An empty group in a
pattern matches only the core group.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from restmapper.mapper.index import GroupIndex
from restmapper.model import GroupVersionKind, GroupVersionResource

__all__ = [
    "ANY",
    "discovery_priorities",
    "kind_matches",
    "narrow_by_priority",
    "resource_matches",
]

ANY = "*"
"""Wildcard for any part of a priority pattern (apimachinery ``AnyGroup``/``AnyVersion``/``AnyKind``)."""

_T = TypeVar("_T")
_P = TypeVar("_P")


def resource_matches(pattern: GroupVersionResource, gvr: GroupVersionResource) -> bool:
    """True when ``gvr`` matches ``pattern`` part by part (``"*"`` matches anything)."""
    return (
        pattern.group in (ANY, gvr.group)
        and pattern.version in (ANY, gvr.version)
        and pattern.resource in (ANY, gvr.resource)
    )


def kind_matches(pattern: GroupVersionKind, gvk: GroupVersionKind) -> bool:
    """True when ``gvk`` matches ``pattern`` part by part (``"*"`` matches anything)."""
    return (
        pattern.group in (ANY, gvk.group)
        and pattern.version in (ANY, gvk.version)
        and pattern.kind in (ANY, gvk.kind)
    )


def narrow_by_priority(
    candidates: Sequence[_T], patterns: Iterable[_P], matches: Callable[[_P, _T], bool]
) -> _T | None:
    """Return the single candidate the patterns select, or None when they leave several.

    Args:
        candidates: the matches in delegate order.
        patterns: priority patterns, most important first.
        matches: ``matches(pattern, candidate)``, e.g. :func:`resource_matches`.

    Returns:
        The only candidate when there is one; else the first candidate left alone by a pattern; else None
        (ambiguous, or no candidates).

    Mirrors the loop of apimachinery ``PriorityRESTMapper.ResourceFor``/``KindFor``/``RESTMapping``.
    """
    if len(candidates) == 1:
        return candidates[0]
    remaining = list(candidates)
    for pattern in patterns:
        matched = [c for c in remaining if matches(pattern, c)]
        if len(matched) == 1:
            return matched[0]
        if matched:
            remaining = matched
    return None


def discovery_priorities(
    indexes: Sequence[GroupIndex],
) -> tuple[tuple[GroupVersionResource, ...], tuple[GroupVersionKind, ...]]:
    """Return the resource and kind priority patterns client-go derives from discovery.

    Order: core ``v1`` first; then per group in the given order its preferred version (when it has
    resources), then its other versions in server order; finally ``{group, *, *}`` for every group.

    Args:
        indexes: the groups in server order.

    Returns:
        ``(resource_priority, kind_priority)``, the same group/version sequence with ``"*"`` names.

    Mirrors client-go ``restmapper.NewDiscoveryRESTMapper``.
    """
    gvs: list[tuple[str, str]] = [("", "v1")]
    for index in indexes:
        if index.preferred_version:
            gvs.append((index.name, index.preferred_version))
        gvs.extend((index.name, v) for v in index.versions if v != index.preferred_version)
    gvs.extend((index.name, ANY) for index in indexes)
    return (
        tuple(GroupVersionResource(g, v, ANY) for g, v in gvs),
        tuple(GroupVersionKind(g, v, ANY) for g, v in gvs),
    )
