"""``kubernetes.dynamic`` Resource objects built from our cached discovery data, with lookup tables.

One :class:`GroupResources` per cached group entry (rebuilt only when the entry's generation changes): for each
served version a :class:`VersionResources` holding the upstream-shaped ``{kind: [Resource, ResourceList, ...]}``
dict plus lowercase indexes by kind, plural and singular name, so lookups are dict hits, not scans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubernetes.dynamic.discovery import ResourceGroup
from kubernetes.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
from kubernetes.dynamic.resource import Resource, ResourceList

from restmapper.cache import GroupEntry
from restmapper.model import APIResource, APIResourceList, GroupVersion

__all__ = ["BASE_RESOURCE", "KUBERNETES_DYNAMIC", "Flavour", "GroupResources", "VersionResources", "build_group",
           "generic_list",
           "trait_key"]


@dataclass(frozen=True)
class Flavour:
    """The classes of one dynamic-client library (``kubernetes.dynamic``, ``kubernetes.aio.dynamic``,
    ``kubernetes_asyncio.dynamic``): discoverers hand out that library's own objects and raise its own errors.

    Attributes:
        resource: its ``Resource`` class.
        resource_list: its ``ResourceList`` class.
        resource_group: its ``ResourceGroup`` (``parse_api_groups`` values).
        not_found: its ``ResourceNotFoundError``.
        not_unique: its ``ResourceNotUniqueError``.
        snake_case: its ``Resource`` takes ``singular_name``/``short_names`` (the asyncio libraries) instead of
            the server's ``singularName``/``shortNames``.
    """

    resource: Any
    resource_list: Any
    resource_group: Any
    not_found: type[Exception]
    not_unique: type[Exception]
    snake_case: bool = False


KUBERNETES_DYNAMIC = Flavour(Resource, ResourceList, ResourceGroup, ResourceNotFoundError, ResourceNotUniqueError)
"""``kubernetes.dynamic``'s classes."""


def _raw_subresource(res: APIResource) -> dict[str, Any]:
    """The dict upstream's ``Subresource(parent, **raw)`` receives (the server's JSON keys, as upstream keeps them)."""
    # ``subresource`` is passed explicitly: upstream would keep only the first segment of ``sev/fetchcertchain``.
    raw: dict[str, Any] = {"name": res.name, "singularName": res.singular_name, "namespaced": res.namespaced,
                           "kind": res.kind, "verbs": list(res.verbs), "subresource": res.subresource}
    if res.group is not None or res.version is not None:
        raw["group"], raw["version"] = res.group or "", res.version or ""
    return raw


def _resource(client: Any, gv: GroupVersion, res: APIResource, preferred: bool,
              subresources: dict[str, dict[str, Any]] | None, flavour: Flavour) -> Resource:
    # Upstream keeps the server's JSON: absent lists are None, and an empty singularName falls back to upstream's
    # own guess (name minus its last letter); keep both so code comparing them keeps working. The asyncio
    # libraries name these arguments in snake_case (their own discoverers pass the server's camelCase keys, so
    # their singular_name is always a guess; ours is the server's).
    singular, short = ("singular_name", "short_names") if flavour.snake_case else ("singularName", "shortNames")
    extra = {"storageVersionHash": res.storage_version_hash} if res.storage_version_hash else {}
    return flavour.resource(  # type: ignore[no-any-return]
        prefix="api" if not gv.group else "apis", group=gv.group, api_version=gv.version, kind=res.kind,
        namespaced=res.namespaced, verbs=list(res.verbs), name=res.name, preferred=preferred, client=client,
        categories=list(res.categories) or None, subresources=subresources, **extra,
        **{singular: res.singular_name or None, short: list(res.short_names) or None})


def generic_list(client: Any, flavour: Flavour = KUBERNETES_DYNAMIC) -> ResourceList:
    """The generic ``v1 List`` kind upstream serves under ``apis//v1`` (``ResourceList(client)``)."""
    return flavour.resource_list(client)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)  # slots: a first-time question reads one object less per version
class VersionResources:
    """The resources of one group version as ``kubernetes.dynamic`` objects.

    Attributes:
        group_version: the group version.
        preferred: True for the group's preferred version.
        by_kind: upstream's shape: kind -> the Resource objects of that kind, then the ``<Kind>List`` entries
            under their own kind (server order).
        by_kind_lower: lowercased kind -> the same lists (case-insensitive kind lookups).
        by_trait: :func:`trait_key` of a lowercased plural or singular name, short name or category -> the objects
            claiming it (a ``ResourceList`` under its resource's), in upstream iteration order: the candidates a
            ``name``/``singular_name``/``short_names``/``categories`` filter can match.
        all: every object, in upstream iteration order.
    """

    group_version: GroupVersion
    preferred: bool
    by_kind: dict[str, list[Resource]]
    by_kind_lower: dict[str, list[Resource]]
    by_trait: dict[str, list[Resource]]
    all: tuple[Resource, ...]


