"""FakeCluster: HTTP behaviour of the discovery endpoints, CRDs, ordering, failure modes, faults, request log."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError
from restmapper.model import APIResource
from restmapper.testing import FakeCluster, InvalidCRDError
from restmapper.testing.crd import storage_version_hash

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2B1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
CLIENT_GO = f"{V2},{V2B1},application/json"


def get(cluster: FakeCluster, path: str, accept: str | None = None,
        **headers: str) -> tuple[int, dict[str, str], bytes]:
    h = dict(headers)
    if accept is not None:
        h["Accept"] = accept
    return cluster.handle("GET", path, {}, h)


def get_json(cluster: FakeCluster, path: str, accept: str | None = None) -> Any:
    status, _, body = get(cluster, path, accept)
    assert status == 200, body
    return json.loads(body)


def crd(group: str = "example.com", plural: str = "widgets", kind: str = "Widget",
        versions: tuple[tuple[str, bool, bool], ...] = (("v1", True, True),), scope: str = "Namespaced",
        subresources: dict[str, Any] | None = None, **names: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "kind": kind, **names},
            "versions": [
                {"name": n, "served": s, "storage": st, **({"subresources": subresources} if subresources else {})}
                for n, s, st in versions
            ],
        },
    }


def aggregated_group(cluster: FakeCluster, name: str) -> dict[str, Any] | None:
    doc = get_json(cluster, "/apis", V2)
    return next((i for i in doc["items"] if i["metadata"].get("name") == name), None)


# --- content negotiation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "accept", "status", "served"),
    [
        ("aggregated", CLIENT_GO, 200, "v2"),
        ("aggregated", V2, 200, "v2"),
        ("aggregated", V2B1, 200, "v2beta1"),
        ("aggregated", f"{V2B1},application/json", 200, "v2beta1"),
        ("aggregated", "application/json", 200, "legacy"),
        ("aggregated", None, 200, "legacy"),
        ("aggregated", "*/*", 200, "legacy"),
        ("aggregated", f"application/vnd.kubernetes.protobuf,{V2}", 200, "v2"),
        ("aggregated", "application/json;as=Table;v=v1;g=meta.k8s.io", 406, None),
        ("aggregated-v2beta1", CLIENT_GO, 200, "v2beta1"),
        ("aggregated-v2beta1", V2, 406, None),
        ("aggregated-v2beta1", f"{V2},application/json", 200, "legacy"),
        ("aggregated-v2beta1", None, 200, "legacy"),
        ("legacy", CLIENT_GO, 200, "legacy"),
        ("legacy", V2, 406, None),
        ("legacy", "application/json", 200, "legacy"),
        ("aggregated", f"{V2};q=0.5,application/json", 200, "legacy"),
    ],
)
@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_accept_negotiation_table(mode: str, accept: str | None, status: int, served: str | None,
                                  path: str) -> None:
    cluster = FakeCluster(mode=mode)
    got_status, headers, body = get(cluster, path, accept)
    assert got_status == status
    if status == 406:
        doc = json.loads(body)
        assert doc["kind"] == "Status" and doc["reason"] == "NotAcceptable" and doc["code"] == 406
        return
    doc = json.loads(body)
    if served == "legacy":
        assert headers["Content-Type"] == "application/json"
        assert "ETag" not in headers
        assert doc["kind"] == ("APIVersions" if path == "/api" else "APIGroupList")
    else:
        assert headers["Content-Type"] == (
            f"application/json;g=apidiscovery.k8s.io;v={served};as=APIGroupDiscoveryList")
        assert doc["apiVersion"] == f"apidiscovery.k8s.io/{served}"
        assert doc["kind"] == "APIGroupDiscoveryList" and doc["metadata"] == {}


def test_mode_can_be_switched_at_any_time_and_is_validated() -> None:
    cluster = FakeCluster()
    assert get(cluster, "/apis", V2)[0] == 200
    cluster.mode = "legacy"
    assert get(cluster, "/apis", V2)[0] == 406
    with pytest.raises(InvalidArgumentError):
        cluster.mode = "bogus"


# --- ETag and 304 ---------------------------------------------------------------------------------------------------


def test_aggregated_headers_and_etag_is_sha512_of_the_body() -> None:
    status, headers, body = get(FakeCluster(), "/apis", V2)
    assert status == 200
    assert headers["ETag"] == '"' + hashlib.sha512(body).hexdigest().upper() + '"'
    assert headers["Vary"] == "Accept" and headers["Cache-Control"] == "public"


def test_if_none_match_gives_304_with_empty_body_and_no_content_type() -> None:
    cluster = FakeCluster()
    _, headers, _ = get(cluster, "/apis", V2)
    status, headers304, body = get(cluster, "/apis", V2, **{"If-None-Match": headers["ETag"]})
    assert status == 304 and body == b""
    assert "Content-Type" not in headers304
    assert headers304["ETag"] == headers["ETag"]


def test_etag_changes_when_discovery_changes_and_old_etag_gets_200() -> None:
    cluster = FakeCluster()
    _, headers, _ = get(cluster, "/apis", V2)
    cluster.add_crd(crd())
    status, new_headers, _ = get(cluster, "/apis", V2, **{"If-None-Match": headers["ETag"]})
    assert status == 200 and new_headers["ETag"] != headers["ETag"]


def test_v2_and_v2beta1_have_different_etags() -> None:
    cluster = FakeCluster()
    assert get(cluster, "/apis", V2)[1]["ETag"] != get(cluster, "/apis", V2B1)[1]["ETag"]


# --- documents --------------------------------------------------------------------------------------------------------


def test_core_documents() -> None:
    cluster = FakeCluster()
    legacy = get_json(cluster, "/api")
    assert legacy["kind"] == "APIVersions" and legacy["versions"] == ["v1"]
    assert legacy["serverAddressByClientCIDRs"] == [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": "kube.restmapper.test:443"}]
    aggregated = get_json(cluster, "/api", V2)
    assert [i["metadata"] for i in aggregated["items"]] == [{}]
    pods = next(r for r in aggregated["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    eviction = next(s for s in pods["subresources"] if s["subresource"] == "eviction")
    assert eviction["responseKind"] == {"group": "policy", "version": "v1", "kind": "Eviction"}


def test_api_group_document_and_version() -> None:
    cluster = FakeCluster(git_version="v1.31.4")
    doc = get_json(cluster, "/apis/autoscaling")
    assert doc["kind"] == "APIGroup" and doc["apiVersion"] == "v1"
    assert [v["version"] for v in doc["versions"]] == ["v2", "v1"]
    assert doc["preferredVersion"] == {"groupVersion": "autoscaling/v2", "version": "v2"}
    version = get_json(cluster, "/version")
    assert (version["major"], version["minor"], version["gitVersion"]) == ("1", "31", "v1.31.4")


@pytest.mark.parametrize("path", ["/apis/nope", "/apis/nope/v1", "/apis/apps/v9", "/api/v9"])
def test_unknown_group_or_version_is_404_status(path: str) -> None:
    status, headers, body = get(FakeCluster(), path)
    assert status == 404 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server could not find the requested resource", "reason": "NotFound", "details": {},
        "code": 404,
    }


@pytest.mark.parametrize("path", ["/", "/nope", "/healthz/x", "/apisx"])
def test_unknown_top_level_path_is_plain_404(path: str) -> None:
    status, headers, body = get(FakeCluster(), path)
    assert (status, body) == (404, b"404 page not found\n")
    assert headers["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize("path", ["/api", "/apis", "/apis/apps", "/apis/apps/v1", "/version"])
def test_non_get_on_discovery_is_405(method: str, path: str) -> None:
    status, _, body = FakeCluster().handle(method, path, {}, {})
    assert status == 405 and json.loads(body)["reason"] == "MethodNotAllowed"


def test_resource_endpoints_answer_as_an_empty_cluster() -> None:
    cluster = FakeCluster.embedded()
    doc = get_json(cluster, "/api/v1/namespaces/default/pods")
    assert (doc["kind"], doc["apiVersion"], doc["items"]) == ("PodList", "v1", [])
    doc = get_json(cluster, "/apis/cert-manager.io/v1/certificates")
    assert (doc["kind"], doc["apiVersion"]) == ("CertificateList", "cert-manager.io/v1")
    status, _, body = get(cluster, "/apis/apps/v1/namespaces/default/deployments/web")
    assert status == 404 and json.loads(body)["message"] == 'deployments.apps "web" not found'
    assert get(cluster, "/api/v1/namespaces/default/nodes")[0] == 404  # cluster-scoped under a namespace
    assert get(cluster, "/apis/apps/v1/nothings")[0] == 404


# --- CRDs ----------------------------------------------------------------------------------------------------


def test_crd_is_discovered_in_both_formats_as_the_discovery_controller_does() -> None:
    cluster = FakeCluster.empty()
    name = cluster.add_crd(crd(subresources={"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                                      "statusReplicasPath": ".status.replicas"}},
                               shortNames=["wd"], categories=["all"]))
    assert name == "widgets.example.com"
    item = aggregated_group(cluster, "example.com")
    assert item is not None
    resource = item["versions"][0]["resources"][0]
    assert resource == {
        "resource": "widgets",
        "responseKind": {"group": "example.com", "version": "v1", "kind": "Widget"},
        "scope": "Namespaced",
        "singularResource": "widget",
        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
        "shortNames": ["wd"],
        "categories": ["all"],
        "subresources": [
            {"subresource": "status", "responseKind": {"group": "example.com", "version": "v1", "kind": "Widget"},
             "verbs": ["get", "patch", "update"]},
            {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
             "verbs": ["get", "patch", "update"]},
        ],
    }
    legacy = get_json(cluster, "/apis/example.com/v1")
    assert [r["name"] for r in legacy["resources"]] == ["widgets", "widgets/status", "widgets/scale"]
    assert legacy["resources"][0]["storageVersionHash"] == storage_version_hash("example.com", "v1", "Widget")
    assert legacy["resources"][2]["group"] == "autoscaling" and legacy["resources"][2]["kind"] == "Scale"
    assert "group" not in legacy["resources"][1]


def test_crd_versions_order_and_preferred_version() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(group="cluster.x-k8s.io", plural="machines", kind="Machine",
                        versions=(("v1alpha3", True, False), ("v1alpha4", True, False), ("v1beta1", True, True))))
    cluster.add_crd(crd(plural="gadgets", kind="Gadget", versions=(("v2alpha1", True, False), ("v1", True, True))))
    capi = get_json(cluster, "/apis/cluster.x-k8s.io")
    assert [v["version"] for v in capi["versions"]] == ["v1beta1", "v1alpha4", "v1alpha3"]
    assert capi["preferredVersion"]["version"] == "v1beta1"
    example = get_json(cluster, "/apis/example.com")
    assert [v["version"] for v in example["versions"]] == ["v1", "v2alpha1"]
    item = aggregated_group(cluster, "example.com")
    assert item is not None and [v["version"] for v in item["versions"]] == ["v1", "v2alpha1"]


def test_unserved_versions_are_not_discovered() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(versions=(("v1alpha1", False, False), ("v1", True, True))))
    assert [v["version"] for v in get_json(cluster, "/apis/example.com")["versions"]] == ["v1"]
    assert get(cluster, "/apis/example.com/v1alpha1")[0] == 404


def test_crds_of_one_group_merge_and_are_sorted_by_name_in_aggregated_discovery() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(plural="widgets", kind="Widget"))
    cluster.add_crd(crd(plural="apples", kind="Apple"))
    item = aggregated_group(cluster, "example.com")
    assert item is not None
    assert [r["resource"] for r in item["versions"][0]["resources"]] == ["apples", "widgets"]
    legacy = get_json(cluster, "/apis/example.com/v1")
    assert sorted(r["name"] for r in legacy["resources"]) == ["apples", "widgets"]


def test_replacing_a_crd_updates_discovery_and_bumps_generation_only_on_spec_change() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd())
    first = cluster.get_crd("widgets.example.com")
    cluster.add_crd(crd())
    same = cluster.get_crd("widgets.example.com")
    cluster.add_crd(crd(scope="Cluster", versions=(("v1", True, True), ("v2", True, False))))
    changed = cluster.get_crd("widgets.example.com")
    assert first and same and changed
    assert first["metadata"]["uid"] == changed["metadata"]["uid"]
    assert (first["metadata"]["generation"], same["metadata"]["generation"],
            changed["metadata"]["generation"]) == (1, 1, 2)
    assert int(changed["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    assert changed["status"]["acceptedNames"]["singular"] == "widget"
    assert [v["version"] for v in get_json(cluster, "/apis/example.com")["versions"]] == ["v2", "v1"]
    assert get_json(cluster, "/apis/example.com/v1")["resources"][0]["namespaced"] is False


def test_removing_the_last_crd_of_a_group_removes_the_group() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(plural="widgets", kind="Widget"))
    cluster.add_crd(crd(plural="apples", kind="Apple"))
    cluster.remove_crd("widgets.example.com")
    assert [r["name"] for r in get_json(cluster, "/apis/example.com/v1")["resources"]] == ["apples"]
    cluster.remove_crd("apples.example.com")
    assert get(cluster, "/apis/example.com")[0] == 404
    assert aggregated_group(cluster, "example.com") is None
    with pytest.raises(KeyError):
        cluster.remove_crd("apples.example.com")


def test_crd_from_yaml_text() -> None:
    text = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: foos.example.org}
spec:
  group: example.org
  scope: Cluster
  names: {plural: foos, kind: Foo}
  versions: [{name: v1beta1, served: true, storage: true}]
"""
    cluster = FakeCluster.empty()
    assert cluster.add_crd(text) == "foos.example.org"
    assert get_json(cluster, "/apis/example.org/v1beta1")["resources"][0]["kind"] == "Foo"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda m: m["spec"].pop("group"), "spec.group"),
        (lambda m: m["spec"]["names"].pop("plural"), "spec.names.plural"),
        (lambda m: m["spec"]["names"].pop("kind"), "spec.names.kind"),
        (lambda m: m["spec"].update(scope="Galaxy"), "spec.scope"),
        (lambda m: m["spec"].update(versions=[]), "spec.versions"),
        (lambda m: m["spec"]["versions"][0].pop("served"), "spec.versions[0].served"),
        (lambda m: m["spec"]["versions"][0].update(storage=False), "spec.versions"),
        (lambda m: m["metadata"].update(name="other.example.com"), "metadata.name"),
        (lambda m: m.update(apiVersion="apiextensions.k8s.io/v1beta1"), "apiVersion/kind"),
        (lambda m: m["spec"]["names"].update(shortNames="wd"), "spec.names.shortNames"),
    ],
)
def test_invalid_crd_manifests_are_typed_errors(mutate: Any, field: str) -> None:
    manifest = crd()
    mutate(manifest)
    cluster = FakeCluster.empty()
    with pytest.raises(InvalidCRDError) as info:
        cluster.add_crd(manifest)
    assert info.value.field == field
    assert isinstance(info.value, ValueError)
    assert cluster.crds() == []


