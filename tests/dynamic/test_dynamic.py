"""Behaviour of SelfHealingDiscoverer / SelfHealingDynamicClient and DESIGN section 8 scenarios (dynamic client)."""

from __future__ import annotations

import functools
import os
import stat
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers.dynamic import FakeClock, api_client, crd, served
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient, LazyDiscoverer
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError, ResourceNotUniqueError
from kubernetes.dynamic.resource import Resource, ResourceList, Subresource

from restmapper.dynamic import SelfHealingDiscoverer, SelfHealingDynamicClient, is_resource_type_not_found
from restmapper.errors import GroupDiscoveryError, MappingChangedError, PartialDiscoveryWarning
from restmapper.model import APIResource, Scope
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest
from restmapper.transport import ApiClientTransport

# --- return types and keyword semantics -------------------------------------------------------------------------


def test_get_returns_upstream_types_with_subresources() -> None:
    with served(FakeCluster.embedded()) as (_, res):
        deploy = res.get(api_version="apps/v1", kind="Deployment")
        assert type(deploy) is Resource
        assert (deploy.group_version, deploy.name, deploy.namespaced, deploy.preferred) == (
            "apps/v1", "deployments", True, True)
        assert deploy.short_names == ["deploy"]
        assert isinstance(deploy.scale, Subresource) and deploy.scale.kind == "Scale"
        assert deploy.path(name="web", namespace="ns") == "/apis/apps/v1/namespaces/ns/deployments/web"
        lst = res.get(api_version="apps/v1", kind="DeploymentList")
        assert isinstance(lst, ResourceList) and lst.base_kind == "Deployment"
        assert lst.base_resource() is deploy
        generic = res.get(kind="List")
        assert isinstance(generic, ResourceList) and generic.kind == "List"


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"api_version": "apps/v1", "kind": "Deployment"}, "apps/v1/deployments"),
    ({"group": "apps", "api_version": "v1", "kind": "Deployment"}, "apps/v1/deployments"),
    ({"kind": "Deployment"}, "apps/v1/deployments"),
    ({"kind": "deployment"}, "apps/v1/deployments"),  # scenario 8: case-insensitive kinds
    ({"kind": "service"}, "v1/services"),
    ({"kind": "Service"}, "v1/services"),
    ({"api_version": "v1", "kind": "Pod"}, "v1/pods"),
    ({"api_version": "apps/v1", "name": "deployments"}, "apps/v1/deployments"),
    ({"api_version": "apps/v1", "name": "Deployments"}, "apps/v1/deployments"),
    ({"short_names": ["deploy"]}, "apps/v1/deployments"),
    ({"short_names": "hpa"}, "autoscaling/v2/horizontalpodautoscalers"),
    ({"kind": "HorizontalPodAutoscaler"}, "autoscaling/v2/horizontalpodautoscalers"),  # scenario 7
    ({"api_version": "autoscaling/v1", "kind": "HorizontalPodAutoscaler"}, "autoscaling/v1/horizontalpodautoscalers"),
    ({"prefix": "api", "kind": "Pod"}, "v1/pods"),
    ({"api_version": "*", "kind": "Pod"}, "v1/pods"),
    ({"kind": "Certificate"}, "cert-manager.io/v1/certificates"),
])
def test_get_resolves(kwargs: dict[str, object], expected: str) -> None:
    with served(FakeCluster.embedded()) as (_, res):
        found = res.get(**kwargs)
        assert f"{found.group_version}/{found.name}" == expected


def test_v1_means_core_group_only() -> None:
    with served(FakeCluster.embedded()) as (_, res):
        with pytest.raises(ResourceNotFoundError):
            res.get(api_version="v1", kind="Deployment")
        assert [r.group_version for r in res.search(api_version="v1", kind="Pod")] == ["v1"]


def test_scenario_7_hpa_preferred_version_while_search_lists_both() -> None:
    with served(FakeCluster.embedded()) as (_, res):
        found = res.search(kind="HorizontalPodAutoscaler")
        assert sorted(r.group_version for r in found) == ["autoscaling/v1", "autoscaling/v2"]
        assert res.get(kind="HorizontalPodAutoscaler").group_version == "autoscaling/v2"


