"""Discovery order in every mode, as kube-apiserver's aggregator orders groups and versions.

Sources: kube-aggregator ``apiregistration/v1/helper.SortedByGroupAndVersion`` (legacy ``/apis``: APIServices by
``groupPriorityMinimum`` descending, ties by APIService name ``<version>.<group>``, each group where its first
APIService falls; versions by ``versionPriority``, ties by ``CompareKubeAwareVersionStrings``) and apiserver
``discovery/aggregated`` ``calculateAPIGroupsLocked`` (aggregated: groups by their highest priority, ties by group
name; versions as above).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from restmapper.model import APIResource
from restmapper.testing import FakeCluster

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
RES = [APIResource("things", "thing", True, "Thing", ("get", "list"))]


def group_order(cluster: FakeCluster, accept: str) -> list[str]:
    with cluster.mock():
        doc = requests.get(cluster.base_url + "/apis", headers={"Accept": accept}, timeout=5).json()
    key = "items" if "items" in doc else "groups"
    return [g.get("metadata", {}).get("name") or g.get("name") for g in doc[key]]


def version_order(cluster: FakeCluster, accept: str, group: str) -> list[str]:
    with cluster.mock():
        doc = requests.get(cluster.base_url + "/apis", headers={"Accept": accept}, timeout=5).json()
    for g in doc.get("items") or doc.get("groups"):
        if (g.get("metadata", {}).get("name") or g.get("name")) == group:
            return [v["version"] for v in g["versions"]]
    raise AssertionError(group)


@pytest.fixture
def cluster() -> FakeCluster:
    c = FakeCluster.empty()
    c.add_api_resources("a.example.io/v1beta1", RES, priority=100)
    c.add_api_resources("b.example.io/v1", RES, priority=100)
    c.add_api_resources("c.example.io/v2", RES, priority=200)
    return c


def test_equal_priority_groups_are_ordered_by_group_name_in_aggregated_discovery(cluster: FakeCluster) -> None:
    assert group_order(cluster, AGGREGATED) == ["c.example.io", "a.example.io", "b.example.io"]


def test_equal_priority_groups_are_ordered_by_apiservice_name_in_legacy_discovery(cluster: FakeCluster) -> None:
    """``v1.b.example.io`` sorts before ``v1beta1.a.example.io`` ("." < "b"), so b comes first in the legacy list."""
    cluster.mode = "legacy"
    assert group_order(cluster, "application/json") == ["c.example.io", "b.example.io", "a.example.io"]


def test_a_group_is_ranked_by_its_best_apiservice(cluster: FakeCluster) -> None:
    """A group with one high-priority version moves up in both modes (highest priority of its versions)."""
    cluster.add_api_resources("b.example.io/v1alpha1", RES, priority=300)
    assert group_order(cluster, AGGREGATED)[0] == "b.example.io"
    cluster.mode = "legacy"
    assert group_order(cluster, "application/json")[0] == "b.example.io"


@pytest.mark.parametrize("mode", ["aggregated", "aggregated-v2beta1", "legacy"])
def test_versions_by_priority_then_kube_aware_version_order(mode: str) -> None:
    cluster = FakeCluster.empty(mode=mode)
    for version in ("v1alpha1", "foo", "v1beta2", "v2", "v1beta1", "v1", "v10"):
        cluster.add_api_resources(f"x.example.io/{version}", RES)
    cluster.add_api_resources("x.example.io/v1alpha1", RES, preferred=True)  # highest version priority
    accept = "application/json" if mode == "legacy" else (
        AGGREGATED if mode == "aggregated" else AGGREGATED.replace("v=v2;", "v=v2beta1;"))
    assert version_order(cluster, accept, "x.example.io") == [
        "v1alpha1", "v10", "v2", "v1", "v1beta2", "v1beta1", "foo"]


def test_crd_groups_share_priority_1000_and_order_by_mode() -> None:
    """CRD group versions are registered with groupPriorityMinimum 1000 (crdregistration), so CRD groups tie."""
    cluster = FakeCluster.empty()
    for group, version in (("zeta.io", "v1"), ("alpha.io", "v1beta1")):
        cluster.add_crd({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                         "metadata": {"name": f"things.{group}"},
                         "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "things", "kind": "Thing"},
                                  "versions": [{"name": version, "served": True, "storage": True}]}})
    assert group_order(cluster, AGGREGATED) == ["alpha.io", "zeta.io"]
    cluster.mode = "legacy"
    assert group_order(cluster, "application/json") == ["zeta.io", "alpha.io"]  # "v1.zeta.io" < "v1beta1.alpha.io"


@pytest.mark.parametrize("mode", ["aggregated", "aggregated-v2beta1", "legacy"])
def test_builtin_groups_come_in_the_order_kube_apiserver_serves_them(mode: str, fixtures_dir: Path) -> None:
    """The captured ``/apis`` and aggregated documents list the built-in groups in one order (no two
    of their groups tie in a way the two tie-breakers would settle differently); the kit serves that order in
    every mode, and the CRD groups after them."""
    discovery = fixtures_dir / "discovery"
    captured = {
        "legacy": [g["name"] for g in json.loads((discovery / "apis.json").read_text())["groups"]],
        "aggregated": [i["metadata"]["name"] for i in json.loads((discovery / "aggregated_v2.json").read_text())
                       ["items"]],
    }
    assert [g for g in captured["legacy"] if g in captured["aggregated"]] == captured["aggregated"]
    cluster = FakeCluster.embedded(mode=mode)
    accept = "application/json" if mode == "legacy" else (
        AGGREGATED if mode == "aggregated" else AGGREGATED.replace("v=v2;", "v=v2beta1;"))
    served = group_order(cluster, accept)
    builtin = [g for g in served if g in captured["legacy"]]
    assert builtin == [g for g in captured["legacy"] if g in builtin]
    assert served[:len(builtin)] == builtin  # CRD groups (priority 1000) after every built-in group


def test_the_embedded_crd_groups_tie_break_per_document() -> None:
    """The README's example: equal-priority CRD groups by name (aggregated), by ``<version>.<group>`` (legacy)."""
    cluster = FakeCluster.embedded()
    aggregated = group_order(cluster, AGGREGATED)
    assert aggregated.index("argoproj.io") < aggregated.index("cert-manager.io")
    cluster.mode = "legacy"
    legacy = group_order(cluster, "application/json")
    assert legacy.index("cert-manager.io") < legacy.index("argoproj.io")  # "v1.cert..." < "v1alpha1.argoproj.io"


@pytest.mark.parametrize(("mode", "winner"), [("aggregated", "alpha.io"), ("legacy", "zeta.io")])
def test_a_kind_in_two_tied_crd_groups_resolves_per_document_order(mode: str, winner: str) -> None:
    from restmapper import LazyRESTMapper
    from restmapper.discovery import DiscoveryClient
    from restmapper.testing import InProcessTransport, crd_manifest

    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd_manifest("zeta.io", "Widget", versions=("v1",)))
    cluster.add_crd(crd_manifest("alpha.io", "Widget", versions=("v1beta1",)))
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    assert mapper.resolve("widgets").resource.group == winner
