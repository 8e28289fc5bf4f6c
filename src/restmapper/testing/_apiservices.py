"""APIService objects of :class:`~restmapper.testing.FakeCluster` (a mixin, see cluster.py).

APIServices follow kube-aggregator: one ``apiregistration.k8s.io/v1`` object per served group version, named
``<version>.<group>`` (``v1.`` for core). Built-in group versions are ``Local`` (``onstart`` automanaged), CRD group
versions are registered by autoregister (``automanaged: "true"``, priority 1000/100), aggregated APIs added with
``add_api_resources`` get a service reference. The objects are derived from what is served and synchronised lazily
(before any request is answered and whenever a watch stream wakes), each real change taking a resourceVersion.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from restmapper.model import GroupVersion
from restmapper.testing._store import APISERVICE_KEY, now_timestamp
from restmapper.testing.crd import CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY

if TYPE_CHECKING:
    import threading

    from restmapper.testing._served import StaticVersion
    from restmapper.testing._store import ObjectStore

__all__ = ["APIServicesMixin", "condition", "keep_transition_times", "parse_apiservice_target"]


def condition(type_: str, status: bool, reason: str, message: str, since: str) -> dict[str, Any]:
    """A status condition (``lastTransitionTime`` ``since``)."""
    return {"type": type_, "status": "True" if status else "False", "lastTransitionTime": since,
            "reason": reason, "message": message}


def keep_transition_times(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> None:
    """Keep the ``lastTransitionTime`` of each of ``old``'s conditions in ``new`` (in place) when its status did not
    flip, as apimachinery's ``SetStatusCondition``."""
    by_type = {c.get("type"): c for c in old}
    for cond in new:
        prev = by_type.get(cond["type"])
        if prev is not None and prev.get("status") == cond["status"]:
            cond["lastTransitionTime"] = prev.get("lastTransitionTime", cond["lastTransitionTime"])


def parse_apiservice_target(target: str) -> GroupVersion:
    """Return the group version named by an APIService name (``v1beta1.metrics.k8s.io``, ``v1.``) or a group
    version (``metrics.k8s.io/v1beta1``, ``v1``)."""
    if "/" in target or "." not in target:
        return GroupVersion.parse(target)
    version, _, group = target.partition(".")
    return GroupVersion(group, version)