def test_ambiguity_only_across_groups() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("one.example.com", "Gadget"))
    cluster.add_crd(crd("two.example.com", "Gadget"))
    with served(cluster) as (_, res):
        with pytest.raises(ResourceNotUniqueError):
            res.get(kind="Gadget")
        assert res.get(group="two.example.com", kind="Gadget").group == "two.example.com"


def test_unknown_keyword_is_type_error() -> None:
    with served(FakeCluster.embedded()) as (_, res):
        with pytest.raises(TypeError, match="nmae"):
            res.get(kind="Pod", nmae="pods")
        with pytest.raises(TypeError, match="bogus"):
            res.search(bogus=1)


def test_several_filters_must_all_match() -> None:
    with served(FakeCluster.embedded()) as (_, res):
        assert res.get(api_version="v1", name="pods", namespaced=True).name == "pods"
        with pytest.raises(ResourceNotFoundError):
            res.get(api_version="v1", name="pods", namespaced=False)


def test_iteration_and_api_groups_and_parse_api_groups() -> None:
    with served(FakeCluster.embedded()) as (dc, res):
        lists = list(res)
        flat = [r for lst in lists for r in lst]
        assert all(isinstance(lst, list) for lst in lists)
        assert any(r.kind == "Pod" for r in flat) and any(r.kind == "Certificate" for r in flat)
        groups = res.api_groups
        assert "" in groups and "apps" in groups and "cert-manager.io" in groups
        tree = res.parse_api_groups()
        assert tree["apis"]["apps"]["v1"].preferred is True
        assert tree["api"][""]["v1"].resources["Pod"][0].name == "pods"
        assert dc.version["kubernetes"]["gitVersion"] == "v1.35.0"


def test_warm_lookups_cost_no_request_and_invalidate_refetches() -> None:
    cluster = FakeCluster.embedded()
    with served(cluster) as (_, res):
        res.get(api_version="apps/v1", kind="Deployment")
        before = cluster.request_count()
        for _ in range(50):
            res.get(api_version="apps/v1", kind="Deployment")
            res.get(kind="Pod")
        # At most /api for the core lookup and, as get(kind=...) may match any group, the aggregated /apis (the
        # first lookup, pinned to apps/v1, read only the group listing and apps/v1), once each.
        assert cluster.request_count() - before <= 2
        settled = cluster.request_count()
        res.get(kind="Pod")
        assert cluster.request_count() == settled
        res.invalidate_cache()
        res.get(api_version="apps/v1", kind="Deployment")
        assert cluster.request_count() > settled


# --- DESIGN section 8 scenarios ------------------------------------------------------------------------------------


def test_scenario_1_listed_but_gone_group_does_not_break_others_and_core_skips_apis() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.add_crd(crd("broken.example.com", "Thing"))
    cluster.set_listed_but_gone("broken.example.com/v1")
    with served(cluster) as (_, res):
        assert res.get(api_version="v1", kind="Pod").name == "pods"
        assert cluster.request_count(path="/apis") == 0
        assert cluster.request_count(prefix="/apis/") == 0
        assert res.get(api_version="apps/v1", kind="Deployment").name == "deployments"
        assert res.get(kind="Deployment").name == "deployments"
        with pytest.raises(ResourceNotFoundError):
            res.get(group="broken.example.com", kind="Thing")


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_scenario_4_group_answering_503_recovers(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [APIResource("pods", "", True, "PodMetrics", ("get", "list"))])
    cluster.set_stale("metrics.k8s.io/v1beta1")
    clock = FakeClock()
    with served(cluster, clock=clock) as (_, res):
        assert res.get(api_version="apps/v1", kind="Deployment").name == "deployments"
        assert res.get(group="apps", kind="Deployment").name == "deployments"
        # Any group: metrics.k8s.io/v1beta1 could serve a second Deployment (upstream: not unique), but it ranks
        # below apps: the answer stands, warned, as the mapper's and kubectl's.
        with pytest.warns(PartialDiscoveryWarning, match=r"metrics\.k8s\.io/v1beta1"):
            assert res.get(kind="Deployment").group_version == "apps/v1"
        # Not "not found": the group that could hold it could not be read (DESIGN 5.10).
        with pytest.raises(GroupDiscoveryError, match=r"metrics\.k8s\.io/v1beta1"):
            res.get(kind="PodMetrics")
        cluster.set_stale("metrics.k8s.io/v1beta1", False)
        clock.advance(120)
        assert res.get(kind="PodMetrics").group_version == "metrics.k8s.io/v1beta1"


