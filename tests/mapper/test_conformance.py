"""CONFORMANCE.md facts A, B and C (mapper classes), one table or test per fact, named after its number.

"mapper(defaults=[...])" of section C is modelled by building the groups in that order. A plain
``DefaultRESTMapper``/``MultiRESTMapper`` (no narrowing) is ``StaticRESTMapper(..., resource_priority=(),
kind_priority=())``. Facts about a delegate that returns hits *and* a generic error (C.30-32, 39, 40, 47, 52)
have no counterpart: nothing below the StaticRESTMapper raises anything but a no-match. C.17's "registered but
not in the defaults" case cannot be built either: every served version is searched. C.54-58 concern
``errors``/``model`` and are tested there.
"""

from __future__ import annotations

import pytest
from helpers.mapper import group, guessed, mapper, res

from restmapper.errors import (
    AmbiguousKindError,
    AmbiguousResourceError,
    NoKindMatchError,
    NoResourceMatchError,
    is_ambiguous,
    is_no_match,
)
from restmapper.mapper import (
    StaticRESTMapper,
    expand_resource_shortcut,
    kind_matches,
    narrow_by_priority,
    resource_matches,
    unsafe_guess_kind_to_resource,
)
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource

GVR = GroupVersionResource
GVK = GroupVersionKind

# --- A. NewDiscoveryRESTMapper priority rules (client-go TestRESTMapper) ----------------------------------


def _test_rest_mapper() -> StaticRESTMapper:
    extensions = group("extensions", {"v1beta": [res("jobs", "Job"), res("pods", "Pod")]}, "v1beta")
    core = group("", {"v1": [res("pods", "Pod")], "v2": [res("pods", "Pod")]}, "v1")
    unpreferred = group(
        "unpreferred",
        {
            "v1": [res("broccoli", "Broccoli")],
            "v2beta1": [res("broccoli", "Broccoli"), res("peas", "Pea")],
            "v2alpha1": [res("broccoli", "Broccoli"), res("peas", "Pea")],
        },
        "v1",
    )
    return StaticRESTMapper([extensions, core, unpreferred])


@pytest.mark.parametrize(
    ("partial", "expected"),
    [
        (GVR("", "", "pods"), GVK("", "v1", "Pod")),
        (GVR("", "v1", "pods"), GVK("", "v1", "Pod")),
        (GVR("", "v2", "pods"), GVK("", "v2", "Pod")),
        (GVR("", "", "jobs"), GVK("extensions", "v1beta", "Job")),
        (GVR("", "", "peas"), GVK("unpreferred", "v2beta1", "Pea")),
        (GVR("", "", "broccoli"), GVK("unpreferred", "v1", "Broccoli")),
    ],
)
def test_a_kind_for_priority(partial: GroupVersionResource, expected: GroupVersionKind) -> None:
    assert _test_rest_mapper().kind_for(partial) == expected


@pytest.mark.parametrize(
    ("partial", "expected"),
    [
        (GVR("", "", "pods"), GVR("", "v1", "pods")),
        (GVR("", "v2", "pods"), GVR("", "v2", "pods")),
        (GVR("", "", "jobs"), GVR("extensions", "v1beta", "jobs")),
    ],
)
def test_a_resource_for_priority(partial: GroupVersionResource, expected: GroupVersionResource) -> None:
    assert _test_rest_mapper().resource_for(partial) == expected


def test_a_kind_lookup_is_exact_or_lowercase() -> None:
    m = mapper(group("apps", {"v1": [res("deployments", "Deployment")]}))
    # Upstream echoes the caller's spelling; we return the kind served (DESIGN 5.10, a deliberate difference).
    assert m.rest_mapping(GroupKind("apps", "deployment")).group_version_kind == GVK("apps", "v1", "Deployment")
    assert m.rest_mapping(GroupKind("apps", "Deployment")).resource == GVR("apps", "v1", "deployments")
    with pytest.raises(NoKindMatchError):
        m.rest_mapping(GroupKind("apps", "DEPLOYMENT"))
    assert m.kind_for(GVR("", "", "deployments")) == GVK("apps", "v1", "Deployment")


