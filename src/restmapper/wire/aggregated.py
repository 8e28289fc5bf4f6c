"""Aggregated discovery (``apidiscovery.k8s.io`` v2 and v2beta1 ``APIGroupDiscoveryList``).

The conversion to groups and resource lists follows client-go ``discovery.SplitGroupsAndResources``: stale group
versions are skipped (and reported), the first non-stale version is the preferred one, subresources become
``parent/sub`` entries with the parent's scope.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion
from restmapper.wire._aggregated_fast import SCOPES, STALE, Items, read_items, read_streamed
from restmapper.wire._json import Reader, body_text, loads_text, quote, shared
from restmapper.wire._pieces import decode_piece, piece_text
from restmapper.wire.legacy import cross_group_version
from restmapper.wire.media import DocumentFormat

__all__ = ["AggregatedDiscovery", "GroupResourceLists", "LazyResourceLists", "encode_aggregated", "parse_aggregated"]

_KIND = "APIGroupDiscoveryList"
_SCOPES = SCOPES
_STALE = STALE
_CURRENT = "Current"


def _empty_mapping() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True)
class AggregatedDiscovery:
    """What one ``APIGroupDiscoveryList`` says, converted to the legacy model.

    Attributes:
        groups: every group in server order. A group's ``versions`` are its non-stale versions in listed order
            and ``preferred_version`` is the first of them; a group whose versions are all stale is still here,
            with ``versions == ()``, so callers know it exists.
        resources: the resource list of every non-stale group version, in document order.
        stale: the group versions whose freshness is ``Stale`` (the aggregator could not refresh them: a partial
            failure, not an absence), in document order.
        format: the document's format (v2 or v2beta1).
        listed_versions: every version of every group as listed, stale ones included, by group name.
    """

    groups: tuple[APIGroup, ...]
    resources: Mapping[GroupVersion, APIResourceList]
    stale: tuple[GroupVersion, ...] = ()
    format: DocumentFormat = DocumentFormat.AGGREGATED_V2
    listed_versions: Mapping[str, tuple[str, ...]] = field(default_factory=_empty_mapping)

    def group(self, name: str) -> APIGroup | None:
        """The group named ``name`` (``""`` for core), or None when the document does not list it."""
        for group in self.groups:
            if group.name == name:
                return group
        return None

    def listed_group_versions(self, group: str) -> tuple[GroupVersion, ...]:
        """Every listed version of ``group``, stale ones included, in server order (``()`` if not listed)."""
        versions = self.listed_versions.get(group)
        if versions is None:
            found = self.group(group)
            versions = found.versions if found is not None else ()
        return tuple(GroupVersion(group, v) for v in versions)

    def is_stale(self, gv: GroupVersion) -> bool:
        """True when ``gv`` is listed with freshness ``Stale``."""
        return gv in self.stale


def _format_of(root: Reader, fmt: DocumentFormat) -> DocumentFormat:
    if not fmt.aggregated:
        raise InvalidArgumentError("parse_aggregated needs an aggregated DocumentFormat, not LEGACY")
    kind = root.get_str("kind", required=True)
    if kind != _KIND:
        root.check_kind(_KIND)
        root.fail("kind", f"expected {_KIND}, got an empty kind")
    api_version = root.get_str("apiVersion")
    if api_version:
        if api_version not in (DocumentFormat.AGGREGATED_V2.value, DocumentFormat.AGGREGATED_V2BETA1.value):
            root.fail("apiVersion", f"unsupported aggregated discovery version {quote(api_version)}")
        if api_version != fmt.api_version:
            root.fail("apiVersion", f"{quote(api_version)} does not match the Content-Type ({fmt.api_version})")
    return fmt


def _response_kind(
    entry: Reader, owner: GroupVersion
) -> tuple[str, str | None, str | None] | None:
    rk = entry.get_object("responseKind")
    if rk is None:
        return None
    kind = rk.get_str("kind")
    group, version = rk.get_str("group"), rk.get_str("version")
    # client-go drops only an all-empty responseKind; an entry with no kind cannot be mapped either.
    if not kind:
        return None
    group_out, version_out = cross_group_version(group, version, owner)
    return kind, group_out, version_out


def _read_resources(version: Reader, gv: GroupVersion) -> list[APIResource]:
    out: list[APIResource] = []
    for entry in version.get_objects("resources"):
        name = entry.get_str("resource", required=True, non_empty=True)
        scope = entry.get_str("scope", required=True)
        if scope not in _SCOPES:
            entry.fail("scope", f"must be 'Namespaced' or 'Cluster', got {quote(scope)}")
        namespaced = _SCOPES[scope]
        verbs = entry.get_str_list("verbs")
        short_names = entry.get_str_list("shortNames")
        categories = entry.get_str_list("categories")
        singular = entry.get_str("singularResource")
        parent_kind = _response_kind(entry, gv)
        if parent_kind is not None:
            kind, group, ver = parent_kind
            out.append(APIResource(name=name, singular_name=singular, namespaced=namespaced, kind=kind,
                                   verbs=verbs, short_names=short_names, categories=categories,
                                   group=group, version=ver))
        # Subresources of a parent without a responseKind are kept, as client-go keeps them.
        for sub in entry.get_objects("subresources"):
            sub_name = sub.get_str("subresource", required=True, non_empty=True)
            sub_verbs = sub.get_str_list("verbs")
            sub_kind = _response_kind(sub, gv)
            if sub_kind is None:
                continue
            kind, group, ver = sub_kind
            # singular_name stays "" as in legacy lists (client-go copies the parent's; nothing maps by it).
            out.append(APIResource(name=f"{name}/{sub_name}", singular_name="", namespaced=namespaced, kind=kind,
                                   verbs=sub_verbs, group=group, version=ver))
    return out


def _resources_json(raw: object) -> object:
    """A version's validated ``resources`` JSON from what :class:`GroupResourceLists` holds: the decoded value
    itself, or the JSON text of the version object (a :data:`~restmapper.wire._pieces.Piece`, decoded again here:
    it was decoded and checked once already)."""
    if type(raw) is tuple or type(raw) is str or type(raw) is bytes:
        return decode_piece(raw).get("resources")
    return raw


def _is_text(raw: object) -> bool:
    return type(raw) is tuple or type(raw) is str or type(raw) is bytes


class GroupResourceLists(Mapping[GroupVersion, APIResourceList]):
    """The resource lists of one group's non-stale versions in an aggregated document, converted to model objects
    one version at a time.

    The document was validated when parsed; a version's ``APIResourceList`` is built on first access from its
    JSON, and replaces it (a warm cache of a thousand groups holds model objects, not the JSON beside them). An
    unconverted version holds its version object's JSON text (a :data:`~restmapper.wire._pieces.Piece`: a few
    hundred bytes per resource, where the decoded tree takes several times that), or, when the document had to be
    read whole, its decoded ``resources``. Comparing that JSON is the cheap way to tell two documents apart
    (:meth:`same_at`), and an equal comparison moves the older side onto the newer one's text: a cache entry kept
    across refetches never keeps an old document's text alive.
    Thread-safe: a conversion is pure and idempotent, so two threads converting one version build equal values
    (either may stay); a reader sees the JSON or a converted value, never neither.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[GroupVersion, object]) -> None:
        # gv -> its APIResourceList once converted, else its validated "resources": JSON text or decoded.
        self._raw = raw

    def __getitem__(self, gv: GroupVersion) -> APIResourceList:
        raw = self._raw[gv]
        if type(raw) is APIResourceList:
            return raw
        done = APIResourceList(group_version=gv, resources=_convert(_resources_json(raw), gv))
        self._raw[gv] = done
        return done

    def __iter__(self) -> Iterator[GroupVersion]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, gv: object) -> bool:
        return gv in self._raw

    def same_at(self, gv: GroupVersion, other: GroupResourceLists) -> bool:
        """True when ``gv``'s resources are equal here and in ``other`` (the newer document's lists).

        Compares the JSON when neither side was converted yet (no model objects built), else the model objects
        (converting the unconverted side). When equal, both hold the same thing from then on: the converted
        objects if either side has them, else ``other``'s text (an entry kept across a refetch then holds the
        current document's text, never its own old document's).

        Raises:
            KeyError: ``gv`` is missing from either.
        """
        mine, theirs = self._raw[gv], other._raw[gv]
        if type(mine) is APIResourceList:
            if mine != other[gv]:
                return False
            other._raw[gv] = mine
            return True
        if type(theirs) is APIResourceList:
            if self[gv] != theirs:
                return False
            self._raw[gv] = theirs
            return True
        same_text = _is_text(mine) and type(mine) is type(theirs) and (
            mine is theirs or piece_text(mine) == piece_text(theirs))  # type: ignore[arg-type]
        if not same_text and _resources_json(mine) != _resources_json(theirs):
            return False
        self._raw[gv] = theirs
        return True

    def converted(self) -> int:
        """How many versions were converted so far."""
        return sum(type(raw) is APIResourceList for raw in self._raw.values())