@pytest.mark.parametrize("text", ["a: [", "- 1\n", "", "---\na: 1\n---\nb: 2\n"])
def test_bad_yaml_is_a_typed_error(text: str) -> None:
    with pytest.raises(InvalidCRDError):
        FakeCluster.empty().add_crd(text)


# --- ordering --------------------------------------------------------------------------------------------------------


def test_group_order_builtins_then_crds_by_name_then_aggregated_apis() -> None:
    cluster = FakeCluster()
    builtin = [g["name"] for g in get_json(cluster, "/apis")["groups"]]
    cluster.add_crd(crd(group="zeta.example.com"))
    cluster.add_crd(crd(group="alpha.example.com"))
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [
        APIResource("pods", "", True, "PodMetrics", ("get", "list"))])
    cluster.add_api_resources("custom.metrics.k8s.io/v1beta1", [
        APIResource("pods", "", True, "MetricValueList", ("get",))], priority=5000)
    names = [g["name"] for g in get_json(cluster, "/apis")["groups"]]
    assert names == [*builtin, "custom.metrics.k8s.io", "alpha.example.com", "zeta.example.com", "metrics.k8s.io"]
    aggregated = [i["metadata"]["name"] for i in get_json(cluster, "/apis", V2)["items"]]
    assert aggregated == names


