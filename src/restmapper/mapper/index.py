"""Immutable per-group lookup tables built from one discovery snapshot of a group.

A :class:`GroupIndex` is what client-go's ``restmapper.NewDiscoveryRESTMapper`` builds for one group (one
``DefaultRESTMapper`` per served version, the ``versionMapper``), plus the short names and categories that
``restmapper/shortcut.go`` and kubectl's category expander read from the same discovery data. Building one is a
single pass over the group's resource lists (microseconds for a typical group), so a lazy mapper can build
indexes group by group and throw them away when the group changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from restmapper.model import (
    APIGroup,
    APIResource,
    APIResourceList,
    GroupResource,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
    Scope,
)

__all__ = ["GroupIndex", "ResourceEntry", "VersionIndex", "unsafe_guess_kind_to_resource"]

# Kinds whose resource is the same word in plural and singular (apimachinery ``unpluralizedSuffixes``).
_UNPLURALIZED_SUFFIXES = ("endpoints", "securitycontextconstraints")


def unsafe_guess_kind_to_resource(kind: str) -> tuple[str, str]:
    """Return the guessed ``(plural, singular)`` resource names of a kind.

    The singular is the lowercased kind; the plural appends ``es`` after ``s``, turns a final ``y`` into ``ies``
    (``Gateway`` -> ``gatewaies``: this is a guess, used only when discovery gives no name) and appends ``s``
    otherwise. Mirrors apimachinery ``meta.UnsafeGuessKindToResource``, including its unpluralized suffixes
    (``Endpoints`` -> ``endpoints``/``endpoints``).

    Args:
        kind: a kind such as ``ReplicationController``.

    Returns:
        ``(plural, singular)``; ``("", "")`` for an empty kind.
    """
    if not kind:
        return "", ""
    singular = kind.lower()
    if singular.endswith(_UNPLURALIZED_SUFFIXES):
        return singular, singular
    if singular.endswith("s"):
        return singular + "es", singular
    if singular.endswith("y"):
        return singular[:-1] + "ies", singular
    return singular + "s", singular


@dataclass(frozen=True, slots=True)
class ResourceEntry:
    """One mapped (top-level) resource of a group version.

    Attributes:
        plural: the resource name (``deployments``), as discovery gave it.
        singular: discovery's ``singularName``, or the guess from the kind when the server left it empty.
        kind: the kind as discovery gave it (``Deployment``).
        scope: namespaced or cluster.
        api_resource: the discovery entry it was built from.
    """

    plural: str
    singular: str
    kind: str
    scope: Scope
    api_resource: APIResource


class VersionIndex:
    """Lookup tables of one served group version (client-go's per-version ``DefaultRESTMapper``).

    Attributes:
        group_version: the group version.
        entries: the top-level resources in discovery order (subresources are never mapped).
    """

    __slots__ = ("_by_kind", "_by_name", "_mappings", "entries", "group_version")

    def __init__(self, group_version: GroupVersion, resources: tuple[APIResource, ...]) -> None:
        """Index the resources of one group version.

        Args:
            group_version: the group version the resources belong to.
            resources: the ``APIResourceList`` entries in server order; subresources (``a/b``, ``a/b/c``) are
                skipped, as client-go does.
        """
        self.group_version = group_version
        entries: list[ResourceEntry] = []
        by_name: dict[str, list[ResourceEntry]] = {}
        exact_kind: dict[str, ResourceEntry] = {}
        lower_kind: dict[str, ResourceEntry] = {}
        for res in resources:
            if "/" in res.name or not res.name:
                continue
            singular = res.singular_name or unsafe_guess_kind_to_resource(res.kind)[1]
            entry = ResourceEntry(res.name, singular, res.kind, res.scope, res)
            entries.append(entry)
            for name in (entry.plural, entry.singular):
                if not name:
                    continue
                bucket = by_name.setdefault(name, [])
                if entry not in bucket:
                    bucket.append(entry)
            if res.kind:
                _register_kind(exact_kind, res.kind, entry)
                _register_kind(lower_kind, res.kind.lower(), entry)
        self.entries = tuple(entries)
        self._by_name = {k: tuple(v) for k, v in by_name.items()}
        # An exact kind beats another resource's lowercased alias of the same spelling.
        self._by_kind = {**lower_kind, **exact_kind}
        self._mappings: dict[str, RESTMapping] = {}  # plural -> mapping, built on first use

    def match_resource(self, name: str) -> tuple[ResourceEntry, ...]:
        """Return the resources whose plural or singular name equals ``name`` (already lowercased), in order."""
        return self._by_name.get(name, ())

    def match_kind(self, kind: str) -> ResourceEntry | None:
        """Return the resource serving ``kind`` (exact spelling or its lowercase form), or None."""
        return self._by_kind.get(kind)

    def gvr(self, entry: ResourceEntry) -> GroupVersionResource:
        """Return the plural GroupVersionResource of ``entry``."""
        return self.mapping(entry).resource

    def gvk(self, entry: ResourceEntry) -> GroupVersionKind:
        """Return the GroupVersionKind of ``entry``."""
        return self.mapping(entry).group_version_kind

    def mapping(self, entry: ResourceEntry, kind: str | None = None) -> RESTMapping:
        """Return the RESTMapping of ``entry``, reporting ``kind`` (default: the discovered kind) as its kind.

        Built once per resource (on first use) and shared: a mapping is immutable.
        """
        if kind is None or kind == entry.kind:
            found = self._mappings.get(entry.plural)
            if found is not None and found.api_resource is entry.api_resource:
                return found
        found = RESTMapping(
            resource=self.group_version.with_resource(entry.plural),
            group_version_kind=self.group_version.with_kind(kind if kind is not None else entry.kind),
            scope=entry.scope,
            api_resource=entry.api_resource,
        )
        if kind is None or kind == entry.kind:
            self._mappings[entry.plural] = found
        return found

    def __repr__(self) -> str:
        return f"VersionIndex({str(self.group_version)!r}, {len(self.entries)} resources)"


def _register_kind(table: dict[str, ResourceEntry], key: str, entry: ResourceEntry) -> None:
    current = table.get(key)
    if current is None:
        table[key] = entry
        return
    # Two resources of one version share a kind (``templates`` and ``processedtemplates`` are both
    # ``Template``): the one whose plural is the kind's own plural is the kind's home. Upstream keeps whichever
    # was registered last, which sends ``Template`` to ``processedtemplates``.
    guessed = unsafe_guess_kind_to_resource(entry.kind)[0]
    if entry.plural == guessed and current.plural != guessed:
        table[key] = entry


class GroupIndex:
    """Immutable lookup tables of one API group, built from its ``APIGroup`` and resource lists.

    Attributes:
        name: the group name (``""`` for core).
        group: the ``APIGroup`` it was built from.
        versions: the versions that have a resource list, in the server's order.
        version_indexes: one :class:`VersionIndex` per entry of ``versions``.
        preferred_version: the server's preferred version when it has a resource list, else None.
        names: every plural and singular name of the group's top-level resources (the shortcut guard).
        short_names: short name -> plurals claiming it, in discovery order (versions in server order).
        categories: category -> plurals in it, in discovery order.

    Mirrors the per-group part of client-go ``restmapper.NewDiscoveryRESTMapper``.
    """

    __slots__ = (
        "_by_version",
        "_kind_order",
        "categories",
        "group",
        "name",
        "names",
        "preferred_version",
        "short_names",
        "version_indexes",
        "versions",
    )

    def __init__(self, group: APIGroup, resources: Mapping[GroupVersion, APIResourceList]) -> None:
        """Index ``group`` from its resource lists.

        Args:
            group: the group (versions in server order, preferred version).
            resources: resource list per group version; versions of ``group`` missing here are skipped (not
                discovered, or failed), and entries for other groups or unlisted versions are ignored.
        """
        self.name = group.name
        self.group = group
        version_indexes: list[VersionIndex] = []
        names: set[str] = set()
        short_names: dict[str, list[str]] = {}
        categories: dict[str, list[str]] = {}
        for version in dict.fromkeys(group.versions):
            gv = GroupVersion(group.name, version)
            rlist = resources.get(gv)
            if rlist is None:
                continue
            vindex = VersionIndex(gv, rlist.resources)
            version_indexes.append(vindex)
            for entry in vindex.entries:
                names.add(entry.plural)
                names.add(entry.singular)
                for short in entry.api_resource.short_names:
                    _append_unique(short_names, short, entry.plural)
                for category in entry.api_resource.categories:
                    _append_unique(categories, category, entry.plural)
        self.version_indexes = tuple(version_indexes)
        self.versions = tuple(v.group_version.version for v in version_indexes)
        self._by_version = {v.group_version.version: v for v in version_indexes}
        pv = group.preferred_version
        self.preferred_version = pv if pv and pv in self._by_version else None
        # Versions in client-go's default kind priority (core ``v1``, the preferred version, the others in
        # server order); the ``versions`` tuple itself in the usual case (a named group preferring its first).
        first: tuple[str, ...] = ("v1",) if not self.name and "v1" in self._by_version else ()
        if self.preferred_version is not None:
            first += (self.preferred_version,)
        order = self.versions
        if first and order[:len(first)] != first:
            order = tuple(dict.fromkeys((*first, *order)))
        self._kind_order = order
        names.discard("")
        self.names = frozenset(names)
        self.short_names = {k: tuple(v) for k, v in short_names.items()}
        self.categories = {k: tuple(v) for k, v in categories.items()}

    @classmethod
    def from_lists(cls, group: APIGroup, lists: list[APIResourceList] | tuple[APIResourceList, ...]) -> GroupIndex:
        """Build from a sequence of resource lists (keyed by their own ``group_version``)."""
        return cls(group, {rl.group_version: rl for rl in lists})

    def version(self, version: str) -> VersionIndex | None:
        """Return the index of ``version``, or None when the group does not serve it (or it was not loaded)."""
        return self._by_version.get(version)

    def kind_mapping(self, kind: str, versions: Sequence[str] = ()) -> RESTMapping | None:
        """The RESTMapping of ``kind`` (exact spelling or lowercase form) the group's priority selects.

        Args:
            kind: the kind.
            versions: the versions asked for, most wanted first, already cleaned of ``""`` and ``__internal``.

        Returns:
            The mapping at the first of ``versions`` serving the kind; with none given, at core ``v1``, else the
            preferred version, else the first other version (server order) serving it. None when no version (of
            ``versions``) serves it.

        Mirrors ``PriorityRESTMapper.RESTMapping`` with the patterns of client-go ``NewDiscoveryRESTMapper``,
        restricted to one group (its mappings have distinct versions, so a pattern never leaves two).
        """
        by_version = self._by_version
        for version in versions or self._kind_order:
            vindex = by_version.get(version)
            if vindex is not None:
                entry = vindex._by_kind.get(kind)
                if entry is not None:
                    return vindex.mapping(entry)
        return None

    def first_with_name(self, name: str) -> tuple[VersionIndex, tuple[ResourceEntry, ...]] | None:
        """The first version in kind priority order (core ``v1``, the preferred version, the others in server
        order) with resources named ``name`` (lowercased; plural or singular), and those resources; or None."""
        by_version = self._by_version
        for version in self._kind_order:
            vindex = by_version[version]
            hits = vindex._by_name.get(name)
            if hits:
                return vindex, hits
        return None

    def short_name_targets(self, short_name: str) -> tuple[GroupResource, ...]:
        """Return the GroupResources claiming ``short_name`` in this group, in discovery order."""
        return tuple(GroupResource(self.name, p) for p in self.short_names.get(short_name, ()))

    def __repr__(self) -> str:
        return f"GroupIndex({self.name!r}, versions={list(self.versions)!r})"


def _append_unique(table: dict[str, list[str]], key: str, value: str) -> None:
    bucket = table.setdefault(key, [])
    if value not in bucket:
        bucket.append(value)