def test_a_version_mapper_skips_subresources_and_sets_scope() -> None:
    m = mapper(group("", {"v1": [
        res("nodes", "Node", namespaced=False), res("nodes/status", "Node", namespaced=False),
        res("pods", "Pod"), res("pods/log", "Pod"),
    ]}))
    assert m.resources_for(GVR("", "", "nodes")) == [GVR("", "v1", "nodes")]
    assert not m.is_namespaced(GVK("", "v1", "Node"))
    assert m.is_namespaced(GVK("", "", "Pod"))
    for sub in ("nodes/status", "pods/log", "status", "log"):
        with pytest.raises(NoResourceMatchError):
            m.kind_for(GVR("", "", sub))


def test_a_singular_guessed_when_discovery_omits_it() -> None:
    m = mapper(group("", {"v1": [res("gateways", "Gateway", singular="")]}))
    assert m.kind_for(GVR("", "", "gateway")) == GVK("", "v1", "Gateway")


def test_a_list_kinds_are_not_registered() -> None:
    """Decision: the ``<Kind>List``/``List`` guesses name resources no server serves; they are not mapped."""
    m = mapper(group("apps", {"v1": [res("deployments", "Deployment")]}))
    for name in ("deploymentlists", "lists"):
        with pytest.raises(NoResourceMatchError):
            m.kinds_for(GVR("", "", name))
    with pytest.raises(NoKindMatchError):
        m.rest_mapping(GroupKind("apps", "DeploymentList"))


# --- B. shortcut expansion (client-go TestReplaceAliases / TestKindFor shortcut table) ---------------------

_HPA_AMBIGUOUS = [group("autoscaling", {"v1": [
    res("superhorizontalpodautoscalers", "SuperHorizontalPodAutoscaler", short=["hpa"]),
    res("horizontalpodautoscalers", "HorizontalPodAutoscaler", short=["hpa"]),
]})]
_DPL = [
    group("foo", {"v1": [res("deployments", "Deployment", short=["dpl"])]}),
    group("extension", {"v1beta1": [res("deployments", "Deployment", short=["deploy"])]}),
]
_PODDLERS = [
    group("", {"v1": [res("pods", "Pod")]}),
    group("acme.com", {"v1": [res("poddlers", "Poddler", short=["pods", "pod"])]}),
]
_PO = [
    group("", {"v1": [res("pods", "Pod", short=["po"])]}),
    group("acme.com", {"v1": [res("poddlers", "Poddler", short=["po"])],
                       "v1beta1": [res("poddlers", "Poddler", short=["po"])]}),
]
_HPA_TWO_VERSIONS = [group("autoscaling", {
    "v1alphav1": [res("horizontalpodautoscalers", "HorizontalPodAutoscaler", short=["hpa"])],
    "v1": [res("horizontalpodautoscalers", "HorizontalPodAutoscaler", short=["hpa"])],
})]
_HPA_THREE_GROUPS = [
    *_HPA_TWO_VERSIONS,
    group("foo", {"v1": [res("foo", "Foo", short=["hpa"])], "v1beta1": [res("foo", "Foo", short=["hpa"])]}),
    group("bar", {"v1": [res("bar", "Bar", short=["hpa"])]}),
]
_SC = [group("storage.k8s.io", {"v1": [res("storageclasses", "StorageClass", namespaced=False, short=["sc"])]})]


def _warn(short: str, other: str) -> str:
    return f'short name "{short}" could also match lower priority resource {other}'