def test_add_api_resources_with_subresources_and_preferred_version() -> None:
    cluster = FakeCluster.empty()
    cluster.add_api_resources("example.io/v1", [
        APIResource("things", "thing", True, "Thing", ("get", "list")),
        APIResource("things/scale", "", True, "Scale", ("get",), group="autoscaling", version="v1"),
    ])
    cluster.add_api_resources("example.io/v1alpha1", [APIResource("things", "thing", True, "Thing", ("get",))],
                              preferred=True)
    assert get_json(cluster, "/apis/example.io")["preferredVersion"]["version"] == "v1alpha1"
    item = aggregated_group(cluster, "example.io")
    assert item is not None
    scale = item["versions"][1]["resources"][0]["subresources"][0]
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    with pytest.raises(InvalidArgumentError):
        cluster.add_api_resources("example.io/v2", [APIResource("ghosts/status", "", True, "Ghost")])
    cluster.remove_group_version("example.io/v1alpha1")
    assert get_json(cluster, "/apis/example.io")["preferredVersion"]["version"] == "v1"
    cluster.remove_group("example.io")
    assert get(cluster, "/apis/example.io")[0] == 404
    with pytest.raises(KeyError):
        cluster.remove_group("example.io")


def test_removing_a_builtin_group_version() -> None:
    cluster = FakeCluster()
    cluster.remove_group_version("autoscaling/v1")
    assert [v["version"] for v in get_json(cluster, "/apis/autoscaling")["versions"]] == ["v2"]
    assert get(cluster, "/apis/autoscaling/v1")[0] == 404


