"""The kit refuses what kube-apiserver refuses, so that code which only works against a lax server fails in tests.

- A create or update body whose ``apiVersion`` is not the URL's: 400 ``the API version in the data (...) does not
  match the expected API version (...)`` (the create and update handlers), built-in and custom resources alike.
- A body of another ``kind``: a custom resource's validation says 422 ``kind: Invalid value``; a built-in body
  cannot be decoded into the resource's type: 400 ``... cannot be handled as a ...``.
- A create in a namespace that does not exist: 404 ``namespaces "x" not found`` (``NamespaceLifecycle``
  admission); in a namespace being deleted: 403 Forbidden.
- Every constructor of the kit gives a cluster the mapper answers from, in both discovery modes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from restmapper import LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.model import GroupKind, GroupVersionResource
from restmapper.testing import FakeCluster, InProcessTransport, crd_manifest
from restmapper.testing.profile import RELEASES, load_builtin_profile

JSON = {"Content-Type": "application/json", "Accept": "application/json"}
GADGETS = "/apis/example.com/v1beta1/namespaces/default/gadgets"


def _cluster() -> FakeCluster:
    cluster = FakeCluster()
    manifest = crd_manifest("example.com", "Gadget", versions=("v1beta1", "v1alpha1"))
    for version in manifest["spec"]["versions"]:
        version["subresources"] = {"status": {}}
    cluster.add_crd(manifest)
    return cluster


def _send(cluster: FakeCluster, method: str, path: str, body: dict[str, Any],
          content_type: str = "application/json") -> tuple[int, dict[str, Any]]:
    status, _, data = cluster.handle(method, path, {}, {**JSON, "Content-Type": content_type},
                                     json.dumps(body).encode())
    return status, json.loads(data)


def _gadget(api_version: str = "example.com/v1beta1", kind: str = "Gadget", name: str = "g") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": {"size": 1}}


def _deployment(api_version: str = "apps/v1", kind: str = "Deployment", name: str = "d") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": {"replicas": 1}}


def _assert_status(reply: tuple[int, dict[str, Any]], code: int, reason: str, message: str) -> dict[str, Any]:
    status, doc = reply
    assert (status, doc["kind"], doc["code"], doc["reason"], doc["message"]) == (code, "Status", code, reason, message)
    return doc


# --- apiVersion ------------------------------------------------------------------------------------------------------

API_VERSION_CASES = {
    "custom resource": (GADGETS, _gadget("example.com/v1alpha1"), "example.com/v1alpha1", "example.com/v1beta1"),
    "built-in resource": ("/apis/apps/v1/namespaces/default/deployments", _deployment("apps/v1beta1"),
                          "apps/v1beta1", "apps/v1"),
    "core resource": ("/api/v1/namespaces/default/configmaps",
                      {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, "apps/v1", "v1"),
}


@pytest.mark.parametrize(("path", "body", "sent", "expected"), API_VERSION_CASES.values(), ids=API_VERSION_CASES.keys())
def test_a_create_of_another_api_version_is_a_bad_request(path, body, sent, expected):
    cluster = _cluster()
    _assert_status(_send(cluster, "POST", path, body), 400, "BadRequest",
                   f"the API version in the data ({sent}) does not match the expected API version ({expected})")
    assert cluster.list_objects(path.rsplit("/", 1)[1] + ("" if "/api/v1" in path else "." + path.split("/")[2])) \
        == []


@pytest.mark.parametrize("subresource", ["", "/status"])
def test_an_update_of_another_api_version_is_a_bad_request(subresource):
    cluster = _cluster()
    assert _send(cluster, "POST", GADGETS, _gadget())[0] == 201
    stored = cluster.get_object("gadgets.example.com", "g", "default")
    _assert_status(_send(cluster, "PUT", f"{GADGETS}/g{subresource}", {**stored, "apiVersion": "example.com/v1alpha1"}),
                   400, "BadRequest", "the API version in the data (example.com/v1alpha1) does not match the "
                   "expected API version (example.com/v1beta1)")
    assert cluster.get_object("gadgets.example.com", "g", "default") == stored


def test_a_server_side_apply_of_another_api_version_is_a_bad_request():
    cluster = _cluster()
    status, _, data = cluster.handle("PATCH", f"{GADGETS}/g", {"fieldManager": "me"},
                                     {"Content-Type": "application/apply-patch+yaml"},
                                     json.dumps(_gadget("example.com/v1alpha1")).encode())
    assert status == 400
    assert json.loads(data)["message"] == ("the API version in the data (example.com/v1alpha1) does not match the "
                                           "expected API version (example.com/v1beta1)")


def test_a_body_without_api_version_or_kind_takes_the_urls():
    cluster = _cluster()
    status, doc = _send(cluster, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    assert (status, doc["apiVersion"], doc["kind"]) == (201, "v1", "ConfigMap")


def test_a_patch_of_an_object_stored_at_another_version_is_accepted():
    """A patch carries no apiVersion: it applies to the object as the URL's version shows it."""
    cluster = _cluster()
    assert _send(cluster, "POST", GADGETS.replace("v1beta1", "v1alpha1"), _gadget("example.com/v1alpha1"))[0] == 201
    status, doc = _send(cluster, "PATCH", f"{GADGETS}/g", {"spec": {"size": 2}}, "application/merge-patch+json")
    assert (status, doc["apiVersion"], doc["spec"]["size"]) == (200, "example.com/v1beta1", 2)