@pytest.mark.parametrize(
    ("partial", "indexes", "expected", "warnings"),
    [
        pytest.param(GVR("", "", "storageclasses"), [], GVR("", "", "storageclasses"), [], id="B1-no-discovery"),
        pytest.param(GVR("", "", "hpa"), _HPA_AMBIGUOUS, GVR("autoscaling", "", "superhorizontalpodautoscalers"),
                     [_warn("hpa", "horizontalpodautoscalers.autoscaling")], id="B2-first-listed-wins"),
        pytest.param(GVR("", "", "dpl"), _DPL, GVR("foo", "", "deployments"), [], id="B3-dpl"),
        pytest.param(GVR("", "", "pods"), _PODDLERS, GVR("", "", "pods"), [], id="B4-real-plural-beats-short"),
        pytest.param(GVR("", "", "pod"), _PODDLERS, GVR("", "", "pod"), [], id="B5-real-singular-beats-short"),
        pytest.param(GVR("", "", "po"), _PO, GVR("", "", "pods"), [_warn("po", "poddlers.acme.com")],
                     id="B6-warn-once-across-versions"),
        pytest.param(GVR("", "", "hpa"), _HPA_TWO_VERSIONS, GVR("autoscaling", "", "horizontalpodautoscalers"), [],
                     id="B7-same-gr-two-versions"),
        pytest.param(GVR("", "", "hpa"), _HPA_THREE_GROUPS, GVR("autoscaling", "", "horizontalpodautoscalers"),
                     [_warn("hpa", "foo.foo"), _warn("hpa", "bar.bar")], id="B8-two-warnings"),
        pytest.param(GVR("storage.k8s.io", "", "sc"), _SC, GVR("storage.k8s.io", "", "storageclasses"), [],
                     id="B9-group-given"),
        pytest.param(GVR("", "", "sc"), _SC, GVR("storage.k8s.io", "", "storageclasses"), [],
                     id="B10-groupless-into-group"),
        pytest.param(GVR("autoscaling", "v1", "hpa"), _HPA_TWO_VERSIONS,
                     GVR("autoscaling", "", "horizontalpodautoscalers"), [], id="B-version-dropped"),
        pytest.param(GVR("autoscal", "v1", "hpa"), _HPA_TWO_VERSIONS,
                     GVR("autoscaling", "v1", "horizontalpodautoscalers"), [], id="B-group-prefix-keeps-version"),
        pytest.param(GVR("foo", "", "hpa"), _HPA_THREE_GROUPS, GVR("foo", "", "foo"), [],
                     id="B-group-restricts-scan"),
        pytest.param(GVR("", "", "HPA"), _HPA_TWO_VERSIONS, GVR("", "", "HPA"), [], id="B-case-sensitive"),
        pytest.param(GVR("", "", "nope"), _SC, GVR("", "", "nope"), [], id="B-unknown-unchanged"),
    ],
)
def test_b_expand_resource_shortcut(
    partial: GroupVersionResource, indexes: list[object], expected: GroupVersionResource, warnings: list[str]
) -> None:
    got, got_warnings = expand_resource_shortcut(partial, indexes)  # type: ignore[arg-type]
    assert got == expected
    assert got_warnings == warnings


def test_b_exact_name_guard_is_scoped_to_the_given_group() -> None:
    indexes = [
        group("", {"v1": [res("pods", "Pod")]}),
        group("acme.com", {"v1": [res("poddlers", "Poddler", short=["pods"])]}),
    ]
    assert expand_resource_shortcut(GVR("acme.com", "", "pods"), indexes)[0] == GVR("acme.com", "", "poddlers")


# --- C. apimachinery restmapper_test.go ---------------------------------------------------------------------

_TEST_GROUP = group("test.group", {"test": [guessed("InternalObject")]})
_TESTAPI = group("testapi", {"test": [guessed("MyObject")]})
_TESTAPI2 = group("testapi2", {"test": [guessed("MyObject")]})


