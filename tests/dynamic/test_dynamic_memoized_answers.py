"""The drop-in answers a question the same whether it computes it or the memo holds it, and as a new discoverer.

Over the testing kit's builtin cluster, every CRD fixture of ``../shared/fixtures/crds`` and a few CRDs written to
collide (a kind, a plural and a short name served by two groups; a kind served in two versions; a ``...List``
kind; one version serving a kind twice): for every common question shape and its near misses (other cases,
wildcards, ``...List`` kinds, unknown names, tuples, strings, empty values), the answer or the error computed over
groups the mapper holds ready, then memoized, is the same (the very same objects), healthy or with a group
unreadable, and equals a new discoverer's. A memoized search is a new complete list each time; memo keys keep
questions apart; a pinned question reads only the version it names; the memo stays bounded under CRD churn.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from conftest import require_fixtures
from helpers.dynamic import crd, matches
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
from test_dynamic_answers_across_refreshes import _discoverer

from restmapper import GroupDiscoveryError, PartialDiscoveryWarning
from restmapper.dynamic import SelfHealingDiscoverer, discoverer
from restmapper.dynamic._partial import SearchResults
from restmapper.model import APIResource
from restmapper.testing import FakeCluster, InProcessTransport

MODES = ["legacy", "aggregated"]
A, B, C, T = "a.example.com", "b.example.com", "c.example.com", "t.example.com"

QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("get", {"api_version": f"{A}/v1", "kind": "Alpha"}),
    ("get", {"api_version": f"{A}/v2", "kind": "Alpha"}),
    ("get", {"api_version": f"{A}/v1", "kind": "alpha"}),
    ("get", {"group": A, "api_version": "v1", "kind": "AlphaList"}),
    ("get", {"group": A, "kind": "Alpha"}),
    ("get", {"kind": "Alpha"}),
    ("get", {"kind": "AlphaList"}),
    ("get", {"kind": "Beta"}),
    ("get", {"kind": "Pod"}),
    ("get", {"kind": "Deployment"}),
    ("get", {"name": "alphas"}),
    ("get", {"name": "alpha"}),
    ("get", {"singular_name": "alpha"}),
    ("get", {"name": "deployments"}),
    ("get", {"short_names": ["al"]}),
    ("get", {"short_names": "al"}),
    ("get", {"short_names": ["deploy"]}),
    ("get", {"categories": ["alphacat"]}),
    ("get", {"prefix": "api", "kind": "Pod"}),
    ("get", {"prefix": "apis", "kind": "Pod"}),
    ("get", {"api_version": "v1", "kind": "Pod"}),
    ("get", {"api_version": "v1", "kind": "Alpha"}),
    ("get", {"kind": "Missing"}),
    ("get", {"api_version": f"{A}/v1", "kind": "Missing"}),
    ("get", {"api_version": "nowhere.example.com/v1", "kind": "Alpha"}),
    ("get", {"kind": "Alpha", "namespaced": False}),
    ("get", {"kind": "List"}),
    ("search", {"kind": "Alpha"}),
    ("search", {"kind": "alphalist"}),
    ("search", {"kind": "Beta", "api_version": f"{B}/v1"}),
    ("search", {"group": A}),
    ("search", {"api_version": f"{A}/v1"}),
    ("search", {"name": "alphas"}),
    ("search", {"short_names": ["be"]}),
    ("search", {"categories": ["alphacat"]}),
    ("search", {"kind": "Missing"}),
]


def _cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    alpha = crd(A, "Alpha", short_names=("al",), versions=("v1", "v2"))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.add_crd(alpha)
    cluster.add_crd(crd(B, "Beta", short_names=("be",)))
    return cluster


def _outcome(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any]) -> Any:
    """What a call answered, reduced to data: the resources' identities, or the error's type and message."""
    try:
        answer = getattr(resources, method)(**kwargs)
    except Exception as exc:  # the error is part of the answer
        return type(exc).__name__, str(exc).split(" (as of")[0]
    if method == "search":
        failed = getattr(answer, "failed", {})
        return [(r.group_version, r.kind, r.name) for r in answer], sorted((str(g), str(e)) for g, e in failed.items())
    return answer.group_version, answer.kind, answer.name


def _warm(resources: SelfHealingDiscoverer) -> None:
    """Load every group and make each ready (a question naming no group loads every group)."""
    resources.get(kind="Beta")
    for name in resources.cache.group_names():
        resources.search(group=name or None, prefix="api" if not name else None)

@pytest.fixture(scope="module")
def fixture_crds() -> list[dict[str, Any]]:
    """The CRDs of ``../shared/fixtures/crds``, read once, without their schemas (discovery never shows them)."""
    found = []
    for path in sorted((require_fixtures() / "crds").rglob("*.yaml")):
        for manifest in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(manifest, dict) and manifest.get("kind") == "CustomResourceDefinition":
                for version in manifest["spec"]["versions"]:
                    version["schema"] = {"openAPIV3Schema": {"type": "object",
                                                             "x-kubernetes-preserve-unknown-fields": True}}
                found.append(manifest)
    assert len(found) > 20
    return found


def _colliding(mode: str, manifests: list[dict[str, Any]]) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    for manifest in manifests:
        cluster.add_crd(copy.deepcopy(manifest))
    alpha = crd(A, "Alpha", short_names=("al", "alp"), versions=("v1", "v2"))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.add_crd(alpha)
    cluster.add_crd(crd(B, "Beta", short_names=("be", "al")))  # "al" is also Alpha's
    cluster.add_crd(crd(B, "Alpha", plural="otheralphas"))  # Alpha in two groups
    cluster.add_crd(crd(C, "Deployment", short_names=("deploy",)))  # a core-looking kind in a CRD group
    cluster.add_crd(crd(C, "Gamma", plural="betas"))  # B's plural "betas", another kind
    cluster.add_crd(crd(C, "DeltaList"))  # a kind ending in List
    # One version serving a kind twice (OpenShift's templates and processedtemplates), and in two cases.
    cluster.add_api_resources(f"{T}/v1", [
        APIResource("processedtemplates", "processedtemplate", True, "Template", ("create",)),
        APIResource("templates", "template", True, "Template", ("get", "list"), short_names=("tpl",)),
        APIResource("things", "thing", True, "Thing", ("get",)),
        APIResource("upperthings", "upperthing", True, "THING", ("get",), short_names=("TPL", "Up"))])
    return cluster


def _questions(resources: SelfHealingDiscoverer) -> list[tuple[str, dict[str, Any]]]:
    """Every question of the direct paths' shapes about every resource, plus near misses."""
    kwargs: list[dict[str, Any]] = []
    for entry, group in resources._entries(None):
        for version in group.versions:
            gv = version.group_version
            for obj in version.all:
                kind = obj.kind
                for spelled in (kind, kind.lower(), kind.upper()):
                    kwargs.append({"kind": spelled})
                    kwargs.append({"api_version": str(gv), "kind": spelled})
                kwargs.append({"kind": kind, "api_version": f"{entry.name or 'core'}/{gv.version}"})
                if obj.__dict__.get("name"):
                    kwargs.extend({"name": n} for n in (obj.name, obj.name.upper(), obj.singular_name))
                short = obj.__dict__.get("short_names")
                if short:
                    kwargs.extend([{"short_names": list(short)}, {"short_names": tuple(short)},
                                   {"short_names": short[0]}, {"short_names": short[0].upper()},
                                   {"short_names": [short[0]]}, {"short_names": [s.upper() for s in short]},
                                   {"short_names": [*short, "zz"]}])
    kwargs.extend([{"kind": "Missing"}, {"kind": "*"}, {"kind": ""}, {"kind": None}, {"kind": "List"},
                   {"name": "missings"}, {"name": ""}, {"name": "*"}, {"name": ["pods"]}, {"short_names": []},
                   {"short_names": ["nope"]}, {"short_names": ""}, {"short_names": [3]}, {"short_names": ("po",)},
                   {"api_version": "apps/v1/x", "kind": "Deployment"}, {"api_version": "/v1", "kind": "Pod"},
                   {"api_version": "apps/", "kind": "Deployment"}, {"api_version": "apps/*", "kind": "Deployment"},
                   {"api_version": "v1", "kind": "Pod"}, {"api_version": "nowhere.example.com/v1", "kind": "Pod"},
                   {"api_version": f"{A}/v9", "kind": "Alpha"}, {"group": A, "kind": "Alpha"},
                   {"kind": "Alpha", "namespaced": True}])
    unique = list({repr(sorted(k.items(), key=str)) + repr(list(k)): k for k in kwargs}.values())
    return [(method, k) for k in unique for method in ("get", "search")]


