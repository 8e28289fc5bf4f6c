"""What the watcher keeps about each watched object, and what counts as a change to serving.

Pure functions over wire-form dicts (``json.loads`` of a list item or a watch event's ``object``). A heartbeat
(status ``lastTransitionTime``, ``managedFields``, a new ``resourceVersion``) must compare equal; only what changes
discovery may differ: for a CRD its group, generation (spec), ``status.acceptedNames``, served versions,
``Established`` condition and deletion; for an APIService its group/version, generation and ``Available`` condition.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.generation import crd_fingerprint
from restmapper.mapper import is_group_name

__all__ = ["APISERVICES", "CRDS", "Known", "ResourceKind", "known_from"]


@dataclass(frozen=True, slots=True)
class Known:
    """The watcher's memory of one object: enough to diff, to invalidate and to report a deletion.

    Attributes:
        uid: ``metadata.uid``.
        name: ``metadata.name``.
        group: the API group whose discovery it affects (``spec.group``; ``""`` is core).
        fingerprint: equal fingerprints mean discovery cannot have changed.
        resource_version: ``metadata.resourceVersion``.
        slim: a small copy (apiVersion, kind, metadata identity, spec.group/version) handed to handlers for a
            deletion found by a relist, whose final state is unknown.
    """

    uid: str
    name: str
    group: str
    fingerprint: Hashable
    resource_version: str
    slim: Mapping[str, Any]


def _condition(obj: Mapping[str, Any], kind: str) -> str | None:
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(conditions, list):
        return None
    for cond in conditions:
        if isinstance(cond, Mapping) and cond.get("type") == kind:
            value = cond.get("status")
            return value if isinstance(value, str) else None
    return None


def _mapping(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidArgumentError(f"{key} must be an object, got {type(value).__name__}")
    return value


def _crd_fingerprint(obj: Mapping[str, Any]) -> Hashable:
    meta = _mapping(obj, "metadata")
    return (meta.get("generation"), crd_fingerprint(obj), _condition(obj, "Established"),
            meta.get("deletionTimestamp") is not None)


def _apiservice_fingerprint(obj: Mapping[str, Any]) -> Hashable:
    meta = _mapping(obj, "metadata")
    spec = _mapping(obj, "spec")
    # Priority fields reorder discovery; the service reference decides Local vs aggregated.
    shape = json.dumps({k: spec.get(k) for k in ("group", "version", "groupPriorityMinimum", "versionPriority",
                                                 "service")}, sort_keys=True, default=str)
    return (meta.get("generation"), shape, _condition(obj, "Available"))


@dataclass(frozen=True, slots=True)
class ResourceKind:
    """One watched resource type.

    Attributes:
        kind: the object kind handed to handlers (``CustomResourceDefinition``, ``APIService``).
        path: the collection path listed and watched.
        label: a short name for logs and thread names.
        group_of: the API group an object's discovery lives in.
        fingerprint: what must change for discovery to change.
    """

    kind: str
    path: str
    label: str
    group_of: Callable[[Mapping[str, Any]], str]
    fingerprint: Callable[[Mapping[str, Any]], Hashable]


def _spec_group(obj: Mapping[str, Any]) -> str:
    group = _mapping(obj, "spec").get("group", "")
    if group is None:
        group = ""  # Local APIServices of the core group (v1.) carry no group.
    if not isinstance(group, str):
        raise InvalidArgumentError(f"spec.group must be a string, got {type(group).__name__}")
    if not is_group_name(group):
        raise InvalidArgumentError(f"spec.group {group!r} is not an API group name")
    return group


CRDS = ResourceKind("CustomResourceDefinition", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "crds",
                    _spec_group, _crd_fingerprint)
APISERVICES = ResourceKind("APIService", "/apis/apiregistration.k8s.io/v1/apiservices", "apiservices", _spec_group,
                           _apiservice_fingerprint)


def known_from(kind: ResourceKind, obj: object) -> Known:
    """Return what the watcher keeps about ``obj``.

    Raises:
        InvalidArgumentError: ``obj`` is not an object with a string ``metadata.uid`` and ``metadata.name``, or a
            field the fingerprint reads has the wrong shape.
    """
    if not isinstance(obj, Mapping):
        raise InvalidArgumentError(f"{kind.kind} must be a JSON object, got {type(obj).__name__}")
    meta = _mapping(obj, "metadata")
    uid, name, rv = meta.get("uid"), meta.get("name"), meta.get("resourceVersion", "")
    if not isinstance(uid, str) or not uid or not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"{kind.kind} without metadata.uid/name")
    group = kind.group_of(obj)
    spec = _mapping(obj, "spec")
    slim = {"apiVersion": obj.get("apiVersion"), "kind": kind.kind,
            "metadata": {"name": name, "uid": uid, "resourceVersion": rv, "generation": meta.get("generation")},
            "spec": {"group": group, **({"version": spec["version"]} if "version" in spec else {})}}
    return Known(uid, name, group, kind.fingerprint(obj), str(rv), slim)
