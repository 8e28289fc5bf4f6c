"""kubectl-style resolution of what a user types (``deploy``, ``deployments.v1.apps``, ``Deployment``, ``all``).

:func:`mapping_for` is kubectl's resource builder ``mappingFor`` over a :class:`StaticRESTMapper` wrapped in
client-go's shortcut expander; :func:`resolve` adds kubectl's category expansion (``ReplaceAliases``) in front.

Order of readings for ``mapping_for(arg)``:

1. ``arg`` as ``resource.version.group`` (only with two or more dots): short name expanded, then ``kind_for``;
2. ``arg`` as ``resource.group`` (or a bare resource): short name expanded, then ``kind_for``;
3. if a reading found a kind: the mapping of that kind at the found version;
4. else ``arg`` as ``Kind.version.group`` (two or more dots), then as ``Kind.group``/``Kind``, via
   ``rest_mapping`` (kind spelled exactly or in lowercase).

Laziness: everything here works on whatever groups the mapper holds, so a lazy caller can try a subset first.
Which answers are already final on a subset:

- a real plural or singular name served by core ``v1`` (``pods``, ``pod``, ``Pod``): core ``v1`` has the highest
  priority and a real name is never replaced by a short name, so no other group can change the answer;
- a reading with an explicit group (``deployments.apps``, ``Deployment.apps``) once that group is loaded, if it
  matched; when it matched nothing, groups *starting with* the group are consulted, so load all groups;
- a kind of a given group (``rest_mapping``) once that group is loaded.

Not final on a subset: short names (a CRD's real name beats a core short name, the first claimant in server
order wins, and warnings list every other claimant), names not served by core ``v1`` (a group listed earlier may
serve them too), misses, and categories. Resolve those against all groups.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from restmapper.errors import (
    AmbiguousKindError,
    AmbiguousResourceError,
    InvalidArgumentError,
    MappingError,
    PartialDiscoveryWarning,
    ResourceTypeNotFoundError,
    RestMapperError,
    is_no_match,
)
from restmapper.mapper.shortcut import ShortNameConflictWarning, expand_category, expand_resource_shortcut
from restmapper.mapper.static import StaticRESTMapper
from restmapper.model import (
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
    parse_kind_arg,
    parse_resource_arg,
)

__all__ = [
    "PartialDiscoveryWarning",
    "ResolveResult",
    "ResolvedMappings",
    "ResourceTypeNotFoundError",
    "ShortNameConflictWarning",
    "expand_category",
    "kind_for_expanded",
    "mapping_for",
    "partial_message",
    "preempted",
    "reached_mapping",
    "resolve",
    "resource_readings",
    "unsure_reading_message",
]



def partial_message(asked: str, failed: Mapping[GroupVersion, BaseException]) -> str:
    """``category "all" may be incomplete: unable to retrieve the complete list of server APIs: <gv>: <err>``."""
    parts = ", ".join(f"{gv}: {err}" for gv, err in sorted(failed.items(), key=lambda kv: str(kv[0])))
    return f"{asked} may be incomplete: unable to retrieve the complete list of server APIs: {parts}"


def unsure_reading_message(arg: str, mapping: RESTMapping, failed: Mapping[GroupVersion, BaseException]) -> str:
    """The warning for an answer that a step kubectl tries first (a real name before a short name, a resource
    before a kind) could have pre-empted from group versions that could not be read: ``resource type "po" resolved
    to "pods", but group versions that could not be read may serve what kubectl would pick for "po" first; ask for
    "pods" to be sure (unreadable: x.example.com/v1: ...)``. The spelling to ask for is the plural for core (core
    ranks first) and ``plural.version.group`` otherwise (the first reading kubectl tries). The text holds no
    ages, so Python shows it once per call site however long the versions stay unreadable."""
    gvr = mapping.resource
    sure = f"{gvr.resource}.{gvr.version}.{gvr.group}" if gvr.group else gvr.resource
    real = f"{gvr.resource}.{gvr.group}" if gvr.group else gvr.resource
    parts = ", ".join(f"{gv}: {err}" for gv, err in sorted(failed.items(), key=lambda kv: str(kv[0])))
    return (f'resource type "{arg}" resolved to "{real}", but group versions that could not be read may serve '
            f'what kubectl would pick for "{arg}" first; ask for "{sure}" to be sure (unreadable: {parts})')


_T = TypeVar("_T")


class PartialList(list[_T]):
    """A list of answers plus the group versions that could not be read (so answers may be missing).

    Attributes:
        failed: group versions in scope that could not be read and may hold more answers, with their causes;
            empty for a complete answer.
    """

    def __init__(self, items: Iterable[_T] = (), failed: Mapping[GroupVersion, BaseException] | None = None) -> None:
        super().__init__(items)
        self.failed: dict[GroupVersion, BaseException] = dict(failed or {})

    @property
    def partial(self) -> bool:
        """True when some group versions in scope could not be read, so answers may be missing."""
        return bool(self.failed)


class ResolvedMappings(PartialList[RESTMapping]):
    """The mappings of :meth:`LazyRESTMapper.resolve_all`: a list, plus whether it may be incomplete
    (``failed``, ``partial``: see :class:`PartialList`)."""


@dataclass(frozen=True, slots=True)
class ResolveResult:
    """What an argument resolved to.

    Attributes:
        mappings: one mapping for a resource or kind; one per member (de-duplicated by GVK, in discovery order)
            for a category.
        warnings: short-name conflict messages (for :class:`~restmapper.mapper.shortcut.ShortNameConflictWarning`).
        category: the category name when the argument was expanded as a category, else None.
        failed: group versions that could not be read, with causes: for a category, members may be missing; for
            an answer reached by a short name or a kind (not a real name), one of them may serve a resource by
            that real name, which kubectl would pick instead (the answer is given, as kubectl does, with a
            :class:`~restmapper.errors.PartialDiscoveryWarning`). Empty when every group version in scope was read.
    """

    mappings: tuple[RESTMapping, ...]
    warnings: tuple[str, ...] = ()
    category: str | None = None
    failed: Mapping[GroupVersion, BaseException] = field(default_factory=dict)

    @property
    def mapping(self) -> RESTMapping:
        """The first mapping (the only one unless the argument was a category)."""
        return self.mappings[0]


def kind_for_expanded(
    mapper: StaticRESTMapper, resource: GroupVersionResource
) -> tuple[GroupVersionKind, list[str]]:
    """Return ``mapper.kind_for`` of the short-name expansion of ``resource``, with the expansion's warnings.

    Raises:
        NoResourceMatchError: nothing matches (the error names the expanded resource).
        AmbiguousResourceError: several kinds match at the same priority.
        InvalidArgumentError: the resource name is empty.

    Mirrors client-go ``shortcutExpander.KindFor``.
    """
    expanded, warnings = expand_resource_shortcut(resource, mapper.indexes)
    return mapper.kind_for(expanded), warnings


def mapping_for(arg: str, mapper: StaticRESTMapper) -> tuple[RESTMapping, tuple[str, ...]]:
    """Return the RESTMapping ``kubectl get ARG`` would use, and the short-name warnings kubectl would print.

    Args:
        arg: one resource or kind argument, e.g. ``deploy``, ``deployments.v1.apps``, ``Deployment.apps``.
        mapper: the mapper over the groups to search.

    Returns:
        ``(mapping, warnings)``.

    Raises:
        ResourceTypeNotFoundError: no resource or kind matches (a :class:`NoResourceMatchError`).
        AmbiguousResourceError: the only matching reading is ambiguous (kubectl would report "no resource type";
            the ambiguity is more useful).
        AmbiguousKindError: the kind reading is ambiguous.
        InvalidArgumentError: ``arg`` is empty.

    Mirrors kubectl (cli-runtime) ``resource.Builder.mappingFor`` over client-go's shortcut expander.
    """
    mapping, warnings, _reading, _via = reached_mapping(arg, mapper)
    return mapping, warnings


def resource_readings(arg: str) -> list[GroupVersionResource]:
    """The resource readings of a ``kubectl get`` argument, in the order kubectl tries them: ``a.b.c`` as
    resource ``a`` version ``b`` group ``c``, then every argument as resource and group (``a`` / ``b.c``)."""
    full_gvr, group_resource = parse_resource_arg(arg)
    readings = [full_gvr] if full_gvr is not None else []
    readings.append(group_resource.with_version(""))
    return readings


def reached_mapping(arg: str, mapper: StaticRESTMapper
                    ) -> tuple[RESTMapping, tuple[str, ...], int, Literal["real", "short", "name"]]:
    """:func:`mapping_for`, with how the answer was reached: ``(mapping, warnings, reading, via)``.

    ``reading`` is the index in :func:`resource_readings` of the reading that answered, or their count for a
    kind reading; ``via``, the step of that resource reading that answered: ``"short"`` through a short name
    (client-go's shortcut expander changed it), ``"real"`` by a real name (a plural or the server's singular
    name, in any case: the expander's guard), ``"name"`` by a name that is neither (a singular guessed from a kind, or a
    group prefix's resource), which client-go's mapper matches after the expander found nothing. ``"real"``
    for a kind reading.

    Raises:
        As :func:`mapping_for`.
    """
    if not arg:
        raise InvalidArgumentError("a resource or kind must be given")
    warnings: list[str] = []
    ambiguity: AmbiguousResourceError | None = None
    readings = resource_readings(arg)
    for index, reading in enumerate(readings):
        expanded, found = expand_resource_shortcut(reading, mapper.indexes)
        warnings.extend(w for w in found if w not in warnings)
        try:
            gvk = mapper.kind_for(expanded)
        except AmbiguousResourceError as exc:
            ambiguity = ambiguity or exc
            continue
        except (MappingError, InvalidArgumentError):
            # kubectl ignores a failed reading and tries the next one.
            continue
        # Case aside: client-go's guard and short names compare case-sensitively, but a short name is lower case
        # (CRD validation), so an argument typed in another case (``Pod``, ``Gadget``) can be no short name: no
        # short-name step could have pre-empted it (else ``Deployment`` would be unsure whenever any API is down).
        low = reading.resource.lower()
        via: Literal["real", "short", "name"] = "short" if expanded != reading else "real" if (
            reading.resource != low or any(i.real_name(low) for i in mapper.indexes
                                           if not reading.group or i.name == reading.group)) else "name"
        return mapper.rest_mapping(gvk.group_kind, gvk.version), tuple(warnings), index, via

    kinds = len(readings)
    full_gvk, group_kind = parse_kind_arg(arg)
    if full_gvk is not None:
        try:
            return mapper.rest_mapping(full_gvk.group_kind, full_gvk.version), tuple(warnings), kinds, "real"
        except (MappingError, InvalidArgumentError):
            pass
    try:
        return mapper.rest_mapping(group_kind), tuple(warnings), kinds, "real"
    except AmbiguousKindError:
        raise
    except RestMapperError as exc:
        if not is_no_match(exc):
            raise
        if ambiguity is not None:
            raise ambiguity from exc
        raise ResourceTypeNotFoundError(arg, parse_resource_arg(arg)[1]) from exc


def preempted(arg: str, mapper: StaticRESTMapper, listed: Collection[str], *,
              category: bool) -> Collection[str] | None:
    """The groups whose unread content could have answered ``arg`` by a stronger reading than the one that did
    (rule 5 of :mod:`restmapper.mapper._certainty`): None for every group, empty when nothing was stronger.

    kubectl's order: each resource reading of :func:`resource_readings` (for a reading without a group or with a
    listed one: a real name, then a short name; with a group that only prefixes listed ones: a short name of a
    prefixed group first, then a real name), then the kind readings. An answer pre-empts every earlier step,
    whose scope (the groups it searched) must then have been read whole. The category step ``resolve_all`` tries
    before all of them is left out on purpose: a category an unreadable version might declare under the name of
    a real resource would make every ``resolve_all("pods")`` unsure (and warn) whenever any API is down, with no
    spelling that is certain for a core resource.

    Args:
        arg: the argument.
        mapper: the snapshot the answer came from.
        listed: the group names of that snapshot (a reading's group is listed, or prefixes some of them).
        category: the answer is a category's members.
    """
    if category:
        return frozenset()
    scopes: list[Collection[str] | None] = []
    try:
        mapping, _warnings, reached, via = reached_mapping(arg, mapper)
    except RestMapperError:
        return None  # cannot tell how it was reached: every group may matter
    for index, reading in enumerate(resource_readings(arg)[:reached + 1]):
        group = reading.group
        if not group:
            scope: Collection[str] | None = None
        else:  # the group, and the groups extending it (they take part where it has no match; a prefix: a group
            # listed later may be the name itself)
            scope = {group, *(name for name in listed if name.startswith(group))}
        if index < reached:  # an earlier reading: all it searched
            scopes.append(scope)
            continue
        # The steps of this reading: a real name, then a short name, then any other name (a guessed singular);
        # for a group that only prefixes listed ones, a prefixed group's short name first, then a name. A listed
        # group's own short name comes before the groups extending it: only its own real names came first.
        if bool(group) and group not in listed:
            if via != "short":
                scopes.append(scope)
        elif via == "short" and mapping.resource.group == group:
            scopes.append({group} if group else None)
        elif via != "real":
            scopes.append(scope)
    if any(scope is None for scope in scopes):
        return None
    return frozenset(name for scope in scopes if scope is not None for name in scope)


def resolve(arg: str, mapper: StaticRESTMapper, *, expand_categories: bool = True) -> ResolveResult:
    """Resolve a ``kubectl get`` argument: a category, a resource (short, plural, singular, dotted) or a kind.

    Args:
        arg: one argument (no commas), e.g. ``all``, ``hpa``, ``deployments.apps``, ``Deployment``.
        mapper: the mapper over the groups to search.
        expand_categories: try ``arg`` as a category first, as kubectl does.

    Returns:
        A :class:`ResolveResult`.

    Raises:
        ResourceTypeNotFoundError: nothing matches.
        AmbiguousResourceError: the argument is ambiguous as a resource.
        AmbiguousKindError: the argument is ambiguous as a kind.
        NoResourceMatchError: a category member cannot be mapped (cannot happen with a consistent snapshot).
        InvalidArgumentError: ``arg`` is empty.

    Mirrors kubectl's ``Builder.ReplaceAliases`` (category expansion first) then ``mappingFor``.
    """
    if expand_categories and arg:
        members = expand_category(arg, mapper.indexes)
        if members:
            mappings: dict[GroupVersionKind, RESTMapping] = {}
            for member in members:
                gvk = mapper.kind_for(member.with_version(""))
                mapping = mapper.rest_mapping(gvk.group_kind, gvk.version)
                mappings.setdefault(mapping.group_version_kind, mapping)
            return ResolveResult(tuple(mappings.values()), (), arg)
    mapping, warnings = mapping_for(arg, mapper)
    return ResolveResult((mapping,), warnings, None)