def _cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    alpha = crd(A, "Alpha", short_names=("al",), versions=("v1", "v2"))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.add_crd(alpha)
    cluster.add_crd(crd(B, "Beta", short_names=("be",)))
    return cluster


def _outcome(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any]) -> Any:
    """What a call answered: the objects themselves (compared by identity), or the error's type and message."""
    try:
        answer = getattr(resources, method)(**kwargs)
    except Exception as exc:  # the error is part of the answer (a repeated miss says how old it is)
        return type(exc).__name__, str(exc).split(" (as of")[0].split(" (failed ")[0]  # replays say so
    if method == "search":
        failed = getattr(answer, "failed", {})
        return list(answer), sorted((str(g), str(e).split(" (failed ")[0]) for g, e in failed.items())
    return answer


def _data(outcome: Any) -> Any:
    """An outcome as data (the resources' identities), to compare with another discoverer's."""
    if isinstance(outcome, tuple) and len(outcome) == 2 and isinstance(outcome[0], str):
        return outcome
    if isinstance(outcome, tuple):
        return [(r.group_version, r.kind, r.name) for r in outcome[0]], outcome[1]
    return outcome.group_version, outcome.kind, outcome.name


def _warm(resources: SelfHealingDiscoverer) -> None:
    """Load every group and make each ready (a question naming no group loads every group)."""
    resources.search(kind="Namespace")
    for name in resources.cache.group_names():
        resources.search(group=name or None, prefix="api" if not name else None)