# --- kind ------------------------------------------------------------------------------------------------------------


def test_a_custom_resource_of_another_kind_is_invalid():
    doc = _assert_status(_send(_cluster(), "POST", GADGETS, _gadget(kind="Widget")), 422, "Invalid",
                         'Widget.example.com "g" is invalid: kind: Invalid value: "Widget": must be Gadget')
    assert doc["details"] == {"name": "g", "group": "example.com", "kind": "Widget", "causes": [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "Widget": must be Gadget', "field": "kind"}]}


def test_a_built_in_body_of_another_kind_cannot_be_decoded():
    status, doc = _send(_cluster(), "POST", "/apis/apps/v1/namespaces/default/deployments",
                        _deployment(kind="StatefulSet"))
    assert (status, doc["reason"]) == (400, "BadRequest")
    assert doc["message"].startswith('StatefulSet in version "v1" cannot be handled as a Deployment: ')


def test_an_update_to_another_kind_is_refused():
    cluster = _cluster()
    assert _send(cluster, "POST", GADGETS, _gadget())[0] == 201
    stored = cluster.get_object("gadgets.example.com", "g", "default")
    assert _send(cluster, "PUT", f"{GADGETS}/g", {**stored, "kind": "Widget"})[0] == 422


# --- namespaces ------------------------------------------------------------------------------------------------------

CREATES_IN = {
    "custom resource": lambda ns: ("POST", f"/apis/example.com/v1beta1/namespaces/{ns}/gadgets", _gadget(),
                                   "application/json"),
    "built-in resource": lambda ns: ("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", _deployment(),
                                     "application/json"),
    "server-side apply": lambda ns: ("PATCH", f"/api/v1/namespaces/{ns}/configmaps/c?fieldManager=me",
                                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                                     "application/apply-patch+yaml"),
}


def _create_in(cluster: FakeCluster, how: str, namespace: str) -> tuple[int, dict[str, Any]]:
    method, url, body, content_type = CREATES_IN[how](namespace)
    path, _, query = url.partition("?")
    params = dict(p.split("=") for p in query.split("&")) if query else {}
    status, _, data = cluster.handle(method, path, params, {**JSON, "Content-Type": content_type},
                                     json.dumps(body).encode())
    return status, json.loads(data)


@pytest.mark.parametrize("how", CREATES_IN)
def test_a_create_in_a_namespace_that_does_not_exist_is_not_found(how):
    cluster = _cluster()
    doc = _assert_status(_create_in(cluster, how, "team-a"), 404, "NotFound", 'namespaces "team-a" not found')
    assert doc["details"] == {"name": "team-a", "kind": "namespaces"}
    assert _send(cluster, "POST", "/api/v1/namespaces", {"metadata": {"name": "team-a"}})[0] == 201
    assert _create_in(cluster, how, "team-a")[0] == 201


@pytest.mark.parametrize("how", CREATES_IN)
def test_a_create_in_a_namespace_being_deleted_is_forbidden(how):
    cluster = _cluster()
    assert _send(cluster, "POST", "/api/v1/namespaces", {"metadata": {"name": "team-a"}})[0] == 201
    held = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/x"]}}
    assert _send(cluster, "POST", "/api/v1/namespaces/team-a/configmaps", held)[0] == 201
    assert cluster.handle("DELETE", "/api/v1/namespaces/team-a", {}, {})[0] == 200  # Terminating: held is held
    status, doc = _create_in(cluster, how, "team-a")
    assert (status, doc["reason"]) == (403, "Forbidden")
    assert doc["message"].endswith("is forbidden: unable to create new content in namespace team-a because it is "
                                   "being terminated")
    assert doc["details"]["causes"][0]["reason"] == "NamespaceTerminating"


# --- constructors ----------------------------------------------------------------------------------------------------


def _constructors() -> list[Any]:
    made = []
    for name, make in (("FakeCluster()", lambda **kw: FakeCluster(**kw)), ("embedded", FakeCluster.embedded),
                       ("empty", FakeCluster.empty), ("builtin=False", lambda **kw: FakeCluster(builtin=False, **kw))):
        for mode in ("aggregated", "legacy"):
            made.append(pytest.param(make, {"mode": mode}, id=f"{name}-{mode}"))
    for release in RELEASES:
        for mode in ("aggregated", "aggregated-v2beta1", "legacy"):
            if mode in load_builtin_profile(release).modes:
                for name, make in (("release", lambda **kw: FakeCluster(**kw)), ("empty", FakeCluster.empty)):
                    made.append(pytest.param(make, {"mode": mode, "release": release},
                                             id=f"{name}-{release}-{mode}"))
    return made


@pytest.mark.parametrize(("make", "options"), _constructors())
def test_every_constructor_gives_a_cluster_the_mapper_answers_from(make, options):
    cluster = make(**options)
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    assert mapper.rest_mapping(GroupKind("", "Namespace"), "v1").resource.resource == "namespaces"
    assert mapper.kind_for(GroupVersionResource("", "", "namespaces")).kind == "Namespace"
    assert mapper.resolve("ns").resource.resource == "namespaces"
    assert "" in mapper.cache.group_names()
    assert cluster.get_object("namespaces", "default") is not None  # created at start-up, as kube-apiserver does
    status, _, _ = cluster.handle("POST", "/api/v1/namespaces", {}, JSON, b'{"metadata": {"name": "team-a"}}')
    assert status == 201