def test_non_json_group_version_fails_only_its_lookups() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.inject("/apis/cert-manager.io/v1", status=200, body="<html>proxy</html>", content_type="text/html")
    with served(cluster) as (_, res):
        assert res.get(api_version="apps/v1", kind="Deployment").name == "deployments"
        with pytest.raises(GroupDiscoveryError, match=r"cert-manager\.io/v1"):
            res.get(group="cert-manager.io", kind="Certificate")


def test_scenario_6_same_kind_two_resources_picks_plural_match() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_api_resources("template.openshift.io/v1", [
        APIResource("processedtemplates", "", True, "Template", ("create",)),
        APIResource("templates", "", True, "Template", ("get", "list", "create")),
    ])
    with served(cluster) as (_, res):
        found = res.get(api_version="template.openshift.io/v1", kind="Template")
        assert found.name == "templates"
        assert res.get(kind="Template").name == "templates"
        assert "processedtemplates" in repr(res.search(kind="Template"))
        lst = res.get(api_version="template.openshift.io/v1", kind="TemplateList")
        assert isinstance(lst, ResourceList)


def test_scenario_8_kind_case() -> None:
    with served(FakeCluster.embedded()) as (_, res):
        assert res.get(kind="service") is res.get(kind="Service")


def test_scenario_9_subresource_with_two_slashes() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_api_resources("subresources.kubevirt.io/v1", [
        APIResource("virtualmachineinstances", "virtualmachineinstance", True, "VirtualMachineInstance", ("get",)),
        APIResource("virtualmachineinstances/sev/fetchcertchain", "", True, "SEVPlatformInfo", ("get",)),
    ])
    with served(cluster) as (_, res):
        vmi = res.get(api_version="subresources.kubevirt.io/v1", kind="VirtualMachineInstance")
        sub = vmi.subresources["sev/fetchcertchain"]
        assert sub.kind == "SEVPlatformInfo"
        assert sub.path(name="x", namespace="ns").endswith("/virtualmachineinstances/x/sev/fetchcertchain")


def test_scenario_3_new_crd_found_after_miss_interval_then_free() -> None:
    cluster = FakeCluster.embedded()
    clock = FakeClock()
    with served(cluster, clock=clock) as (_, res):
        with pytest.raises(ResourceNotFoundError):
            res.get(kind="Widget")
        cluster.add_crd(crd("late.example.com", "Widget"))
        with pytest.raises(ResourceNotFoundError):
            res.get(kind="Widget")  # inside the miss interval: the negative answer stands
        clock.advance(1.5)
        assert res.get(kind="Widget").group == "late.example.com"
        settled = cluster.request_count()
        assert res.get(kind="Widget").group == "late.example.com"
        assert cluster.request_count() == settled


def test_miss_storm_is_rate_limited_without_full_wipe() -> None:
    cluster = FakeCluster.embedded()
    with served(cluster) as (_, res):
        res.get(kind="Deployment")
        before = cluster.request_count()
        barrier = threading.Barrier(8)
        errors: list[BaseException] = []

        def miss() -> None:
            barrier.wait()
            for _ in range(20):
                try:
                    res.get(kind="NoSuchKind")
                except ResourceNotFoundError as exc:
                    errors.append(exc)

        threads = [threading.Thread(target=miss) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(errors) == 160
        assert cluster.request_count() - before <= 3
        assert res.get(kind="Deployment").name == "deployments"


def test_scenario_2_crd_recreated_cluster_scoped_request_is_refused_then_heals() -> None:
    """DESIGN 8.2, as the resend rule has it: the request on the old, namespaced mapping gets 404, the kind is
    resolved again (cluster-scoped now) and the request is not resent to the cluster-scoped path (a namespace
    would silently mean the whole cluster): MappingChangedError names both mappings. The next lookup answers the
    cluster-scoped mapping, whose requests go to the cluster-scoped path."""
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("stuff.example.com", "Gizmo"))
    with cluster.serve() as s:
        dc = SelfHealingDynamicClient(api_client(s.url))
        gizmo = dc.resources.get(api_version="stuff.example.com/v1", kind="Gizmo")
        assert gizmo.namespaced
        cluster.remove_crd("gizmos.stuff.example.com")
        cluster.add_crd(crd("stuff.example.com", "Gizmo", scope="Cluster"))
        before = cluster.request_count(prefix="/apis/stuff.example.com/v1/gizmos")
        with pytest.raises(MappingChangedError) as info:
            gizmo.get(namespace="default")  # old, namespaced mapping
        assert (info.value.old.scope, info.value.new.scope) == (Scope.NAMESPACED, Scope.CLUSTER)
        assert cluster.request_count(prefix="/apis/stuff.example.com/v1/gizmos") == before  # nothing resent
        fresh = dc.resources.get(api_version="stuff.example.com/v1", kind="Gizmo")
        assert fresh.namespaced is False
        assert fresh.get().kind == "GizmoList"
        assert cluster.request_count(prefix="/apis/stuff.example.com/v1/gizmos") == before + 1


