"""First-time questions over ready groups are answered straight from the indexes, with the full path's answers.

The direct paths (:meth:`AnswerEngine._direct_mapping` and friends) skip building a question and a
:class:`StaticRESTMapper`; they may answer only matches from ready groups (DESIGN 5.10), and every answer must
equal the one a :class:`StaticRESTMapper` over the whole snapshot gives.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from restmapper import GroupKind, GroupVersionResource, RestMapperError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import GroupIndex, LazyRESTMapper, ShortNameConflictWarning, StaticRESTMapper
from restmapper.mapper.resolve import resolve
from restmapper.mapper.shortcut import expand_category
from restmapper.testing import FakeCluster, ManualClock
from restmapper.transport import RequestsTransport, RetryPolicy

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(group: str, kind: str, versions: tuple[str, ...], short: str) -> dict[str, Any]:
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List",
                               "shortNames": [short], "categories": ["all", "things"]},
                     "versions": [{"name": v, "served": True, "storage": i == 0, "schema": _SCHEMA}
                                  for i, v in enumerate(versions)]}}


def _cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_crd(_crd("a.example.com", "Alpha", ("v1beta1", "v1", "v2alpha1"), "al"))
    cluster.add_crd(_crd("a.example.com", "Beta", ("v1",), "be"))
    cluster.add_crd(_crd("b.example.com", "Alpha", ("v1",), "al"))  # the same kind and short name, later group
    cluster.add_crd(_crd("b.example.com", "Pod", ("v1",), "po"))  # a core kind and short name again
    cluster.add_crd(_crd("b.example.com", "Cm", ("v1",), "bcm"))  # a real name "cm": beats core's short name
    cluster.add_crd(_crd("c.com", "Thing", ("v1",), "th"))  # "things.x.c.com" reads as both groups
    cluster.add_crd(_crd("x.c.com", "Thing", ("v1", "v2"), "th"))
    return cluster


def _mapper(cluster: FakeCluster) -> LazyRESTMapper:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    return LazyRESTMapper(DiscoveryClient(transport), clock=ManualClock())


def _static(cluster: FakeCluster) -> StaticRESTMapper:
    groups, resources = DiscoveryClient(RequestsTransport(cluster.base_url)).server_groups_and_resources()
    return StaticRESTMapper(GroupIndex(g, resources) for g in groups)


def _outcome(ask: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return ask(*args, **kwargs)
    except RestMapperError as exc:
        return type(exc).__name__


KIND_QUESTIONS: list[tuple[GroupKind, tuple[str, ...]]] = [
    (GroupKind(group, kind), versions)
    for group, kind in [("a.example.com", "Alpha"), ("a.example.com", "alpha"), ("a.example.com", "Beta"),
                        ("b.example.com", "Alpha"), ("b.example.com", "Pod"), ("", "Pod"), ("", "pod"),
                        ("apps", "Deployment"), ("a.example.com", "Gamma"), ("nowhere.example.com", "Alpha")]
    for versions in [(), ("v1",), ("v2alpha1",), ("v1beta1", "v1"), ("v9", "v1"), ("",), ("__internal",), ("v9",)]
]


@contextmanager
def _ready_mapper(mode: str) -> Iterator[tuple[LazyRESTMapper, StaticRESTMapper, list[int]]]:
    """A mapper over :func:`_cluster` with every group loaded, complete and fresh (ready), the reference static
    mapper, and the count of questions that took the full path from now on."""
    cluster = _cluster(mode)
    with cluster.mock():
        mapper = _mapper(cluster)
        mapper.expand_category("all")
        yield mapper, _static(cluster), _counting_full_path(mapper)


def _counting_full_path(mapper: LazyRESTMapper) -> list[int]:
    computed = [0]
    compute = mapper._compute

    def counting(*args: Any, **kwargs: Any) -> Any:
        computed[0] += 1
        return compute(*args, **kwargs)

    mapper._compute = counting  # type: ignore[method-assign]
    return computed


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_rest_mapping_over_ready_groups_skips_the_full_path_and_answers_as_the_static_mapper(mode: str) -> None:
    with _ready_mapper(mode) as (mapper, static, computed):
        for gk, versions in KIND_QUESTIONS:
            assert _outcome(mapper.rest_mapping, gk, *versions) == _outcome(
                static.rest_mapping, gk, *versions), (gk, versions)
        matches = sum(1 for gk, versions in KIND_QUESTIONS
                      if not isinstance(_outcome(static.rest_mapping, gk, *versions), str))
        # Only the questions without a match (or about a group the server does not list) take the full path.
        assert computed[0] == len(KIND_QUESTIONS) - matches
        computed[0] = 0
        for gk, versions in KIND_QUESTIONS:  # asked again: every answer is memoized
            _outcome(mapper.rest_mapping, gk, *versions)
        assert computed[0] == 0


def test_the_refreshed_groups_first_question_is_answered_from_its_new_index() -> None:
    cluster = _cluster("aggregated")
    with cluster.mock():
        mapper = _mapper(cluster)
        mapper.expand_category("all")
        assert mapper.rest_mapping(GroupKind("a.example.com", "Alpha")).resource.version == "v1"
        computed = _counting_full_path(mapper)
        cluster.add_crd(_crd("a.example.com", "Alpha", ("v2", "v1beta1", "v1", "v2alpha1"), "al"))
        mapper.invalidate_group("a.example.com")
        # Loads the group again.
        assert mapper.kind_for(GroupVersionResource("a.example.com", "v1", "betas")).kind == "Beta"
        assert computed[0] == 1
        assert mapper.rest_mapping(GroupKind("a.example.com", "Alpha")).resource.version == "v2"
        assert computed[0] == 1, "the refreshed group is ready: its first question needs no full path"


RESOURCE_QUESTIONS: list[GroupVersionResource] = [
    GroupVersionResource(group, version, name)
    for group in ["", "a.example.com", "b.example.com", "apps", "a.example", "nowhere.example.com"]
    for version in ["", "v1", "v1beta1", "v2alpha1", "v9", "__internal"]
    for name in ["alphas", "alpha", "Alphas", "ALPHA", "betas", "pods", "pod", "deployments", "al", "things", "cm", ""]
]


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_resources_of_named_ready_groups_skip_the_full_path_and_answer_as_the_static_mapper(mode: str) -> None:
    with _ready_mapper(mode) as (mapper, static, computed):
        full = 0
        for method in ("resource_for", "kind_for"):
            for gvr in RESOURCE_QUESTIONS:
                expected = _outcome(getattr(static, method), gvr)
                assert _outcome(getattr(mapper, method), gvr) == expected, (method, gvr)
                # A match in a named, listed group is answered directly, unless the version is __internal.
                full += isinstance(expected, str) or gvr.version == "__internal" or gvr.group == "a.example"
        assert computed[0] == full
        computed[0] = 0
        for method in ("resource_for", "kind_for"):
            for gvr in RESOURCE_QUESTIONS:  # asked again: every answer is memoized (an empty name is refused)
                if gvr.resource:
                    _outcome(getattr(mapper, method), gvr)
        assert computed[0] == 0


PLAIN_ARGS = ["al", "Alpha", "alpha", "alphas", "ALPHAS", "pods", "po", "Pod", "pod", "PODS", "deploy",
              "Deployment", "deployments", "hpa", "be", "betas", "Beta", "svc", "cm", "nothing", "all", "things",
              "Namespace", "namespaces", "crd", "CustomResourceDefinition", "ev", "events", "bcm", "Cm", "cms"]


def _resolved(mapper: LazyRESTMapper, arg: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _outcome(mapper._resolve, arg, expand_categories=False)


def _assert_memoized(mapper: LazyRESTMapper, computed: list[int], args: list[str], expected: dict[str, Any]
                     ) -> None:
    """Asked again, the matches are memoized: the same answers, none computed."""
    computed[0] = 0
    assert [_resolved(mapper, arg) for arg in args] == [expected[arg] for arg in args]
    assert computed[0] == 0


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_arguments_without_dots_skip_the_full_path_and_resolve_as_kubectl_over_every_group(mode: str) -> None:
    """Real names beat short names, the first claimant of a short name wins and the others warn, core ranks
    first, a kind reads as its singular or, in core, as a kind: the direct answers are the full path's."""
    with _ready_mapper(mode) as (mapper, static, computed):
        expected = {arg: _outcome(resolve, arg, static, expand_categories=False) for arg in PLAIN_ARGS}
        assert {arg: _resolved(mapper, arg) for arg in PLAIN_ARGS} == expected
        misses = sum(isinstance(answer, str) for answer in expected.values())
        assert misses >= 2
        # The misses take the full path (a miss also asks whether it is a category); matches never do.
        assert computed[0] <= 2 * misses, computed[0]
        computed[0] = 0
        matches = [arg for arg, answer in expected.items() if not isinstance(answer, str)]
        assert [_resolved(mapper, arg) for arg in matches] == [expected[arg] for arg in matches]
        assert computed[0] == 0
        with pytest.warns(ShortNameConflictWarning, match="b.example.com"):
            assert mapper.resolve("al").resource.group == "a.example.com"


