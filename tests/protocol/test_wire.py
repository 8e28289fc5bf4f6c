"""The wire layer against every real discovery document in ``../shared/fixtures/discovery``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from restmapper.errors import MalformedDiscoveryError
from restmapper.model import APIResource, GroupVersion
from restmapper.wire import (
    ACCEPT_AGGREGATED,
    AggregatedDiscovery,
    DocumentFormat,
    detect_format,
    parse_aggregated,
    parse_api_group,
    parse_api_group_list,
    parse_api_resource_list,
    parse_api_versions,
    parse_version_info,
)

DISCOVERY = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "discovery"
_ABSENT = pytest.param(None, marks=pytest.mark.skip(reason=f"fixture folder {DISCOVERY} is absent"))

# Not discovery documents: the capture's provenance notes, and `kubectl api-resources` text output.
_NOT_DOCUMENTS = {"SOURCES.md", "api-resources.sh.txt"}


def _fixture_files() -> list[Any]:
    if not DISCOVERY.is_dir():
        return [_ABSENT]
    files = sorted(p for p in DISCOVERY.rglob("*")
                   if p.is_file() and p.name != "headers.txt" and p.name not in _NOT_DOCUMENTS)
    return [pytest.param(p, id=str(p.relative_to(DISCOVERY))) for p in files]


def _read(name: str) -> bytes:
    path = DISCOVERY / name
    if not path.is_file():
        pytest.skip(f"fixture {path} is absent (the shared fixtures folder sits next to the repository in CI)")
    return path.read_bytes()


def _content_type(path: Path) -> str | None:
    headers = path.parent / "headers.txt"
    if not headers.is_file():
        return None
    for line in headers.read_text().splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "content-type":
            return value.strip()
    return None


def _parse_fixture(path: Path) -> object:
    """Parse a fixture with the parser its name (or, for captures, its URL path) calls for."""
    if "captures" in path.relative_to(DISCOVERY).parts:
        return _parse_capture(path)
    name = path.name.split("@", 1)[0]  # history/<file>@<commit>
    body = path.read_bytes()
    if name.startswith("aggregated_"):
        fmt = DocumentFormat.AGGREGATED_V2BETA1 if "v2beta1" in name else DocumentFormat.AGGREGATED_V2
        return parse_aggregated(body, document=name, format=fmt)
    if name == "api.json":
        return parse_api_versions(body, document=name)
    if name == "apis.json":
        return parse_api_group_list(body, document=name)
    m = re.fullmatch(r"api__(?P<v>[^_]+)\.json", name)
    if m:
        return parse_api_resource_list(body, document=name, expected=GroupVersion("", m["v"]))
    m = re.fullmatch(r"apis__(?P<g>[^_]+)\.json", name)
    if m:
        group = parse_api_group(body, document=name)
        assert group.name == m["g"]
        return group
    m = re.fullmatch(r"apis__(?P<g>[^_]+)__(?P<v>[^_]+)\.json", name)
    if m:
        return parse_api_resource_list(body, document=name, expected=GroupVersion(m["g"], m["v"]))
    raise AssertionError(f"unclassified fixture {path}: teach this test which parser reads it")


def _parse_capture(path: Path) -> object:
    assert path.name == "index.json", f"unclassified capture file {path}"
    fmt = detect_format(_content_type(path), document=str(path))
    assert fmt is DocumentFormat.LEGACY  # these clusters predate aggregated discovery
    # captures/<repo>/<cluster>/<url path>/index.json
    url = path.relative_to(DISCOVERY).parts[3:-1]
    body, doc = path.read_bytes(), "/" + "/".join(url)
    match url:
        case ("api",):
            return parse_api_versions(body, document=doc)
        case ("api", version):
            return parse_api_resource_list(body, document=doc, expected=GroupVersion("", version))
        case ("apis",):
            return parse_api_group_list(body, document=doc)
        case ("apis", group):
            parsed = parse_api_group(body, document=doc)
            assert parsed.name == group
            return parsed
        case ("apis", group, version):
            return parse_api_resource_list(body, document=doc, expected=GroupVersion(group, version))
        case ("version",):
            return parse_version_info(body, document=doc)
    raise AssertionError(f"unclassified capture {path}")


@pytest.mark.parametrize("path", _fixture_files())
def test_every_fixture_parses_with_its_parser(path: Path) -> None:
    """Every discovery document under fixtures/discovery (history/ and captures/ included) parses."""
    parsed = _parse_fixture(path)
    if isinstance(parsed, AggregatedDiscovery):
        assert parsed.groups and parsed.resources and not parsed.stale
        for group in parsed.groups:
            assert group.preferred_version == group.versions[0]
    elif isinstance(parsed, tuple):
        assert parsed, f"{path} parsed to an empty document"


def test_core_resource_list_facts() -> None:
    lst = parse_api_resource_list(_read("api__v1.json"), document="/api/v1", expected=GroupVersion("", "v1"))
    by_name = {r.name: r for r in lst.resources}
    eviction = by_name["pods/eviction"]
    assert (eviction.kind, eviction.group, eviction.version, eviction.singular_name) == ("Eviction", "policy",
                                                                                       "v1", "")
    assert eviction.namespaced and eviction.is_subresource and eviction.parent == "pods"
    assert by_name["pods/status"].group is None and by_name["pods/status"].version is None
    assert by_name["namespaces"].namespaced is False
    assert "deletecollection" not in by_name["namespaces"].verbs
    assert by_name["componentstatuses"].verbs == ("get", "list")
    assert by_name["configmaps"].short_names == ("cm",)
    assert by_name["configmaps"].storage_version_hash == "qFsyl6wFWjQ="
    assert by_name["bindings"].storage_version_hash is None


def test_equal_verb_and_category_lists_are_held_once_across_documents() -> None:
    # A thousand groups repeat the same few verb lists: holding each resource's own copy of every verb string
    # made a legacy cache larger than the peer's.
    core = parse_api_resource_list(_read("api__v1.json"), document="/api/v1", expected=GroupVersion("", "v1"))
    again = parse_api_resource_list(_read("api__v1.json"), document="/api/v1", expected=GroupVersion("", "v1"))
    by_name = {r.name: r for r in core.resources}
    assert by_name["configmaps"].verbs is by_name["secrets"].verbs
    assert by_name["pods/status"].kind is by_name["pods"].kind
    for first, second in zip(core.resources, again.resources, strict=True):
        assert first == second
        assert first.verbs is second.verbs and first.categories is second.categories


def test_group_list_keeps_server_order_and_preferred_versions() -> None:
    groups = parse_api_group_list(_read("apis.json"), document="/apis")
    raw = json.loads(_read("apis.json"))["groups"]
    assert [g.name for g in groups] == [g["name"] for g in raw]
    by_name = {g.name: g for g in groups}
    assert by_name["resource.k8s.io"].versions[:2] == ("v1", "v1beta2")
    assert by_name["resource.k8s.io"].preferred_version == "v1"
    assert by_name["internal.apiserver.k8s.io"].preferred_version == "v1alpha1"


def _key(r: APIResource) -> tuple[object, ...]:
    # storageVersionHash is not part of aggregated discovery, so it is left out.
    return (r.name, r.kind, r.namespaced, frozenset(r.verbs), r.short_names, r.categories, r.group, r.version)


# Resources that legitimately differ between aggregated_v2.json (3ddd5a74) and the per-group-version files, from
# SOURCES.md. Everything else in those group versions must still be equal.
_KNOWN_DIFFERENT: dict[GroupVersion, set[str]] = {
    # "has extra category 'podautoscalers' not seen in aggregated_v2@3ddd5a74"
    GroupVersion("autoscaling", "v2"): {"horizontalpodautoscalers"},
    # "podcertificaterequests in v1 and no clustertrustbundles: differs from aggregated_v2@3ddd5a74"
    GroupVersion("certificates.k8s.io", "v1"): {"clustertrustbundles", "podcertificaterequests",
                                               "podcertificaterequests/status"},
    # "older upstream version (VAP era), newer servers serve MutatingAdmissionPolicy in v1alpha1"
    GroupVersion("admissionregistration.k8s.io", "v1alpha1"): {
        "mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "validatingadmissionpolicies",
        "validatingadmissionpolicies/status", "validatingadmissionpolicybindings"},
    # "older than aggregated_v2@3ddd5a74 (no devicetaintrules in v1)"
    GroupVersion("resource.k8s.io", "v1"): {"devicetaintrules", "devicetaintrules/status"},
    # Not in the notes column, but the file's commit (5257f77fba9b) predates the aggregated document, per the
    # note "Several per-group-version files are older than the aggregated document": same devicetaintrules gap.
    GroupVersion("resource.k8s.io", "v1beta2"): {"devicetaintrules", "devicetaintrules/status"},
}


def test_aggregated_and_legacy_documents_agree() -> None:
    agg = parse_aggregated(_read("aggregated_v2.json"), document="/apis")
    compared = 0
    for gv, agg_list in agg.resources.items():
        legacy = parse_api_resource_list(_read(f"apis__{gv.group}__{gv.version}.json"), document=str(gv),
                                         expected=gv)
        allowed = _KNOWN_DIFFERENT.get(gv, set())
        agg_keys = [_key(r) for r in agg_list.resources if r.name not in allowed]
        legacy_keys = [_key(r) for r in legacy.resources if r.name not in allowed]
        assert agg_keys == legacy_keys, gv  # same entries, same order
        differing = {r.name for r in agg_list.resources} ^ {r.name for r in legacy.resources}
        assert differing <= allowed, gv
        compared += len(agg_keys)
    assert compared >= 100
    # The allow-list only names resources that really differ (keeps it from hiding regressions).
    for gv, names in _KNOWN_DIFFERENT.items():
        legacy = parse_api_resource_list(_read(f"apis__{gv.group}__{gv.version}.json"), document=str(gv))
        agg_by = {r.name: _key(r) for r in agg.resources[gv].resources}
        leg_by = {r.name: _key(r) for r in legacy.resources}
        assert all(agg_by.get(n) != leg_by.get(n) for n in names), gv


def test_aggregated_groups_agree_with_group_list() -> None:
    agg = parse_aggregated(_read("aggregated_v2.json"), document="/apis")
    legacy = {g.name: g for g in parse_api_group_list(_read("apis.json"), document="/apis")}
    # SOURCES.md: "lifecycle.k8s.io only in apis.json", the two documents being three weeks apart.
    assert set(legacy) - {g.name for g in agg.groups} == {"lifecycle.k8s.io"}
    for group in agg.groups:
        assert group == legacy[group.name]
        assert agg.listed_group_versions(group.name) == group.group_versions


def test_v2beta1_and_v2_of_the_same_commit_parse_identically() -> None:
    v2 = parse_aggregated(_read("history/aggregated_v2.json@0209a4cb57a359609b96779f044bcdff8e8df70d"),
                          document="/apis")
    beta = parse_aggregated(_read("aggregated_v2beta1.json"), document="/apis",
                            format=DocumentFormat.AGGREGATED_V2BETA1)
    assert (v2.format, beta.format) == (DocumentFormat.AGGREGATED_V2, DocumentFormat.AGGREGATED_V2BETA1)
    assert v2.groups == beta.groups
    assert dict(v2.resources) == dict(beta.resources)
    assert v2.stale == beta.stale == ()


def test_aggregated_subresources_follow_client_go() -> None:
    agg = parse_aggregated(_read("aggregated_v2.json"), document="/apis")
    apps = {r.name: r for r in agg.resources[GroupVersion("apps", "v1")].resources}
    scale = apps["deployments/scale"]
    assert (scale.kind, scale.group, scale.version, scale.namespaced) == ("Scale", "autoscaling", "v1", True)
    assert scale.verbs == ("get", "patch", "update") and scale.singular_name == ""
    status = apps["deployments/status"]
    assert (status.kind, status.group, status.version) == ("Deployment", None, None)
    assert apps["deployments"].short_names == ("deploy",) and apps["deployments"].categories == ("all",)
    # responseKind with empty group/version (apiregistration) reads as the containing group version.
    apiservices = agg.resources[GroupVersion("apiregistration.k8s.io", "v1")].resources[0]
    assert (apiservices.kind, apiservices.group, apiservices.version) == ("APIService", None, None)
    assert not apiservices.namespaced


# --- content types ------------------------------------------------------------------------------------------

_V2 = DocumentFormat.AGGREGATED_V2
_V2B1 = DocumentFormat.AGGREGATED_V2BETA1
_LEGACY = DocumentFormat.LEGACY


@pytest.mark.parametrize(("content_type", "expected"), [
    ("application/json", _LEGACY),
    ("application/json; charset=utf-8", _LEGACY),
    ("Application/JSON", _LEGACY),
    ("", _LEGACY),
    (None, _LEGACY),
    ("   ", _LEGACY),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", _V2),
    ("application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io", _V2),
    ("application/json; g=apidiscovery.k8s.io; v=v2; as=APIGroupDiscoveryList; charset=utf-8", _V2),
    ("application/json;charset=utf-8;G=apidiscovery.k8s.io;V=v2;AS=APIGroupDiscoveryList", _V2),
    ('application/json;g="apidiscovery.k8s.io";v="v2";as="APIGroupDiscoveryList"', _V2),
    ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", _V2B1),
    (" application/json ;v=v2beta1 ;as=APIGroupDiscoveryList;g=apidiscovery.k8s.io ", _V2B1),
])
def test_detect_format(content_type: str | None, expected: DocumentFormat) -> None:
    assert detect_format(content_type, document="/apis") is expected


@pytest.mark.parametrize("content_type", [
    "text/html; charset=utf-8",
    "text/plain; charset=utf-8",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
    "application/json;g=apidiscovery.k8s.io;as=APIGroupDiscoveryList",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;g=apidiscovery.k8s.io;v=v2",
])
def test_detect_format_rejects(content_type: str) -> None:
    with pytest.raises(MalformedDiscoveryError) as info:
        detect_format(content_type, document="/apis")
    assert info.value.document == "/apis"
    assert content_type.split(";")[0] in str(info.value)


def test_accept_header_prefers_v2_then_v2beta1_then_legacy() -> None:
    parts = ACCEPT_AGGREGATED.split(",")
    assert [detect_format(p, document="-") for p in parts] == [_V2, _V2B1, _LEGACY]
    assert [f.content_type for f in (_V2, _V2B1, _LEGACY)] == parts



def test_the_only_fixture_files_left_out_are_not_discovery_documents(fixtures_dir: Path) -> None:
    """Guard for the exclusion above: it names exactly the two non-document files the fixture folder has."""
    found = {p.name for p in (fixtures_dir / "discovery").rglob("*") if p.name in _NOT_DOCUMENTS}
    assert found == _NOT_DOCUMENTS