@dataclass(frozen=True, slots=True)
class GroupResources:
    """The versions of one cached group, in priority order (preferred first), built for one entry generation."""

    name: str
    generation: int
    versions: tuple[VersionResources, ...]
    by_version: dict[str, VersionResources]


def _build_version(client: Any, resources: APIResourceList, preferred: bool, flavour: Flavour) -> VersionResources:
    gv = resources.group_version
    subs: dict[str, dict[str, dict[str, Any]]] = {}
    for res in resources.resources:
        if res.is_subresource and res.subresource:
            subs.setdefault(res.parent, {})[res.subresource] = _raw_subresource(res)
    by_kind: dict[str, list[Resource]] = {}
    for res in resources.top_level():
        obj = _resource(client, gv, res, preferred, subs.get(res.name), flavour)
        by_kind.setdefault(res.kind, []).append(obj)
        lst = flavour.resource_list(client, group=gv.group, api_version=gv.version, base_kind=res.kind)
        # Pre-resolve upstream's lazily looked-up base resource: filters read attributes through it, and a lookup
        # by kind could be ambiguous when two resources share the kind.
        lst.__dict__[BASE_RESOURCE] = obj
        by_kind.setdefault(lst.kind, []).append(lst)
    by_kind_lower: dict[str, list[Resource]] = {}
    for kind, objs in by_kind.items():
        by_kind_lower.setdefault(kind.lower(), []).extend(objs)
    flat = tuple(o for objs in by_kind.values() for o in objs)
    return VersionResources(gv, preferred, by_kind, by_kind_lower, _by_trait(flat, flavour), flat)


def trait_key(tag: str, value: str) -> str:
    """The :attr:`VersionResources.by_trait` key of a trait: ``n`` (plural or singular name), ``s`` (short name) or
    ``c`` (category), and its value (compared lowercased)."""
    return f"{tag}:{value.lower()}"


BASE_RESOURCE = "_ResourceList__base_resource"
"""Where a ``ResourceList`` built here holds its resource (pre-resolved: upstream looks it up lazily)."""


def _by_trait(flat: tuple[Resource, ...], flavour: Flavour) -> dict[str, list[Resource]]:
    """Each object under the traits its attributes hold, read from the instance as the filters read them
    (``singular_name`` is upstream's guess when the server sent none). A ``kubernetes.dynamic`` ResourceList's
    are its resource's (upstream reads them through it); the asyncio libraries' ResourceList has none (reading one
    through it makes a coroutine, never an attribute), so those are left out."""
    out: dict[str, list[Resource]] = {}
    for obj in flat:
        base = obj.__dict__.get(BASE_RESOURCE)
        if base is None or not flavour.snake_case:
            for key in _trait_keys((obj if base is None else base).__dict__):
                out.setdefault(key, []).append(obj)
    return out


def _trait_keys(attrs: dict[str, Any]) -> list[str]:
    """The :func:`trait_key` of every name, short name and category in a Resource's attributes, sorted."""
    values = [("n", attrs.get("name")), ("n", attrs.get("singular_name"))]
    for tag, term in (("s", "short_names"), ("c", "categories")):
        listed = attrs.get(term)
        if isinstance(listed, list):
            values.extend((tag, v) for v in listed)
    return sorted({trait_key(tag, v) for tag, v in values if isinstance(v, str)})


def build_group(client: Any, entry: GroupEntry, flavour: Flavour = KUBERNETES_DYNAMIC) -> GroupResources:
    """Build the dynamic-client objects of one cached group entry.

    Args:
        client: the ``DynamicClient`` the Resource objects call back into.
        entry: the cache entry (its failed versions have no resources and are left out).
        flavour: whose classes to build (default ``kubernetes.dynamic``'s).

    Returns:
        The group's versions in the server's priority order, preferred version first.
    """
    preferred = entry.group.preferred
    ordered = [gv for gv in entry.group.group_versions if gv in entry.resources]
    if preferred in ordered:
        ordered.remove(preferred)
        ordered.insert(0, preferred)
    versions = tuple(_build_version(client, entry.resources[gv], gv == preferred, flavour) for gv in ordered)
    return GroupResources(entry.name, entry.generation, versions, {v.group_version.version: v for v in versions})