@pytest.mark.parametrize(
    ("fact", "indexes", "resource", "expected"),
    [
        ("C.1", [_TEST_GROUP], "internalobjec", None),
        ("C.2", [_TEST_GROUP], "internalObjec", None),
        ("C.3", [_TEST_GROUP], "internalobject", GVK("test.group", "test", "InternalObject")),
        ("C.4", [_TEST_GROUP], "internalobjects", GVK("test.group", "test", "InternalObject")),
        ("C.5", [_TESTAPI], "myObject", GVK("testapi", "test", "MyObject")),
        ("C.6", [_TESTAPI2], "myobject", GVK("testapi2", "test", "MyObject")),
        ("C.7a", [_TESTAPI2], "myObje", None),
        ("C.7b", [_TESTAPI2], "myobje", None),
    ],
)
def test_c1_to_c7_kind_for(fact: str, indexes: list[object], resource: str, expected: GVK | None) -> None:
    m = StaticRESTMapper(indexes)  # type: ignore[arg-type]
    if expected is None:
        with pytest.raises(NoResourceMatchError):
            m.kind_for(GVR("", "", resource))
    else:
        assert m.kind_for(GVR("", "", resource)) == expected, fact


def _my(group_name: str, *kinds: str) -> object:
    return group(group_name, {"first-version": [guessed(k) for k in kinds]})


_FG1, _FG, _SG = "first-group-1", "first-group", "second-group"


@pytest.mark.parametrize(
    ("fact", "order", "partial", "kinds"),
    [
        ("C.8", [_FG1, _FG], GVR(_FG, "", "my-kind"), [_FG]),
        ("C.9", [_FG, _SG], GVR("first", "", "my-kind"), [_FG]),
        ("C.10", [_FG1, _FG], GVR("first", "", "my-kind"), [_FG1, _FG]),
        ("C.11", [_SG, _FG], GVR("", "", "my-kinds"), [_SG, _FG]),
        ("C.12", [_SG, _FG], GVR(_FG, "", "my-kinds"), [_FG]),
        ("C.13", [_FG, _SG], GVR("", "first-version", "my-kinds"), [_FG, _SG]),
    ],
)
def test_c8_to_c14_kinds_and_resources_for(fact: str, order: list[str], partial: GVR, kinds: list[str]) -> None:
    indexes = [_my(g, "my-kind", "your-kind") for g in order]
    plain = mapper(*indexes, prioritized=False)  # type: ignore[arg-type]
    assert plain.kinds_for(partial) == [GVK(g, "first-version", "my-kind") for g in kinds], fact
    # C.14: singular and plural inputs both give the plural resource.
    for name in ("my-kind", "my-kinds"):
        query = GVR(partial.group, partial.version, name)
        assert plain.resources_for(query) == [GVR(g, "first-version", "my-kinds") for g in kinds], fact
    if len(kinds) == 1:
        assert plain.kind_for(partial) == GVK(kinds[0], "first-version", "my-kind")
        assert plain.resource_for(partial) == GVR(kinds[0], "first-version", "my-kinds")
    else:
        with pytest.raises(AmbiguousResourceError, match="matches multiple kinds"):
            plain.kind_for(partial)
        with pytest.raises(AmbiguousResourceError, match="matches multiple resources"):
            plain.resource_for(partial)
        # With discovery priority the group listed first wins instead (kubectl parity).
        prioritized = mapper(*indexes)  # type: ignore[arg-type]
        assert prioritized.kind_for(partial) == GVK(kinds[0], "first-version", "my-kind")


@pytest.mark.parametrize(
    ("kind", "plural", "singular"),
    [
        ("Pod", "pods", "pod"),
        ("ReplicationController", "replicationcontrollers", "replicationcontroller"),
        ("ImageRepository", "imagerepositories", "imagerepository"),
        ("miss", "misses", "miss"),
        ("lowercase", "lowercases", "lowercase"),
        ("Status", "statuses", "status"),
        ("Endpoints", "endpoints", "endpoints"),
        ("SecurityContextConstraints", "securitycontextconstraints", "securitycontextconstraints"),
        ("Gateway", "gatewaies", "gateway"),
        ("", "", ""),
    ],
)
def test_c15_unsafe_guess_kind_to_resource(kind: str, plural: str, singular: str) -> None:
    assert unsafe_guess_kind_to_resource(kind) == (plural, singular)