def _computed(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any]) -> Any:
    """The outcome of a call with nothing memoized (computed over the groups held), then memoized again."""
    resources._memo.gets.clear()
    resources._memo.searches.clear()
    return _outcome(resources, method, kwargs)


@pytest.mark.parametrize("mode", MODES)
def test_memoized_answers_are_the_computed_ones_on_every_question_shape(mode: str,
                                                                       fixture_crds: list[dict[str, Any]]) -> None:
    resources = _discoverer(_colliding(mode, fixture_crds))
    _warm(resources)
    questions = _questions(resources)
    assert len(questions) > 2000
    generation = resources.cache.generation
    for method, kwargs in questions:
        computed = _computed(resources, method, kwargs)
        assert _outcome(resources, method, kwargs) == computed, (method, kwargs)
    assert resources.cache.generation == generation, "nothing was fetched: every group stayed ready"


@pytest.mark.parametrize("mode", MODES)
def test_colliding_names_answer_by_the_rules_of_get_and_search(mode: str) -> None:
    """One object matching (search: any) is the answer; a name two groups serve is not unique."""
    resources = _discoverer(_colliding(mode, []))
    _warm(resources)
    cases: list[tuple[str, dict[str, Any], list[str] | None]] = [
        ("get", {"api_version": f"{A}/v2", "kind": "alpha"}, [f"{A}/v2 alphas"]),
        ("get", {"kind": "Beta"}, [f"{B}/v1 betas"]),
        ("get", {"name": "OTHERALPHAS"}, [f"{B}/v1 otheralphas"]),
        ("get", {"name": "betas"}, None),  # B's Beta and C's Gamma: ambiguous
        ("get", {"short_names": ["tpl", "UP"]}, [f"{T}/v1 upperthings"]),  # the server's in upper case
        ("get", {"short_names": ("be", "al")}, [f"{B}/v1 betas"]),
        ("get", {"short_names": "Up"}, [f"{T}/v1 upperthings"]),
        ("search", {"kind": "thing"}, [f"{T}/v1 things", f"{T}/v1 upperthings"]),
        ("search", {"short_names": "al"}, [f"{A}/v2 alphas", f"{A}/v2 alphas", f"{A}/v1 alphas", f"{A}/v1 alphas",
                                           f"{B}/v1 betas", f"{B}/v1 betas"]),  # each resource and its List
    ]
    for method, kwargs, answer in cases:
        for _ in range(2):  # computed, then memoized
            if answer is None:
                with pytest.raises(ResourceNotUniqueError):
                    getattr(resources, method)(**kwargs)
                continue
            found = getattr(resources, method)(**kwargs)
            assert [f"{r.group_version} {r.name}" for r in ([found] if method == "get" else found)] == answer, kwargs


