"""Encoders and parsers round-trip: encode -> JSON bytes -> parse gives the model objects back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.properties import examples
from hypothesis import given
from hypothesis import strategies as st

from restmapper.errors import InvalidArgumentError
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion
from restmapper.wire import (
    DocumentFormat,
    encode_aggregated,
    encode_api_group,
    encode_api_group_list,
    encode_api_resource_list,
    encode_api_versions,
    parse_aggregated,
    parse_api_group,
    parse_api_group_list,
    parse_api_resource_list,
    parse_api_versions,
)

_text = st.text(st.characters(codec="utf-8"), max_size=12)
_name = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
_group_name = st.from_regex(r"[a-z][a-z0-9-]{0,8}(\.[a-z]{1,5}){0,2}", fullmatch=True)
_version = st.from_regex(r"v[1-9][0-9]?((alpha|beta)[1-9])?", fullmatch=True) | _name
_kind = st.from_regex(r"[A-Z][A-Za-z0-9]{0,12}", fullmatch=True)
_strs = st.lists(_text, max_size=4).map(tuple)
_hash = st.none() | st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


def _encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


@st.composite
def _cross_gv(draw: st.DrawFn, owner: GroupVersion) -> tuple[str | None, str | None]:
    """``group``/``version`` of an entry: None/None for the owner's own, else another group version."""
    if draw(st.booleans()):
        return None, None
    group = draw(st.none() | _group_name)
    version = draw(st.none() | _version)
    if (group or "", version or "") == (owner.group, owner.version) or (group, version) == (None, None):
        return None, None
    return group, version


@st.composite
def resource_lists(draw: st.DrawFn, *, aggregated: bool = False, owner: GroupVersion | None = None) -> APIResourceList:
    """APIResourceLists as parsers produce them (parents each followed by their subresources).

    With ``aggregated``, what aggregated discovery can carry: no storageVersionHash, subresources with the
    parent's scope and no names/short names/categories of their own, parents with a kind, and at the end the
    subresources of parents that had no responseKind.
    """
    gv = owner or GroupVersion(draw(st.just("") | _group_name), draw(_version))
    parents = draw(st.lists(_name, max_size=5, unique=True))
    orphans = draw(st.lists(_name, max_size=2, unique=True)) if aggregated else []
    orphans = [o for o in orphans if o not in parents]
    out: list[APIResource] = []
    for parent in parents + orphans:
        namespaced = draw(st.booleans())
        if parent in parents:
            group, version = draw(_cross_gv(gv))
            out.append(APIResource(
                name=parent, singular_name=draw(_text), namespaced=namespaced,
                kind=draw(_kind) if aggregated else draw(_kind | st.just("")),
                verbs=draw(_strs), short_names=draw(_strs), categories=draw(_strs), group=group, version=version,
                storage_version_hash=None if aggregated else draw(_hash)))
        subs = draw(st.lists(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}", fullmatch=True), max_size=3,
                             unique=True, min_size=1 if parent in orphans else 0))
        for sub in subs:
            group, version = draw(_cross_gv(gv))
            if aggregated:
                out.append(APIResource(name=f"{parent}/{sub}", singular_name="", namespaced=namespaced,
                                       kind=draw(_kind), verbs=draw(_strs), group=group, version=version))
            else:
                out.append(APIResource(
                    name=f"{parent}/{sub}", singular_name=draw(_text), namespaced=draw(st.booleans()),
                    kind=draw(_kind), verbs=draw(_strs), short_names=draw(_strs), categories=draw(_strs),
                    group=group, version=version, storage_version_hash=draw(_hash)))
    return APIResourceList(group_version=gv, resources=tuple(out))


@examples(40)
@given(resource_lists())
def test_api_resource_list_round_trip(lst: APIResourceList) -> None:
    parsed = parse_api_resource_list(_encode(encode_api_resource_list(lst)), document="-",
                                     expected=lst.group_version)
    assert parsed == lst


@st.composite
def _group(draw: st.DrawFn) -> APIGroup:
    versions = draw(st.lists(_version, max_size=4, unique=True))
    use_preferred = draw(st.booleans())
    preferred = draw(st.sampled_from(versions)) if versions and use_preferred else None
    return APIGroup(name=draw(_group_name), versions=tuple(versions), preferred_version=preferred)


_groups = st.lists(_group(), max_size=5, unique_by=lambda g: g.name).map(tuple)


@examples(40)
@given(_groups)
def test_api_group_list_and_group_round_trip(groups: tuple[APIGroup, ...]) -> None:
    assert parse_api_group_list(_encode(encode_api_group_list(groups)), document="/apis") == groups
    for group in groups:
        assert parse_api_group(_encode(encode_api_group(group)), document=f"/apis/{group.name}") == group


@given(st.lists(_version, max_size=4), st.none() | st.just("10.0.0.1:6443"))
def test_api_versions_round_trip(versions: list[str], address: str | None) -> None:
    doc = encode_api_versions(versions, server_address=address)
    assert parse_api_versions(_encode(doc), document="/api") == tuple(versions)


