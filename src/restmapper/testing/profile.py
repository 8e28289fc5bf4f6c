"""The built-in API profiles (one per Kubernetes release) and the embedded CRDs of the fake cluster.

A profile is data the ``restmapper.wire`` parsers read (``data/profiles/<release>.json``, generated from the shared
fixtures by ``scripts/gen_profile.py``): the legacy discovery documents of a real server, ``api``
(``APIVersions``), ``apis`` (``APIGroupList``: group order and version order, preferred first) and ``resources``
(one ``APIResourceList`` per group version), plus ``release``, ``gitVersion`` and the discovery ``modes`` that
release serves (its default first). Releases shipped:

- ``1.35`` (the default): aggregated discovery v2 and v2beta1, and legacy;
- ``1.27``: the aggregated ``v2beta1`` era (1.26-1.32 servers): v2beta1 and legacy;
- ``1.20``: legacy discovery only (a real v1.20.4 server).

``data/embedded-crds.json`` holds minimal ``apiextensions.k8s.io/v1`` manifests (names, scope, versions,
subresources; no schema). Files are read once, on first use, through ``importlib.resources`` (they ship inside
the wheel).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import APIResource, GroupVersion
from restmapper.wire import parse_api_group_list, parse_api_resource_list, parse_api_versions

__all__ = [
    "DEFAULT_RELEASE",
    "RELEASES",
    "APIProfile",
    "GroupSpec",
    "GroupVersionSpec",
    "ResourceSpec",
    "SubresourceSpec",
    "embedded_crd_manifests",
    "embedded_crd_names",
    "least_core",
    "load_builtin_profile",
    "parse_profile",
    "specs_from_api_resources",
]

RELEASES = ("1.35", "1.27", "1.20")
DEFAULT_RELEASE = "1.35"

@dataclass(frozen=True, slots=True)
class SubresourceSpec:
    """One subresource of a served resource (``status``, ``scale``, ``sev/fetchcertchain``).

    ``group``/``version`` are empty when the subresource answers with a kind of its own group version, as
    kube-apiserver leaves them empty in both discovery formats.
    """

    name: str
    kind: str
    verbs: tuple[str, ...]
    group: str = ""
    version: str = ""


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """One served resource of a group version, with its subresources.

    ``response_group``/``response_version`` are what aggregated discovery puts in ``responseKind``: empty for
    built-in resources (kube-apiserver leaves them empty), the group version itself for CRDs.
    """

    name: str
    singular_name: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    storage_version_hash: str = ""
    subresources: tuple[SubresourceSpec, ...] = ()
    response_group: str = ""
    response_version: str = ""


@dataclass(frozen=True, slots=True)
class GroupVersionSpec:
    """The resources of one group version, in server order."""

    version: str
    resources: tuple[ResourceSpec, ...]


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """An API group (``""`` for core) with its versions, most preferred first."""

    name: str
    versions: tuple[GroupVersionSpec, ...]


@dataclass(frozen=True, slots=True)
class APIProfile:
    """The built-in API of one Kubernetes release: the core group first, then named groups in priority order.

    Attributes:
        groups: the groups.
        release: ``"1.35"``...
        git_version: what ``/version`` reports (``v1.35.0``).
        modes: the discovery modes the release serves, its default first.
    """

    groups: tuple[GroupSpec, ...]
    release: str = DEFAULT_RELEASE
    git_version: str = "v1.35.0"
    modes: tuple[str, ...] = ("aggregated", "aggregated-v2beta1", "legacy")

    def group(self, name: str) -> GroupSpec | None:
        """Return the group called ``name`` (``""`` for core), or None."""
        for g in self.groups:
            if g.name == name:
                return g
        return None


def specs_from_api_resources(resources: Sequence[APIResource], response: GroupVersion | None = None
                              ) -> tuple[ResourceSpec, ...]:
    """Convert an ``APIResourceList``'s entries (subresources as ``parent/sub``) into :class:`ResourceSpec` values.

    Args:
        resources: the entries, parents before or after their subresources.
        response: what aggregated discovery puts in ``responseKind`` group/version (None: empty, as for built-in
            resources).

    Raises:
        InvalidArgumentError: for a subresource whose parent is not in the list.
    """
    parents = [r for r in resources if not r.is_subresource]
    known = {p.name for p in parents}
    orphans = sorted(r.name for r in resources if r.is_subresource and r.parent not in known)
    if orphans:
        raise InvalidArgumentError(f"subresources without a parent resource: {orphans}")
    return tuple(_resource_spec(p, resources, response or GroupVersion("", "")) for p in parents)


def _resource_spec(p: APIResource, resources: Sequence[APIResource], response_gv: GroupVersion) -> ResourceSpec:
    """The spec of resource entry ``p``, its subresources taken from ``resources``."""
    return ResourceSpec(
        name=p.name, singular_name=p.singular_name, kind=p.kind, namespaced=p.namespaced, verbs=tuple(p.verbs),
        short_names=tuple(p.short_names), categories=tuple(p.categories),
        storage_version_hash=p.storage_version_hash or "",
        subresources=_subresources_of(p.name, resources),
        response_group=response_gv.group, response_version=response_gv.version,
    )


def _subresources_of(parent: str, resources: Sequence[APIResource]) -> tuple[SubresourceSpec, ...]:
    """The subresources of resource ``parent`` among ``resources`` (entries ``parent/sub``), in list order."""
    return tuple(SubresourceSpec(s.subresource or "", s.kind, tuple(s.verbs), s.group or "", s.version or "")
                 for s in resources if s.is_subresource and s.parent == parent)


def parse_profile(document: Mapping[str, Any] | str | bytes) -> APIProfile:
    """Parse a release profile (see the module docstring) with the ``restmapper.wire`` parsers.

    Args:
        document: the profile as a dict or JSON text.

    Returns:
        The profile: the core group first, then the named groups in ``apis`` order.

    Raises:
        InvalidArgumentError: when a field is missing or of the wrong type, or a listed group version has no
            resource list.
        MalformedDiscoveryError: when a discovery document in it is malformed (the error names the document).
    """
    doc = json.loads(document) if isinstance(document, (str, bytes)) else document
    if not isinstance(doc, Mapping):
        raise InvalidArgumentError("a profile must be a JSON object")
    try:
        release, git_version, modes = str(doc["release"]), str(doc["gitVersion"]), tuple(doc["modes"])
        api, apis, lists = doc["api"], doc["apis"], doc["resources"]
    except (KeyError, TypeError) as exc:
        raise InvalidArgumentError(f"profile: missing or invalid field {exc}") from None
    if not isinstance(lists, Mapping):
        raise InvalidArgumentError("profile: resources must be an object")

    def resources_of(gv: GroupVersion) -> tuple[ResourceSpec, ...]:
        raw = lists.get(str(gv))
        if raw is None:
            raise InvalidArgumentError(f"profile {release}: group version {gv} has no resource list")
        parsed = parse_api_resource_list(_dumps(raw), document=f"profile {release} {gv}", expected=gv)
        return specs_from_api_resources(parsed.resources)

    core = parse_api_versions(_dumps(api), document=f"profile {release} /api")
    groups = [GroupSpec("", tuple(GroupVersionSpec(v, resources_of(GroupVersion("", v))) for v in core))]
    for group in parse_api_group_list(_dumps(apis), document=f"profile {release} /apis"):
        groups.append(GroupSpec(group.name, tuple(
            GroupVersionSpec(v, resources_of(GroupVersion(group.name, v))) for v in group.versions)))
    return APIProfile(tuple(groups), release=release, git_version=git_version, modes=modes)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


def _read(name: str) -> str:
    path = resources.files("restmapper.testing").joinpath("data")
    for part in name.split("/"):
        path = path.joinpath(part)
    return path.read_text(encoding="utf-8")


def load_builtin_profile(release: str | None = None) -> APIProfile:
    """Return the built-in API profile of ``release`` (core v1 and the named groups), read once per release.

    Args:
        release: one of :data:`RELEASES` (``"1.35"``, ``"1.27"``, ``"1.20"``); None: :data:`DEFAULT_RELEASE`.

    Returns:
        The shared, immutable profile.

    Raises:
        InvalidArgumentError: for an unknown release (the message lists the known ones), or if the shipped data
            file is malformed (a packaging bug).
    """
    name = DEFAULT_RELEASE if release is None else release
    if name not in RELEASES:
        raise InvalidArgumentError(f"unknown release {release!r}: the kit ships {', '.join(RELEASES)}")
    return _load_profile(name)


def least_core(release: str | None = None) -> tuple[ResourceSpec, ...]:
    """The core ``v1`` resources every kube-apiserver serves whatever else it runs: ``namespaces`` (with its
    subresources), as ``release`` serves it (None: :data:`DEFAULT_RELEASE`). Without it no namespaced object
    could exist.

    Raises:
        InvalidArgumentError: for an unknown release, as :func:`load_builtin_profile`.
    """
    core = next(g for g in load_builtin_profile(release).groups if g.name == "")
    v1 = next(v for v in core.versions if v.version == "v1")
    return tuple(r for r in v1.resources if r.name == "namespaces")


@functools.lru_cache(maxsize=len(RELEASES))
def _load_profile(release: str) -> APIProfile:
    return parse_profile(_read(f"profiles/{release}.json"))


@functools.lru_cache(maxsize=1)
def _embedded() -> tuple[Mapping[str, Any], ...]:
    manifests = json.loads(_read("embedded-crds.json"))
    if not isinstance(manifests, list):
        raise InvalidArgumentError("embedded-crds.json must hold a list of CRD manifests")
    return tuple(manifests)


def embedded_crd_manifests() -> list[dict[str, Any]]:
    """Return fresh copies of the embedded CRD manifests (cert-manager, cluster-api, argo-cd, gateway-api, ...)."""
    import copy

    return [copy.deepcopy(dict(m)) for m in _embedded()]


def embedded_crd_names() -> list[str]:
    """Return the names (``plural.group``) of the embedded CRDs, in install order."""
    return [str(m["metadata"]["name"]) for m in _embedded()]