def test_missing_object_is_not_healed() -> None:
    cluster = FakeCluster.embedded()
    with cluster.serve() as s:
        dc = SelfHealingDynamicClient(api_client(s.url))
        pods = dc.resources.get(api_version="v1", kind="Pod")
        with pytest.raises(NotFoundError) as info:
            pods.get(name="nope", namespace="default")
        assert not is_resource_type_not_found(info.value)


@pytest.mark.parametrize(("body", "expected"), [
    ('{"kind":"Status","reason":"NotFound","message":"the server could not find the requested resource",'
     '"details":{},"code":404}', True),
    ("404 page not found\n", True),
    ('{"kind":"Status","details":{"name":"x","kind":"deployments"},"code":404}', False),
    ("", True),
])
def test_is_resource_type_not_found(body: str, expected: bool) -> None:
    class E(Exception):
        status = 404

    e = E()
    e.body = body  # type: ignore[attr-defined]
    assert is_resource_type_not_found(e) is expected
    e.status = 500  # type: ignore[misc]
    assert is_resource_type_not_found(e) is False


# --- the cache file ------------------------------------------------------------------------------------------------


def test_no_file_in_tempdir_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    cluster = FakeCluster.embedded()
    with cluster.serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), discoverer=SelfHealingDiscoverer)
        dc.resources.get(kind="Deployment")
        list(dc.resources)
        assert dc.version
        assert os.listdir(private_tmp) == []
        # The check can fail: upstream writes its cache into the temp dir.
        DynamicClient(api_client(s.url), discoverer=LazyDiscoverer).resources.get(kind="Pod")
        assert any(n.startswith("osrcp-") for n in os.listdir(private_tmp))


def test_cache_file_is_private_atomic_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    cluster = FakeCluster.embedded()
    with cluster.serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), cache_file=str(path), discoverer=SelfHealingDiscoverer)
        dc.resources.get(kind="Deployment")
        assert dc.version
        assert dc.resources.flush_cache_file()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
        again = DynamicClient(api_client(s.url), cache_file=str(path), discoverer=SelfHealingDiscoverer)
        before = cluster.request_count(path="/version")
        assert again.version["kubernetes"]["gitVersion"] == "v1.35.0"
        assert cluster.request_count(path="/version") == before


def test_corrupt_cache_file_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    path.write_text("{not json")
    with FakeCluster.embedded().serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), cache_file=str(path), discoverer=SelfHealingDiscoverer)
        assert dc.resources.get(kind="Pod").name == "pods"
        assert dc.resources.flush_cache_file()
    assert '"format"' in path.read_text()


def test_cache_file_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("keep me")
    link = tmp_path / "cache.json"
    link.symlink_to(target)
    with FakeCluster.embedded().serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), cache_file=str(link), discoverer=SelfHealingDiscoverer)
        assert dc.resources.get(kind="Pod").name == "pods"
        assert dc.resources.flush_cache_file()
    assert target.read_text() == "keep me"
    assert link.is_symlink()


def test_cache_file_answers_when_server_is_down(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    cluster = FakeCluster.embedded()
    with cluster.serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), cache_file=str(path), discoverer=SelfHealingDiscoverer)
        dc.resources.get(api_version="apps/v1", kind="Deployment")
        assert dc.resources.flush_cache_file()
        url = s.url
    down = _Down()
    down.identity = ApiClientTransport(api_client(url)).identity  # the snapshot is keyed by server and identity
    offline = DynamicClient(api_client(url), cache_file=str(path),
                            discoverer=lambda c, f: SelfHealingDiscoverer(c, f, transport=down))
    assert offline.resources.get(api_version="apps/v1", kind="Deployment").name == "deployments"