class APIServicesMixin:
    """APIService operations of FakeCluster; state lives on the cluster (see cluster.py)."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _store: ObjectStore
        _crds: dict[str, dict[str, Any]]
        _static: dict[str, dict[str, StaticVersion]]
        _stale: set[GroupVersion]
        _aggregated: set[GroupVersion]
        _unavailable: dict[GroupVersion, tuple[str, str]]
        _apiservices_dirty: bool

        def set_stale(self, gv: str, stale: bool = True) -> None: ...

    def apiservices(self) -> list[dict[str, Any]]:
        """Return deep copies of the APIService objects (one per served group version), by name."""
        with self._lock:
            self._sync_apiservices()
            return [copy.deepcopy(o) for _, o in sorted(self._store.bucket(APISERVICE_KEY).items())]

    def get_apiservice(self, name_or_gv: str) -> dict[str, Any] | None:
        """Return a deep copy of the APIService for ``v1beta1.metrics.k8s.io`` / ``metrics.k8s.io/v1beta1``, or None."""
        gv = parse_apiservice_target(name_or_gv)
        with self._lock:
            self._sync_apiservices()
            obj = self._store.bucket(APISERVICE_KEY).get(f"{gv.version}.{gv.group}")
            return copy.deepcopy(obj) if obj is not None else None

    def set_available(self, name_or_gv: str, available: bool, *, reason: str = "FailedDiscoveryCheck",
                      message: str | None = None) -> None:
        """Set the ``Available`` condition of an APIService; while unavailable its group version is stale.

        An unavailable group version answers 503 ``text/plain`` on its paths and is ``freshness: Stale`` in
        aggregated discovery (the same state as :meth:`set_stale`), as when kube-aggregator cannot reach it.

        Args:
            name_or_gv: ``v1beta1.metrics.k8s.io`` (APIService name) or ``metrics.k8s.io/v1beta1``.
            available: the new state.
            reason: the condition's reason while unavailable (e.g. ``ServiceNotFound``, ``MissingEndpoints``).
            message: the condition's message while unavailable (a kube-aggregator-like default otherwise).

        Raises:
            KeyError: when no such group version is served.
        """
        gv = parse_apiservice_target(name_or_gv)
        with self._lock:
            if gv not in self._desired_group_versions():
                raise KeyError(name_or_gv)
            if available:
                self._unavailable.pop(gv, None)
            else:
                self._unavailable[gv] = (reason, message or f"failing or missing response from {gv}: "
                                         "the server is currently unable to handle the request")
            self.set_stale(str(gv), not available)

    def _desired_group_versions(self) -> dict[GroupVersion, tuple[int, int, str]]:
        """(group priority, version priority, kind: local/crd/aggregated) of every served group version."""
        out: dict[GroupVersion, tuple[int, int, str]] = {}
        for group, versions in self._static.items():
            for version, sv in versions.items():
                gv = GroupVersion(group, version)
                out[gv] = (sv.group_priority, sv.version_priority, "aggregated" if gv in self._aggregated else "local")
        for crd in self._crds.values():
            for v in crd["spec"]["versions"]:
                gv = GroupVersion(crd["spec"]["group"], v["name"])
                if v["served"] and gv not in out:
                    out[gv] = (CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY, "crd")
        return out

    def _sync_apiservices(self) -> None:
        """Bring the APIService objects in line with what is served (lock held; cheap when nothing changed)."""
        if not self._apiservices_dirty:
            return
        self._apiservices_dirty = False
        bucket = self._store.bucket(APISERVICE_KEY)
        desired = self._desired_group_versions()
        wanted: set[str] = set()
        for gv, (group_priority, version_priority, kind) in desired.items():
            name = f"{gv.version}.{gv.group}"
            wanted.add(name)
            conditions = [self._available_condition(gv, kind)]
            old = bucket.get(name)
            keep_transition_times(conditions, old.get("status", {}).get("conditions", []) if old is not None else [])
            self._store.put(APISERVICE_KEY, _apiservice(gv, group_priority, version_priority, kind, conditions))
        for name in [n for n in bucket if n not in wanted]:
            self._store.remove(APISERVICE_KEY, None, name)

    def _available_condition(self, gv: GroupVersion, kind: str) -> dict[str, Any]:
        """The ``Available`` condition of group version ``gv`` served as ``kind`` (local/crd/aggregated; lock held)."""
        since = now_timestamp()
        if gv in self._stale:
            reason, message = self._unavailable.get(gv, ("FailedDiscoveryCheck", f"failing or missing "
                                                    f"response from {gv}"))
            return condition("Available", False, reason, message, since)
        if kind == "aggregated":
            return condition("Available", True, "Passed", "all checks passed", since)
        return condition("Available", True, "Local", "Local APIServices are always available", since)


def _apiservice(gv: GroupVersion, group_priority: int, version_priority: int, kind: str,
                conditions: list[dict[str, Any]]) -> dict[str, Any]:
    """The APIService object of group version ``gv`` served as ``kind``: an aggregated API has a service
    reference, local and CRD group versions the autoregister label."""
    spec: dict[str, Any] = {"group": gv.group, "version": gv.version}
    metadata: dict[str, Any] = {"name": f"{gv.version}.{gv.group}"}
    if kind == "aggregated":
        spec["service"] = {"namespace": "kube-system", "name": gv.group.split(".")[0] + "-server", "port": 443}
        spec["insecureSkipTLSVerify"] = True
    else:
        metadata["labels"] = {"kube-aggregator.kubernetes.io/automanaged": "true" if kind == "crd" else "onstart"}
    spec["groupPriorityMinimum"] = group_priority
    spec["versionPriority"] = version_priority
    return {"kind": "APIService", "apiVersion": "apiregistration.k8s.io/v1", "metadata": metadata,
            "spec": spec, "status": {"conditions": conditions}}