_NO_LISTS = GroupResourceLists({})


class LazyResourceLists(Mapping[GroupVersion, APIResourceList]):
    """Resource lists of an aggregated document, converted to model objects one group version at a time: one
    :class:`GroupResourceLists` per group (:meth:`group`), in document order. A cache entry keeps its group's
    part, never the whole document; and an entry kept across a refetch holds the new document's text
    (:meth:`GroupResourceLists.same_at`), so after any number of refetches one document's text is alive."""

    __slots__ = ("_groups", "_len")

    def __init__(self, raw: dict[GroupVersion, object]) -> None:
        by_group: dict[str, dict[GroupVersion, object]] = {}
        for gv, value in raw.items():
            by_group.setdefault(gv.group, {})[gv] = value
        self._groups = {name: GroupResourceLists(part) for name, part in by_group.items()}
        self._len = len(raw)

    def group(self, name: str) -> GroupResourceLists:
        """The lists of group ``name``'s non-stale versions (empty when the document has none)."""
        return self._groups.get(name, _NO_LISTS)

    def __getitem__(self, gv: GroupVersion) -> APIResourceList:
        part = self._groups.get(gv.group)
        if part is None:
            raise KeyError(gv)
        return part[gv]

    def __iter__(self) -> Iterator[GroupVersion]:
        for part in self._groups.values():
            yield from part

    def __len__(self) -> int:
        return self._len

    def __contains__(self, gv: object) -> bool:
        part = self._groups.get(gv.group) if isinstance(gv, GroupVersion) else None
        return part is not None and gv in part

    def same_at(self, gv: GroupVersion, other: LazyResourceLists) -> bool:
        """:meth:`GroupResourceLists.same_at` for ``gv``'s group in both documents.

        Raises:
            KeyError: ``gv`` is missing from either document.
        """
        return self.group(gv.group).same_at(gv, other.group(gv.group))

    def converted(self) -> int:
        """How many group versions were converted so far."""
        return sum(part.converted() for part in self._groups.values())