# --- failure modes --------------------------------------------------------------------------------------------------


def test_stale_group_version() -> None:
    cluster = FakeCluster()
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [APIResource("pods", "", True, "PodMetrics", ("get",))])
    cluster.set_stale("metrics.k8s.io/v1beta1")
    item = aggregated_group(cluster, "metrics.k8s.io")
    assert item == {"metadata": {"name": "metrics.k8s.io"}, "versions": [{"version": "v1beta1",
                                                                          "freshness": "Stale"}]}
    assert "metrics.k8s.io" in [g["name"] for g in get_json(cluster, "/apis")["groups"]]
    status, headers, body = get(cluster, "/apis/metrics.k8s.io/v1beta1")
    assert status == 503 and headers["Content-Type"].startswith("text/plain")
    assert body.decode().strip() == "the server is currently unable to handle the request"
    cluster.set_stale("metrics.k8s.io/v1beta1", False)
    assert get(cluster, "/apis/metrics.k8s.io/v1beta1")[0] == 200


def test_listed_but_gone_is_the_upgrade_race() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd(versions=(("v1alpha4", True, False), ("v1beta1", True, True))))
    cluster.set_listed_but_gone("example.com/v1alpha4")
    assert [v["version"] for v in get_json(cluster, "/apis/example.com")["versions"]] == ["v1beta1", "v1alpha4"]
    item = aggregated_group(cluster, "example.com")
    assert item is not None and item["versions"][1]["resources"]
    status, _, body = get(cluster, "/apis/example.com/v1alpha4")
    assert status == 404 and json.loads(body)["reason"] == "NotFound"
    assert get(cluster, "/apis/example.com/v1beta1")[0] == 200
    cluster.set_listed_but_gone("example.com/v1alpha4", on=False)
    assert get(cluster, "/apis/example.com/v1alpha4")[0] == 200


