"""Bad input to the wire layer: every fault is a MalformedDiscoveryError naming the document and the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError, MalformedDiscoveryError
from restmapper.model import GroupVersion
from restmapper.wire import (
    DocumentFormat,
    decode_json,
    parse_aggregated,
    parse_api_group,
    parse_api_group_list,
    parse_api_resource_list,
    parse_api_versions,
    parse_version_info,
)

Doc = dict[str, Any]

RESOURCE_LIST: Doc = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "apps/v1",
    "resources": [
        {"name": "deployments", "singularName": "deployment", "namespaced": True, "kind": "Deployment",
         "verbs": ["get", "list"], "shortNames": ["deploy"], "categories": ["all"],
         "storageVersionHash": "8aSe+NMegvE="},
        {"name": "deployments/scale", "singularName": "", "namespaced": True, "kind": "Scale",
         "group": "autoscaling", "version": "v1", "verbs": ["get", "patch", "update"]},
    ],
}

GROUP_LIST: Doc = {
    "kind": "APIGroupList",
    "apiVersion": "v1",
    "groups": [{
        "name": "apps",
        "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
        "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"},
    }],
}


def _rk(kind: str, group: str = "", version: str = "") -> Doc:
    return {"group": group, "kind": kind, "version": version}


AGGREGATED: Doc = {
    "apiVersion": "apidiscovery.k8s.io/v2",
    "kind": "APIGroupDiscoveryList",
    "metadata": {},
    "items": [{
        "metadata": {"name": "apps"},
        "versions": [{
            "version": "v1",
            "freshness": "Current",
            "resources": [{
                "resource": "deployments",
                "responseKind": _rk("Deployment", "apps", "v1"),
                "scope": "Namespaced",
                "singularResource": "deployment",
                "shortNames": ["deploy"],
                "categories": ["all"],
                "verbs": ["get", "list"],
                "subresources": [{"subresource": "scale", "responseKind": _rk("Scale", "autoscaling", "v1"),
                                  "verbs": ["get"]}],
            }],
        }],
    }],
}


def _body(doc: object) -> bytes:
    return json.dumps(doc).encode()


def _agg(doc: Doc, **kw: Any) -> Any:
    return parse_aggregated(_body(doc), document="/apis", **kw)


# --- bodies -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "needle"), [
    (b"", "empty body"),
    (b" \r\n\t", "empty body"),
    (b"<!DOCTYPE html><html><head><title>Sign in</title></head></html>", "HTML page, probably from a proxy"),
    (b"\n  <html>\n<body>502 Bad Gateway</body></html>", "HTML page, probably from a proxy"),
    (b"the server is currently unable to handle the request\n", "not JSON"),
    (b"404 page not found\n", "not JSON"),
    (b'{"versions": ["v1"]', "truncated JSON"),
    (b'{"versions": ["v1",]}', "invalid JSON"),
    (b'{"versions": "\xff\xfe"}', "not valid UTF-8"),
    (b'["v1"]', "top level must be a JSON object, not array"),
    (b"null", "top level must be a JSON object, not null"),
    (b'"x"', "not string"),
    (b'{"major": NaN}', "invalid JSON"),
    (b"[" * 100_000, "JSON"),
])
def test_decode_json_faults(body: bytes, needle: str) -> None:
    with pytest.raises(MalformedDiscoveryError) as info:
        decode_json(body, document="/apis")
    assert needle in str(info.value)
    assert info.value.document == "/apis" and info.value.field == ""


def test_decode_json_never_echoes_the_body() -> None:
    secret = "Bearer " + "s3cr3t" * 50
    body = ('{"groups": [' + json.dumps(secret) + " oops ]}").encode()
    with pytest.raises(MalformedDiscoveryError) as info:
        decode_json(body, document="/apis")
    assert secret not in str(info.value)
    assert len(str(info.value)) < 250
    assert "line 1 column" in str(info.value)


def test_decode_json_tolerates_bom_and_sanitizes_snippet() -> None:
    assert decode_json(b'\xef\xbb\xbf{"a": 1}', document="-") == {"a": 1}
    with pytest.raises(MalformedDiscoveryError) as info:
        decode_json(b"oops\x1b[31m\x07 control", document="-")
    assert "\x1b" not in str(info.value) and "\x07" not in str(info.value)


_SMALL_DOCS: list[tuple[str, bytes, Callable[[bytes], object]]] = [
    ("resource list", json.dumps(RESOURCE_LIST, indent=1).encode(),
     lambda b: parse_api_resource_list(b, document="/apis/apps/v1")),
    ("aggregated", json.dumps(AGGREGATED).encode(), lambda b: parse_aggregated(b, document="/apis")),
    ("group list", json.dumps(GROUP_LIST).encode(), lambda b: parse_api_group_list(b, document="/apis")),
]


@pytest.mark.parametrize(("body", "parse"), [pytest.param(b, p, id=n) for n, b, p in _SMALL_DOCS])
def test_every_prefix_is_valid_or_malformed(body: bytes, parse: Callable[[bytes], object]) -> None:
    """A connection cut anywhere gives a typed error (never a JSONDecodeError or a half-parsed result)."""
    full = parse(body)
    for end in range(len(body)):
        try:
            result = parse(body[:end])
        except MalformedDiscoveryError:
            continue
        # Only whitespace may be cut from a complete document.
        assert body[end:].strip() == b"" and result == full, end


# --- wrong types, field by field -----------------------------------------------------------------------------

def _set(path: list[str | int], value: object) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return mutate


_DELETE = object()
_R0: list[str | int] = ["resources", 0]
_AR0: list[str | int] = ["items", 0, "versions", 0, "resources", 0]

_LEGACY_FAULTS = [
    ("groupVersion missing", _set(["groupVersion"], _DELETE), "groupVersion"),
    ("groupVersion number", _set(["groupVersion"], 1), "groupVersion"),
    ("groupVersion 3 parts", _set(["groupVersion"], "a/b/c"), "groupVersion"),
    ("groupVersion empty", _set(["groupVersion"], ""), "groupVersion"),
    ("kind Status", _set(["kind"], "Status"), "kind"),
    ("resources string", _set(["resources"], "deployments"), "resources"),
    ("resources object", _set(["resources"], {}), "resources"),
    ("resource null", _set([*_R0], None), "resources[0]"),
    ("resource list", _set([*_R0], []), "resources[0]"),
    ("name number", _set([*_R0, "name"], 5), "resources[0].name"),
    ("name missing", _set([*_R0, "name"], _DELETE), "resources[0].name"),
    ("name empty", _set([*_R0, "name"], ""), "resources[0].name"),
    ("kind missing", _set([*_R0, "kind"], _DELETE), "resources[0].kind"),
    ("kind list", _set([*_R0, "kind"], ["Deployment"]), "resources[0].kind"),
    ("namespaced string", _set([*_R0, "namespaced"], "true"), "resources[0].namespaced"),
    ("verbs string", _set([*_R0, "verbs"], "get"), "resources[0].verbs"),
    ("verb number", _set([*_R0, "verbs", 1], 3), "resources[0].verbs[1]"),
    ("shortNames object", _set([*_R0, "shortNames"], {"a": 1}), "resources[0].shortNames"),
    ("category null", _set([*_R0, "categories", 0], None), "resources[0].categories[0]"),
    ("singularName number", _set([*_R0, "singularName"], 0), "resources[0].singularName"),
    ("group bool", _set(["resources", 1, "group"], True), "resources[1].group"),
    ("storageVersionHash number", _set([*_R0, "storageVersionHash"], 7), "resources[0].storageVersionHash"),
]


@pytest.mark.parametrize(("mutate", "field"), [pytest.param(m, f, id=n) for n, m, f in _LEGACY_FAULTS])
def test_resource_list_wrong_types(mutate: Callable[[Doc], None], field: str) -> None:
    doc = copy.deepcopy(RESOURCE_LIST)
    mutate(doc)
    with pytest.raises(MalformedDiscoveryError) as info:
        parse_api_resource_list(_body(doc), document="/apis/apps/v1")
    assert (info.value.document, info.value.field) == ("/apis/apps/v1", field)
    assert f"/apis/apps/v1: {field}" in str(info.value)


_GROUP_FAULTS = [
    ("groups string", _set(["groups"], "apps"), "groups"),
    ("name missing", _set(["groups", 0, "name"], _DELETE), "groups[0].name"),
    ("name number", _set(["groups", 0, "name"], 1), "groups[0].name"),
    ("versions null entry", _set(["groups", 0, "versions", 0], None), "groups[0].versions[0]"),
    ("version missing", _set(["groups", 0, "versions", 0, "version"], _DELETE), "groups[0].versions[0].version"),
    ("groupVersion mismatch", _set(["groups", 0, "versions", 0, "groupVersion"], "batch/v1"),
     "groups[0].versions[0].groupVersion"),
    ("preferred string", _set(["groups", 0, "preferredVersion"], "v1"), "groups[0].preferredVersion"),
    ("preferred mismatch", _set(["groups", 0, "preferredVersion", "groupVersion"], "apps/v2"),
     "groups[0].preferredVersion.groupVersion"),
    ("duplicate group", lambda d: d["groups"].append(copy.deepcopy(d["groups"][0])), "groups[1].name"),
    ("duplicate version", lambda d: d["groups"][0]["versions"].append({"version": "v1"}),
     "groups[0].versions[1].version"),
]


@pytest.mark.parametrize(("mutate", "field"), [pytest.param(m, f, id=n) for n, m, f in _GROUP_FAULTS])
def test_group_list_wrong_types(mutate: Callable[[Doc], None], field: str) -> None:
    doc = copy.deepcopy(GROUP_LIST)
    mutate(doc)
    with pytest.raises(MalformedDiscoveryError) as info:
        parse_api_group_list(_body(doc), document="/apis")
    assert (info.value.document, info.value.field) == ("/apis", field)


_AGG_FAULTS = [
    ("kind missing", _set(["kind"], _DELETE), "kind"),
    ("kind other", _set(["kind"], "APIGroupList"), "kind"),
    ("apiVersion v3", _set(["apiVersion"], "apidiscovery.k8s.io/v3"), "apiVersion"),
    ("apiVersion v2beta1 under v2", _set(["apiVersion"], "apidiscovery.k8s.io/v2beta1"), "apiVersion"),
    ("items object", _set(["items"], {"apps": {}}), "items"),
    ("item null", _set(["items", 0], None), "items[0]"),
    ("metadata list", _set(["items", 0, "metadata"], []), "items[0].metadata"),
    ("group name number", _set(["items", 0, "metadata", "name"], 3), "items[0].metadata.name"),
    ("versions string", _set(["items", 0, "versions"], "v1"), "items[0].versions"),
    ("version missing", _set(["items", 0, "versions", 0, "version"], _DELETE), "items[0].versions[0].version"),
    ("freshness number", _set(["items", 0, "versions", 0, "freshness"], 1), "items[0].versions[0].freshness"),
    ("resources null entry", _set([*_AR0], None), "items[0].versions[0].resources[0]"),
    ("resource number", _set([*_AR0, "resource"], 1), "items[0].versions[0].resources[0].resource"),
    ("scope unknown", _set([*_AR0, "scope"], "Global"), "items[0].versions[0].resources[0].scope"),
    ("scope lower", _set([*_AR0, "scope"], "namespaced"), "items[0].versions[0].resources[0].scope"),
    ("scope missing", _set([*_AR0, "scope"], _DELETE), "items[0].versions[0].resources[0].scope"),
    ("responseKind string", _set([*_AR0, "responseKind"], "Deployment"),
     "items[0].versions[0].resources[0].responseKind"),
    ("responseKind kind number", _set([*_AR0, "responseKind", "kind"], 1),
     "items[0].versions[0].resources[0].responseKind.kind"),
    ("verbs string", _set([*_AR0, "verbs"], "get"), "items[0].versions[0].resources[0].verbs"),
    ("subresources object", _set([*_AR0, "subresources"], {}), "items[0].versions[0].resources[0].subresources"),
    ("subresource name missing", _set([*_AR0, "subresources", 0, "subresource"], _DELETE),
     "items[0].versions[0].resources[0].subresources[0].subresource"),
    ("subresource verb number", _set([*_AR0, "subresources", 0, "verbs", 0], 9),
     "items[0].versions[0].resources[0].subresources[0].verbs[0]"),
    ("duplicate group", lambda d: d["items"].append(copy.deepcopy(d["items"][0])), "items[1].metadata.name"),
    ("duplicate version", lambda d: d["items"][0]["versions"].append({"version": "v1"}),
     "items[0].versions[1].version"),
]


@pytest.mark.parametrize(("mutate", "field"), [pytest.param(m, f, id=n) for n, m, f in _AGG_FAULTS])
def test_aggregated_wrong_types(mutate: Callable[[Doc], None], field: str) -> None:
    doc = copy.deepcopy(AGGREGATED)
    mutate(doc)
    with pytest.raises(MalformedDiscoveryError) as info:
        _agg(doc)
    assert (info.value.document, info.value.field) == ("/apis", field)
    assert f"/apis: {field}" in str(info.value)


def _nodes(value: object, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _nodes(child, (*path, i))


_REPLACEMENTS: list[object] = [None, 0, 1.5, True, "", "x", [], [1], {}, {"a": None}]


@pytest.mark.parametrize(("doc", "parse"), [
    pytest.param(RESOURCE_LIST, lambda b: parse_api_resource_list(b, document="-"), id="resource-list"),
    pytest.param(GROUP_LIST, lambda b: parse_api_group_list(b, document="-"), id="group-list"),
    pytest.param(AGGREGATED, lambda b: parse_aggregated(b, document="-"), id="aggregated"),
    pytest.param({"versions": ["v1"]}, lambda b: parse_api_versions(b, document="-"), id="api-versions"),
    pytest.param({"major": "1", "minor": "30", "gitVersion": "v1.30.0", "platform": "linux/amd64"},
                 lambda b: parse_version_info(b, document="-"), id="version"),
])
def test_any_node_of_any_type_gives_a_typed_error_or_a_result(doc: Doc, parse: Callable[[bytes], object]) -> None:
    """Replace every node with every JSON type: never a TypeError/KeyError/AttributeError."""
    for path in _nodes(doc):
        if not path:
            continue
        for replacement in _REPLACEMENTS:
            mutated = copy.deepcopy(doc)
            _set(list(path), replacement)(mutated)
            try:
                parse(_body(mutated))
            except MalformedDiscoveryError as exc:
                assert exc.document == "-"
                assert exc.field.startswith(str(path[0])), (path, exc.field)


# --- semantics -----------------------------------------------------------------------------------------------

def _add_unknown_fields(value: object) -> object:
    if isinstance(value, dict):
        out = {k: _add_unknown_fields(v) for k, v in value.items()}
        out["zzFutureField"] = {"nested": [1, "two", None]}
        return out
    if isinstance(value, list):
        return [_add_unknown_fields(v) for v in value]
    return value


@pytest.mark.parametrize(("doc", "parse"), [
    pytest.param(RESOURCE_LIST, lambda b: parse_api_resource_list(b, document="-"), id="resource-list"),
    pytest.param(GROUP_LIST, lambda b: parse_api_group_list(b, document="-"), id="group-list"),
    pytest.param(GROUP_LIST["groups"][0], lambda b: parse_api_group(b, document="-"), id="group"),
    pytest.param(AGGREGATED, lambda b: parse_aggregated(b, document="-"), id="aggregated"),
])
def test_unknown_fields_are_ignored(doc: Doc, parse: Callable[[bytes], object]) -> None:
    assert parse(_body(_add_unknown_fields(doc))) == parse(_body(doc))


def test_absent_optional_fields_take_go_zero_values() -> None:
    doc = {"groupVersion": "v1", "resources": [{"name": "things", "kind": "Thing", "verbs": None,
                                                "singularName": None, "group": "", "version": ""}]}
    (thing,) = parse_api_resource_list(_body(doc), document="/api/v1").resources
    assert (thing.namespaced, thing.singular_name, thing.verbs, thing.short_names, thing.categories) == (
        False, "", (), (), ())
    assert (thing.group, thing.version, thing.storage_version_hash) == (None, None, None)
    assert parse_api_group_list(b'{"kind": "APIGroupList"}', document="/apis") == ()
    assert parse_api_group_list(b'{"groups": null}', document="/apis") == ()
    assert parse_api_versions(b'{"kind": "APIVersions", "versions": ["v1"]}') == ("v1",)
    assert parse_api_versions(b'{"versions": null}') == ()


@pytest.mark.parametrize(("parse", "body", "field"), [
    (lambda b: parse_api_versions(b, document="/api"), b"{}", "versions"),
    (lambda b: parse_api_versions(b, document="/api"), b'{"apiVersion": "v1"}', "versions"),
    (lambda b: parse_api_group_list(b, document="/apis"), b"{}", "groups"),
    (lambda b: parse_api_group_list(b, document="/apis"), b'{"metadata": {}}', "groups"),
    (lambda b: parse_api_resource_list(b, document="/api/v1"), b'{"groupVersion": "v1"}', "resources"),
])
def test_a_document_with_neither_kind_nor_list_is_malformed(
        parse: Callable[[bytes], object], body: bytes, field: str) -> None:
    """``{}`` from a proxy or a half-started server is not "nothing served": Go zero values need the kind."""
    with pytest.raises(MalformedDiscoveryError) as info:
        parse(body)
    assert "kind" in info.value.reason and field in info.value.reason


def test_expected_group_version_is_enforced() -> None:
    body = _body(RESOURCE_LIST)
    assert parse_api_resource_list(body, document="-", expected=GroupVersion("apps", "v1")).resources
    with pytest.raises(MalformedDiscoveryError) as info:
        parse_api_resource_list(body, document="/apis/apps/v2", expected=GroupVersion("apps", "v2"))
    assert info.value.field == "groupVersion" and "apps/v2" in info.value.reason


def test_status_object_with_200_is_named() -> None:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "forbidden", "code": 403}
    with pytest.raises(MalformedDiscoveryError, match="Status object"):
        parse_api_resource_list(_body(status), document="/apis/apps/v1")
    with pytest.raises(MalformedDiscoveryError, match="expected APIVersions"):
        parse_api_versions(_body(AGGREGATED), document="/api")


def test_version_info() -> None:
    info = parse_version_info(_body({"major": "1", "minor": "20+", "gitVersion": "v1.20.4-k0s1",
                                     "platform": "linux/amd64", "goVersion": "go1.15.8", "future": {"a": 1}}))
    assert (info.major, info.minor, info.git_version, info.platform) == ("1", "20+", "v1.20.4-k0s1", "linux/amd64")
    assert info.extra == (("goVersion", "go1.15.8"),)
    with pytest.raises(MalformedDiscoveryError, match="not a version document"):
        parse_version_info(b"{}")


def test_subresource_with_two_slashes() -> None:
    doc = copy.deepcopy(AGGREGATED)
    doc["items"][0]["metadata"]["name"] = "kubevirt.io"
    resource = doc["items"][0]["versions"][0]["resources"][0]
    resource.update(resource="virtualmachineinstances", responseKind=_rk("VirtualMachineInstance"),
                    subresources=[{"subresource": "sev/fetchcertchain", "responseKind": _rk("SEVPlatformInfo"),
                                   "verbs": ["get"]}])
    lst = _agg(doc).resources[GroupVersion("kubevirt.io", "v1")]
    sub = lst.resources[1]
    assert sub.name == "virtualmachineinstances/sev/fetchcertchain"
    assert (sub.parent, sub.subresource, sub.kind, sub.namespaced) == (
        "virtualmachineinstances", "sev/fetchcertchain", "SEVPlatformInfo", True)
    legacy = {"groupVersion": "kubevirt.io/v1", "resources": [
        {"name": "virtualmachineinstances/sev/fetchcertchain", "singularName": "", "namespaced": True,
         "kind": "SEVPlatformInfo", "verbs": ["get"]}]}
    assert parse_api_resource_list(_body(legacy), document="-").resources == (sub,)


@pytest.mark.parametrize("empty_kind", [None, _DELETE, _rk(""), {}])
def test_parent_without_response_kind_is_dropped_but_its_subresources_kept(empty_kind: object) -> None:
    doc = copy.deepcopy(AGGREGATED)
    _set([*_AR0, "responseKind"], empty_kind)(doc)
    (only,) = _agg(doc).resources[GroupVersion("apps", "v1")].resources
    assert (only.name, only.kind, only.group, only.version, only.namespaced, only.verbs) == (
        "deployments/scale", "Scale", "autoscaling", "v1", True, ("get",))


@pytest.mark.parametrize("empty_kind", [None, _DELETE, _rk(""), _rk("", "apps", "v1")])
def test_subresource_without_response_kind_is_dropped(empty_kind: object) -> None:
    doc = copy.deepcopy(AGGREGATED)
    _set([*_AR0, "subresources", 0, "responseKind"], empty_kind)(doc)
    assert [r.name for r in _agg(doc).resources[GroupVersion("apps", "v1")].resources] == ["deployments"]


def _version(v: str, freshness: str | None, kind: str = "Widget") -> Doc:
    entry: Doc = {"version": v, "resources": [{"resource": "widgets", "responseKind": _rk(kind), "scope": "Cluster",
                                                "singularResource": "widget", "verbs": ["get"]}]}
    if freshness is not None:
        entry["freshness"] = freshness
    return entry


def test_stale_versions_are_reported_and_excluded() -> None:
    doc = {"kind": "APIGroupDiscoveryList", "items": [
        {"metadata": {"name": "metrics.k8s.io"}, "versions": [_version("v1beta2", "Stale"),
                                                              _version("v1beta1", None)]},
        {"metadata": {"name": "custom.metrics.k8s.io"}, "versions": [_version("v1beta2", "Stale"),
                                                                     _version("v1beta1", "Stale")]},
        {"metadata": {"name": "example.com"}, "versions": [_version("v1", "Current")]},
    ]}
    agg = _agg(doc)
    assert [(g.name, g.versions, g.preferred_version) for g in agg.groups] == [
        ("metrics.k8s.io", ("v1beta1",), "v1beta1"),
        ("custom.metrics.k8s.io", (), None),
        ("example.com", ("v1",), "v1"),
    ]
    assert agg.stale == (GroupVersion("metrics.k8s.io", "v1beta2"), GroupVersion("custom.metrics.k8s.io", "v1beta2"),
                         GroupVersion("custom.metrics.k8s.io", "v1beta1"))
    assert list(agg.resources) == [GroupVersion("metrics.k8s.io", "v1beta1"), GroupVersion("example.com", "v1")]
    assert agg.listed_group_versions("custom.metrics.k8s.io") == (
        GroupVersion("custom.metrics.k8s.io", "v1beta2"), GroupVersion("custom.metrics.k8s.io", "v1beta1"))
    assert agg.listed_group_versions("absent") == ()
    assert agg.is_stale(GroupVersion("metrics.k8s.io", "v1beta2"))
    assert agg.group("custom.metrics.k8s.io") is agg.groups[1] and agg.group("nope") is None


def test_core_group_at_api_and_formats() -> None:
    doc = {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2beta1",
           "items": [{"metadata": {"name": ""}, "versions": [_version("v1", "Current", "Pod")]}]}
    agg = parse_aggregated(_body(doc), document="/api", format=DocumentFormat.AGGREGATED_V2BETA1)
    assert agg.format is DocumentFormat.AGGREGATED_V2BETA1
    assert agg.groups[0].name == "" and GroupVersion("", "v1") in agg.resources
    with pytest.raises(MalformedDiscoveryError, match="does not match the Content-Type"):
        parse_aggregated(_body(doc), document="/api")
    del doc["apiVersion"]
    assert parse_aggregated(_body(doc), document="/api").format is DocumentFormat.AGGREGATED_V2
    with pytest.raises(InvalidArgumentError):
        parse_aggregated(_body(doc), document="/api", format=DocumentFormat.LEGACY)
