"""The kit validates CRDs as kube-apiserver does, and its 422 Invalid answers carry kube-apiserver's details.

kube-apiserver (apiextensions-apiserver's CRD validation) refuses a ``spec.group`` that is not a lower-case DNS-1123
subdomain with at least one dot, names (plural, singular, short names, categories, versions) that are not DNS-1035
labels, a kind or listKind that is not one in lower case, a listKind equal to the kind, a scope other than
Cluster/Namespaced, duplicate versions, not exactly one storage version and a ``metadata.name`` other than
``<plural>.<group>``, all errors at once. On update ``spec.group`` and ``spec.names.plural`` are immutable. Its
Status is ``errors.NewInvalid``: message ``CustomResourceDefinition.apiextensions.k8s.io "<name>" is invalid:
<errors>`` and ``details`` with ``name``, ``group``, ``kind`` and one cause (``reason``, ``message``, ``field``) per
error. Every kit write path that answers 422 Invalid carries such details.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import requests

from restmapper.testing import FakeCluster, InvalidCRDError

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
         "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
         "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def crd(group: str = "example.com", plural: str = "widgets", kind: str = "Widget", **names: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "kind": kind, **names},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


def call(cluster: FakeCluster, method: str, path: str, body: Any, content_type: str = "application/json"
         ) -> tuple[int, dict[str, Any]]:
    with cluster.mock():
        reply = requests.request(method, cluster.base_url + path, data=json.dumps(body),
                                 headers={"Content-Type": content_type}, timeout=5)
    return reply.status_code, reply.json()


# (how to break the manifest, [(field, cause reason, cause message)]) as kube-apiserver 1.3x answers
REFUSED: list[tuple[str, Any, list[tuple[str, str, str]]]] = [
    ("upper-case group", lambda m: _regroup(m, "Example.com"),  # so is the name, which holds the group
     [("metadata.name", "FieldValueInvalid", f'Invalid value: "widgets.Example.com": {SUBDOMAIN}'),
      ("spec.group", "FieldValueInvalid", f'Invalid value: "Example.com": {SUBDOMAIN}')]),
    ("group without a dot", lambda m: _regroup(m, "example"),
     [("spec.group", "FieldValueInvalid", 'Invalid value: "example": should be a domain with at least one dot')]),
    ("underscore in group", lambda m: _regroup(m, "my_org.io"),
     [("metadata.name", "FieldValueInvalid", f'Invalid value: "widgets.my_org.io": {SUBDOMAIN}'),
      ("spec.group", "FieldValueInvalid", f'Invalid value: "my_org.io": {SUBDOMAIN}')]),
    ("upper-case plural", lambda m: _rename(m, plural="Widgets"),
     [("metadata.name", "FieldValueInvalid", f'Invalid value: "Widgets.example.com": {SUBDOMAIN}'),
      ("spec.names.plural", "FieldValueInvalid", f'Invalid value: "Widgets": {LABEL}')]),
    ("singular", lambda m: m["spec"]["names"].update(singular="a-widget-"),
     [("spec.names.singular", "FieldValueInvalid", f'Invalid value: "a-widget-": {LABEL}')]),
    ("kind", lambda m: m["spec"]["names"].update(kind="Wid_get", listKind="WidgetList"),  # singular defaults to it
     [("spec.names.singular", "FieldValueInvalid", f'Invalid value: "wid_get": {LABEL}'),
      ("spec.names.kind", "FieldValueInvalid",
       f'Invalid value: "Wid_get": may have mixed case, but should otherwise match: {LABEL}')]),
    ("listKind equal to kind", lambda m: m["spec"]["names"].update(listKind="Widget"),
     [("spec.names.listKind", "FieldValueInvalid", 'Invalid value: "Widget": kind and listKind may not be the same')]),
    ("short name", lambda m: m["spec"]["names"].update(shortNames=["w", "W1"]),
     [("spec.names.shortNames[1]", "FieldValueInvalid", f'Invalid value: "W1": {LABEL}')]),
    ("category", lambda m: m["spec"]["names"].update(categories=["all", "my_things"]),
     [("spec.names.categories[1]", "FieldValueInvalid", f'Invalid value: "my_things": {LABEL}')]),
    ("version name", lambda m: m["spec"]["versions"][0].update(name="V1"),
     [("spec.versions[0].name", "FieldValueInvalid", f'Invalid value: "V1": {LABEL}')]),
    ("scope", lambda m: m["spec"].update(scope="Galaxy"),
     [("spec.scope", "FieldValueNotSupported", 'Unsupported value: "Galaxy": supported values: "Cluster", '
                                               '"Namespaced"')]),
    ("name", lambda m: m["metadata"].update(name="other.example.com"),
     [("metadata.name", "FieldValueInvalid", 'Invalid value: "other.example.com": must be spec.names.plural+"."+'
                                             "spec.group")]),
    ("two errors at once", lambda m: (_regroup(m, "example"), m["spec"].update(scope="Galaxy")),
     [("spec.group", "FieldValueInvalid", 'Invalid value: "example": should be a domain with at least one dot'),
      ("spec.scope", "FieldValueNotSupported", 'Unsupported value: "Galaxy": supported values: "Cluster", '
                                               '"Namespaced"')]),
]


def _regroup(m: dict[str, Any], group: str) -> None:
    m["spec"]["group"] = group
    m["metadata"]["name"] = f"{m['spec']['names']['plural']}.{group}"


def _rename(m: dict[str, Any], plural: str) -> None:
    m["spec"]["names"]["plural"] = plural
    m["metadata"]["name"] = f"{plural}.{m['spec']['group']}"


def _message(name: str, errors: list[tuple[str, str, str]]) -> str:
    texts = [f"{f}: {body}" for f, _, body in errors]
    listed = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return f'CustomResourceDefinition.apiextensions.k8s.io "{name}" is invalid: {listed}'


@pytest.mark.parametrize(("what", "mutate", "errors"), REFUSED, ids=[r[0] for r in REFUSED])
def test_the_kit_refuses_what_kube_apiserver_refuses_with_its_status(what: str, mutate: Any,
                                                                     errors: list[tuple[str, str, str]]) -> None:
    manifest = crd()
    mutate(manifest)
    cluster = FakeCluster.empty()
    with pytest.raises(InvalidCRDError) as info:
        cluster.add_crd(copy.deepcopy(manifest))
    assert info.value.field == errors[0][0]
    assert [(c["field"], c["reason"], c["message"]) for c in info.value.causes] == errors
    status, doc = call(cluster, "POST", CRDS, manifest)
    name = manifest["metadata"]["name"]
    assert status == 422 and doc["reason"] == "Invalid" and doc["code"] == 422
    assert doc["message"] == _message(name, errors)
    assert doc["details"] == {"name": name, "group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
                              "causes": [{"reason": r, "message": m, "field": f} for f, r, m in errors]}
    assert cluster.crds() == []


def test_valid_names_are_still_accepted() -> None:
    cluster = FakeCluster.empty()
    manifest = crd("my-org.example.io", "big-widgets", "BigWidget", shortNames=["bw"], categories=["all"])
    assert cluster.add_crd(manifest) == "big-widgets.my-org.example.io"


def test_an_update_that_breaks_the_crd_is_refused_with_details() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd())
    path = f"{CRDS}/widgets.example.com"
    current = cluster.get_crd("widgets.example.com")
    assert current is not None
    broken = copy.deepcopy(current)
    broken["spec"]["names"]["shortNames"] = ["Bad"]
    status, doc = call(cluster, "PUT", path, broken)
    assert status == 422, doc
    assert doc["details"] == {"name": "widgets.example.com", "group": "apiextensions.k8s.io",
                              "kind": "CustomResourceDefinition",
                              "causes": [{"reason": "FieldValueInvalid", "message": f'Invalid value: "Bad": {LABEL}',
                                          "field": "spec.names.shortNames[0]"}]}
    moved = copy.deepcopy(current)
    moved["spec"]["group"] = "other.example.com"  # the group is immutable (it is part of the name)
    status, doc = call(cluster, "PUT", path, moved)
    assert status == 422 and doc["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "other.example.com": field is immutable',
         "field": "spec.group"}], doc
    assert doc["message"] == ('CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: '
                              'spec.group: Invalid value: "other.example.com": field is immutable')
    rescoped = copy.deepcopy(current)
    rescoped["spec"]["scope"] = "Cluster"  # Established: the scope is fixed too (delete and recreate instead)
    status, doc = call(cluster, "PUT", path, rescoped)
    assert status == 422 and doc["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "Cluster": field is immutable',
         "field": "spec.scope"}], doc
    assert cluster.get_crd("widgets.example.com")["spec"]["scope"] == "Namespaced"  # type: ignore[index]
    relabelled = copy.deepcopy(current)
    relabelled["spec"]["names"]["shortNames"] = ["w"]
    assert call(cluster, "PUT", path, relabelled)[0] == 200  # a valid update still goes through


def test_accepted_names_are_checked_as_the_status_is() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd())
    with pytest.raises(InvalidCRDError) as info:
        cluster.set_accepted_names("widgets.example.com", plural="Gadgets")
    assert info.value.causes == [{"reason": "FieldValueInvalid", "message": f'Invalid value: "Gadgets": {LABEL}',
                                  "field": "status.acceptedNames.plural"}]
    cluster.set_accepted_names("widgets.example.com", plural="gadgets")


def _details_ok(doc: dict[str, Any], name: str, kind: str, group: str | None) -> None:
    details = doc["details"]
    assert details.get("name", "") == name and details["kind"] == kind and details.get("group") == group, doc
    assert "name" in details or not name  # empty fields are left out, as kube-apiserver's omitempty
    assert details["causes"] and all(set(c) == {"reason", "message", "field"} for c in details["causes"]), doc
    for cause in details["causes"]:
        assert f"{cause['field']}: {cause['message']}" in doc["message"], doc
        prefix = {"FieldValueInvalid": "Invalid value", "FieldValueRequired": "Required value",
                  "FieldValueForbidden": "Forbidden", "FieldValueNotSupported": "Unsupported value",
                  "FieldValueTooLong": "Too long"}[cause["reason"]]
        assert cause["message"].startswith(prefix), doc


def test_every_invalid_answer_of_the_kit_carries_details() -> None:
    cluster = FakeCluster.embedded()
    cms = "/api/v1/namespaces/default/configmaps"
    cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "f", "namespace": "default", "finalizers": ["example.com/a"]}})
    assert call(cluster, "DELETE", f"{cms}/f", {})[0] == 200
    status, doc = call(cluster, "PATCH", f"{cms}/f", {"metadata": {"finalizers": ["example.com/a", "x/new"]}},
                       "application/merge-patch+json")
    assert status == 422 and doc["message"].startswith('ConfigMap "f" is invalid: metadata.finalizers: Forbidden')
    _details_ok(doc, "f", "ConfigMap", None)
    status, doc = call(cluster, "POST", cms, {"apiVersion": "v1", "kind": "ConfigMap"})
    assert status == 422, doc
    _details_ok(doc, "", "ConfigMap", None)
    deploys = "/apis/apps/v1/namespaces/default/deployments"
    cluster.apply_object({"apiVersion": "apps/v1", "kind": "Deployment",
                          "metadata": {"name": "web", "namespace": "default", "finalizers": ["example.com/a"]}})
    assert call(cluster, "DELETE", f"{deploys}/web", {})[0] == 200
    status, doc = call(cluster, "PATCH", f"{deploys}/web", {"metadata": {"finalizers": ["example.com/a", "x/n"]}},
                       "application/merge-patch+json")
    assert status == 422 and doc["message"].startswith('Deployment.apps "web" is invalid: metadata.finalizers:'), doc
    _details_ok(doc, "web", "Deployment", "apps")
    status, doc = call(cluster, "DELETE", f"{cms}/f", {"propagationPolicy": "Sometimes"})
    assert status == 422, doc
    _details_ok(doc, "", "DeleteOptions", "meta.k8s.io")
    with cluster.mock():
        reply = requests.patch(cluster.base_url + f"{cms}/f", data="{}", params={"force": "true"},
                               headers={"Content-Type": "application/merge-patch+json"}, timeout=5)
    assert reply.status_code == 422
    _details_ok(reply.json(), "", "PatchOptions", "meta.k8s.io")


@pytest.mark.parametrize("absent", ["", None], ids=["empty", "null"])
def test_crd_with_empty_singular_is_defaulted_as_kube_apiserver_does(absent: Any) -> None:
    """SetDefaults_CustomResourceDefinitionSpec defaults ``singular`` (the kind lower-cased) and ``listKind``
    (kind + "List") whenever their length is 0: absent, null and "" are all Go's zero value. The CRD is accepted
    and served with the defaults, never refused with "Required value"."""
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(singular=absent, listKind=absent, shortNames=None, categories=None))
    stored = cluster.crds()[0]["spec"]["names"]
    assert (stored["singular"], stored["listKind"]) == ("widget", "WidgetList")
    status, body = call(cluster, "GET", "/apis/example.com/v1", None)
    assert status == 200
    assert [(r["name"], r["singularName"], r["kind"]) for r in body["resources"]] == [("widgets", "widget", "Widget")]


def test_crd_kind_lowercased_as_go_strings_tolower() -> None:
    """Go's strings.ToLower maps U+0130 (capital I with dot above) to a plain "i" (the simple case mapping):
    kube-apiserver checks "item" as a DNS-1035 label, accepts kind "\u0130tem" and defaults its singular to "item".
    Python's str.lower() gives "i\u0307tem" (the full mapping), which is no label."""
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(plural="items", kind="\u0130tem"))
    assert cluster.crds()[0]["spec"]["names"]["singular"] == "item"
    # Nor the final-sigma rule: Go lowers every capital sigma to U+03C3 (still no label: refused, as upstream).
    with pytest.raises(InvalidCRDError) as info:
        cluster.add_crd(crd(plural="sigmas", kind="A\u03a3", singular="sigma"))
    assert info.value.causes[0]["message"].startswith('Invalid value: "A\u03a3": may have mixed case')


def test_go_lower_is_the_simple_case_mapping() -> None:
    from restmapper.testing._crd_rules import go_lower

    assert go_lower("\u0130tem") == "item"
    assert go_lower("\u0391\u03a3") == "\u03b1\u03c3"  # str.lower() gives a final sigma, U+03C2
    assert go_lower("BigWidget") == "bigwidget"
