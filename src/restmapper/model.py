"""Value types of the Kubernetes API machinery, with parsing and string forms as apimachinery.

Everything here is immutable and hashable; nothing here does I/O. The name types (``GroupVersion``,
``GroupKind``, ``GroupResource``, ``GroupVersionKind``, ``GroupVersionResource``) raise ``TypeError`` naming the
field when one is not a ``str`` (subclasses are fine): ``None`` is never "any", and ``RESTMapping`` checks its
parts' types the same way. Names and string forms follow
``k8s.io/apimachinery/pkg/runtime/schema`` (``GroupVersion``, ``GroupVersionKind``, ...) and
``k8s.io/apimachinery/pkg/apis/meta/v1`` (``APIResource``, ``APIGroup``).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from urllib.parse import quote

from restmapper.errors import InvalidArgumentError

__all__ = [
    "APIGroup",
    "APIResource",
    "APIResourceList",
    "GroupKind",
    "GroupResource",
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "RESTMapping",
    "Scope",
    "VersionInfo",
    "compare_kube_aware_versions",
    "parse_kind_arg",
    "parse_resource_arg",
    "sort_versions_by_priority",
    "version_priority_key",
]


def _require_str(owner: str, **fields: object) -> None:
    """Raise a TypeError naming the first of ``fields`` of class ``owner`` that is not a ``str`` (subclasses pass).

    A ``None`` group or version is not "any": it is a wrong question, and ``str()`` of the value must not fail.
    Constructors test ``type(field) is str`` first (one identity test per field, about a tenth of a construction);
    only str subclasses and wrong types come here.
    """
    for name, value in fields.items():
        if not isinstance(value, str):
            raise TypeError(f"{owner}.{name} must be a str, not {type(value).__name__} ({value!r:.40})")


@dataclass(frozen=True, slots=True, order=True, init=False)
class GroupVersion:
    """An API group and version; the core group is the empty string.

    ``str()`` gives ``v1`` for the core group and ``apps/v1`` otherwise, as apimachinery.
    """

    group: str
    version: str

    def __init__(self, group: str, version: str) -> None:
        if type(group) is not str or type(version) is not str:
            _require_str(type(self).__name__, group=group, version=version)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "version", version)

    @classmethod
    def parse(cls, text: str) -> GroupVersion:
        """Parse ``v1``, ``apps/v1``, ``""`` or ``"/"`` as apimachinery ``schema.ParseGroupVersion``.

        Args:
            text: the group version string (an ``apiVersion`` field, a path segment).

        Returns:
            The GroupVersion; ``""`` and ``"/"`` give the empty GroupVersion.

        Raises:
            InvalidArgumentError: when the string has more than one ``/``.
        """
        if text in ("", "/"):
            return cls("", "")
        parts = text.split("/")
        if len(parts) == 1:
            return cls("", parts[0])
        if len(parts) == 2:
            return cls(parts[0], parts[1])
        raise InvalidArgumentError(f"unexpected GroupVersion string: {text!r}")

    def __str__(self) -> str:
        if not self.group:
            return self.version
        return f"{self.group}/{self.version}"

    @property
    def is_empty(self) -> bool:
        """True when both group and version are empty."""
        return not self.group and not self.version

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` field value (same as ``str()``)."""
        return str(self)

    @property
    def path(self) -> str:
        """The discovery path: ``/api/v1`` for core, ``/apis/<group>/<version>`` otherwise."""
        if not self.group:
            return f"/api/{self.version}"
        return f"/apis/{self.group}/{self.version}"

    def with_kind(self, kind: str) -> GroupVersionKind:
        """Return the GroupVersionKind of ``kind`` in this group version."""
        return GroupVersionKind(self.group, self.version, kind)

    def with_resource(self, resource: str) -> GroupVersionResource:
        """Return the GroupVersionResource of ``resource`` in this group version."""
        return GroupVersionResource(self.group, self.version, resource)


@dataclass(frozen=True, slots=True, order=True, init=False)
class GroupKind:
    """An API group and kind. ``str()`` is ``Kind.group`` (``Kind`` for the core group)."""

    group: str
    kind: str

    def __init__(self, group: str, kind: str) -> None:
        if type(group) is not str or type(kind) is not str:
            _require_str(type(self).__name__, group=group, kind=kind)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "kind", kind)

    @classmethod
    def parse(cls, text: str) -> GroupKind:
        """Parse ``Kind.group`` (split at the first dot) as apimachinery ``schema.ParseGroupKind``."""
        kind, sep, group = text.partition(".")
        return cls(group if sep else "", kind)

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def with_version(self, version: str) -> GroupVersionKind:
        """Return the GroupVersionKind of this kind at ``version``."""
        return GroupVersionKind(self.group, version, self.kind)


