"""Immutable per-group lookup tables built from one discovery snapshot of a group.

A :class:`GroupIndex` is what client-go's ``restmapper.NewDiscoveryRESTMapper`` builds for one group (one
``DefaultRESTMapper`` per served version, the ``versionMapper``), plus the short names and categories that
``restmapper/shortcut.go`` and kubectl's category expander read from the same discovery data. Building one is a
single pass over the group's resource lists (microseconds for a typical group), so a lazy mapper can build
indexes group by group and throw them away when the group changes.
"""

from __future__ import annotations

from collections.abc import KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

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

__all__ = [
    "GroupIndex",
    "NameFirst",
    "ResourceEntry",
    "VersionIndex",
    "entry_mapping",
    "name_hit",
    "name_reading",
    "unsafe_guess_kind_to_resource",
]

# Kinds whose resource is the same word in plural and singular (apimachinery ``unpluralizedSuffixes``).
_UNPLURALIZED_SUFFIXES = ("endpoints", "securitycontextconstraints")


_NONE_GUESSED: frozenset[str] = frozenset()


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
        group_version: the group version serving it (set by :class:`VersionIndex`; not compared).
        mapping_memo: its RESTMapping once built (:func:`entry_mapping`; not compared): a mapping is immutable,
            so one is built per resource and shared.
        resolved_memo: a layer above may keep here one immutable answer derived from the mapping alone (the
            mapper keeps ``resolve``'s answer without warnings), built once and shared; not compared.
    """

    plural: str
    singular: str
    kind: str
    scope: Scope
    api_resource: APIResource
    group_version: GroupVersion | None = field(default=None, compare=False, repr=False)
    mapping_memo: RESTMapping | None = field(default=None, compare=False, repr=False)
    resolved_memo: object = field(default=None, compare=False, repr=False)


NameFirst = ResourceEntry | tuple[ResourceEntry | None, ResourceEntry | None]
"""A value of :attr:`GroupIndex.name_first`: one resource when both readings select it (nearly always), else
``(hit, reading)``; see :func:`name_hit` and :func:`name_reading`."""


def name_hit(found: NameFirst) -> ResourceEntry | None:
    """The one resource of the name in the first version serving it (``resource_for``), or None when that
    version has several."""
    return found[0] if isinstance(found, tuple) else found


def name_reading(found: NameFirst) -> ResourceEntry | None:
    """The resource of the kind the name selects, at the first version serving the name (``kind_for``, then
    ``rest_mapping`` of that kind at that version), or None when that version's resources of that name differ
    in kind or that kind is not mapped there."""
    return found[1] if isinstance(found, tuple) else found


def entry_mapping(entry: ResourceEntry) -> RESTMapping:
    """The RESTMapping of ``entry`` (a resource of a :class:`VersionIndex`), built once and shared."""
    found = entry.mapping_memo
    if found is None:
        gv = entry.group_version
        if gv is None:
            raise ValueError(f"resource {entry.plural!r} belongs to no VersionIndex")
        found = _new_mapping(gv, entry, entry.kind)
        object.__setattr__(entry, "mapping_memo", found)  # idempotent: a racing build makes an equal mapping
    return found


_new = object.__new__
_set = object.__setattr__


def _new_mapping(gv: GroupVersion, entry: ResourceEntry, kind: str) -> RESTMapping:
    """``RESTMapping(gv.with_resource(entry.plural), gv.with_kind(kind), entry.scope, entry.api_resource)``,
    built without the constructors' type checks (see :func:`_mapping_of`)."""
    return _mapping_of(gv, entry.plural, kind, entry.scope, entry.api_resource)


def _mapping_of(gv: GroupVersion, plural: str, kind: str, scope: Scope, api_resource: APIResource) -> RESTMapping:
    """``RESTMapping(gv.with_resource(plural), gv.with_kind(kind), scope, api_resource)``, built without the
    constructors' type checks: every part is a str or a Scope the index already holds (every resource of an
    index gets its mapping when the index is built; the checks were a third of the cost)."""
    group, version = gv.group, gv.version
    gvr = _new(GroupVersionResource)
    _set(gvr, "group", group)
    _set(gvr, "version", version)
    _set(gvr, "resource", plural)
    gvk = _new(GroupVersionKind)
    _set(gvk, "group", group)
    _set(gvk, "version", version)
    _set(gvk, "kind", kind)
    mapping = _new(RESTMapping)
    _set(mapping, "resource", gvr)
    _set(mapping, "group_version_kind", gvk)
    _set(mapping, "scope", scope)
    _set(mapping, "api_resource", api_resource)
    return mapping


class VersionIndex:
    """Lookup tables of one served group version (client-go's per-version ``DefaultRESTMapper``).

    Attributes:
        group_version: the group version.
        entries: the top-level resources in discovery order (subresources are never mapped).
    """

    __slots__ = ("_by_kind", "_by_name", "_own_kinds", "entries", "group_version")

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
            # The mapping is built with the entry (one per resource, shared): a first-time question then
            # allocates nothing for it, and the question right after a group refreshed finds it built.
            entry = ResourceEntry(res.name, singular, res.kind, res.scope, res, group_version,
                                  _mapping_of(group_version, res.name, res.kind, res.scope, res))
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
        self._by_kind = by_kind = {**lower_kind, **exact_kind}
        # Every resource is its own kind's home (no two share a kind, the usual version): a reading of one
        # resource's name then selects that resource with no read of the kind table (see
        # :meth:`GroupIndex.version_reading`).
        self._own_kinds = all(by_kind.get(e.kind) is e for e in entries if e.kind)

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
            found = entry.mapping_memo
            if found is not None and entry.group_version is self.group_version:
                return found
            if entry.group_version is self.group_version:
                return entry_mapping(entry)
        return _new_mapping(self.group_version, entry, kind if kind is not None else entry.kind)

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
        names: every plural and singular name of the group's top-level resources, a read-only set view; a
            singular guessed from a kind (the server left ``singularName`` empty) included, as client-go's
            discovery mapper registers it.
        guessed: the names in ``names`` that are only guessed singulars: no real name for the shortcut guard
            (:meth:`real_name`), as client-go's expander compares ``name`` and ``singularName`` only.
        short_names: short name -> plurals claiming it, in discovery order (versions in server order).
        categories: category -> plurals in it, in discovery order.
        category_members: category -> the same as GroupResources of this group (built with the index: a
            first-time category question reads them instead of building one per member).
        kind_first: kind (exact spelling or lowercase form) -> the resource the group's kind priority selects
            for it (:meth:`kind_mapping` without versions).
        name_first: resource name (lowercased plural or singular) -> what the first version (kind priority order)
            serving it selects, as :func:`name_hit` and :func:`name_reading` read it.
        These two are flat tables built with the index: a first-time question reads one of them, not the
        version indexes (read them, never change them).

    Mirrors the per-group part of client-go ``restmapper.NewDiscoveryRESTMapper``.
    """

    __slots__ = (
        "_by_version",
        "_kind_order",
        "categories",
        "category_members",
        "group",
        "guessed",
        "kind_first",
        "layer_memo",
        "name",
        "name_first",
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
        # One object a layer above derives from the group entry this index was built from and keeps with it (the
        # dynamic drop-in's Resource objects; the mapper never reads it).
        self.layer_memo: object = None
        version_indexes = [VersionIndex(gv, rlist.resources)
                           for gv in (GroupVersion(group.name, v) for v in dict.fromkeys(group.versions))
                           if (rlist := resources.get(gv)) is not None]
        short_names, categories, guessed = _names_of(version_indexes)
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
        kind_first, name_first = _flat_tables(self._by_version, order)
        self.kind_first = kind_first
        self.name_first = name_first
        # Every plural and singular name (a view of the table: the same keys).
        self.names: KeysView[str] = name_first.keys()
        self.short_names = {k: tuple(v) for k, v in short_names.items()}
        self.guessed: frozenset[str] = frozenset(guessed) if guessed else _NONE_GUESSED
        self.categories = {k: tuple(v) for k, v in categories.items()}
        name = self.name
        self.category_members = {k: tuple(GroupResource(name, plural) for plural in v) for k, v in categories.items()}

    def real_name(self, name: str) -> bool:
        """True when a resource of the group has ``name`` as its plural or as the server's singular name: what the
        shortcut guard asks (a real name beats a short name); a singular guessed from a kind is none.

        Mirrors the first step of client-go ``shortcutExpander.expandResourceShortcut``."""
        return name in self.name_first and name not in self.guessed

    @classmethod
    def from_lists(cls, group: APIGroup, lists: list[APIResourceList] | tuple[APIResourceList, ...]) -> GroupIndex:
        """Build from a sequence of resource lists (keyed by their own ``group_version``)."""
        return cls(group, {rl.group_version: rl for rl in lists})

    def version(self, version: str) -> VersionIndex | None:
        """Return the index of ``version``, or None when the group does not serve it (or it was not loaded)."""
        return self._by_version.get(version)

    def version_hits(self, version: str, name: str) -> tuple[ResourceEntry, ...]:
        """The resources named ``name`` (lowercased; plural or singular) in ``version``, in order:
        ``version(version).match_resource(name)`` in one call; ``()`` when the group does not serve ``version``."""
        vindex = self._by_version.get(version)
        return () if vindex is None else vindex._by_name.get(name, ())

    def version_reading(self, version: str, name: str) -> ResourceEntry | Literal[False] | None:
        """The resource kubectl's ``name.version.group`` reading selects here: the kind of the resources named
        ``name`` (lowercased) in ``version``, then that kind's resource in ``version``.

        Returns:
            The resource; None when those resources differ in kind or their kind is not mapped there (the
            reading is ambiguous or unanswerable); False when no resource of ``version`` has that name, or the
            group does not serve ``version`` (the next reading is tried).

        Mirrors ``KindFor(GroupVersionResource)`` then ``RESTMapping(GroupKind, version)`` of one group's
        ``DefaultRESTMapper`` (``version(version).match_resource`` then ``match_kind``), in one call.
        """
        vindex = self._by_version.get(version)
        if vindex is None:
            return False
        hits = vindex._by_name.get(name)
        if not hits:
            return False
        head = hits[0]
        if len(hits) == 1 and vindex._own_kinds:  # the usual resource: its own kind's home
            return head if head.kind else None
        kind = head.kind
        for hit in hits:
            if hit.kind != kind:
                return None
        return vindex._by_kind.get(kind)

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
        if not versions:
            entry = self.kind_first.get(kind)
            return None if entry is None else entry_mapping(entry)
        by_version = self._by_version
        for version in versions:
            vindex = by_version.get(version)
            if vindex is not None:
                entry = vindex._by_kind.get(kind)
                if entry is not None:
                    return entry_mapping(entry)
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


def _names_of(version_indexes: Sequence[VersionIndex]) -> tuple[dict[str, list[str]], dict[str, list[str]], set[str]]:
    """Short name -> plurals claiming it, category -> plurals in it (each in discovery order, versions in server
    order), and the singulars only guessed from a kind (the server left ``singularName`` empty and no resource has
    that name for real)."""
    short_names: dict[str, list[str]] = {}
    categories: dict[str, list[str]] = {}
    guessed: set[str] = set()
    real: set[str] = set()  # plurals and the servers' singularNames
    for vindex in version_indexes:
        for entry in vindex.entries:
            real.add(entry.plural)
            if entry.api_resource.singular_name:
                real.add(entry.singular)
            else:
                guessed.add(entry.singular)
            for short in entry.api_resource.short_names:
                _append_unique(short_names, short, entry.plural)
            for category in entry.api_resource.categories:
                _append_unique(categories, category, entry.plural)
    guessed.difference_update(real)
    return short_names, categories, guessed


def _flat_tables(by_version: Mapping[str, VersionIndex], order: Sequence[str]
                 ) -> tuple[dict[str, ResourceEntry], dict[str, NameFirst]]:
    """:attr:`GroupIndex.kind_first` and :attr:`GroupIndex.name_first` over the versions in kind priority
    ``order``: walked from the lowest priority up, so the first version in priority order wins."""
    kind_first: dict[str, ResourceEntry] = {}
    name_first: dict[str, NameFirst] = {}
    for version in reversed(order):
        vindex = by_version[version]
        by_kind = vindex._by_kind
        kind_first.update(by_kind)
        for name, hits in vindex._by_name.items():
            head = hits[0]
            hit = head if len(hits) == 1 else None
            kind = head.kind
            reading = by_kind.get(kind) if all(h.kind == kind for h in hits) else None
            name_first[name] = hit if hit is reading and hit is not None else (hit, reading)
    return kind_first, name_first


def _append_unique(table: dict[str, list[str]], key: str, value: str) -> None:
    bucket = table.setdefault(key, [])
    if value not in bucket:
        bucket.append(value)
