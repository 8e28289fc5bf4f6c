"""Legacy (unaggregated) discovery documents: APIVersions, APIGroupList, APIGroup, APIResourceList, version.Info.

Parsers take the raw body and return model objects; encoders produce the JSON objects kube-apiserver sends (used by
the testing kit and on-disk caches) and round-trip with the parsers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion, VersionInfo
from restmapper.wire._json import Reader, decode_json, quote, shared

__all__ = [
    "encode_api_group",
    "encode_api_group_list",
    "encode_api_resource_list",
    "encode_api_versions",
    "parse_api_group",
    "parse_api_group_list",
    "parse_api_resource_list",
    "parse_api_versions",
    "parse_version_info",
]


def _root(body: bytes, document: str, kind: str, listing: str) -> Reader:
    """The document's root object, checked to be a ``kind`` listing its items at ``listing``.

    An absent list reads as Go's zero value (empty) only in a document that names its ``kind``: one with
    neither (``{}`` from a proxy or a half-started server) says nothing, and "nothing served" would be a wrong
    answer.
    """
    root = Reader(decode_json(body, document=document), document=document, path="")
    root.check_kind(kind)
    if not root.get_str("kind") and listing not in root.obj:
        root.fail(None, f"not an {kind} document: no kind and no {listing}")
    return root


def parse_group_version(reader: Reader, key: str) -> GroupVersion:
    """The GroupVersion string at ``key`` of ``reader``, parsed as apimachinery ``schema.ParseGroupVersion``."""
    text = reader.get_str(key, required=True, non_empty=True)
    gv: GroupVersion | None
    try:
        gv = GroupVersion.parse(text)
    except InvalidArgumentError:
        gv = None  # fail outside the except block: the parse error quotes the whole text
    if gv is None:
        reader.fail(key, f"not a group version: {quote(text)}")
    if not gv.version:
        reader.fail(key, f"group version {quote(text)} has no version")
    return gv


def cross_group_version(group: str | None, version: str | None, owner: GroupVersion) -> tuple[str | None, str | None]:
    """``(group, version)`` of an entry's kind, None/None when it is the containing group version.

    The model sets ``APIResource.group``/``version`` only for entries answering with a kind of another group
    version (``pods/eviction`` -> ``policy/v1``), so legacy lists (which omit them) and aggregated lists (which
    always carry them in ``responseKind``) give equal values.
    """
    if (group or "", version or "") == (owner.group, owner.version):
        return None, None
    return group or None, version or None


def parse_api_versions(body: bytes, *, document: str = "/api") -> tuple[str, ...]:
    """Parse the legacy ``/api`` document (``APIVersions``).

    Args:
        body: the response body.
        document: the path, for error messages.

    Returns:
        The core group's versions in server order (``("v1",)``); an absent or null list gives ``()`` (Go's
        zero value). Whether core may be empty is the caller's rule (:class:`~restmapper.discovery.DiscoveryClient`
        says no).

    Raises:
        MalformedDiscoveryError: undecodable body, another ``kind``, neither ``kind`` nor ``versions``, or
            ``versions`` not an array of non-empty strings.

    Mirrors client-go ``DiscoveryClient.ServerGroups`` reading ``metav1.APIVersions``.
    """
    root = _root(body, document, "APIVersions", "versions")
    versions = root.get_str_list("versions")
    for i, version in enumerate(versions):
        if not version:
            root.fail(f"versions[{i}]", "must not be empty")
    return versions


def _read_group(reader: Reader) -> APIGroup:
    name = reader.get_str("name", required=True, non_empty=True)
    versions: list[str] = []
    for entry in reader.get_objects("versions"):
        # The same few version names recur across a thousand groups: keep one string of each, not one per group.
        version = sys.intern(entry.get_str("version", required=True, non_empty=True))
        _check_group_version(entry, name, version)
        if version in versions:
            entry.fail("version", f"duplicate version {quote(version)}")
        versions.append(version)
    preferred: str | None = None
    pref = reader.get_object("preferredVersion")
    if pref is not None:
        preferred = pref.get_opt_str("version")
        if preferred is not None:
            _check_group_version(pref, name, preferred)
            preferred = sys.intern(preferred)
    return APIGroup(name=name, versions=tuple(versions), preferred_version=preferred)


def _check_group_version(entry: Reader, group: str, version: str) -> None:
    text = entry.get_str("groupVersion")
    if text and text != str(GroupVersion(group, version)):
        entry.fail("groupVersion", f"{quote(text)} does not match group {quote(group)} and version {quote(version)}")


def parse_api_group_list(body: bytes, *, document: str = "/apis") -> tuple[APIGroup, ...]:
    """Parse the legacy ``/apis`` document (``APIGroupList``).

    Args:
        body: the response body.
        document: the path, for error messages.

    Returns:
        The groups in server order, each with its versions in listed order and its preferred version
        (``preferredVersion.version``); an absent, null or empty ``groups`` gives ``()`` (a server serving only
        core).

    Raises:
        MalformedDiscoveryError: undecodable body, another ``kind``, neither ``kind`` nor ``groups``, a group
            without a name or a version without ``version``, a duplicate group or version, or a ``groupVersion``
            that disagrees with the group name and version.

    Mirrors client-go ``DiscoveryClient.ServerGroups`` (server order kept, as ``NewDiscoveryRESTMapper`` relies on).
    """
    root = _root(body, document, "APIGroupList", "groups")
    groups: list[APIGroup] = []
    seen: set[str] = set()
    for entry in root.get_objects("groups"):
        group = _read_group(entry)
        if group.name in seen:
            entry.fail("name", f"duplicate group {quote(group.name)}")
        seen.add(group.name)
        groups.append(group)
    return tuple(groups)


def parse_api_group(body: bytes, *, document: str) -> APIGroup:
    """Parse a legacy ``/apis/<group>`` document (``APIGroup``).

    Args:
        body: the response body.
        document: the path, for error messages.

    Returns:
        The group with its versions in listed order and its preferred version.

    Raises:
        MalformedDiscoveryError: as :func:`parse_api_group_list`, for the single group.

    Mirrors ``metav1.APIGroup`` as served by kube-apiserver's group discovery handler.
    """
    return _read_group(_root(body, document, "APIGroup", "versions"))


def read_api_resource(entry: Reader, owner: GroupVersion, kinds: dict[str, str]) -> APIResource:
    """One legacy ``APIResource`` object of the list for ``owner``; ``kinds`` holds one string per kind of the
    list (a parent's subresources repeat its kind: one string for all of them)."""
    kind = entry.get_str("kind", required=True)
    group, version = cross_group_version(entry.get_opt_str("group"), entry.get_opt_str("version"), owner)
    return APIResource(
        name=entry.get_str("name", required=True, non_empty=True),
        singular_name=entry.get_str("singularName"),
        # kube-apiserver always sends it; Go's zero value (cluster-scoped) is what client-go would read otherwise.
        namespaced=entry.get_bool("namespaced"),
        kind=kinds.setdefault(kind, kind),
        verbs=shared(entry.get_str_list("verbs")),
        short_names=entry.get_str_list("shortNames"),
        categories=shared(entry.get_str_list("categories")),
        group=group,
        version=version,
        storage_version_hash=entry.get_opt_str("storageVersionHash"),
    )


def parse_api_resource_list(
    body: bytes, *, document: str, expected: GroupVersion | None = None
) -> APIResourceList:
    """Parse a legacy ``/api/v1`` or ``/apis/<group>/<version>`` document (``APIResourceList``).

    Args:
        body: the response body.
        document: the path, for error messages.
        expected: the group version that was requested; a document for another one is rejected.

    Returns:
        The list, resources (subresources included, as ``parent/sub`` entries) in server order. ``group`` and
        ``version`` of an entry are set only when its kind lives in another group version. Unknown fields are
        ignored.

    Raises:
        MalformedDiscoveryError: undecodable body, another ``kind``, neither ``kind`` nor ``resources``, a
            missing or unparsable ``groupVersion``, a ``groupVersion`` other than ``expected``, or a resource
            without ``name``/``kind`` or with a field of the wrong JSON type.

    Mirrors client-go ``DiscoveryClient.ServerResourcesForGroupVersion`` reading ``metav1.APIResourceList``.
    """
    root = _root(body, document, "APIResourceList", "resources")
    gv = parse_group_version(root, "groupVersion")
    if expected is not None and gv != expected:
        root.fail("groupVersion", f"expected {str(expected)!r}, got {quote(str(gv))}")
    kinds: dict[str, str] = {}
    resources = tuple(read_api_resource(entry, gv, kinds) for entry in root.get_objects("resources"))
    return APIResourceList(group_version=gv, resources=resources)


def parse_version_info(body: bytes, *, document: str = "/version") -> VersionInfo:
    """Parse the ``/version`` document (``version.Info``).

    Args:
        body: the response body.
        document: the path, for error messages.

    Returns:
        major, minor (kept as strings: ``"20+"`` is real), gitVersion and platform; every other string field
        (gitCommit, buildDate, goVersion, ...) in ``extra``, sorted by name.

    Raises:
        MalformedDiscoveryError: undecodable body, a known field that is not a string, or a document with none
            of ``major``, ``minor``, ``gitVersion``.

    Mirrors client-go ``DiscoveryClient.ServerVersion`` (``k8s.io/apimachinery/pkg/version.Info``).
    """
    root = Reader(decode_json(body, document=document), document=document, path="")
    known = ("major", "minor", "gitVersion", "platform")
    major, minor, git_version, platform = (root.get_str(key) for key in known)
    if not (major or minor or git_version):
        root.fail(None, "not a version document: no major, minor or gitVersion")
    extra = tuple(sorted((k, v) for k, v in root.obj.items() if k not in known and isinstance(v, str)))
    return VersionInfo(major=major, minor=minor, git_version=git_version, platform=platform, extra=extra)


# --- encoders ----------------------------------------------------------------------------------------------


def encode_api_versions(versions: Iterable[str], *, server_address: str | None = None) -> dict[str, Any]:
    """The ``APIVersions`` object kube-apiserver serves at ``/api``.

    Args:
        versions: the core group's versions, most preferred first.
        server_address: ``host:port`` to advertise for ``0.0.0.0/0`` in ``serverAddressByClientCIDRs``, or None
            to send an empty list.

    Returns:
        A JSON-ready dict that :func:`parse_api_versions` reads back to ``tuple(versions)``.
    """
    cidrs = [] if server_address is None else [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]
    return {"kind": "APIVersions", "versions": list(versions), "serverAddressByClientCIDRs": cidrs}


def _group_body(group: APIGroup) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": group.name,
        "versions": [{"groupVersion": str(gv), "version": gv.version} for gv in group.group_versions],
    }
    if group.preferred_version:
        pref = GroupVersion(group.name, group.preferred_version)
        out["preferredVersion"] = {"groupVersion": str(pref), "version": pref.version}
    return out


