"""The built-in API profile and embedded CRDs: generated from the fixtures, served identically to them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError, MalformedDiscoveryError
from restmapper.testing import EMBEDDED_CRD_NAMES, FakeCluster, load_builtin_profile
from restmapper.testing.profile import RELEASES, parse_profile

REPO = Path(__file__).resolve().parents[2]
V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _gen_module() -> Any:
    spec = importlib.util.spec_from_file_location("gen_profile", REPO / "scripts" / "gen_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _get(cluster: FakeCluster, path: str, accept: str | None = None) -> tuple[int, dict[str, str], Any]:
    status, headers, body = cluster.handle("GET", path, {}, {"Accept": accept} if accept else {})
    return status, headers, json.loads(body) if body and headers.get("Content-Type", "").startswith(
        "application/json") else body


def test_regenerating_the_data_files_gives_the_committed_files(fixtures_dir: Path) -> None:
    """The committed data files are exactly what scripts/gen_profile.py makes from the fixtures."""
    gen = _gen_module()
    for name, text in gen.outputs(fixtures_dir).items():
        committed = (REPO / "src" / "restmapper" / "testing" / "data" / name).read_text(encoding="utf-8")
        assert committed == text, f"{name} is out of date: run scripts/gen_profile.py"


def test_profile_has_exactly_the_fixture_groups_and_resources(fixtures_dir: Path) -> None:
    aggregated = json.loads((fixtures_dir / "discovery" / "aggregated_v2.json").read_text())
    core = json.loads((fixtures_dir / "discovery" / "api__v1.json").read_text())
    profile = load_builtin_profile()
    assert [g.name for g in profile.groups] == [""] + [i["metadata"]["name"] for i in aggregated["items"]]
    for item in aggregated["items"]:
        group = profile.group(item["metadata"]["name"])
        assert group is not None
        assert [v.version for v in group.versions] == [v["version"] for v in item["versions"]]
        for spec, fixture in zip(group.versions, item["versions"], strict=True):
            assert [r.name for r in spec.resources] == [r["resource"] for r in fixture["resources"]]
    core_group = profile.group("")
    assert core_group is not None
    names = [r.name for r in core_group.versions[0].resources]
    names += [f"{r.name}/{s.name}" for r in core_group.versions[0].resources for s in r.subresources]
    assert sorted(names) == sorted(r["name"] for r in core["resources"])


def test_aggregated_apis_serves_every_builtin_group_exactly_as_the_fixture(fixtures_dir: Path) -> None:
    aggregated = json.loads((fixtures_dir / "discovery" / "aggregated_v2.json").read_text())
    status, _, doc = _get(FakeCluster(), "/apis", V2)
    assert status == 200
    assert doc["apiVersion"] == aggregated["apiVersion"] and doc["kind"] == aggregated["kind"]
    assert doc["items"] == aggregated["items"]


def test_core_resource_list_is_the_fixture(fixtures_dir: Path) -> None:
    fixture = json.loads((fixtures_dir / "discovery" / "api__v1.json").read_text())
    status, _, doc = _get(FakeCluster(), "/api/v1")
    assert status == 200
    assert doc == fixture
    assert "apiVersion" not in doc


def test_legacy_group_version_lists_agree_with_the_aggregated_fixture(fixtures_dir: Path) -> None:
    """Every /apis/<g>/<v> list is the client-go conversion of the aggregated fixture (names, kinds, verbs)."""
    aggregated = json.loads((fixtures_dir / "discovery" / "aggregated_v2.json").read_text())
    cluster = FakeCluster()
    for item in aggregated["items"]:
        for version in item["versions"]:
            gv = f"{item['metadata']['name']}/{version['version']}"
            status, _, doc = _get(cluster, f"/apis/{gv}")
            assert status == 200 and doc["groupVersion"] == gv and doc["apiVersion"] == "v1"
            expected = []
            for r in version["resources"]:
                expected.append((r["resource"], r["responseKind"]["kind"], r["scope"] == "Namespaced", r["verbs"]))
                for s in r.get("subresources", []):
                    expected.append((f"{r['resource']}/{s['subresource']}", s["responseKind"]["kind"],
                                     r["scope"] == "Namespaced", s["verbs"]))
            got = [(e["name"], e["kind"], e["namespaced"], e["verbs"]) for e in doc["resources"]]
            assert got == expected


def test_legacy_group_list_matches_the_aggregated_fixture_order(fixtures_dir: Path) -> None:
    aggregated = json.loads((fixtures_dir / "discovery" / "aggregated_v2.json").read_text())
    _, _, doc = _get(FakeCluster(), "/apis")
    assert doc["kind"] == "APIGroupList"
    assert [g["name"] for g in doc["groups"]] == [i["metadata"]["name"] for i in aggregated["items"]]
    for group, item in zip(doc["groups"], aggregated["items"], strict=True):
        assert group["preferredVersion"]["version"] == item["versions"][0]["version"]


def test_storage_version_hash_of_a_builtin_resource_matches_the_legacy_fixture(fixtures_dir: Path) -> None:
    fixture = json.loads((fixtures_dir / "discovery" / "apis__apps__v1.json").read_text())
    _, _, doc = _get(FakeCluster(), "/apis/apps/v1")
    want = {r["name"]: r.get("storageVersionHash") for r in fixture["resources"]}
    got = {r["name"]: r.get("storageVersionHash") for r in doc["resources"]}
    assert got["deployments"] == want["deployments"] == "8aSe+NMegvE="


def test_embedded_crds_are_the_generated_selection() -> None:
    assert "certificates.cert-manager.io" in EMBEDDED_CRD_NAMES
    assert "machinedeployments.cluster.x-k8s.io" in EMBEDDED_CRD_NAMES
    assert "gateways.gateway.networking.k8s.io" in EMBEDDED_CRD_NAMES
    assert len(EMBEDDED_CRD_NAMES) == len(set(EMBEDDED_CRD_NAMES)) == len(FakeCluster.embedded().crds())


def _profile_doc() -> dict[str, Any]:
    data = REPO / "src" / "restmapper" / "testing" / "data" / "profiles" / "1.35.json"
    doc: dict[str, Any] = json.loads(data.read_text(encoding="utf-8"))
    return doc


@pytest.mark.parametrize("damage", ["no-release", "resources-not-object", "missing-list", "orphan-subresource"])
def test_malformed_profiles_are_typed_errors(damage: str) -> None:
    doc = _profile_doc()
    if damage == "no-release":
        del doc["release"]
    elif damage == "resources-not-object":
        doc["resources"] = []
    elif damage == "missing-list":
        del doc["resources"]["apps/v1"]
    else:
        doc["resources"]["apps/v1"]["resources"] = [
            r for r in doc["resources"]["apps/v1"]["resources"] if r["name"] != "deployments"]
    with pytest.raises(InvalidArgumentError):
        parse_profile(doc)


def test_a_malformed_discovery_document_in_a_profile_names_it() -> None:
    doc = _profile_doc()
    doc["resources"]["apps/v1"]["resources"][0]["namespaced"] = "yes"
    with pytest.raises(MalformedDiscoveryError) as caught:
        parse_profile(doc)
    assert "apps/v1" in str(caught.value)


@pytest.mark.parametrize(("release", "mode", "git_version"), [
    ("1.35", "aggregated", "v1.35.0"), ("1.27", "aggregated-v2beta1", "v1.27.0"), ("1.20", "legacy", "v1.20.4-k0s1")])
def test_releases_are_chosen_by_name(release: str, mode: str, git_version: str) -> None:
    """``FakeCluster.embedded(release=...)`` serves that release's built-in API in its default mode; a mode the
    release never served is refused."""
    cluster = FakeCluster.embedded(release=release)
    assert (cluster.release, cluster.mode, cluster.git_version) == (release, mode, git_version)
    assert _get(cluster, "/version")[2]["gitVersion"] == git_version
    if release != "1.35":
        with pytest.raises(InvalidArgumentError, match="serves"):
            cluster.mode = "aggregated"
    if release == "1.20":
        status, headers, _ = _get(cluster, "/apis", V2 + ",application/json")
        assert status == 200 and headers["Content-Type"] == "application/json"  # legacy only: no aggregated
        assert _get(cluster, "/apis/extensions/v1beta1")[0] == 200  # removed in 1.22, served by 1.20
        assert _get(cluster, "/apis/flowcontrol.apiserver.k8s.io/v1")[0] == 404
    with pytest.raises(InvalidArgumentError, match="unknown release"):
        FakeCluster(release="0.9")
    assert set(RELEASES) == {"1.35", "1.27", "1.20"}


def test_the_1_27_profile_serves_the_v2beta1_fixture(fixtures_dir: Path) -> None:
    fixture = json.loads((fixtures_dir / "discovery" / "aggregated_v2beta1.json").read_text())
    cluster = FakeCluster(release="1.27")
    status, _, doc = _get(cluster, "/apis", V2.replace("v=v2;", "v=v2beta1;"))
    assert status == 200 and doc["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert [i["metadata"]["name"] for i in doc["items"]] == [i["metadata"]["name"] for i in fixture["items"]]


def test_the_1_20_profile_serves_the_captured_legacy_tree(fixtures_dir: Path) -> None:
    root = fixtures_dir / "discovery" / "captures" / "cben-kubernetes-discovery-samples" / "k0s-v0.11.0"
    captured = json.loads((root / "apis" / "apps" / "v1" / "index.json").read_text())
    cluster = FakeCluster(release="1.20")
    _, _, doc = _get(cluster, "/apis/apps/v1")
    assert [(r["name"], r["verbs"]) for r in doc["resources"]] == [
        (r["name"], r["verbs"]) for r in captured["resources"]]
    groups = [g["name"] for g in _get(cluster, "/apis")[2]["groups"]]
    assert "crd.projectcalico.org" not in groups and "extensions" in groups


def test_importing_the_kit_does_not_read_the_data_files() -> None:
    """Data files are read lazily: importing restmapper.testing in a fresh interpreter leaves the cache empty."""
    import subprocess
    import sys

    code = ("import restmapper.testing.profile as p, restmapper.testing; "
            "print(p._load_profile.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"