# --- faults and the request log --------------------------------------------------------------------------------------


def test_fault_times_then_real_answer() -> None:
    cluster = FakeCluster()
    fault = cluster.inject("/apis", status=503, body="down", times=2, headers={"Retry-After": "1"})
    answers = [get(cluster, "/apis") for _ in range(3)]
    assert [a[0] for a in answers] == [503, 503, 200]
    assert answers[0][2] == b"down" and answers[0][1]["Retry-After"] == "1"
    assert answers[0][1]["Content-Type"].startswith("text/plain")
    assert fault.hits == 2 and fault.exhausted


def test_fault_prefix_and_removal() -> None:
    cluster = FakeCluster()
    fault = cluster.inject("/apis/apps/*", status=500, body=b"{}", content_type="application/json")
    assert get(cluster, "/apis/apps/v1")[0] == 500
    assert get(cluster, "/apis/apps/v1")[1]["Content-Type"] == "application/json"
    assert get(cluster, "/apis/batch/v1")[0] == 200
    assert get(cluster, "/apis/apps")[0] == 200  # the prefix is "/apis/apps/"
    fault.remove()
    fault.remove()
    assert get(cluster, "/apis/apps/v1")[0] == 200


def test_first_matching_fault_wins_and_clear_faults() -> None:
    cluster = FakeCluster()
    cluster.inject("/apis/apps/v1", status=418)
    cluster.inject("/apis/*", status=500)
    assert get(cluster, "/apis/apps/v1")[0] == 418
    assert get(cluster, "/apis/batch/v1")[0] == 500
    cluster.clear_faults()
    assert get(cluster, "/apis/apps/v1")[0] == 200