def encode_api_group(group: APIGroup) -> dict[str, Any]:
    """The ``APIGroup`` object kube-apiserver serves at ``/apis/<group>``.

    Returns:
        A JSON-ready dict that :func:`parse_api_group` reads back to ``group``.
    """
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_body(group)}


def encode_api_group_list(groups: Iterable[APIGroup]) -> dict[str, Any]:
    """The ``APIGroupList`` object kube-apiserver serves at ``/apis`` without aggregated discovery.

    Returns:
        A JSON-ready dict that :func:`parse_api_group_list` reads back to ``tuple(groups)``.
    """
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group_body(g) for g in groups]}


def encode_api_resource(resource: APIResource) -> dict[str, Any]:
    """One ``APIResource`` object, omitting empty optional fields as Go's ``omitempty`` does."""
    out: dict[str, Any] = {
        "name": resource.name,
        "singularName": resource.singular_name,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(resource.verbs),
    }
    if resource.short_names:
        out["shortNames"] = list(resource.short_names)
    if resource.categories:
        out["categories"] = list(resource.categories)
    if resource.group:
        out["group"] = resource.group
    if resource.version:
        out["version"] = resource.version
    if resource.storage_version_hash:
        out["storageVersionHash"] = resource.storage_version_hash
    return out


def encode_api_resource_list(lst: APIResourceList) -> dict[str, Any]:
    """The ``APIResourceList`` object kube-apiserver serves at ``/api/v1`` or ``/apis/<group>/<version>``.

    Returns:
        A JSON-ready dict that :func:`parse_api_resource_list` reads back to ``lst`` (given entries whose
        ``group``/``version`` are None when the kind lives in the list's own group version, as the parser
        produces them).
    """
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": str(lst.group_version),
        "resources": [encode_api_resource(r) for r in lst.resources],
    }