def parse_aggregated(
    body: bytes, *, document: str, format: DocumentFormat = DocumentFormat.AGGREGATED_V2
) -> AggregatedDiscovery:
    """Parse an aggregated discovery document (``APIGroupDiscoveryList``) from ``/api`` or ``/apis``.

    The whole document is validated here; each group version's resources are converted to model objects only
    when first read from ``resources`` (a lookup needs one group of a thousand). The document is read one group
    at a time and never held as one decoded tree: what stays until conversion is the JSON text of each version
    (the document's text when it is ASCII, one block; else each version's own copy, UTF-8 where it is not ASCII:
    about the body's size either way, where the tree of a thousand-group ``/apis`` is five times that).

    Args:
        body: the response body.
        document: the path, for error messages.
        format: the format the Content-Type announced (see :func:`~restmapper.wire.detect_format`); the
            document's ``apiVersion``, when present, must agree.

    Returns:
        Groups (server order; ``""`` is the core group at ``/api``), resource lists of the non-stale group
        versions (a :class:`LazyResourceLists`), and the stale group versions.

    Raises:
        MalformedDiscoveryError: undecodable body, ``kind`` other than ``APIGroupDiscoveryList``, an
            ``apiVersion`` that is unknown or disagrees with ``format``, a duplicate group or version, a version or
            resource without its name, a ``scope`` other than ``Namespaced``/``Cluster``, or any field of the
            wrong JSON type. The error names the JSON path (``items[3].versions[0].resources[2].scope``).
        InvalidArgumentError: ``format`` is ``LEGACY``.

    Mirrors client-go ``discovery.SplitGroupsAndResources``: stale versions skipped, first non-stale version
    preferred, ``namespaced = scope == "Namespaced"``, subresources as ``parent/sub`` with the parent's scope and
    their own responseKind and verbs; entries without a responseKind dropped (a parent's subresources kept).
    """
    text = body_text(body, document=document)
    streamed = read_streamed(text)
    if streamed is not None:
        top, parsed = streamed
        fmt = _format_of(Reader(top, document=document, path=""), format)
    else:
        # Something is off (or merely unusual, such as a repeated key): read the whole tree, field by field where
        # the fast check fails, for the precise error (or the same value).
        root = Reader(loads_text(text, document=document), document=document, path="")
        fmt = _format_of(root, format)
        found = read_items(root.obj.get("items"))
        parsed = found if found is not None else _checked_items(root)
    groups, raw, stale, listed = parsed
    return AggregatedDiscovery(groups=tuple(groups), resources=LazyResourceLists(raw), stale=tuple(stale),
                               format=fmt, listed_versions=MappingProxyType(listed))


