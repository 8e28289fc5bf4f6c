"""CRD names acceptance (apiextensions' naming controller) and multi-document CRD manifests in the kit."""

from __future__ import annotations

from typing import Any

import pytest
import requests
import yaml

from restmapper.testing import FakeCluster, InvalidCRDError


def crd(plural: str, kind: str, *, short: list[str] | None = None, group: str = "example.com",
        list_kind: str | None = None) -> dict[str, Any]:
    names: dict[str, Any] = {"plural": plural, "kind": kind, **({"shortNames": short} if short else {})}
    if list_kind:
        names["listKind"] = list_kind
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": names,
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


def conditions(cluster: FakeCluster, name: str) -> dict[str, tuple[str, str]]:
    got = cluster.get_crd(name)
    assert got is not None
    return {c["type"]: (c["status"], c["reason"]) for c in got["status"]["conditions"]}


def served_names(cluster: FakeCluster) -> dict[str, tuple[str, list[str]]]:
    with cluster.mock():
        doc = requests.get(cluster.base_url + "/apis/example.com/v1", timeout=5)
    if doc.status_code == 404:
        return {}
    return {r["name"]: (r["kind"], r.get("shortNames", [])) for r in doc.json()["resources"]}


@pytest.mark.parametrize(("second", "reason"), [
    (crd("gadgets", "Gadget", short=["wd"]), "ShortNamesConflict"),
    (crd("gadgets", "Widget", list_kind="GadgetList"), "KindConflict"),
    (crd("gadgets", "Widget"), "ListKindConflict"),  # the defaulted WidgetList is checked last
    (crd("gadgets", "Gadget", list_kind="WidgetList"), "ListKindConflict"),
    (crd("gadgets", "Gadget", short=["widget"]), "ShortNamesConflict"),  # a short name equal to a singular
])
def test_a_crd_asking_for_names_another_holds_is_not_accepted(second: dict[str, Any], reason: str) -> None:
    """apiextensions-apiserver naming controller (``calculateNamesAndConditions``): within a group, plural,
    singular and short names share one namespace, kind and listKind another; a name another CRD already accepted
    is refused with ``NamesAccepted=False`` and that reason, the CRD is not Established and nothing of it is served."""
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("widgets", "Widget", short=["wd"]))
    cluster.add_crd(second)
    assert conditions(cluster, "gadgets.example.com") == {"NamesAccepted": ("False", reason),
                                                          "Established": ("False", "NotAccepted")}
    assert set(served_names(cluster)) == {"widgets"}
    message = next(c["message"] for c in cluster.get_crd("gadgets.example.com")["status"]["conditions"]
                   if c["type"] == "NamesAccepted")
    assert "is already in use" in message


def test_a_conflicting_short_name_added_later_is_not_served_and_freed_names_are_accepted() -> None:
    """An Established CRD keeps serving its accepted names when an update asks for a taken one (NamesAccepted
    False, still Established); deleting the holder frees the name and the naming controller accepts it."""
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("widgets", "Widget", short=["wd"]))
    cluster.add_crd(crd("gadgets", "Gadget", short=["gd"]))
    cluster.update_crd(crd("gadgets", "Gadget", short=["gd", "wd"]))
    assert conditions(cluster, "gadgets.example.com") == {"NamesAccepted": ("False", "ShortNamesConflict"),
                                                          "Established": ("True", "InitialNamesAccepted")}
    assert served_names(cluster)["gadgets"] == ("Gadget", ["gd"])
    cluster.delete_crd("widgets.example.com")
    assert conditions(cluster, "gadgets.example.com")["NamesAccepted"] == ("True", "NoConflicts")
    assert served_names(cluster) == {"gadgets": ("Gadget", ["gd", "wd"])}


def test_a_refused_new_crd_is_established_once_its_names_are_free() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("widgets", "Widget"))
    cluster.add_crd(crd("gadgets", "Widget"))
    assert set(served_names(cluster)) == {"widgets"}
    cluster.delete_crd("widgets.example.com")
    assert conditions(cluster, "gadgets.example.com") == {"NamesAccepted": ("True", "NoConflicts"),
                                                          "Established": ("True", "InitialNamesAccepted")}
    assert served_names(cluster) == {"gadgets": ("Widget", [])}


def test_other_groups_do_not_conflict() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("widgets", "Widget"))
    cluster.add_crd(crd("widgets", "Widget", group="other.io"))
    assert conditions(cluster, "widgets.other.io")["NamesAccepted"] == ("True", "NoConflicts")


def test_multi_document_yaml_installs_every_crd() -> None:
    """Projects such as istio ship all their CRDs in one YAML stream separated by ``---``."""
    text = "---\n" + "\n---\n".join(yaml.safe_dump(crd(p, p.title()[:-1])) for p in ("widgets", "gadgets")) + "\n---\n"
    cluster = FakeCluster.empty()
    assert cluster.add_crds(text) == ["widgets.example.com", "gadgets.example.com"]
    other = FakeCluster.empty()
    assert other.add_crd(text) == "widgets.example.com" and other.get_crd("gadgets.example.com") is not None
    assert FakeCluster.empty(crds=[text]).get_crd("gadgets.example.com") is not None


def test_multi_document_yaml_reports_every_bad_document_and_installs_nothing() -> None:
    bad_scope = crd("gadgets", "Gadget")
    bad_scope["spec"]["scope"] = "Everywhere"
    text = yaml.safe_dump_all([crd("widgets", "Widget"), bad_scope, {"apiVersion": "v1", "kind": "ConfigMap"}])
    cluster = FakeCluster.empty()
    with pytest.raises(InvalidCRDError) as caught:
        cluster.add_crds(text)
    message = str(caught.value)
    assert "2 of 3 documents are invalid" in message
    assert "document 2 (name: gadgets.example.com): spec.scope:" in message
    assert "document 3: apiVersion/kind:" in message
    assert [n for n, _ in caught.value.errors] == [2, 3]
    assert cluster.crds() == []