def test_latency_uses_the_injected_sleep() -> None:
    slept: list[float] = []
    cluster = FakeCluster(sleep=slept.append)
    cluster.inject("/api", latency=2.5, times=1)
    assert get(cluster, "/api")[0] == 200
    assert get(cluster, "/api")[0] == 200
    assert slept == [2.5]


def test_reset_raises_connection_reset() -> None:
    cluster = FakeCluster()
    cluster.inject("/apis", reset=True, times=1)
    with pytest.raises(ConnectionResetError):
        get(cluster, "/apis")
    assert get(cluster, "/apis")[0] == 200


def test_invalid_fault_arguments() -> None:
    with pytest.raises(InvalidArgumentError):
        FakeCluster.empty().inject("/x", latency=-1)


def test_request_log_redacts_credentials_and_counts() -> None:
    cluster = FakeCluster()
    cluster.handle("GET", "/apis", {"timeout": "32s"}, {"Authorization": "Bearer s3cret", "Accept": V2})
    cluster.handle("GET", "/apis/apps/v1", {}, {})
    cluster.handle("GET", "/api", {}, {})
    first = cluster.requests[0]
    assert (first.method, first.path, first.query) == ("GET", "/apis", {"timeout": "32s"})
    assert first.headers["Authorization"] == "<redacted>" and first.headers["Accept"] == V2
    assert "s3cret" not in repr(cluster.requests)
    assert cluster.request_count() == 3
    assert cluster.request_count("/apis") == 1
    assert cluster.request_count(prefix="/apis") == 2
    cluster.clear_requests()
    assert cluster.request_count() == 0


def test_concurrent_requests_and_mutations_are_safe() -> None:
    import threading

    cluster = FakeCluster()
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def reader() -> None:
        barrier.wait()
        for _ in range(50):
            status, headers, body = get(cluster, "/apis", V2)
            try:
                assert status == 200
                assert headers["ETag"] == '"' + hashlib.sha512(body).hexdigest().upper() + '"'
            except AssertionError as exc:
                errors.append(exc)

    def writer() -> None:
        barrier.wait()
        for i in range(50):
            cluster.add_crd(crd(group=f"g{i}.example.com"))

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cluster.request_count("/apis") == 150
    assert len(cluster.crds()) == 50
