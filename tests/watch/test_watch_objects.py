"""What counts as a discovery-relevant change of a watched object (no invalidation on heartbeats)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError
from restmapper.watch._objects import APISERVICES, CRDS, known_from

CRD_OBJ: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com", "uid": "u1", "generation": 1, "resourceVersion": "10"},
    "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}, "scope": "Namespaced",
             "versions": [{"name": "v1", "served": True, "storage": True}]},
    "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"},
               "conditions": [{"type": "Established", "status": "True", "lastTransitionTime": "t0"}]},
}
API_OBJ: dict[str, Any] = {
    "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
    "metadata": {"name": "v1beta1.metrics.k8s.io", "uid": "a1", "resourceVersion": "5"},
    "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100,
             "service": {"namespace": "kube-system", "name": "metrics-server"}},
    "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": "t0"}]},
}


def _edit(obj: dict[str, Any], fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    fn(out)
    return out


CRD_CASES = [
    ("heartbeat-rv", lambda o: o["metadata"].update(resourceVersion="11"), False),
    ("managed-fields", lambda o: o["metadata"].update(managedFields=[{"manager": "x"}]), False),
    ("transition-time", lambda o: o["status"]["conditions"][0].update(lastTransitionTime="t1"), False),
    ("labels", lambda o: o["metadata"].update(labels={"a": "b"}), False),
    ("generation", lambda o: o["metadata"].update(generation=2), True),
    ("accepted-names", lambda o: o["status"]["acceptedNames"].update(kind="Gadget"), True),
    ("served-flip", lambda o: o["spec"]["versions"][0].update(served=False), True),
    ("established", lambda o: o["status"]["conditions"][0].update(status="False"), True),
    ("terminating", lambda o: o["metadata"].update(deletionTimestamp="2024-01-01T00:00:00Z"), True),
]


@pytest.mark.parametrize("name, edit, changed", CRD_CASES, ids=[c[0] for c in CRD_CASES])
def test_crd_fingerprint_changes_only_with_serving(name: str, edit: Callable[[dict[str, Any]], None],
                                                   changed: bool) -> None:
    before, after = known_from(CRDS, CRD_OBJ), known_from(CRDS, _edit(CRD_OBJ, edit))
    assert (before.fingerprint != after.fingerprint) is changed
    assert after.group == "example.com"


API_CASES = [
    ("heartbeat", lambda o: o["status"]["conditions"][0].update(lastTransitionTime="t1"), False),
    ("message", lambda o: o["status"]["conditions"][0].update(message="all checks passed"), False),
    ("unavailable", lambda o: o["status"]["conditions"][0].update(status="False"), True),
    ("priority", lambda o: o["spec"].update(groupPriorityMinimum=1000), True),
    ("became-local", lambda o: o["spec"].pop("service"), True),
]


@pytest.mark.parametrize("name, edit, changed", API_CASES, ids=[c[0] for c in API_CASES])
def test_apiservice_fingerprint_changes_only_with_availability(name: str, edit: Callable[[dict[str, Any]], None],
                                                               changed: bool) -> None:
    before, after = known_from(APISERVICES, API_OBJ), known_from(APISERVICES, _edit(API_OBJ, edit))
    assert (before.fingerprint != after.fingerprint) is changed


def test_local_core_apiservice_maps_to_core_group() -> None:
    core = {"metadata": {"name": "v1.", "uid": "c"}, "spec": {"version": "v1"}}
    assert known_from(APISERVICES, core).group == ""


@pytest.mark.parametrize("obj", [
    None, [], {"metadata": {"name": "x"}}, {"metadata": {"uid": "u"}}, {"metadata": "nope"},
    {"metadata": {"name": "x", "uid": "u"}, "spec": {"group": 3}},
    {"metadata": {"name": "x", "uid": "u"}, "spec": {"group": "Example.com"}},  # never a group: not invalidated
    {"metadata": {"name": "x", "uid": "u"}, "spec": {"group": "example.com/v1"}},
    {"metadata": {"name": "x", "uid": "u"}, "spec": {"group": "g", "versions": "v1"}},
])
def test_malformed_objects_raise_typed_errors(obj: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        known_from(CRDS, obj)