@dataclass(frozen=True, slots=True, order=True, init=False)
class GroupResource:
    """An API group and resource. ``str()`` is ``resource.group`` (``resource`` for the core group)."""

    group: str
    resource: str

    def __init__(self, group: str, resource: str) -> None:
        if type(group) is not str or type(resource) is not str:
            _require_str(type(self).__name__, group=group, resource=resource)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "resource", resource)

    @classmethod
    def parse(cls, text: str) -> GroupResource:
        """Parse ``resource.group`` (split at the first dot) as apimachinery ``schema.ParseGroupResource``."""
        resource, sep, group = text.partition(".")
        return cls(group if sep else "", resource)

    def __str__(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def with_version(self, version: str) -> GroupVersionResource:
        """Return the GroupVersionResource of this resource at ``version``."""
        return GroupVersionResource(self.group, version, self.resource)


@dataclass(frozen=True, slots=True, order=True, init=False)
class GroupVersionKind:
    """A kind in one group version. ``str()`` is ``apps/v1, Kind=Deployment`` as apimachinery."""

    group: str
    version: str
    kind: str

    def __init__(self, group: str, version: str, kind: str) -> None:
        if type(group) is not str or type(version) is not str or type(kind) is not str:
            _require_str(type(self).__name__, group=group, version=version, kind=kind)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "kind", kind)

    @classmethod
    def from_api_version_and_kind(cls, api_version: str, kind: str) -> GroupVersionKind:
        """Build from an object's ``apiVersion`` and ``kind`` fields (apimachinery ``schema.FromAPIVersionAndKind``).

        Map a manifest with ``mapper.rest_mapping(GroupVersionKind.from_api_version_and_kind(obj["apiVersion"],
        obj["kind"]))``, as client-go does with ``RESTMapping(gvk.GroupKind(), gvk.Version)``.

        Args:
            api_version: ``group/version`` (``apps/v1``), or ``version`` alone for the core group (``v1``).
            kind: the kind, as written (``Deployment``).

        Returns:
            The GroupVersionKind (``GroupVersionKind("apps", "v1", "Deployment")``).

        Raises:
            InvalidArgumentError: when ``api_version`` has more than one ``/``.
            TypeError: ``api_version`` or ``kind`` is not a str (a manifest without ``apiVersion`` read with
                ``obj.get("apiVersion")`` gives None).
        """
        for what, field_name, value in (("api_version", "apiVersion", api_version), ("kind", "kind", kind)):
            if not isinstance(value, str):
                raise TypeError(f"GroupVersionKind.from_api_version_and_kind() takes {what} as str, not "
                                f"{type(value).__name__} (a manifest without {field_name}?)")
        gv = GroupVersion.parse(api_version)
        return cls(gv.group, gv.version, kind)

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Kind={self.kind}"

    @property
    def group_version(self) -> GroupVersion:
        """The GroupVersion part."""
        return GroupVersion(self.group, self.version)

    @property
    def group_kind(self) -> GroupKind:
        """The GroupKind part."""
        return GroupKind(self.group, self.kind)

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` field value (``v1``, ``apps/v1``)."""
        return str(self.group_version)


@dataclass(frozen=True, slots=True, order=True, init=False)
class GroupVersionResource:
    """A resource in one group version. ``str()`` is ``apps/v1, Resource=deployments`` as apimachinery.

    Any part may be empty (``""``, never None) in a partial resource given to ``kinds_for``/``resources_for``.
    """

    group: str
    version: str
    resource: str

    def __init__(self, group: str, version: str, resource: str) -> None:
        if type(group) is not str or type(version) is not str or type(resource) is not str:
            _require_str(type(self).__name__, group=group, version=version, resource=resource)
        object.__setattr__(self, "group", group)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "resource", resource)

    def __str__(self) -> str:
        return f"{self.group}/{self.version}, Resource={self.resource}"

    @property
    def group_version(self) -> GroupVersion:
        """The GroupVersion part."""
        return GroupVersion(self.group, self.version)

    @property
    def group_resource(self) -> GroupResource:
        """The GroupResource part."""
        return GroupResource(self.group, self.resource)

    @property
    def dotted(self) -> str:
        """The kubectl form ``resource.version.group`` (``resource.version`` for the core group)."""
        return ".".join(p for p in (self.resource, self.version, self.group) if p)


def parse_resource_arg(arg: str) -> tuple[GroupVersionResource | None, GroupResource]:
    """Read a ``kubectl get`` argument as apimachinery ``schema.ParseResourceArg``.

    ``deployments.v1.apps`` gives the fully specified ``GroupVersionResource(apps, v1, deployments)`` and the
    GroupResource ``deployments.v1.apps``; one dot gives only a GroupResource; no dot gives ``(None,
    GroupResource("", arg))``. With two or more dots the three-part reading is always offered (so
    ``foos.example.com`` is also read as version ``example`` of group ``com``).

    Args:
        arg: what the user typed, e.g. ``deploy``, ``deployments.apps``, ``deployments.v1.apps``.

    Returns:
        ``(fully_specified_or_None, group_resource)``.
    """
    gvr: GroupVersionResource | None = None
    if arg.count(".") >= 2:
        resource, version, group = arg.split(".", 2)
        gvr = GroupVersionResource(group, version, resource)
    return gvr, GroupResource.parse(arg)


def parse_kind_arg(arg: str) -> tuple[GroupVersionKind | None, GroupKind]:
    """Read ``Kind.version.group`` / ``Kind.group`` as apimachinery ``schema.ParseKindArg``.

    Returns:
        ``(fully_specified_or_None, group_kind)``, with the same dot rules as :func:`parse_resource_arg`.
    """
    gvk: GroupVersionKind | None = None
    if arg.count(".") >= 2:
        kind, version, group = arg.split(".", 2)
        gvk = GroupVersionKind(group, version, kind)
    return gvk, GroupKind.parse(arg)


class Scope(str, enum.Enum):
    """The scope of a resource, spelled as aggregated discovery spells it."""

    NAMESPACED = "Namespaced"
    CLUSTER = "Cluster"

    @property
    def namespaced(self) -> bool:
        """True for namespaced resources."""
        return self is Scope.NAMESPACED

    @classmethod
    def of(cls, namespaced: bool) -> Scope:
        """The scope for a legacy ``namespaced`` flag."""
        return cls.NAMESPACED if namespaced else cls.CLUSTER

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class APIResource:
    """One entry of an ``APIResourceList`` (``metav1.APIResource``).

    Subresources are entries whose ``name`` contains ``/`` (``deployments/scale``,
    ``virtualmachineinstances/sev/fetchcertchain``); ``group``/``version`` are set only when the entry answers
    with a kind of another group version (``pods/eviction`` -> ``policy/v1 Eviction``).
    """

    name: str
    singular_name: str
    namespaced: bool
    kind: str
    verbs: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    group: str | None = None
    version: str | None = None
    storage_version_hash: str | None = None

    @property
    def is_subresource(self) -> bool:
        """True for ``parent/sub`` entries."""
        return "/" in self.name

    @property
    def parent(self) -> str:
        """The parent resource name (the name itself for a top-level resource)."""
        return self.name.split("/", 1)[0]

    @property
    def subresource(self) -> str | None:
        """The subresource part of the name (may itself contain ``/``), or None."""
        _, sep, sub = self.name.partition("/")
        return sub if sep else None

    @property
    def scope(self) -> Scope:
        """``Scope.NAMESPACED`` or ``Scope.CLUSTER``."""
        return Scope.of(self.namespaced)


@dataclass(frozen=True, slots=True)
class APIResourceList:
    """The resources served by one group version (``metav1.APIResourceList``)."""

    group_version: GroupVersion
    resources: tuple[APIResource, ...]

    def top_level(self) -> tuple[APIResource, ...]:
        """The entries that are not subresources, in server order."""
        return tuple(r for r in self.resources if not r.is_subresource)


@dataclass(frozen=True, slots=True)
class APIGroup:
    """An API group with its served versions (``metav1.APIGroup``); the core group is named ``""``.

    ``versions`` is in server order (most preferred first for aggregated discovery and for kube-apiserver's
    legacy documents). ``preferred_version`` is the server's preferred version, or None if none was given.
    """

    name: str
    versions: tuple[str, ...]
    preferred_version: str | None = None

    @property
    def group_versions(self) -> tuple[GroupVersion, ...]:
        """The served GroupVersions in server order."""
        return tuple(GroupVersion(self.name, v) for v in self.versions)

    @property
    def preferred(self) -> GroupVersion | None:
        """The preferred GroupVersion, or the first listed one when the server named none."""
        if self.preferred_version:
            return GroupVersion(self.name, self.preferred_version)
        if self.versions:
            return GroupVersion(self.name, self.versions[0])
        return None


@dataclass(frozen=True, slots=True)
class RESTMapping:
    """What a client needs to talk to a resource: GVR, GVK and scope (``meta.RESTMapping``)."""

    resource: GroupVersionResource
    group_version_kind: GroupVersionKind
    scope: Scope
    api_resource: APIResource | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if (type(self.resource) is not GroupVersionResource or type(self.group_version_kind) is not GroupVersionKind
                or type(self.scope) is not Scope):
            for name, expected in (("resource", GroupVersionResource), ("group_version_kind", GroupVersionKind),
                                   ("scope", Scope)):
                value = getattr(self, name)
                if not isinstance(value, expected):
                    raise TypeError(f"RESTMapping.{name} must be a {expected.__name__}, not {type(value).__name__}")

    @property
    def namespaced(self) -> bool:
        """True when the resource is namespaced."""
        return self.scope is Scope.NAMESPACED

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection or of one object, as client-go's request builder makes it.

        Args:
            namespace: the namespace of a namespaced resource; None or "" for the collection across all
                namespaces. Ignored for cluster-scoped resources.
            name: the object name, or None for the collection. A named object of a namespaced resource needs a
                namespace (``/apis/apps/v1/deployments/web`` is not a route the API server serves).

        Returns:
            e.g. ``/apis/apps/v1/namespaces/default/deployments/web``; the namespace and name are percent-escaped
            as Go's ``url.URL`` escapes a path (``a?b`` becomes ``a%3Fb``), so nothing in them can end the path.

        Raises:
            InvalidArgumentError: a name of a namespaced resource without a namespace; an empty name; a
                namespace or name that is not a valid path segment: ``.``, ``..``, or containing ``/`` or ``%``
                (apimachinery's ``path.IsValidPathSegmentName``, which client-go's ``Request.Namespace`` and
                ``Request.Name`` apply).
            TypeError: a namespace or name that is not a str.
        """
        _require_path_segment("namespace", namespace, allow_empty=True)
        _require_path_segment("name", name, allow_empty=False)
        base = self.resource.group_version.path
        if self.namespaced and namespace:
            base += f"/namespaces/{_escape_segment(namespace)}"
        elif self.namespaced and name is not None:
            raise InvalidArgumentError(f"{self.resource.resource} is namespaced: the object {name!r} needs a "
                                       "namespace (pass namespace=...; without a name, no namespace lists across "
                                       "all namespaces)")
        base += f"/{self.resource.resource}"
        if name is not None:
            base += f"/{_escape_segment(name)}"
        return base


_PATH_SAFE = "!$&'()*+,;=:@"
"""Characters a path segment keeps as they are, as Go's ``url.URL.EscapedPath`` (client-go builds its URLs so)."""


def _escape_segment(value: str) -> str:
    """Percent-escape ``value`` for one path segment: ``?``, ``#``, spaces and control characters can never end
    the path or splice a query into the request."""
    return quote(value, safe=_PATH_SAFE)


def _require_path_segment(field_name: str, value: str | None, *, allow_empty: bool) -> None:
    """Refuse what apimachinery's ``path.IsValidPathSegmentName`` refuses (and an empty name)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"RESTMapping.path(): {field_name} must be a str or None, not {type(value).__name__}")
    if not value and not allow_empty:
        raise InvalidArgumentError(f"RESTMapping.path(): {field_name} may not be empty (None means the collection)")
    if value in (".", "..") or "/" in value or "%" in value:
        raise InvalidArgumentError(f"RESTMapping.path(): {field_name} {value!r} is not a valid path segment "
                                   "(may not be '.' or '..', nor contain '/' or '%')")


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """The ``/version`` document of a server (``version.Info``)."""

    major: str
    minor: str
    git_version: str
    platform: str = ""
    extra: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.git_version or f"v{self.major}.{self.minor}"


_KUBE_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")
_STABILITY_RANK = {None: 2, "beta": 1, "alpha": 0}


def version_priority_key(version: str) -> tuple[int, int, int, str]:
    """Sort key giving Kubernetes version priority in ascending order (sort then use ``reverse=False``).

    Smaller keys are *higher* priority: GA > beta > alpha, then higher major, then higher minor, then
    non-Kubernetes-looking strings last in alphabetical order. Mirrors apimachinery
    ``version.CompareKubeAwareVersionStrings`` (``v1.1`` and ``v1alpha1.1`` are not Kubernetes versions).

    Args:
        version: a version string such as ``v1beta2``.

    Returns:
        A tuple usable as ``sorted(..., key=version_priority_key)``.
    """
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (1, 0, 0, version)
    major = int(m.group(1))
    rank = _STABILITY_RANK[m.group(2)]
    minor = int(m.group(3) or 0)
    # Stability dominates the major number (v1beta1 > v2alpha3), as apimachinery.
    return (0, -rank, -major * 1_000_000 - minor, "")


def compare_kube_aware_versions(a: str, b: str) -> int:
    """Compare two version strings by Kubernetes priority.

    Returns:
        A positive number when ``a`` has higher priority than ``b``, negative when lower, 0 when equal
        (apimachinery ``version.CompareKubeAwareVersionStrings``).
    """
    ka, kb = version_priority_key(a), version_priority_key(b)
    return (ka < kb) - (ka > kb)


def sort_versions_by_priority(versions: list[str] | tuple[str, ...]) -> list[str]:
    """Return ``versions`` ordered highest priority first (``v2``, ``v1``, ``v1beta1``, ..., ``foo``)."""
    return sorted(versions, key=version_priority_key)