class _Down:
    identity = ""

    def get(self, path: str, headers: object = None, **_: object) -> object:
        from restmapper.errors import TransportError

        raise TransportError(f"GET {path}: connection refused", path=path, transient=True)

    def stream(self, *a: object, **k: object) -> object:
        raise AssertionError("not used")

    def close(self) -> None:
        pass


def test_request_404_for_a_removed_version_evicts_the_group() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("up.example.com", "Widget", versions=("v1alpha1",)))
    with served(cluster) as (_, res):
        old = res.get(group="up.example.com", kind="Widget")
        assert old.api_version == "v1alpha1"
        manifest = crd("up.example.com", "Widget", versions=("v1alpha1", "v1"), storage="v1")
        manifest["spec"]["versions"][0]["served"] = False
        cluster.add_crd(manifest)
        assert res.get(group="up.example.com", kind="Widget") is old  # still cached: nothing told us yet
        with pytest.raises(NotFoundError):
            old.get(namespace="default")
        assert res.get(group="up.example.com", kind="Widget").api_version == "v1"


def test_observe_requests_off_leaves_the_client_alone() -> None:
    with FakeCluster.embedded().serve() as s:
        dc = DynamicClient(api_client(s.url), discoverer=lambda c, f: SelfHealingDiscoverer(c, f,
                                                                                          observe_requests=False))
        assert "request" not in vars(dc)


@pytest.mark.parametrize("body", ["[" * 100_000, '{"major": NaN, "minor": "35"}', "<html>proxy</html>", "[]"])
def test_version_with_a_hostile_body_is_a_typed_error(tmp_path: Path, body: str) -> None:
    from restmapper.errors import MalformedDiscoveryError

    cluster = FakeCluster.embedded()
    cluster.inject("/version", status=200, body=body, content_type="application/json")
    with cluster.serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), discoverer=SelfHealingDiscoverer)
        with pytest.raises(MalformedDiscoveryError):
            _ = dc.version


MODES = ["legacy", "aggregated"]
A, B = "a.example.com", "b.example.com"  # the groups of _alpha_beta_cluster


def _alpha_beta_cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    alpha = crd(A, "Alpha", short_names=("al",))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.add_crd(alpha)
    cluster.add_crd(crd(B, "Beta", short_names=("be",)))
    return cluster


def _healing_resources(cluster: FakeCluster) -> SelfHealingDiscoverer:
    config = kclient.Configuration(host="https://kube.restmapper.test")
    client = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock(), max_stale=0))
    found = client.resources
    assert isinstance(found, SelfHealingDiscoverer)
    return found


ODD_DROP_IN_ARGUMENTS: list[dict[str, Any]] = [
    {"short_names": ["al"]}, {"short_names": ("al",)}, {"short_names": "al"}, {"short_names": ["al", "al"]},
    {"short_names": []}, {"short_names": None}, {"short_names": [1]}, {"short_names": [True]},
    {"short_names": [["al"]]}, {"short_names": [{"al"}]}, {"short_names": [None]}, {"short_names": ["AL"]},
    {"short_names": ["al", "be"]}, {"short_names": ["al"], "kind": "Alpha"},
    {"kind": "Alpha", "short_names": ["al"]}, {"kind": ["Alpha"]}, {"kind": ("Alpha",)}, {"name": ["alphas"]},
    {"kind": "Alpha", "api_version": ["v1"]}, {"categories": ["alphacat"]}, {"categories": "alphacat"},
    {"verbs": ["get"]}, {"kind": 1}, {"kind": True}, {"namespaced": True}, {"namespaced": 1},
    {"kind": "Alpha", "namespaced": True}, {"kind": "Alpha", "namespaced": 1}, {"bogus": "x"},
    {"short_names": [b"al"]}, {"short_names": ["al"], "bogus": 1}, {}, {"short_names": [0.0]}, {"short_names": [0]},
]


