"""What the fake cluster serves, in server order: pure functions over its built-in/added group versions and CRDs.

Ordering mirrors kube-apiserver's aggregator. Aggregated discovery (apiserver ``discovery/aggregated``
``calculateAPIGroupsLocked``) sorts groups by their highest ``groupPriorityMinimum``, ties by group name; the legacy
``/apis`` list (kube-aggregator ``SortedByGroupAndVersion``) sorts APIServices by priority, ties by APIService
name (``<version>.<group>``), and lists each group where its first APIService falls. Versions within a group by
version priority, ties by Kubernetes version order (``version.CompareKubeAwareVersionStrings``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from restmapper.model import version_priority_key
from restmapper.testing.crd import CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY, crd_resource
from restmapper.testing.profile import ResourceSpec

__all__ = ["ServedGroup", "StaticVersion", "core_versions", "legacy_order", "named_groups"]


@dataclass
class StaticVersion:
    """A built-in or added group version: its resources and APIService priorities."""

    resources: tuple[ResourceSpec, ...]
    group_priority: int
    version_priority: int


@dataclass(frozen=True)
class ServedGroup:
    """A served named group: its versions in priority order and its rank in the legacy ``/apis`` list."""

    name: str
    versions: tuple[tuple[str, tuple[ResourceSpec, ...], bool], ...]  # (version, resources, from CRDs)
    legacy_rank: tuple[int, str] = (0, "")  # its best APIService's (-groupPriorityMinimum, name) for legacy /apis


def _established(crd: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in crd.get("status", {}).get("conditions", ()))


def named_groups(static: Mapping[str, Mapping[str, StaticVersion]],
                 crds: Iterable[Mapping[str, Any]]) -> tuple[ServedGroup, ...]:
    """The named groups in aggregated discovery order, each with its versions in priority order.

    CRDs that are not Established are skipped (apiextensions' discovery controller serves only Established ones);
    CRD group versions have priority 1000/``CRD_VERSION_PRIORITY``, as crdregistration's APIServices.
    """
    merged: _Merged = {}
    for group, versions in static.items():
        for version, sv in versions.items():
            if group != "":
                merged.setdefault(group, {})[version] = (sv.group_priority, sv.version_priority,
                                                         list(sv.resources), False)
    for crd in crds:
        if _established(crd):
            _add_crd(merged, crd)
    served = [_served_group(group, by_version) for group, by_version in merged.items()]
    served.sort(key=lambda t: (-t[0], t[1].name))
    return tuple(group for _, group in served)


_Merged = dict[str, dict[str, tuple[int, int, list[ResourceSpec], bool]]]
"""Served group versions by group and version: (group priority, version priority, resources, from CRDs)."""


def _add_crd(merged: _Merged, crd: Mapping[str, Any]) -> None:
    """Add the resources ``crd`` serves to its group versions in ``merged`` (CRD priorities when new)."""
    group = crd["spec"]["group"]
    for v in crd["spec"]["versions"]:
        res = crd_resource(crd, v["name"])
        if res is not None:
            entry = merged.setdefault(group, {}).setdefault(
                v["name"], (CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY, [], True))
            entry[2].append(res)


def _served_group(group: str, by_version: Mapping[str, tuple[int, int, list[ResourceSpec], bool]]
                  ) -> tuple[int, ServedGroup]:
    """Group ``group`` with its versions in priority order, and its priority (the highest of its versions')."""
    order = sorted(by_version, key=lambda v: (-by_version[v][1], version_priority_key(v)))
    group_priority = max(by_version[v][0] for v in order)
    legacy_rank = min((-by_version[v][0], f"{v}.{group}") for v in order)
    versions = tuple((v, tuple(by_version[v][2]), by_version[v][3]) for v in order)
    return group_priority, ServedGroup(group, versions, legacy_rank)


def legacy_order(groups: Iterable[ServedGroup]) -> tuple[ServedGroup, ...]:
    """The groups in legacy ``/apis`` order: by their best APIService's (priority, name); equal-priority groups
    may come in another order than in aggregated discovery (``v1.b.io`` sorts before ``v1beta1.a.io``)."""
    return tuple(sorted(groups, key=lambda g: g.legacy_rank))


def core_versions(static: Mapping[str, Mapping[str, StaticVersion]]) -> list[tuple[str, tuple[ResourceSpec, ...]]]:
    """The core group's versions, preferred first, with their resources."""
    versions = static.get("", {})
    order = sorted(versions, key=lambda v: (-versions[v].version_priority, version_priority_key(v)))
    return [(v, versions[v].resources) for v in order]