@pytest.mark.parametrize("mode", MODES)
def test_after_a_group_is_invalidated_its_answers_are_read_again(mode: str) -> None:
    resources = _discoverer(_colliding(mode, []))
    _warm(resources)
    pods = resources.search(kind="Pod")
    resources.mapper.invalidate_group(A)
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"
    assert resources.search(kind="Pod") == pods
    resources.search(group=A)  # every version of A read again (legacy discovery read only v1 above)
    assert resources.get(api_version=f"{A}/v2", kind="Alpha") is resources.get(group=A, kind="Alpha")


@pytest.mark.parametrize("mode", MODES)
def test_every_spelling_of_a_question_answers_the_same_object(mode: str) -> None:
    resources = _discoverer(_cluster(mode))
    _warm(resources)
    alpha = resources.get(api_version=f"{A}/v2", kind="Alpha")
    for kwargs in ({"kind": "Alpha"}, {"kind": "ALPHA"}, {"kind": "Alpha", "api_version": f"{A}/v2"},
                   {"short_names": ["al"]}, {"short_names": ("al",)}, {"short_names": "al"}, {"name": "alphas"},
                   {"group": A, "kind": "Alpha"}):
        for _ in range(2):  # computed, then memoized
            assert resources.get(**kwargs) is alpha, kwargs
    found = resources.search(kind="Alpha")
    assert found == [resources.get(kind="Alpha"), resources.get(api_version=f"{A}/v1", kind="Alpha")]


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_from_any_group_follows_a_group_invalidated_then_unreadable(mode: str) -> None:
    """Invalidating a group (no reload yet), making it unreadable, or invalidating the cache: an answer that may
    come from any group is computed again (DESIGN 5.10), warned while a group ranked below it is unreadable."""
    cluster = _cluster(mode)
    resources = _discoverer(cluster)
    _warm(resources)
    assert resources.get(kind="Alpha").group == A
    resources.mapper.invalidate_group(B)
    assert _data(_outcome(resources, "get", {"kind": "Alpha"})) == _data(
        _outcome(_discoverer(cluster), "get", {"kind": "Alpha"}))
    if mode == "legacy":
        cluster.inject(f"/apis/{B}/v1", status=503, body="down", content_type="text/plain")
    else:
        cluster.set_stale(f"{B}/v1", True)
    resources.mapper.invalidate_group(B)
    for _ in range(2):  # B, ranked below A, could serve another Alpha: warned on every call
        with pytest.warns(PartialDiscoveryWarning):
            assert resources.get(kind="Alpha").group == A
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"  # pinned to A: no doubt
    resources.invalidate_cache()
    with pytest.warns(PartialDiscoveryWarning):
        assert resources.get(kind="Alpha").group == A


@pytest.mark.parametrize("mode", MODES)
def test_answers_equal_a_new_discoverers(mode: str) -> None:
    cluster = _cluster(mode)
    resources = _discoverer(cluster)
    _warm(resources)
    for _ in range(2):  # computed over ready groups, then memoized
        got = [_data(_outcome(resources, m, kw)) for m, kw in QUESTIONS]
        assert got == [_data(_outcome(_discoverer(cluster), m, kw)) for m, kw in QUESTIONS]


@pytest.mark.parametrize("mode", MODES)
def test_with_a_group_unreadable_answers_equal_another_discoverers(mode: str) -> None:
    """Two discoverers that read the same groups, then one group turned unreadable: the same answers, computed
    and memoized, as the other's first ones."""
    cluster = _cluster(mode)
    resources, other = _discoverer(cluster), _discoverer(cluster)
    _warm(resources)
    _warm(other)
    if mode == "legacy":
        cluster.inject(f"/apis/{B}/v1", status=503, body="down", content_type="text/plain")
    else:
        cluster.set_stale(f"{B}/v1", True)
    resources.mapper.invalidate_group(B)
    other.mapper.invalidate_group(B)
    with pytest.warns(Warning):  # partial searches warn
        expected = [_data(_outcome(other, m, kw)) for m, kw in QUESTIONS]
    for _ in range(2):
        with pytest.warns(Warning):
            assert [_data(_outcome(resources, m, kw)) for m, kw in QUESTIONS] == expected
    # B ranks below A: get(kind='Alpha') answers A's (warned) while B is unreadable
    assert expected[5] == (f"{A}/v2", "Alpha", "alphas"), expected[5]


