"""The built-in API profile and embedded CRDs: generated from the fixtures, served identically to them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError
from restmapper.testing import EMBEDDED_CRD_NAMES, FakeCluster, load_builtin_profile
from restmapper.testing.profile import parse_embedded_crds, parse_profile

REPO = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize(
    "text",
    [
        "R pods pod Pod N cdg\n",  # resource before any group
        "G apps v1\nV v1\nR deployments deployment Deployment N cqz\n",  # unknown verb code
        "G apps v1 v2\nV v1\nR deployments deployment Deployment N c\n",  # listed version without resources
        "G apps v1\nV v1\nR deployments deployment Deployment N c s\n",  # malformed option
        "G apps v1\nS status Deployment g\n",  # subresource without a resource
    ],
)
def test_malformed_profile_lines_are_typed_errors(text: str) -> None:
    with pytest.raises(InvalidArgumentError):
        parse_profile(text)


def test_malformed_embedded_crd_line_is_a_typed_error() -> None:
    with pytest.raises(InvalidArgumentError):
        parse_embedded_crds("crd a.b things\n")


def test_importing_the_kit_does_not_read_the_data_files() -> None:
    """Data files are read lazily: importing restmapper.testing in a fresh interpreter leaves the cache empty."""
    import subprocess
    import sys

    code = ("import restmapper.testing.profile as p, restmapper.testing; "
            "print(p.load_builtin_profile.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"