@st.composite
def aggregated_inputs(draw: st.DrawFn) -> tuple[list[APIGroup], dict[GroupVersion, APIResourceList],
                                                 list[GroupVersion]]:
    names = draw(st.lists(st.just("") | _group_name, max_size=4, unique=True))
    groups: list[APIGroup] = []
    resources: dict[GroupVersion, APIResourceList] = {}
    stale: list[GroupVersion] = []
    for name in names:
        versions = draw(st.lists(_version, max_size=3, unique=True))
        stale_versions = [v for v in draw(st.lists(_version, max_size=2, unique=True)) if v not in versions]
        use_preferred = draw(st.booleans())
        preferred = draw(st.sampled_from(versions)) if versions and use_preferred else None
        groups.append(APIGroup(name=name, versions=tuple(versions), preferred_version=preferred))
        for v in versions:
            if draw(st.booleans()):
                gv = GroupVersion(name, v)
                resources[gv] = draw(resource_lists(aggregated=True, owner=gv))
        stale += [GroupVersion(name, v) for v in stale_versions]
    return groups, resources, stale


@examples(30)
@given(aggregated_inputs(), st.sampled_from([DocumentFormat.AGGREGATED_V2, DocumentFormat.AGGREGATED_V2BETA1]))
def test_aggregated_round_trip(
    data: tuple[list[APIGroup], dict[GroupVersion, APIResourceList], list[GroupVersion]], fmt: DocumentFormat
) -> None:
    groups, resources, stale = data
    doc = encode_aggregated(groups, resources, stale=stale, format=fmt)
    assert doc["kind"] == "APIGroupDiscoveryList" and doc["apiVersion"] == fmt.value
    parsed = parse_aggregated(_encode(doc), document="/apis", format=fmt)
    # The preferred version is listed first, and comes back as the first (non-stale) version.
    expected_groups = []
    for g in groups:
        order = list(g.versions)
        if g.preferred_version is not None:
            order.remove(g.preferred_version)
            order.insert(0, g.preferred_version)
        expected_groups.append(APIGroup(g.name, tuple(order), order[0] if order else None))
    assert parsed.groups == tuple(expected_groups)
    assert parsed.stale == tuple(stale)
    assert parsed.format is fmt
    for group in expected_groups:
        for gv in group.group_versions:
            assert parsed.resources[gv] == resources.get(gv, APIResourceList(gv, ()))
    assert set(parsed.resources) == {gv for g in groups for gv in g.group_versions}
    # And the legacy encoding of each converted list reads back the same.
    for lst in parsed.resources.values():
        assert parse_api_resource_list(_encode(encode_api_resource_list(lst)), document="-") == lst


def test_encode_aggregated_shape_matches_kube_apiserver() -> None:
    gv = GroupVersion("apps", "v1")
    lst = APIResourceList(gv, (
        APIResource("deployments", "deployment", True, "Deployment", ("get",), ("deploy",), ("all",)),
        APIResource("deployments/scale", "", True, "Scale", ("get",), group="autoscaling", version="v1"),
    ))
    doc = encode_aggregated([APIGroup("apps", ("v1",), "v1"), APIGroup("metrics.k8s.io", ())], {gv: lst},
                            stale=[GroupVersion("metrics.k8s.io", "v1beta1"), GroupVersion("gone.io", "v1")])
    assert doc == {
        "apiVersion": "apidiscovery.k8s.io/v2", "kind": "APIGroupDiscoveryList", "metadata": {},
        "items": [
            {"metadata": {"name": "apps"}, "versions": [{"freshness": "Current", "version": "v1", "resources": [{
                "resource": "deployments", "responseKind": {"group": "apps", "kind": "Deployment", "version": "v1"},
                "scope": "Namespaced", "singularResource": "deployment", "verbs": ["get"],
                "shortNames": ["deploy"], "categories": ["all"],
                "subresources": [{"responseKind": {"group": "autoscaling", "kind": "Scale", "version": "v1"},
                                  "subresource": "scale", "verbs": ["get"]}]}]}]},
            {"metadata": {"name": "metrics.k8s.io"}, "versions": [{"freshness": "Stale", "version": "v1beta1"}]},
            {"metadata": {"name": "gone.io"}, "versions": [{"freshness": "Stale", "version": "v1"}]},
        ],
    }
    with pytest.raises(InvalidArgumentError, match="batch/v1"):
        encode_aggregated([], {GroupVersion("batch", "v1"): APIResourceList(GroupVersion("batch", "v1"), ())})
    with pytest.raises(InvalidArgumentError):
        encode_aggregated([], {}, format=DocumentFormat.LEGACY)


def test_real_aggregated_document_round_trips(fixtures_dir: Any) -> None:
    body = (fixtures_dir / "discovery" / "aggregated_v2.json").read_bytes()
    agg = parse_aggregated(body, document="/apis")
    again = parse_aggregated(_encode(encode_aggregated(agg.groups, agg.resources, stale=agg.stale)), document="-")
    assert (again.groups, dict(again.resources), again.stale) == (agg.groups, dict(agg.resources), agg.stale)
    # The encoder writes exactly what kube-apiserver wrote, except that apiregistration's responseKinds carry
    # empty group/version there (same meaning: the containing group version) and full ones here.
    original = json.loads(body)
    for item in original["items"]:
        for version in item["versions"]:
            for resource in version.get("resources", []):
                for rk in [resource["responseKind"], *(s["responseKind"] for s in resource.get("subresources", []))]:
                    if (rk["group"], rk["version"]) == ("", ""):
                        rk.update(group=item["metadata"]["name"], version=version["version"])
    assert encode_aggregated(agg.groups, agg.resources) == original