@pytest.mark.parametrize(
    ("kind", "plural", "singular"),
    [
        ("Pod", "pods", "pod"),
        ("ReplicationController", "replicationcontrollers", "replicationcontroller"),
        ("ImageRepository", "imagerepositories", "imagerepository"),
        ("Status", "statuses", "status"),
        ("lowercase", "lowercases", "lowercase"),
        ("lowercases", "lowercaseses", "lowercases"),  # "broken but actual"
    ],
)
def test_c16_resource_singularizer(kind: str, plural: str, singular: str) -> None:
    m = mapper(group("tgroup", {"test": [guessed(kind)]}))
    assert m.resource_singularizer(plural) == singular


def test_c16_singularizer_no_match() -> None:
    with pytest.raises(NoResourceMatchError):
        mapper(group("tgroup", {"test": [guessed("Pod")]})).resource_singularizer("nodes")


def _tgroup(**versions: list[str]) -> StaticRESTMapper:
    return mapper(group("tgroup", {v: [guessed(k) for k in kinds] for v, kinds in versions.items()}))


@pytest.mark.parametrize(
    ("fact", "m", "kind", "versions", "expected"),
    [
        ("C.17", StaticRESTMapper([]), "Unknown", (), None),
        ("C.18", _tgroup(test=["InternalObject"]), "Unknown", (), None),
        ("C.19", _tgroup(test=["InternalObject"]), "InternalObject", ("test",), GVR("tgroup", "test",
                                                                                       "internalobjects")),
        ("C.20", _tgroup(test=["InternalObject"]), "InternalObject", (), GVR("tgroup", "test", "internalobjects")),
        ("C.21a", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "OtherObject", (),
         GVR("tgroup", "test2", "otherobjects")),
        ("C.21b", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "InternalObject", (),
         GVR("tgroup", "test1", "internalobjects")),
        ("C.22a", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "InternalObject", ("test2",), None),
        ("C.22b", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "OtherObject", ("test1",), None),
        ("C.22c", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "OtherObject", ("test3",), None),
        ("C.23", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "OtherObject", ("test3", "test1"),
         None),
        ("C.24", _tgroup(test1=["InternalObject"], test2=["OtherObject"]), "OtherObject", ("test3", "test2"),
         GVR("tgroup", "test2", "otherobjects")),
        ("C.29", _tgroup(test1=["InternalObject"], test2=[]), "InternalObject", ("test3",), None),
    ],
)
def test_c17_to_c29_rest_mapping(fact: str, m: StaticRESTMapper, kind: str, versions: tuple[str, ...],
                                 expected: GVR | None) -> None:
    gk = GroupKind("tgroup", kind)
    if expected is None:
        with pytest.raises(NoKindMatchError) as info:
            m.rest_mapping(gk, *versions)
        assert info.value.searched_versions == versions, fact
    else:
        mapping = m.rest_mapping(gk, *versions)
        assert mapping.resource == expected, fact
        assert mapping.group_version_kind == GVK("tgroup", expected.version, kind)


@pytest.mark.parametrize(
    ("fact", "m", "versions", "expected_versions"),
    [
        ("C.25", _tgroup(v1=["InternalObject"]), ("v2",), None),
        ("C.26", _tgroup(v1=["InternalObject"], v2=["InternalObject"]), ("v2",), ["v2"]),
        ("C.27", _tgroup(v2=["InternalObject"]), ("v3", "v2"), ["v2"]),
        ("C.28", _tgroup(v1=["InternalObject"], v2=["InternalObject"]), (), ["v1", "v2"]),
    ],
)
def test_c25_to_c28_rest_mappings(fact: str, m: StaticRESTMapper, versions: tuple[str, ...],
                                  expected_versions: list[str] | None) -> None:
    gk = GroupKind("tgroup", "InternalObject")
    if expected_versions is None:
        with pytest.raises(NoKindMatchError):
            m.rest_mappings(gk, *versions)
    else:
        got = m.rest_mappings(gk, *versions)
        assert [x.resource for x in got] == [GVR("tgroup", v, "internalobjects") for v in expected_versions], fact