def _drop_in_outcome(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            answer = getattr(resources, method)(**kwargs)
        except Exception as exc:
            return ("raised", type(exc).__name__)
    if method == "search":
        return [(r.group_version, r.kind, r.name) for r in answer]
    return (answer.group_version, answer.kind, answer.name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["get", "search"])
def test_odd_drop_in_arguments_answer_warm_as_cold(mode: str, method: str) -> None:
    """Each odd question asked in turn on one warm discoverer (held answers of the others around) answers as a
    new discoverer asked only that question. (Known: a value that only compares equal to a str short name, not a
    str, gets that name's memoized answer, as upstream's equality filter would give it.)"""
    cluster = _alpha_beta_cluster(mode)
    warm = _healing_resources(cluster)
    warm.search(kind="Namespace")
    got: dict[int, list[Any]] = {}
    for _ in range(3):  # cold, memoized, held
        for i, kwargs in enumerate(ODD_DROP_IN_ARGUMENTS):
            got.setdefault(i, []).append(_drop_in_outcome(warm, method, dict(kwargs)))
    for i, kwargs in enumerate(ODD_DROP_IN_ARGUMENTS):
        fresh = _drop_in_outcome(_healing_resources(cluster), method, dict(kwargs))
        assert got[i] == [fresh] * 3, (kwargs, got[i], fresh)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tell", ["group", "all", "ttl"])
def test_a_held_short_name_follows_a_crd_change(mode: str, tell: str) -> None:
    cluster = _alpha_beta_cluster(mode)
    resources = _healing_resources(cluster)
    resources.search(kind="Namespace")
    qs: list[dict[str, Any]] = [{"short_names": ["al"]}, {"short_names": ["alx"]}, {"short_names": ["al", "alx"]},
                                {"short_names": "al"}, {"short_names": ("al",)}]
    for _ in range(3):
        [_drop_in_outcome(resources, "get", dict(q)) for q in qs]
    alpha = crd(A, "Alpha", short_names=("alx",))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.update_crd(alpha)
    if tell == "group":
        resources.mapper.invalidate_group(A)
    elif tell == "all":
        resources.mapper.invalidate_all()
    else:
        resources._clock.advance(10_000)  # type: ignore[attr-defined]
    for _ in range(3):
        got = [_drop_in_outcome(resources, "get", dict(q)) for q in qs]
        assert got == [_drop_in_outcome(_healing_resources(cluster), "get", dict(q)) for q in qs]


EMBEDDED = FakeCluster.embedded()


def _embedded_drop_in() -> object:
    config = kclient.Configuration(host="https://kube.restmapper.test")
    return DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(EMBEDDED), observe_requests=False, clock=ManualClock())).resources


@pytest.mark.parametrize("kwargs", [{"api_version": "apps/v1", "kind": ["Deployment"]}, {"kind": ("Deployment",)},
                                    {"api_version": ["apps/v1"], "kind": "Deployment"}, {"group": ["apps"]},
                                    {"kind": 5}])
def test_drop_in_refuses_a_non_string_where_upstream_takes_one(kwargs: dict[str, object]) -> None:
    resources = _embedded_drop_in()
    for method in ("get", "search"):
        with pytest.raises(TypeError, match=r"takes .* as a str"):
            getattr(resources, method)(**kwargs)


def test_drop_in_still_accepts_what_upstream_accepts() -> None:
    resources: object = _embedded_drop_in()
    assert resources.get(api_version="apps/v1", short_names=["deploy"]).kind == "Deployment"  # type: ignore[attr-defined]
    assert resources.get(api_version="apps/v1", kind="Deployment", group=None).kind == "Deployment"  # type: ignore[attr-defined]
    assert resources.search(kind="Deployment", api_version="", prefix="*")  # type: ignore[attr-defined]


def test_drop_in_options_bound_with_partial_take_effect() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest("example.com", "Gadget"))
    clock = ManualClock()
    config = kclient.Configuration(host="https://kube.restmapper.test")
    discoverer = functools.partial(SelfHealingDiscoverer, ttl=60, clock=clock, transport=InProcessTransport(cluster),
                                   observe_requests=False)
    resources = DynamicClient(kclient.ApiClient(config), discoverer=discoverer).resources
    assert resources.get(group="example.com", kind="Gadget").api_version == "v1"
    cluster.update_crd(crd_manifest("example.com", "Gadget", versions=("v2", "v1")))
    clock.advance(59)
    assert resources.get(group="example.com", kind="Gadget").api_version == "v1"  # fresh for ttl=60 s
    clock.advance(2)
    assert resources.get(group="example.com", kind="Gadget").api_version == "v2"  # expired: the new preferred