@pytest.mark.parametrize("mode", MODES)
def test_first_time_questions_over_ready_groups_do_not_ask_the_cache(mode: str) -> None:
    resources = _discoverer(_cluster(mode))
    _warm(resources)
    asked: list[Any] = []
    before = resources.cache.groups
    resources.cache.groups = lambda *a, **k: asked.append(a) or before(*a, **k)  # type: ignore[method-assign]
    for kw in ({"api_version": f"{A}/v1", "kind": "Alpha"}, {"kind": "Alpha"}, {"name": "alphas"},
               {"short_names": ["al"]}):
        resources.get(**kw)
    resources.search(kind="Alpha")
    assert asked == [], "first-time questions over ready groups asked the cache"


def test_crd_churn_keeps_the_memo_bounded_and_the_answers_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discoverer, "MEMO_LIMIT", 50)
    cluster = FakeCluster.embedded(mode="aggregated")
    resources = _discoverer(cluster)
    resources.search(kind="Namespace")
    for i in range(60):
        group = f"g{i}.example.com"
        cluster.add_crd(crd(group, f"Kind{i}", short_names=(f"k{i}",)))
        resources.mapper.invalidate_group(group)
        assert resources.get(kind=f"Kind{i}").group == group
        assert resources.get(short_names=[f"k{i}"]).group == group
        cluster.delete_crd(f"kind{i}s.{group}")
        resources.mapper.invalidate_group(group)
        with pytest.raises(ResourceNotFoundError):
            resources.get(kind=f"Kind{i}")
    for i in range(120):  # many questions at one cache generation
        resources.search(name=f"nothing{i}")
    assert len(resources._memo.gets) <= 50 and len(resources._memo.searches) <= 50


def test_api_version_and_kind_answer_in_either_order_and_odd_types_as_a_new_discoverer() -> None:
    resources = _discoverer(_cluster("aggregated"))
    _warm(resources)
    found = [resources.get(api_version=f"{A}/v1", kind="Alpha") for _ in range(3)]
    assert found[0] is found[1] is found[2] is resources.get(kind="Alpha", api_version=f"{A}/v1")
    cold = _discoverer(_cluster("aggregated"))
    for kwargs in ({"api_version": [f"{A}/v1"], "kind": "Alpha"}, {"api_version": f"{A}/v1", "kind": ("Alpha",)}):
        outcomes = [_data(_outcome(target, "get", kwargs)) for target in (resources, resources, cold)]
        assert outcomes[0] == outcomes[1] == outcomes[2], kwargs


def test_a_memoized_search_is_a_new_complete_list_each_time() -> None:
    resources = _discoverer(_cluster("aggregated"))
    first = resources.search(kind="Alpha")
    again = resources.search(kind="Alpha")
    assert isinstance(again, SearchResults) and again is not first and again == first
    assert again.failed == {} and again.partial is False
    again.append("mine")
    again.failed["x"] = ValueError()  # type: ignore[index]
    third = resources.search(kind="Alpha")
    assert third == first and third.failed == {} and not third.partial


def test_memo_keys_keep_questions_apart() -> None:
    resources = _discoverer(_cluster("aggregated"))
    for _ in range(2):  # computed, then memoized: the same answers
        assert resources.get(short_names=["al"]).name == "alphas"
        assert resources.get(short_names=("al",)).name == "alphas"
        assert resources.get(short_names="al").name == "alphas"
        assert resources.get(kind="Alpha", api_version=f"{A}/v2").api_version == "v2"
        assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"
        with pytest.raises(ResourceNotFoundError):  # a list where a name belongs never equals a name
            resources.get(name=["alphas"])
        with pytest.raises(ResourceNotFoundError):  # an unhashable value is answered without the memo
            resources.get(kind="Alpha", verbs={"get": 1})


def test_an_unhashable_value_is_answered_by_a_new_discoverer_and_after_a_refresh() -> None:
    """The first question of a cache generation is not looked up in the memo before it is answered: an unhashable
    value then reaches the memo write, and is answered all the same (never memoized)."""
    resources = _discoverer(_cluster("aggregated"))
    with pytest.raises(ResourceNotFoundError):
        resources.get(kind="Alpha", verbs={"get": 1})
    assert [r.name for r in resources.search(kind="Alpha", verbs={"get": 1})] == []
    resources.invalidate_cache()
    with pytest.raises(ResourceNotFoundError):
        resources.get(kind="Alpha", verbs={"get": 1})
    assert resources.get(kind="Alpha", api_version=f"{A}/v1").api_version == "v1"