# --- C. priority_test.go ----------------------------------------------------------------------------------


def test_c30_no_hits_gives_the_no_match_error() -> None:
    with pytest.raises(NoResourceMatchError):
        mapper().resource_for(GVR("", "", "foo"))


_ONE_A_FIRST, _TWO_B_SECOND, _ONE_C_THIRD = GVR("one", "a", "first"), GVR("two", "b", "second"), GVR("one", "c",
                                                                                                      "third")


@pytest.mark.parametrize(
    ("fact", "hits", "patterns", "expected"),
    [
        ("C.32", [_ONE_A_FIRST, _TWO_B_SECOND], [GVR("one", "*", "*")], _ONE_A_FIRST),
        ("C.33", [_ONE_A_FIRST, _TWO_B_SECOND], [], None),
        ("C.34", [_ONE_A_FIRST, _TWO_B_SECOND], [GVR("fail", "*", "*"), GVR("one", "*", "*")], _ONE_A_FIRST),
        ("C.35", [_ONE_A_FIRST, _TWO_B_SECOND, _ONE_C_THIRD], [GVR("one", "*", "*"), GVR("*", "a", "*")],
         _ONE_A_FIRST),
        ("C.36", [GVR("one", "a", "first"), GVR("one", "a", "second")], [GVR("*", "*", "second")],
         GVR("one", "a", "second")),
    ],
)
def test_c32_to_c36_resource_narrowing(fact: str, hits: list[GVR], patterns: list[GVR], expected: GVR | None) -> None:
    assert narrow_by_priority(hits, patterns, resource_matches) == expected, fact
    kinds = [GVK(h.group, h.version, h.resource) for h in hits]
    kind_patterns = [GVK(p.group, p.version, p.resource) for p in patterns]
    want = None if expected is None else GVK(expected.group, expected.version, expected.resource)
    assert narrow_by_priority(kinds, kind_patterns, kind_matches) == want, fact


def test_c33_ambiguity_messages_through_the_mapper() -> None:
    indexes = [_my("one", "first"), _my("two", "first")]
    plain = mapper(*indexes, prioritized=False)  # type: ignore[arg-type]
    with pytest.raises(AmbiguousResourceError, match="matches multiple resources") as r:
        plain.resource_for(GVR("", "", "firsts"))
    with pytest.raises(AmbiguousResourceError, match="matches multiple kinds") as k:
        plain.kind_for(GVR("", "", "firsts"))
    assert is_ambiguous(r.value) and is_ambiguous(k.value)
    patterned = StaticRESTMapper(indexes, resource_priority=[GVR("two", "*", "*")],  # type: ignore[arg-type]
                                 kind_priority=[GVK("two", "*", "*")])
    assert patterned.resource_for(GVR("", "", "firsts")) == GVR("two", "first-version", "firsts")
    assert patterned.kind_for(GVR("", "", "first")) == GVK("two", "first-version", "first")


def test_c37_c38_rest_mapping_on_empty_mapper() -> None:
    with pytest.raises(NoKindMatchError, match=r'^no matches for kind "Foo" in group ""$') as info:
        mapper().rest_mapping(GroupKind("", "Foo"))
    assert info.value.group_kind == GroupKind("", "Foo")
    assert is_no_match(info.value)


_FOO_V1ALPHA1, _FOO_V1, _OTHER_V1 = GVK("", "v1alpha1", "Foo"), GVK("", "v1", "Foo"), GVK("other", "v1", "Foo")


@pytest.mark.parametrize(
    ("fact", "patterns", "expected"),
    [
        ("C.41", [], None),
        ("C.42", [GVK("", "v1", "*"), GVK("", "v1alpha1", "*")], _FOO_V1),
        ("C.43", [GVK("*", "v1", "*"), GVK("other", "*", "*")], _OTHER_V1),
    ],
)
def test_c41_to_c43_kind_narrowing(fact: str, patterns: list[GVK], expected: GVK | None) -> None:
    assert narrow_by_priority([_FOO_V1ALPHA1, _FOO_V1, _OTHER_V1], patterns, kind_matches) == expected, fact


