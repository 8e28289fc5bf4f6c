"""``kubernetes.dynamic`` Resource objects built from our cached discovery data, with lookup tables.

One :class:`GroupResources` per cached group entry (rebuilt only when the entry's generation changes): for each
served version a :class:`VersionResources` holding the upstream-shaped ``{kind: [Resource, ResourceList, ...]}``
dict plus lowercase indexes by kind, plural and singular name, so lookups are dict hits, not scans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes.dynamic.resource import Resource, ResourceList

from restmapper.cache import GroupEntry
from restmapper.model import APIResource, APIResourceList, GroupVersion

__all__ = ["GroupResources", "VersionResources", "build_group", "generic_list"]


def _raw_subresource(res: APIResource) -> dict[str, Any]:
    """The dict upstream's ``Subresource(parent, **raw)`` receives (the server's JSON keys, as upstream keeps them)."""
    # ``subresource`` is passed explicitly: upstream would keep only the first segment of ``sev/fetchcertchain``.
    raw: dict[str, Any] = {"name": res.name, "singularName": res.singular_name, "namespaced": res.namespaced,
                           "kind": res.kind, "verbs": list(res.verbs), "subresource": res.subresource}
    if res.group is not None or res.version is not None:
        raw["group"], raw["version"] = res.group or "", res.version or ""
    return raw


def _resource(client: Any, gv: GroupVersion, res: APIResource, preferred: bool,
              subresources: dict[str, dict[str, Any]] | None) -> Resource:
    extra: dict[str, Any] = {}
    if res.storage_version_hash:
        extra["storageVersionHash"] = res.storage_version_hash
    return Resource(  # type: ignore[no-untyped-call]
        prefix="api" if not gv.group else "apis",
        group=gv.group,
        api_version=gv.version,
        kind=res.kind,
        namespaced=res.namespaced,
        verbs=list(res.verbs),
        name=res.name,
        preferred=preferred,
        client=client,
        # Upstream keeps the server's JSON: absent lists are None, and an empty singularName falls back to
        # upstream's own guess (name minus its last letter); keep both so code comparing them keeps working.
        singularName=res.singular_name or None,
        shortNames=list(res.short_names) or None,
        categories=list(res.categories) or None,
        subresources=subresources,
        **extra,
    )


def generic_list(client: Any) -> ResourceList:
    """The generic ``v1 List`` kind upstream serves under ``apis//v1`` (``ResourceList(client)``)."""
    return ResourceList(client)  # type: ignore[no-untyped-call]


@dataclass(frozen=True)
class VersionResources:
    """The resources of one group version as ``kubernetes.dynamic`` objects.

    Attributes:
        group_version: the group version.
        preferred: True for the group's preferred version.
        by_kind: upstream's shape: kind -> the Resource objects of that kind, then the ``<Kind>List`` entries
            under their own kind (server order).
        by_kind_lower: lowercased kind -> the same lists (case-insensitive kind lookups).
        by_name: lowercased plural and singular name -> the top-level Resource objects with that name.
        all: every object, in upstream iteration order.
    """

    group_version: GroupVersion
    preferred: bool
    by_kind: dict[str, list[Resource]]
    by_kind_lower: dict[str, list[Resource]]
    by_name: dict[str, list[Resource]]
    all: tuple[Resource, ...]


@dataclass(frozen=True)
class GroupResources:
    """The versions of one cached group, in priority order (preferred first), built for one entry generation."""

    name: str
    generation: int
    versions: tuple[VersionResources, ...]
    by_version: dict[str, VersionResources]


def _build_version(client: Any, resources: APIResourceList, preferred: bool) -> VersionResources:
    gv = resources.group_version
    subs: dict[str, dict[str, dict[str, Any]]] = {}
    for res in resources.resources:
        if res.is_subresource and res.subresource:
            subs.setdefault(res.parent, {})[res.subresource] = _raw_subresource(res)
    by_kind: dict[str, list[Resource]] = {}
    by_name: dict[str, list[Resource]] = {}
    for res in resources.top_level():
        obj = _resource(client, gv, res, preferred, subs.get(res.name))
        by_kind.setdefault(res.kind, []).append(obj)
        lst = ResourceList(client, group=gv.group, api_version=gv.version,  # type: ignore[no-untyped-call]
                           base_kind=res.kind)
        # Pre-resolve upstream's lazily looked-up base resource: filters read attributes through it, and a lookup
        # by kind could be ambiguous when two resources share the kind.
        lst.__dict__["_ResourceList__base_resource"] = obj
        by_kind.setdefault(lst.kind, []).append(lst)
        for name in {res.name.lower(), (res.singular_name or "").lower()} - {""}:
            by_name.setdefault(name, []).append(obj)
    by_kind_lower: dict[str, list[Resource]] = {}
    for kind, objs in by_kind.items():
        by_kind_lower.setdefault(kind.lower(), []).extend(objs)
    flat = tuple(o for objs in by_kind.values() for o in objs)
    return VersionResources(gv, preferred, by_kind, by_kind_lower, by_name, flat)


def build_group(client: Any, entry: GroupEntry) -> GroupResources:
    """Build the ``kubernetes.dynamic`` objects of one cached group entry.

    Args:
        client: the ``DynamicClient`` the Resource objects call back into.
        entry: the cache entry (its failed versions have no resources and are left out).

    Returns:
        The group's versions in the server's priority order, preferred version first.
    """
    preferred = entry.group.preferred
    ordered = [gv for gv in entry.group.group_versions if gv in entry.resources]
    if preferred in ordered:
        ordered.remove(preferred)
        ordered.insert(0, preferred)
    versions = tuple(_build_version(client, entry.resources[gv], gv == preferred) for gv in ordered)
    return GroupResources(entry.name, entry.generation, versions, {v.group_version.version: v for v in versions})
