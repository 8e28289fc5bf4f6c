"""The drop-in's first-time path over ready groups and its warm path answer exactly as the full lookup (issue 10).

A question not memoized is answered straight from the groups the mapper holds ready (``_ready.ready_found``)
when it can be; the full lookup answers everything else. Both must give the same answers and the same errors,
healthy or not; a memoized search is a new complete list each time; memo keys keep questions apart.
"""

from __future__ import annotations

from typing import Any

import pytest
from dynamic_helpers import crd
from kubernetes.dynamic.exceptions import ResourceNotFoundError
from test_dynamic_memo_groups import _discoverer

from restmapper import GroupDiscoveryError
from restmapper.dynamic import SelfHealingDiscoverer, _ready
from restmapper.dynamic._direct import DirectAnswers
from restmapper.dynamic._partial import SearchResults
from restmapper.testing import FakeCluster

MODES = ["legacy", "aggregated"]
A, B = "a.example.com", "b.example.com"

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


@pytest.fixture
def full_only(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make ``ready_found`` and the direct paths (``_direct``) decline within the block: every question takes the
    full lookup."""

    class Switch:
        on = False

    original = _ready.ready_found

    def switched(*args: Any, **kwargs: Any) -> Any:
        return None if Switch.on else original(*args, **kwargs)

    monkeypatch.setattr("restmapper.dynamic.discoverer.ready_found", switched)
    for name in ("_direct_get", "_direct_search"):
        direct = getattr(DirectAnswers, name)
        monkeypatch.setattr(DirectAnswers, name, lambda self, kwargs, key, direct=direct: (
            None if Switch.on else direct(self, kwargs, key)))
    return Switch


@pytest.mark.parametrize("mode", MODES)
def test_first_time_answers_from_ready_groups_equal_the_full_lookups(mode: str, full_only: Any) -> None:
    cluster = _cluster(mode)
    fast, full = _discoverer(cluster), _discoverer(cluster)
    _warm(fast)
    _warm(full)
    full_only.on = True
    expected = [_outcome(full, m, kw) for m, kw in QUESTIONS]
    full_only.on = False
    calls = []
    original = fast.cache.groups
    fast.cache.groups = lambda *a, **k: calls.append(a) or original(*a, **k)  # type: ignore[method-assign]
    assert [_outcome(fast, m, kw) for m, kw in QUESTIONS] == expected
    hits = [kw for (m, kw), out in zip(QUESTIONS, expected, strict=True) if m == "get" and isinstance(out[0], str)
            and not out[0].endswith("Error")]
    assert len(hits) > 10
    answered_without_the_cache = _discoverer(cluster)
    _warm(answered_without_the_cache)
    asked = []
    before = answered_without_the_cache.cache.groups
    answered_without_the_cache.cache.groups = (  # type: ignore[method-assign]
        lambda *a, **k: asked.append(a) or before(*a, **k))
    for kw in ({"api_version": f"{A}/v1", "kind": "Alpha"}, {"kind": "Alpha"}, {"name": "alphas"},
               {"short_names": ["al"]}):
        answered_without_the_cache.get(**kw)
    answered_without_the_cache.search(kind="Alpha")
    assert asked == [], "first-time questions over ready groups asked the cache"


@pytest.mark.parametrize("mode", MODES)
def test_with_a_group_unreadable_first_time_answers_equal_the_full_lookups(mode: str, full_only: Any) -> None:
    cluster = _cluster(mode)
    fast, full = _discoverer(cluster), _discoverer(cluster)
    _warm(fast)
    _warm(full)
    if mode == "legacy":
        cluster.inject(f"/apis/{B}/v1", status=503, body="down", content_type="text/plain")
    else:
        cluster.set_stale(f"{B}/v1", True)
    fast.mapper.invalidate_group(B)
    full.mapper.invalidate_group(B)
    full_only.on = True
    with pytest.warns(Warning):  # partial searches warn, in both
        expected = [_outcome(full, m, kw) for m, kw in QUESTIONS]
    full_only.on = False
    with pytest.warns(Warning):
        assert [_outcome(fast, m, kw) for m, kw in QUESTIONS] == expected
    # B ranks below A: get(kind='Alpha') answers A's (warned) while B is unreadable
    assert expected[5] == (f"{A}/v2", "Alpha", "alphas"), expected[5]


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
    assert _outcome(resources, "get", {"group": A, "kind": "Alpha"}) == _outcome(other, "get", {"group": A,
                                                                                              "kind": "Alpha"})
    assert resources.get(api_version=f"{A}/v2", kind="Alpha").api_version == "v2"
    assert _outcome(resources, "search", {"group": A}) == _outcome(other, "search", {"group": A})


def test_a_cold_pinned_no_match_is_the_servers_word_for_that_version() -> None:
    cluster = _cluster("legacy")
    cluster.inject(f"/apis/{A}/v2", status=503, body="down", content_type="text/plain")
    resources = _discoverer(cluster)
    with pytest.raises(ResourceNotFoundError):  # v1 was read: it serves no Missing (v2's failure is not in scope)
        resources.get(api_version=f"{A}/v1", kind="Missing")
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"
    with pytest.raises(GroupDiscoveryError):  # v2 could not be read: never "not found"
        resources.get(api_version=f"{A}/v2", kind="Alpha")


def test_prepared_filters_match_exactly_as_the_generic_matcher() -> None:
    """``passes`` (filters prepared once per question) answers as ``matches`` for every object and filter shape:
    names in any case, short names and categories as one string or the whole list (list or tuple), attributes a
    ResourceList reads through its resource, the generic List (which has none), and plain equality."""
    from restmapper.dynamic._query import matches, parse, passes

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
                assert passes(obj, q.tests) == matches(obj, q.filters), (term, value, obj)
                checked += 1
    assert checked > 1000
