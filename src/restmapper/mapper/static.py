"""The REST mapper over an in-memory discovery snapshot: ``NewDiscoveryRESTMapper`` semantics, no I/O.

:class:`StaticRESTMapper` answers the eight ``meta.RESTMapper`` questions from a sequence of
:class:`~restmapper.mapper.index.GroupIndex`. It combines what client-go builds out of three apimachinery types:

- matching as ``DefaultRESTMapper``: the resource is lowercased and matches a plural or a singular name; a group
  without exact matches falls back to groups that start with it (``storageclasses.storage``); a kind matches its
  exact spelling or its lowercase form;
- union and de-duplication as ``MultiRESTMapper`` (one child per served group version, in server order);
- narrowing as ``PriorityRESTMapper`` with the patterns of ``NewDiscoveryRESTMapper`` (core ``v1`` first, then
  each group's preferred version, its other versions, then the group itself). A kind or resource served by
  several versions of one group therefore resolves to the preferred version, and two groups serving the same
  resource name resolve to the group listed first; only two hits in the same group version are ambiguous.

Deliberate differences from upstream, each a bug fix:

- a group given with a resource is first matched exactly across *all* groups, and only when no group has an
  exact hit are prefix groups consulted (upstream decides per version child, so ``foo.first-group`` could also
  match ``first-group-1`` when that group is listed first);
- the guessed ``<Kind>List`` and ``List`` registrations (``deploymentlists``, ``lists``) are not made: upstream
  calls them "unsafe guesses that don't actually work", they name resources no server serves, and a mapping to
  them would only ever produce 404s. ``kinds_for("deploymentlists")`` is therefore a no-match;
- two resources of one version with the same kind map the kind to the resource whose plural is the kind's
  plural (``Template`` -> ``templates``, not ``processedtemplates``);
- ``kinds_for`` reports the kinds of the resources ``resources_for`` finds, instead of a separate table in
  which a later resource's singular can overwrite an earlier one's plural;
- empty requested versions are ignored (they mean "any version") instead of being reported as searched;
- a kind matched in its lowercase form comes back as the server spells it (upstream echoes the caller's
  spelling, so ``deployment`` would reach a client as an apiVersion/kind no server accepts).

Safe to share between threads: the instance is immutable after construction except for one lookup table built
lazily on first use, whose construction is idempotent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from restmapper.errors import (
    AmbiguousKindError,
    AmbiguousResourceError,
    InvalidArgumentError,
    NoKindMatchError,
    NoResourceMatchError,
)
from restmapper.mapper.index import GroupIndex, ResourceEntry, VersionIndex
from restmapper.mapper.priority import discovery_priorities, kind_matches, narrow_by_priority, resource_matches
from restmapper.model import (
    GroupKind,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
)

__all__ = ["API_VERSION_INTERNAL", "StaticRESTMapper"]

API_VERSION_INTERNAL = "__internal"
"""apimachinery ``runtime.APIVersionInternal``; treated as "no version" in lookups, as upstream."""

_Hit = tuple[VersionIndex, ResourceEntry]
_C = TypeVar("_C")

_SMALL = 8
"""Up to this many groups, a name is matched group by group instead of through a table built for the snapshot."""


class StaticRESTMapper:
    """REST mapper over a fixed set of group indexes (client-go ``restmapper.NewDiscoveryRESTMapper``).

    Args:
        indexes: the groups, in server order. The core group (``""``) is moved first if present, as discovery
            lists it; a group name given twice keeps its first index.
        resource_priority: priority patterns for ``resource_for``; default: derived from ``indexes`` as client-go
            does. Pass ``()`` for plain ``MultiRESTMapper`` behaviour (several hits are ambiguous).
        kind_priority: the same for ``kind_for`` and ``rest_mapping``.

    Example:
        >>> mapper = StaticRESTMapper([core_index, apps_index])  # doctest: +SKIP
        >>> mapper.rest_mapping(GroupKind("apps", "Deployment")).resource  # doctest: +SKIP
        GroupVersionResource(group='apps', version='v1', resource='deployments')
    """

    __slots__ = ("_by_group", "_by_name", "_indexes", "_kind_priority", "_order", "_resource_priority")

    def __init__(
        self,
        indexes: Iterable[GroupIndex],
        *,
        resource_priority: Sequence[GroupVersionResource] | None = None,
        kind_priority: Sequence[GroupVersionKind] | None = None,
    ) -> None:
        by_group: dict[str, GroupIndex] = {}
        for index in indexes:
            by_group.setdefault(index.name, index)
        ordered = tuple(by_group.values())
        if "" in by_group and ordered[0].name:
            ordered = (by_group[""], *(i for i in ordered if i.name))  # core first, the rest in order
        self._indexes = ordered
        self._by_group = by_group
        # Derived from the indexes on first use (most questions over a few groups never need them).
        self._resource_priority = None if resource_priority is None else tuple(resource_priority)
        self._kind_priority = None if kind_priority is None else tuple(kind_priority)
        self._by_name: dict[str, tuple[_Hit, ...]] | None = None
        self._order: dict[str, int] | None = None

    # --- introspection ------------------------------------------------------------------------------------

    @property
    def indexes(self) -> tuple[GroupIndex, ...]:
        """The group indexes in lookup order (core first, then server order)."""
        return self._indexes

    def group(self, name: str) -> GroupIndex | None:
        """Return the index of group ``name``, or None when it is not in this snapshot."""
        return self._by_group.get(name)

    @property
    def resource_priority(self) -> tuple[GroupVersionResource, ...]:
        """The resource priority patterns in use."""
        if self._resource_priority is None:
            self._resource_priority = discovery_priorities(self._indexes)[0]
        return self._resource_priority

    @property
    def kind_priority(self) -> tuple[GroupVersionKind, ...]:
        """The kind priority patterns in use."""
        if self._kind_priority is None:
            self._kind_priority = discovery_priorities(self._indexes)[1]
        return self._kind_priority

    # --- resources -> kinds/resources ---------------------------------------------------------------------

    def resources_for(self, resource: GroupVersionResource) -> list[GroupVersionResource]:
        """Return every plural GroupVersionResource matching a partial resource, in priority-free order.

        Args:
            resource: a partial resource; the name may be plural or singular, any case; group and version
                may be empty.

        Returns:
            Plural GVRs, de-duplicated, ordered by group (server order) and version (server order), then by name
            within one group version.

        Raises:
            NoResourceMatchError: nothing matches.
            InvalidArgumentError: the resource name is empty.

        Mirrors apimachinery ``MultiRESTMapper.ResourcesFor`` over per-version ``DefaultRESTMapper``s.
        """
        hits = self._resource_hits(resource)
        out: list[GroupVersionResource] = []
        for children in _by_child(hits, key=lambda e: e.plural):
            for vindex, entry in children:
                gvr = vindex.gvr(entry)
                if gvr not in out:
                    out.append(gvr)
        if not out:
            raise NoResourceMatchError(resource)
        return out

    def resource_for(self, resource: GroupVersionResource) -> GroupVersionResource:
        """Return the one plural GroupVersionResource a partial resource selects by priority.

        Raises:
            NoResourceMatchError: nothing matches.
            AmbiguousResourceError: several match and the priority patterns cannot choose (same group version).
            InvalidArgumentError: the resource name is empty.

        Mirrors apimachinery ``PriorityRESTMapper.ResourceFor``.
        """
        candidates = self.resources_for(resource)
        if self._resource_priority is None:
            chosen = self._by_default_priority(candidates, _gvr_gv)
        else:
            chosen = narrow_by_priority(candidates, self._resource_priority, resource_matches)
        if chosen is None:
            raise AmbiguousResourceError(resource, matching_resources=candidates)
        return chosen

    def kinds_for(self, resource: GroupVersionResource) -> list[GroupVersionKind]:
        """Return every GroupVersionKind served by resources matching a partial resource.

        Returns:
            GVKs, de-duplicated, in the order of :meth:`resources_for` (by kind within one group version).

        Raises:
            NoResourceMatchError: nothing matches (as upstream, also for this kind method).
            InvalidArgumentError: the resource name is empty.

        Mirrors apimachinery ``MultiRESTMapper.KindsFor`` over per-version ``DefaultRESTMapper``s.
        """
        hits = self._resource_hits(resource)
        out: list[GroupVersionKind] = []
        for children in _by_child(hits, key=lambda e: e.kind):
            for vindex, entry in children:
                gvk = vindex.gvk(entry)
                if gvk not in out:
                    out.append(gvk)
        if not out:
            raise NoResourceMatchError(resource)
        return out

    def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """Return the one GroupVersionKind a partial resource selects by priority.

        ``kind_for(GroupVersionResource("", "", "hpa"))`` does not expand short names; see
        :func:`restmapper.mapper.shortcut.expand_resource_shortcut` and :func:`restmapper.mapper.resolve.resolve`.

        Raises:
            NoResourceMatchError: nothing matches.
            AmbiguousResourceError: several kinds match at the same priority (message "matches multiple kinds").
            InvalidArgumentError: the resource name is empty.

        Mirrors apimachinery ``PriorityRESTMapper.KindFor``.
        """
        candidates = self.kinds_for(resource)
        if self._kind_priority is None:
            chosen = self._by_default_priority(candidates, _gvk_gv)
        else:
            chosen = narrow_by_priority(candidates, self._kind_priority, kind_matches)
        if chosen is None:
            raise AmbiguousResourceError(resource, matching_kinds=candidates)
        return chosen

    # --- kinds -> mappings --------------------------------------------------------------------------------

    def rest_mappings(self, group_kind: GroupKind, *versions: str) -> list[RESTMapping]:
        """Return the RESTMappings of a kind in every served version (or only in ``versions``).

        Args:
            group_kind: the group (exact, no prefix matching) and kind (exact spelling or lowercase form; the
                returned GVK carries the kind the server serves, ``Deployment`` for ``deployment``).
            versions: restrict to these versions; empty strings and ``__internal`` are ignored.

        Returns:
            Mappings ordered by the group's versions in server order.

        Raises:
            NoKindMatchError: the kind is not served (in any of ``versions``); ``searched_versions`` are the
                requested versions.

        Mirrors apimachinery ``MultiRESTMapper.RESTMappings`` over per-version ``DefaultRESTMapper``s.
        """
        wanted = _clean_versions(versions)
        mappings: list[RESTMapping] = []
        index = self._by_group.get(group_kind.group)
        if index is not None:
            for vindex in index.version_indexes:
                if wanted and vindex.group_version.version not in wanted:
                    continue
                entry = vindex.match_kind(group_kind.kind)
                if entry is not None:
                    mappings.append(vindex.mapping(entry))
        if not mappings:
            raise NoKindMatchError(group_kind, wanted)
        return mappings

    def rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping:
        """Return the RESTMapping of a kind: the first requested version that serves it, else the preferred one.

        Args:
            group_kind: the group and kind (``GroupKind("apps", "Deployment")``; ``"deployment"`` also matches).
            versions: versions to try, most wanted first; they override the discovery priority.

        Raises:
            NoKindMatchError: the kind is not served (in any of ``versions``).
            AmbiguousKindError: several mappings remain at the same priority.

        Mirrors apimachinery ``PriorityRESTMapper.RESTMapping``.
        """
        if self._kind_priority is None:
            # The default patterns, applied directly: the mappings of one group have distinct versions, so the
            # first pattern matching any of them (a requested version, core ``v1``, the group's preferred
            # version, its other versions in server order) leaves exactly one.
            index = self._by_group.get(group_kind.group)
            wanted = _clean_versions(versions)
            found = index.kind_mapping(group_kind.kind, wanted) if index is not None else None
            if found is None:
                raise NoKindMatchError(group_kind, wanted)
            return found
        mappings = self.rest_mappings(group_kind, *versions)
        if len(mappings) == 1:
            return mappings[0]
        patterns = [GroupVersionKind(group_kind.group, v, "*") for v in _clean_versions(versions)]
        patterns.extend(self.kind_priority)
        chosen = narrow_by_priority(mappings, patterns, lambda p, m: kind_matches(p, m.group_version_kind))
        if chosen is None:
            raise AmbiguousKindError(
                group_kind.with_version(""), matching_kinds=[m.group_version_kind for m in mappings]
            )
        return chosen

    def resource_singularizer(self, resource: str) -> str:
        """Return the singular name of a resource (``pods`` -> ``pod``).

        The first group version (server order) where the name matches a resource gives the answer.

        Raises:
            NoResourceMatchError: no resource has that name.
            InvalidArgumentError: the name is empty.

        Mirrors apimachinery ``MultiRESTMapper.ResourceSingularizer``.
        """
        partial = GroupVersionResource("", "", resource)
        for children in _by_child(self._resource_hits(partial), key=lambda e: e.plural):
            singulars = {entry.singular for _, entry in children}
            if len(singulars) == 1:
                return singulars.pop()
        raise NoResourceMatchError(partial)

    def is_namespaced(self, kind: GroupVersionKind) -> bool:
        """True when the kind's resource is namespaced (the preferred version's when ``kind.version`` is empty).

        Raises:
            NoKindMatchError: the kind is not served.
            AmbiguousKindError: several mappings remain at the same priority.
        """
        return self.rest_mapping(kind.group_kind, kind.version).namespaced

    def _by_default_priority(self, candidates: Sequence[_C], gv: Callable[[_C], tuple[str, str]]) -> _C | None:
        """:func:`narrow_by_priority` with the patterns of :func:`discovery_priorities`, without building them.

        Those patterns name each group version once (core ``v1`` first, then group by group: the preferred
        version, the others in server order; a ``{group, *}`` pattern is never reached first), so the narrowing
        picks the candidates of the best-ranked group version: the one candidate there, else none (ambiguous).
        """
        if len(candidates) == 1:
            return candidates[0]
        order = self._order
        if order is None:
            order = self._order = {index.name: i for i, index in enumerate(self._indexes)}
        best: tuple[int, int] | None = None
        chosen: list[_C] = []
        for candidate in candidates:
            group, version = gv(candidate)
            if not group and version == "v1":
                rank = (0, 0)
            else:
                index = self._by_group[group]
                rank = (order[group] + 1, 0 if version == index.preferred_version
                        else 1 + index.versions.index(version))
            if best is None or rank < best:
                best, chosen = rank, [candidate]
            elif rank == best:
                chosen.append(candidate)
        return chosen[0] if len(chosen) == 1 else None

    # --- matching -----------------------------------------------------------------------------------------

    def _resource_hits(self, partial: GroupVersionResource) -> list[_Hit]:
        name = partial.resource.lower()
        if not name:
            raise InvalidArgumentError(f"a resource must be present, got: {partial}")
        version = "" if partial.version == API_VERSION_INTERNAL else partial.version
        group = partial.group
        if group:
            exact = self._by_group.get(group)
            if version:
                # Fully qualified: exact group version only, no prefix fallback (as upstream).
                vindex = exact.version(version) if exact is not None else None
                return [(vindex, e) for e in vindex.match_resource(name)] if vindex is not None else []
            if exact is not None:
                hits = [(v, e) for v in exact.version_indexes for e in v.match_resource(name)]
                if hits:
                    return hits
            return self._prefix_hits(group, name)
        if len(self._indexes) <= _SMALL:
            hits = [(v, e) for index in self._indexes for v in index.version_indexes for e in v.match_resource(name)]
        else:
            hits = list(self._name_table().get(name, ()))
        if version:
            hits = [h for h in hits if h[0].group_version.version == version]
        return hits

    def _prefix_hits(self, group: str, name: str) -> list[_Hit]:
        """The hits of the resource ``name`` (lower case) in the groups extending ``group``, the fallback when
        ``group`` has none: ``storageclasses.storage`` matches group ``storage.k8s.io`` (as upstream)."""
        return [
            (v, e)
            for index in self._indexes
            if index.name.startswith(group) and index.name != group
            for v in index.version_indexes
            for e in v.match_resource(name)
        ]

    def _name_table(self) -> dict[str, tuple[_Hit, ...]]:
        table = self._by_name
        if table is None:
            building: dict[str, list[_Hit]] = {}
            for vindex in (v for i in self._indexes for v in i.version_indexes):
                for entry in vindex.entries:
                    for name in dict.fromkeys((entry.plural, entry.singular)):
                        if name:
                            building.setdefault(name, []).append((vindex, entry))
            table = {k: tuple(v) for k, v in building.items()}
            self._by_name = table
        return table

    def __repr__(self) -> str:
        return f"StaticRESTMapper(groups={[i.name for i in self._indexes]!r})"


def _gvr_gv(gvr: GroupVersionResource) -> tuple[str, str]:
    return gvr.group, gvr.version


def _gvk_gv(gvk: GroupVersionKind) -> tuple[str, str]:
    return gvk.group, gvk.version


def _clean_versions(versions: Sequence[str]) -> tuple[str, ...]:
    if not versions:
        return ()
    if len(versions) == 1:
        v = versions[0]
        return (v,) if v and v != API_VERSION_INTERNAL else ()
    return tuple(dict.fromkeys(v for v in versions if v and v != API_VERSION_INTERNAL))


def _by_child(hits: list[_Hit], *, key: Callable[[ResourceEntry], str]) -> list[list[_Hit]]:
    """Group hits by version child, keeping child order, sorting each child's hits by ``key`` of the entry."""
    groups: list[list[_Hit]] = []
    for hit in hits:
        if groups and groups[-1][0][0] is hit[0]:
            groups[-1].append(hit)
        else:
            groups.append([hit])
    for group in groups:
        group.sort(key=lambda h: key(h[1]))
    return groups