def test_a_cold_pinned_get_reads_only_the_version_it_names() -> None:
    """Legacy discovery: ``get(api_version="a.example.com/v1", kind=...)`` on a new discoverer reads ``/apis`` and
    that one version (2 requests, as the peer), not every version of the group (it read all three)."""
    cluster = _cluster("legacy")
    resources = _discoverer(cluster)
    cluster.clear_requests()
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"
    assert [r.path for r in cluster.requests] == ["/apis", f"/apis/{A}/v1"]
    # The other version is read when a question needs it, and answers as a discoverer that read it first.
    other = _discoverer(cluster)
    assert _data(_outcome(resources, "get", {"group": A, "kind": "Alpha"})) == _data(
        _outcome(other, "get", {"group": A, "kind": "Alpha"}))
    assert resources.get(api_version=f"{A}/v2", kind="Alpha").api_version == "v2"
    assert _data(_outcome(resources, "search", {"group": A})) == _data(_outcome(other, "search", {"group": A}))


def test_a_cold_pinned_no_match_is_the_servers_word_for_that_version() -> None:
    cluster = _cluster("legacy")
    cluster.inject(f"/apis/{A}/v2", status=503, body="down", content_type="text/plain")
    resources = _discoverer(cluster)
    with pytest.raises(ResourceNotFoundError):  # v1 was read: it serves no Missing (v2's failure is not in scope)
        resources.get(api_version=f"{A}/v1", kind="Missing")
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"
    with pytest.raises(GroupDiscoveryError):  # v2 could not be read: never "not found"
        resources.get(api_version=f"{A}/v2", kind="Alpha")


def test_filters_match_exactly_as_a_plain_reference_match() -> None:
    """``passes`` (filters prepared once per question) answers as the plain reference match for every object and
    filter shape: names in any case, short names and categories as one string or the whole list (list or tuple),
    attributes a ResourceList reads through its resource, the generic List (which has none), and plain equality."""
    from restmapper.dynamic._query import parse, passes

    resources = _discoverer(_cluster("aggregated"))
    objects = [obj for _, group in resources._entries(None) for version in group.versions for obj in version.all]
    objects.append(resources._generic_list)
    values: dict[str, list[Any]] = {
        "name": ["alphas", "ALPHAS", "alpha", "pods", "Pods", "", 3],
        "singular_name": ["alpha", "Alpha", "pod", "alphas"],
        "short_names": ["al", "AL", "po", ["al"], ("AL",), ["po"], [], ["al", "x"], "x"],
        "categories": ["alphacat", "ALL", ["all"], ("alphacat",), ["alphacat", "all"]],
        "verbs": ["get", "GET", ["get"], "watch"],
        "namespaced": [True, False, "true"],
        "preferred": [True, False],
        "group_version": [f"{A}/v1", "v1", "V1"],
    }
    checked = 0
    for term, candidates in values.items():
        for value in candidates:
            q = parse({term: value})
            for obj in objects:
                assert passes(obj, q.tests) == matches(obj, ((term, value),)), (term, value, obj)
                checked += 1
    assert checked > 1000


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kwargs", [{"kind": "Alpha"}, {"short_names": ["al"]}, {"api_version": f"{A}/v1",
                                                                              "kind": "Alpha"}])
def test_with_ttl_zero_each_call_revalidates_once(mode: str, kwargs: dict[str, Any]) -> None:
    """``ttl=0`` revalidates once per lookup: a call naming no group (narrowed by the merged index, which loads
    every group) reads nothing twice, and a second call sends the same requests as the first, not more."""
    cluster = _cluster(mode)
    config = kclient.Configuration(host="https://kube.restmapper.test")
    resources = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, ttl=0)).resources
    sent: list[list[str]] = []
    for _ in range(2):
        cluster.clear_requests()
        assert resources.get(**kwargs).kind == "Alpha"
        paths = [r.path for r in cluster.requests]
        assert len(paths) == len(set(paths)), paths  # nothing read twice in one call
        sent.append(sorted(paths))
    assert sent[0] == sent[1]
