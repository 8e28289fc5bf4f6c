"""FakeCluster as an API server for objects: CRD lifecycle, APIServices, REST endpoints, kubernetes.dynamic CRUD."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def crd(group: str = "example.com", plural: str = "widgets", kind: str = "Widget", scope: str = "Namespaced",
        versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope, "names": {"plural": plural, "kind": kind},
                 "versions": [{"name": v, "served": True, "storage": i == 0} for i, v in enumerate(versions)]},
    }


def call(cluster: FakeCluster, method: str, path: str, body: Any = None, content_type: str = "application/json",
         query: dict[str, str] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else b""
    status, headers, raw = cluster.handle(method, path, query or {}, {"Content-Type": content_type}, data)
    is_json = headers.get("Content-Type", "").startswith("application/json")
    return status, json.loads(raw) if is_json and raw else raw


def served_resources(cluster: FakeCluster, group: str) -> dict[str, list[str]]:
    status, _, raw = cluster.handle("GET", "/apis", {}, {"Accept": V2})
    assert status == 200
    out = {}
    for g in json.loads(raw)["items"]:
        if g["metadata"]["name"] == group:
            for v in g["versions"]:
                out[v["version"]] = [r["resource"] for r in v.get("resources", [])] \
                    if v.get("freshness") != "Stale" else ["<stale>"]
    return out


def condition(obj: dict[str, Any], type_: str) -> str:
    return next(c["status"] for c in obj["status"]["conditions"] if c["type"] == type_)


# --- CRD lifecycle -------------------------------------------------------------------------------------------


def test_crd_metadata_and_status_as_apiextensions_sets_them() -> None:
    cluster = FakeCluster.empty()
    stored = cluster.get_crd(cluster.add_crd(crd()))
    assert stored is not None
    meta = stored["metadata"]
    assert meta["uid"] and meta["generation"] == 1 and int(meta["resourceVersion"]) > 0
    assert stored["status"]["acceptedNames"]["plural"] == "widgets"
    assert condition(stored, "NamesAccepted") == condition(stored, "Established") == "True"
    assert stored["status"]["storedVersions"] == ["v1"]


def test_resource_version_is_one_counter_shared_by_all_objects() -> None:
    cluster = FakeCluster.embedded()
    rv0 = int(cluster.resource_version)
    cm = cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    cluster.add_crd(crd())
    widget = cluster.get_crd("widgets.example.com")
    assert widget is not None
    assert int(cm["metadata"]["resourceVersion"]) == rv0 + 1
    assert int(widget["metadata"]["resourceVersion"]) == rv0 + 2


def test_generation_is_bumped_by_spec_changes_only_and_no_op_updates_are_skipped() -> None:
    cluster = FakeCluster.empty()
    name = cluster.add_crd(crd())
    rv = cluster.get_crd(name)["metadata"]["resourceVersion"]  # type: ignore[index]
    cluster.update_crd(crd())  # identical: no write
    assert cluster.get_crd(name)["metadata"]["resourceVersion"] == rv  # type: ignore[index]
    cluster.set_accepted_names(name, short_names=["wd"])
    after_names = cluster.get_crd(name)
    assert after_names is not None and after_names["metadata"]["generation"] == 1
    assert after_names["metadata"]["resourceVersion"] != rv
    cluster.set_served(name, False)
    cluster.set_served(name, True)
    assert cluster.get_crd(name)["metadata"]["generation"] == 3  # type: ignore[index]
    with pytest.raises(KeyError):
        cluster.update_crd(crd(plural="gizmos", kind="Gizmo"))


def test_discovery_serves_accepted_names_not_spec_names() -> None:
    cluster = FakeCluster.empty()
    name = cluster.add_crd(crd())
    cluster.set_accepted_names(name, plural="gadgets", kind="Gadget", listKind="GadgetList")
    assert served_resources(cluster, "example.com") == {"v1": ["gadgets"]}
    status, doc = call(cluster, "GET", "/apis/example.com/v1")
    assert status == 200 and [(r["name"], r["kind"]) for r in doc["resources"]] == [("gadgets", "Gadget")]
    with pytest.raises(InvalidArgumentError):
        cluster.set_accepted_names(name, nickname="x")
    with pytest.raises(InvalidArgumentError):
        cluster.set_accepted_names(name, short_names="notalist")


@pytest.mark.parametrize("after", [0, 1, 3])
def test_established_after_n_requests(after: int) -> None:
    cluster = FakeCluster.empty()
    name = cluster.add_crd(crd(), established_after=after)
    seen = [served_resources(cluster, "example.com") for _ in range(after + 1)]
    assert seen == [{}] * after + [{"v1": ["widgets"]}]
    assert condition(cluster.get_crd(name), "Established") == "True"  # type: ignore[arg-type]


def test_established_by_callable_and_by_establish() -> None:
    cluster = FakeCluster.empty()
    ready = {"now": False}
    cluster.add_crd(crd(), established_after=lambda: ready["now"])
    cluster.add_crd(crd(plural="gizmos", kind="Gizmo"), established_after=100)
    pending = cluster.get_crd("widgets.example.com")
    assert pending is not None and condition(pending, "Established") == "False"
    assert condition(pending, "NamesAccepted") == "True"
    assert served_resources(cluster, "example.com") == {}
    assert call(cluster, "GET", "/apis/example.com/v1/widgets")[0] == 404
    ready["now"] = True
    assert served_resources(cluster, "example.com") == {"v1": ["widgets"]}
    cluster.establish("gizmos.example.com")
    assert served_resources(cluster, "example.com") == {"v1": ["gizmos", "widgets"]}


def test_set_served_by_group_version_and_set_storage() -> None:
    cluster = FakeCluster.empty()
    name = cluster.add_crd(crd(versions=("v1", "v2")))
    cluster.set_served("example.com/v1", False)
    assert served_resources(cluster, "example.com") == {"v2": ["widgets"]}
    with pytest.raises(KeyError):
        cluster.set_served("example.com/v9", True)
    cluster.set_storage(name, "v2")
    stored = cluster.get_crd(name)
    assert stored is not None
    assert [v["storage"] for v in stored["spec"]["versions"]] == [False, True]
    assert stored["status"]["storedVersions"] == ["v1", "v2"] and stored["metadata"]["generation"] == 3
    with pytest.raises(KeyError):
        cluster.set_storage(name, "v3")


def test_deleting_a_crd_deletes_its_objects() -> None:
    cluster = FakeCluster.empty()
    name = cluster.add_crd(crd())
    assert call(cluster, "POST", "/api/v1/namespaces", {"metadata": {"name": "a"}})[0] == 201
    assert call(cluster, "POST", "/apis/example.com/v1/namespaces/a/widgets",
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})[0] == 201
    cluster.delete_crd(name)
    cluster.add_crd(crd())
    assert cluster.list_objects(name) == []
    with pytest.raises(KeyError):
        cluster.remove_crd("nothings.example.com")


def test_crds_through_the_api() -> None:
    cluster = FakeCluster.empty()
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    status, created = call(cluster, "POST", path, crd())
    assert status == 201 and created["metadata"]["uid"] and created["kind"] == "CustomResourceDefinition"
    assert call(cluster, "POST", path, crd())[1]["reason"] == "AlreadyExists"
    assert served_resources(cluster, "example.com") == {"v1": ["widgets"]}
    status, doc = call(cluster, "GET", path)
    assert status == 200 and [i["metadata"]["name"] for i in doc["items"]] == ["widgets.example.com"]
    status, patched = call(cluster, "PATCH", path + "/widgets.example.com",
                           {"spec": {"names": {"shortNames": ["wd"]}}}, "application/merge-patch+json")
    assert status == 200 and patched["metadata"]["generation"] == 2
    bad = crd(plural="gizmos", kind="Gizmo")
    del bad["spec"]["group"]
    assert call(cluster, "POST", path, bad)[1]["reason"] == "Invalid"
    assert call(cluster, "DELETE", path + "/widgets.example.com")[0] == 200
    assert served_resources(cluster, "example.com") == {}


# --- APIServices ---------------------------------------------------------------------------------------------


def test_apiservices_for_builtin_crd_and_aggregated_group_versions() -> None:
    from restmapper.model import APIResource

    cluster = FakeCluster.embedded()
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [APIResource("pods", True, "PodMetrics", ("get", "list"))])
    names = {o["metadata"]["name"] for o in cluster.apiservices()}
    assert {"v1.", "v1.apps", "v1.cert-manager.io", "v1beta1.metrics.k8s.io"} <= names
    apps, certs = cluster.get_apiservice("v1.apps"), cluster.get_apiservice("cert-manager.io/v1")
    metrics = cluster.get_apiservice("v1beta1.metrics.k8s.io")
    assert apps is not None and certs is not None and metrics is not None
    assert apps["status"]["conditions"][0]["reason"] == "Local" and "service" not in apps["spec"]
    assert certs["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"] == "true"
    assert (certs["spec"]["groupPriorityMinimum"], certs["spec"]["versionPriority"]) == (1000, 100)
    assert metrics["spec"]["service"]["namespace"] == "kube-system"
    assert condition(metrics, "Available") == "True"
    status, doc = call(cluster, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io")
    assert status == 200 and doc["spec"]["group"] == "metrics.k8s.io"
    cluster.remove_group_version("metrics.k8s.io/v1beta1")
    assert cluster.get_apiservice("v1beta1.metrics.k8s.io") is None


def test_unavailable_apiservice_is_503_and_stale_then_recovers() -> None:
    from restmapper.model import APIResource

    cluster = FakeCluster.embedded()
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [APIResource("pods", True, "PodMetrics", ("get", "list"))])
    cluster.set_available("v1beta1.metrics.k8s.io", False, reason="MissingEndpoints")
    obj = cluster.get_apiservice("v1beta1.metrics.k8s.io")
    assert obj is not None and obj["status"]["conditions"][0]["reason"] == "MissingEndpoints"
    assert condition(obj, "Available") == "False"
    assert served_resources(cluster, "metrics.k8s.io") == {"v1beta1": ["<stale>"]}
    assert call(cluster, "GET", "/apis/metrics.k8s.io/v1beta1")[0] == 503
    assert call(cluster, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/a/pods")[0] == 503
    cluster.set_available("metrics.k8s.io/v1beta1", True)
    assert served_resources(cluster, "metrics.k8s.io") == {"v1beta1": ["pods"]}
    assert condition(cluster.get_apiservice("metrics.k8s.io/v1beta1"), "Available") == "True"  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        cluster.set_available("v1.nothing.example.com", False)


# --- REST endpoints -------------------------------------------------------------------------------------------


def test_two_kinds_of_404_bodies() -> None:
    cluster = FakeCluster.embedded()
    status, missing = call(cluster, "GET", "/apis/apps/v1/namespaces/default/deployments/x")
    assert status == 404 and missing["message"] == 'deployments.apps "x" not found'
    assert missing["details"] == {"name": "x", "group": "apps", "kind": "deployments"}
    status, core = call(cluster, "GET", "/api/v1/namespaces/default/configmaps/x")
    assert core["details"] == {"name": "x", "kind": "configmaps"} and core["message"] == 'configmaps "x" not found'
    for path in ("/apis/apps/v1/namespaces/default/nothings/x", "/apis/nothing.io/v1/things/x",
                 "/api/v1/namespaces/default/nodes/n"):  # unserved type; cluster-scoped under a namespace
        status, unknown = call(cluster, "GET", path)
        assert status == 404 and unknown["reason"] == "NotFound" and unknown["details"] == {}
        assert unknown["message"] == "the server could not find the requested resource"


def test_crud_namespaces_conflicts_and_patch_types() -> None:
    cluster = FakeCluster.embedded()
    base = "/apis/apps/v1/namespaces/{}/deployments"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 1}}
    for namespace in ("a", "b"):
        assert call(cluster, "POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})[0] == 201
    assert call(cluster, "POST", base.format("a"), dep)[0] == 201
    assert call(cluster, "POST", base.format("b"), dep)[0] == 201
    assert call(cluster, "POST", base.format("a"), dep)[1]["reason"] == "AlreadyExists"
    wrong_ns = {**dep, "metadata": {"name": "x", "namespace": "b"}}
    assert call(cluster, "POST", base.format("a"), wrong_ns)[1]["reason"] == "BadRequest"
    status, listed = call(cluster, "GET", "/apis/apps/v1/deployments")
    assert status == 200 and [i["metadata"]["namespace"] for i in listed["items"]] == ["a", "b"]
    assert listed["metadata"]["resourceVersion"] == cluster.resource_version
    status, got = call(cluster, "GET", base.format("a") + "/web")
    stale = {**got, "metadata": {**got["metadata"], "resourceVersion": "1"}}
    assert call(cluster, "PUT", base.format("a") + "/web", stale)[1]["reason"] == "Conflict"
    status, patched = call(cluster, "PATCH", base.format("a") + "/web", {"spec": {"replicas": 3}},
                           "application/strategic-merge-patch+json")
    assert status == 200 and patched["spec"]["replicas"] == 3 and patched["metadata"]["generation"] == 2
    status, patched = call(cluster, "PATCH", base.format("a") + "/web", {"metadata": {"labels": {"x": "y"}}},
                           "application/merge-patch+json")
    assert patched["metadata"]["generation"] == 2  # metadata changes leave generation alone
    status, patched = call(cluster, "PATCH", base.format("a") + "/web",
                           [{"op": "replace", "path": "/spec/replicas", "value": 5}], "application/json-patch+json")
    assert status == 200 and patched["spec"]["replicas"] == 5
    status, refused = call(cluster, "PATCH", base.format("a") + "/web", {}, "application/apply-patch+yaml")
    assert status == 422 and "fieldManager: Required value" in refused["message"]  # SSA needs a field manager
    assert call(cluster, "PATCH", base.format("a") + "/web", {}, "application/x-unknown")[0] == 415
    assert call(cluster, "GET", base.format("a"), query={"labelSelector": "x=y"})[1]["items"][0]["metadata"][
        "name"] == "web"
    assert call(cluster, "GET", base.format("b"), query={"labelSelector": "x=y"})[1]["items"] == []
    status, deleted = call(cluster, "DELETE", base.format("a") + "/web")
    assert status == 200 and deleted["metadata"]["name"] == "web"
    assert call(cluster, "DELETE", base.format("a") + "/web")[1]["message"] == 'deployments.apps "web" not found'
    assert call(cluster, "DELETE", base.format("b"))[0] == 200
    assert cluster.list_objects("deployments.apps") == []
    assert call(cluster, "POST", base.format("a"), {"metadata": {}})[1]["reason"] == "Invalid"
    assert call(cluster, "POST", base.format("a"), [1])[1]["reason"] == "BadRequest"


def test_python_side_object_api() -> None:
    cluster = FakeCluster.embedded()
    created = cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    assert created["metadata"]["namespace"] == "default"
    assert cluster.get_object("configmaps", "a", "default") is not None
    assert call(cluster, "GET", "/api/v1/namespaces/default/configmaps/a")[0] == 200
    assert cluster.delete_object("configmaps", "a", "default")["metadata"]["name"] == "a"
    with pytest.raises(KeyError):
        cluster.delete_object("configmaps", "a", "default")
    with pytest.raises(InvalidArgumentError):
        cluster.apply_object({"apiVersion": "v1", "kind": "Nothing", "metadata": {"name": "a"}})


def test_dynamic_client_crud_against_the_loopback_server(tmp_path: Path) -> None:
    pytest.importorskip("kubernetes")
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import NotFoundError

    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        # Upstream's discoverer writes a cache file into the shared temp dir unless told otherwise.
        client = DynamicClient(config.new_client_from_config(config_file=str(served.kubeconfig_path)),
                               cache_file=str(tmp_path / "discovery.json"))
        client.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": "ns"}})
        cases = [("v1", "ConfigMap", {"data": {"a": "1"}}, {"data": {"b": "2"}}),
                 ("apps/v1", "Deployment", {"spec": {"replicas": 1}}, {"spec": {"replicas": 2}}),
                 ("cert-manager.io/v1", "Certificate", {"spec": {"secretName": "s"}}, {"spec": {"isCA": True}})]
        for api_version, kind, content, patch in cases:
            res = client.resources.get(api_version=api_version, kind=kind)
            body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, **content}
            created = res.create(body=body, namespace="ns")
            assert created.metadata.uid and created.metadata.resourceVersion
            patched = res.patch(name="x", namespace="ns", body=patch, content_type="application/merge-patch+json")
            assert all(patched.to_dict()[k] == {**content[k], **patch[k]} for k in patch)
            assert [i.metadata.name for i in res.get(namespace="ns").items] == ["x"]
            assert res.get(name="x", namespace="ns").metadata.name == "x"
            res.delete(name="x", namespace="ns")
            with pytest.raises(NotFoundError) as info:
                res.get(name="x", namespace="ns")
            assert info.value.status == 404 and json.loads(info.value.body)["reason"] == "NotFound"


def test_failure_modes_refuse_unknown_group_versions() -> None:
    """A typo in set_stale/set_listed_but_gone would silently test nothing: it is an error instead."""
    cluster = FakeCluster.embedded()
    with pytest.raises(InvalidArgumentError, match=r"nosuch\.example\.com/v9"):
        cluster.set_stale("nosuch.example.com/v9")
    with pytest.raises(InvalidArgumentError):
        cluster.set_listed_but_gone("apps/v2")
    cluster.set_stale("cert-manager.io/v1")
    cluster.set_stale("nosuch.example.com/v9", False)  # turning off is always fine


def test_protobuf_bodies_get_a_clear_415() -> None:
    cluster = FakeCluster.embedded()
    status, _headers, body = cluster.handle(
        "POST", "/api/v1/namespaces/default/configmaps", {},
        {"Content-Type": "application/vnd.kubernetes.protobuf"}, b"k8s\x00\n\x0f")
    assert status == 415
    assert "JSON bodies only" in json.loads(body)["message"]