def _checked_items(root: Reader) -> Items:
    """As :func:`~restmapper.wire._aggregated_fast.read_items`, reading every field through :class:`Reader`
    (precise errors with JSON paths)."""
    groups: list[APIGroup] = []
    raw: dict[GroupVersion, object] = {}
    stale: list[GroupVersion] = []
    listed: dict[str, tuple[str, ...]] = {}
    for item in root.get_objects("items"):
        meta = item.get_object("metadata")
        name = meta.get_str("name") if meta is not None else ""
        if name in listed:
            (meta or item).fail("name" if meta else None, f"duplicate group {quote(name)}")
        fresh: list[str] = []
        all_versions: list[str] = []
        for version in item.get_objects("versions"):
            v = version.get_str("version", required=True, non_empty=True)
            if v in all_versions:
                version.fail("version", f"duplicate version {quote(v)} of group {quote(name)}")
            all_versions.append(v)
            gv = GroupVersion(name, v)
            # client-go treats every freshness other than Stale (missing included) as current.
            if version.get_str("freshness") == _STALE:
                stale.append(gv)
                continue
            fresh.append(v)
            _read_resources(version, gv)
            raw[gv] = version.obj.get("resources")
        listed[name] = tuple(all_versions)
        groups.append(APIGroup(name=name, versions=tuple(fresh), preferred_version=fresh[0] if fresh else None))
    return groups, raw, stale, listed


def _kind_of(rk: dict[str, Any] | None, owner: GroupVersion, kinds: dict[str, str]
             ) -> tuple[str, str | None, str | None] | None:
    if not rk:
        return None
    kind = rk.get("kind")
    if not kind:
        return None
    group, version = cross_group_version(rk.get("group"), rk.get("version"), owner)
    return kinds.setdefault(kind, kind), group, version


def _convert(resources: Any, gv: GroupVersion) -> tuple[APIResource, ...]:
    """Model objects of one version's validated ``resources`` (same result as :func:`_read_resources`).

    Equal verb and category lists share one tuple (:func:`~restmapper.wire._json.shared`) and a version's
    subresources share their parent's kind string: a cache of every group holds each once.
    """
    out: list[APIResource] = []
    kinds: dict[str, str] = {}
    for entry in resources or ():
        name = entry["resource"]
        namespaced = _SCOPES[entry["scope"]]
        parent = _kind_of(entry.get("responseKind"), gv, kinds)
        if parent is not None:
            kind, group, ver = parent
            out.append(APIResource(name, entry.get("singularResource") or "", namespaced, kind,
                                   shared(entry.get("verbs")), tuple(entry.get("shortNames") or ()),
                                   shared(entry.get("categories")), group, ver))
        for sub in entry.get("subresources") or ():
            sub_kind = _kind_of(sub.get("responseKind"), gv, kinds)
            if sub_kind is None:
                continue
            kind, group, ver = sub_kind
            out.append(APIResource(f"{name}/{sub['subresource']}", "", namespaced, kind, shared(sub.get("verbs")),
                                   (), (), group, ver))
    return tuple(out)


# --- encoder -----------------------------------------------------------------------------------------------


def _response_kind_json(resource: APIResource, owner: GroupVersion) -> dict[str, str]:
    if resource.group is None and resource.version is None:
        group, version = owner.group, owner.version
    else:
        group, version = resource.group or "", resource.version or ""
    return {"group": group, "kind": resource.kind, "version": version}