def test_c41_c42_rest_mapping_through_the_mapper() -> None:
    core = group("", {"v1alpha1": [res("foos", "Foo")], "v1": [res("foos", "Foo")]}, "v1alpha1")
    with pytest.raises(AmbiguousKindError, match="matches multiple kinds") as info:
        StaticRESTMapper([core], resource_priority=(), kind_priority=()).rest_mapping(GroupKind("", "Foo"))
    assert info.value.matching_kinds == (_FOO_V1ALPHA1, _FOO_V1)
    prioritized = StaticRESTMapper([core], resource_priority=(), kind_priority=[GVK("", "v1", "*")])
    assert prioritized.rest_mapping(GroupKind("", "Foo")).group_version_kind == _FOO_V1
    # Discovery priority: core v1 always first, whatever the preferred version says.
    assert StaticRESTMapper([core]).rest_mapping(GroupKind("", "Foo")).group_version_kind == _FOO_V1


def test_c44_user_versions_beat_priority() -> None:
    m = mapper(group("Bar", {"v2alpha1": [res("foos", "Foo")], "v1": [res("foos", "Foo")]}, "v2alpha1"))
    gk = GroupKind("Bar", "Foo")
    assert m.rest_mapping(gk).group_version_kind.version == "v2alpha1"
    assert m.rest_mapping(gk, "v1").group_version_kind.version == "v1"
    assert m.rest_mapping(gk, "v2alpha1").group_version_kind.version == "v2alpha1"
    assert m.rest_mapping(gk, "v9", "v1").group_version_kind.version == "v1"


# --- C. multirestmapper_test.go ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["resource_for", "resources_for", "kind_for", "kinds_for"])
def test_c45_c46_empty_mapper_no_match_names_the_input(method: str) -> None:
    partial = GVR("", "", "foo")
    with pytest.raises(NoResourceMatchError, match=r"^no matches for /, Resource=foo$") as info:
        getattr(mapper(), method)(partial)
    assert info.value.partial_resource == partial


def test_c48_union_is_deduplicated() -> None:
    m = mapper(group("", {"v1": [res("endpoints", "Endpoints", singular="endpoints")]}))
    assert m.resources_for(GVR("", "", "endpoints")) == [GVR("", "v1", "endpoints")]
    assert m.kinds_for(GVR("", "", "endpoints")) == [GVK("", "v1", "Endpoints")]


def test_c49_children_without_match_are_skipped() -> None:
    m = mapper(group("a", {"v1": [res("nothings", "Nothing")]}),
               group("b", {"v1": [res("firsts", "First", singular="thing"), res("things", "Thing")]}))
    assert m.resources_for(GVR("", "", "thing")) == [GVR("b", "v1", "firsts"), GVR("b", "v1", "things")]
    with pytest.raises(AmbiguousResourceError):
        m.resource_for(GVR("", "", "thing"))  # two hits in one group version: priority cannot choose


@pytest.mark.parametrize("versions", [(), ("v1beta",), ("v1beta", "v2")])
def test_c50_c51_no_kind_match_carries_requested_versions(versions: tuple[str, ...]) -> None:
    for m in (mapper(), mapper(group("", {"v1": [res("foos", "Foo")]}))):
        kind = "Foo" if versions else "Bar"
        with pytest.raises(NoKindMatchError) as info:
            m.rest_mappings(GroupKind("", kind), *versions)
        assert info.value.searched_versions == versions


def test_c53_mappings_in_child_order() -> None:
    m = mapper(group("g", {"v1": [res("foos", "Foo")], "v2": [res("foos", "Foo")]}, "v2"))
    assert [x.resource.version for x in m.rest_mappings(GroupKind("g", "Foo"))] == ["v1", "v2"]
    assert m.rest_mapping(GroupKind("g", "Foo")).resource.version == "v2"

