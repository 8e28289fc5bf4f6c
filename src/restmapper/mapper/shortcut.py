"""Short-name expansion and category expansion over group indexes, as client-go and kubectl.

Both functions are pure and work on whatever subset of groups they are given. Their answers are only final when
given *every* group: a short name is replaced only when no group has a real resource of that name (a CRD named
``pods`` anywhere keeps ``pods`` unexpanded), and the first group claiming a short name wins (a group listed
later can only add a warning). A lazy caller may compute them on a subset only to decide what to load.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from restmapper.errors import ShortNameConflictWarning
from restmapper.mapper.index import GroupIndex
from restmapper.mapper.static import StaticRESTMapper
from restmapper.model import GroupResource, GroupVersionResource

__all__ = [
    "IndexSource",
    "ShortNameConflictWarning",
    "expand_category",
    "expand_resource_shortcut",
    "short_name_warning",
]

IndexSource: TypeAlias = "Sequence[GroupIndex] | StaticRESTMapper"
"""Groups to search: indexes in server order (core first), or a mapper (its ``indexes``)."""


def _indexes(source: IndexSource) -> Sequence[GroupIndex]:
    return source.indexes if isinstance(source, StaticRESTMapper) else source


def short_name_warning(short_name: str, other: GroupResource) -> str:
    """Return client-go's message for a short name that another resource also claims."""
    return f"short name {_go_quote(short_name)} could also match lower priority resource {other}"


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def expand_resource_shortcut(
    resource: GroupVersionResource, source: IndexSource
) -> tuple[GroupVersionResource, list[str]]:
    """Expand a short name (``hpa``) into the resource it stands for, as client-go's shortcut expander.

    Steps, in order:

    1. If any resource (of ``resource.group`` when one is given) has the name as its plural or singular name
       (the server's ``singularName``: a singular guessed from the kind is none), return ``resource``
       unchanged: real names beat short names.
    2. Else the first resource (groups in the given order, versions in server order) whose short names contain
       the name wins; the result keeps its group and plural and **drops the version**. Every other
       GroupResource claiming it gives one warning.
    3. Else, when a group was given, the first short name in a group *starting with* that group wins
       (``{group: autoscal, resource: hpa}``); group and resource are replaced, the version is kept.
    4. Else ``resource`` is returned unchanged.

    Matching is case-sensitive, as upstream (``HPA`` is not expanded).

    Args:
        resource: the partial resource the user typed.
        source: the groups in server order (core first), or a mapper over them.

    Returns:
        ``(expanded, warnings)``; warnings are messages for :class:`ShortNameConflictWarning`.

    Mirrors client-go ``restmapper.shortcutExpander.expandResourceShortcut`` (subresources carry no short
    names here: a short name that expanded to ``pods/status`` could never be mapped).
    """
    indexes = _indexes(source)
    name, group = resource.resource, resource.group
    scoped = [i for i in indexes if i.name == group] if group else list(indexes)
    if any(i.real_name(name) for i in scoped):
        return resource, []
    found: GroupResource | None = None
    warnings: list[str] = []
    for index in scoped:
        for target in index.short_name_targets(name):
            if found is None:
                found = target
            elif target != found:
                # Targets are distinct within a group and groups are distinct, so each warns once.
                warnings.append(short_name_warning(name, target))
    if found is not None:
        return GroupVersionResource(found.group, "", found.resource), warnings
    if group:
        for index in indexes:
            if index.name.startswith(group):
                targets = index.short_name_targets(name)
                if targets:
                    return GroupVersionResource(targets[0].group, resource.version, targets[0].resource), []
    return resource, []


def expand_category(category: str, source: IndexSource) -> list[GroupResource]:
    """Return the resources in a category (``all``), in discovery order, each GroupResource once.

    Args:
        category: the category name, case-sensitive (``all``, ``api-extensions``).
        source: the groups in server order (core first), or a mapper over them.

    Returns:
        GroupResources in group order, then version order, then resource order; empty when no resource is in
        the category (kubectl then treats the argument as a resource name).

    Mirrors client-go ``restmapper.discoveryCategoryExpander`` (upstream lists a resource once per version and
    kubectl de-duplicates the resulting mappings; here the list is de-duplicated directly).
    """
    out: list[GroupResource] = []
    for index in _indexes(source):
        members = index.category_members.get(category)
        if members:
            out.extend(members)
    return out