DOTTED_ARGS = [
    f"{name}.{suffix}"
    for name in ["alphas", "alpha", "Alpha", "ALPHAS", "al", "betas", "be", "pods", "po", "Pod", "things", "th",
                 "Thing", "deployments", "deploy", "Deployment", "hpa", "horizontalpodautoscalers", "nothing"]
    for suffix in ["a.example.com", "v1.a.example.com", "v1beta1.a.example.com", "v2alpha1.a.example.com",
                   "v9.a.example.com", "b.example.com", "v1.b.example.com", "c.com", "x.c.com", "v1.c.com",
                   "v2.x.c.com", "apps", "v1.apps", "autoscaling", "v2.autoscaling", "v1.autoscaling", "autoscal",
                   "example.com", "a.example", "__internal.apps", "storage", "c.c.com", "v1", "v1."]
] + ["storageclasses.storage", "pods.", "a..b", "x.y.z"]


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_dotted_arguments_skip_the_full_path_and_resolve_as_kubectl_over_every_group(mode: str) -> None:
    """``resource.group`` and ``resource.version.group``: both readings, short names of the group, kinds; a
    group named by prefix (``hpa.autoscal``) is left to the full path, whose answers the direct ones equal."""
    with _ready_mapper(mode) as (mapper, static, computed):
        expected = {arg: _outcome(resolve, arg, static, expand_categories=False) for arg in DOTTED_ARGS}
        full_path = []
        for arg in DOTTED_ARGS:
            before = computed[0]
            assert _resolved(mapper, arg) == expected[arg], arg
            if computed[0] > before and not isinstance(expected[arg], str):
                full_path.append(arg)
        matches = [arg for arg, answer in expected.items() if not isinstance(answer, str)]
        assert len(matches) > 80
        # Only matches through a group named by prefix, an empty part or the __internal version take the full path,
        # and those the named group settles by no name of its own (a kind, another spelling: groups extending it,
        # listed since, would take part first).
        assert full_path and all(arg.endswith((".autoscal", ".storage", ".a.example", "."))
                                 or ".__internal." in arg or arg.split(".")[0] != arg.split(".")[0].lower()
                                 for arg in full_path), full_path
        _assert_memoized(mapper, computed, matches, expected)


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_categories_skip_the_full_path_and_expand_as_kubectl_over_every_group(mode: str) -> None:
    cluster = _cluster(mode)
    with cluster.mock():
        mapper = _mapper(cluster)
        mapper.resources_for(GroupVersionResource("", "", "pods"))  # no category asked yet
        mapper.expand_category("api-extensions")  # loads every group
        static = _static(cluster)
        computed = _counting_full_path(mapper)
        for category in ("all", "things", "ALL", "nothing"):
            assert _outcome(mapper.expand_category, category) == expand_category(category, static), category
        assert computed[0] == 2, "an unknown category (no member) takes the full path; members never do"
        assert {g.group for g in mapper.expand_category("things")} == {
            "a.example.com", "b.example.com", "c.com", "x.c.com"}