def _encode_resources(lst: APIResourceList) -> list[dict[str, Any]]:
    gv = lst.group_version
    parents: dict[str, dict[str, Any]] = {}
    for resource in lst.resources:
        if not resource.is_subresource:
            parents[resource.name] = {
                "resource": resource.name,
                "responseKind": _response_kind_json(resource, gv),
                "scope": resource.scope.value,
                "singularResource": resource.singular_name,
                "verbs": list(resource.verbs),
            }
            if resource.short_names:
                parents[resource.name]["shortNames"] = list(resource.short_names)
            if resource.categories:
                parents[resource.name]["categories"] = list(resource.categories)
    for resource in lst.resources:
        if not resource.is_subresource:
            continue
        parent = parents.get(resource.parent)
        if parent is None:
            # A subresource whose parent has no kind: kube-apiserver sends the parent with an empty responseKind.
            parent = parents[resource.parent] = {
                "resource": resource.parent,
                "responseKind": {"group": "", "kind": "", "version": ""},
                "scope": resource.scope.value,
                "singularResource": "",
                "verbs": [],
            }
        parent.setdefault("subresources", []).append({
            "responseKind": _response_kind_json(resource, gv),
            "subresource": resource.subresource,
            "verbs": list(resource.verbs),
        })
    return list(parents.values())


def encode_aggregated(
    groups: Sequence[APIGroup],
    resources: Mapping[GroupVersion, APIResourceList],
    *,
    stale: Collection[GroupVersion] = (),
    format: DocumentFormat = DocumentFormat.AGGREGATED_V2,
) -> dict[str, Any]:
    """The ``APIGroupDiscoveryList`` kube-apiserver serves at ``/api`` or ``/apis`` for these groups.

    The inverse of :func:`parse_aggregated`: each group's preferred version first, then its other versions in
    order, then its ``stale`` versions with freshness ``Stale`` (a stale version of a group missing from
    ``groups`` adds that group at the end); subresources nested under their parent, with the parent's scope
    (a subresource whose parent is not in the list gets a parent entry with an empty responseKind).

    Args:
        groups: the groups in priority order (the core group is named ``""``).
        resources: the resource list of each served group version; a listed version without one is served
            empty.
        stale: group versions to list as ``Stale``.
        format: ``AGGREGATED_V2`` or ``AGGREGATED_V2BETA1`` (sets ``apiVersion``).

    Returns:
        A JSON-ready dict shaped like kube-apiserver's (``responseKind`` always carries group and version).

    Raises:
        InvalidArgumentError: ``format`` is ``LEGACY``, or ``resources`` holds a group version that no group
            lists.
    """
    if not format.aggregated:
        raise InvalidArgumentError("encode_aggregated needs an aggregated DocumentFormat, not LEGACY")
    stale_by_group = _versions_by_group(stale)
    used: set[GroupVersion] = set()
    by_name = {g.name: g for g in groups}
    names = [g.name for g in groups] + [n for n in stale_by_group if n not in by_name]
    items = [{"metadata": {"name": name},
              "versions": _encode_versions(by_name.get(name, APIGroup(name=name, versions=())), resources,
                                           stale_by_group.get(name, ()), used)}
             for name in names]
    extra = [str(gv) for gv in resources if gv not in used]
    if extra:
        raise InvalidArgumentError(f"resources given for group versions no group lists: {', '.join(extra)}")
    return {"apiVersion": format.value, "items": items, "kind": _KIND, "metadata": {}}


def _versions_by_group(gvs: Iterable[GroupVersion]) -> dict[str, list[str]]:
    by_group: dict[str, list[str]] = {}
    for gv in gvs:
        by_group.setdefault(gv.group, []).append(gv.version)
    return by_group


def _encode_versions(group: APIGroup, resources: Mapping[GroupVersion, APIResourceList], stale: Iterable[str],
                     used: set[GroupVersion]) -> list[dict[str, Any]]:
    """The ``versions`` of ``group``'s item: preferred first, then the others, then its ``stale`` ones not
    served; the group versions encoded are added to ``used``."""
    ordered = list(group.versions)
    if group.preferred_version in ordered:
        ordered.remove(group.preferred_version)
        ordered.insert(0, group.preferred_version)
    versions: list[dict[str, Any]] = []
    for v in ordered:
        gv = GroupVersion(group.name, v)
        used.add(gv)
        entry: dict[str, Any] = {"freshness": _CURRENT, "version": v}
        lst = resources.get(gv)
        if lst is not None and lst.resources:
            entry["resources"] = _encode_resources(lst)
        versions.append(entry)
    versions += [{"freshness": _STALE, "version": v} for v in stale if v not in group.versions]
    return versions
