"""The drop-in's direct paths (``dynamic/_direct.py``) answer exactly as the generic path (issue 10).

Exhaustive over the testing kit's builtin cluster, every CRD fixture of ``../shared/fixtures/crds`` and a few CRDs
written to collide (a kind, a plural and a short name served by two groups; a kind served in two versions; a
``...List`` kind): for every question shape the direct paths take (and its near misses: other cases, wildcards,
``...List`` kinds, unknown names, tuples, strings, empty values), the answer or the error, and what is memoized
(value, error, until when, the cells read with their versions, the any-group marker, the epoch) are the same with
the direct paths as without them. A direct answer is the very object the generic path hands out.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest
import yaml
from conftest import require_fixtures
from dynamic_helpers import crd
from test_dynamic_memo_groups import _discoverer

from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.dynamic._memo import memo_key
from restmapper.mapper._memo import Memo
from restmapper.model import APIResource
from restmapper.testing import FakeCluster

MODES = ["legacy", "aggregated"]
A, B, C, T = "a.example.com", "b.example.com", "c.example.com", "t.example.com"


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


def _cluster(mode: str, manifests: list[dict[str, Any]]) -> FakeCluster:
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


def _memo_of(memo: Memo, key: Any) -> Any:
    found = memo.get(key)
    if found is None:
        return None
    error = None if found.error is None else (type(found.error).__name__, str(found.error).split(" (as of")[0])
    value = found.value  # the objects themselves (compared by identity); a search's list is a new one each time
    return (list(value) if isinstance(value, list) else value, error, found.valid_until, found.reads(),
            found.anywhere, found.checked)


class _NoTable(dict[Any, Any]):
    """Ready answers switched off: holds nothing, keeps nothing."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def __contains__(self, key: object) -> bool:
        return False


def _ask(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any], direct: bool) -> Any:
    """The outcome of one call on fresh memos, with or without the direct paths (and their ready answers): the
    answer (the objects themselves) or the error, and what the memo holds for it afterwards."""
    resources._get_memo, resources._search_memo = Memo(16), Memo(16)
    tables = resources._get_table, resources._search_table
    if not direct:
        resources._direct_get = resources._direct_search = lambda *a: None  # type: ignore[method-assign]
        resources._get_table, resources._search_table = _NoTable(), _NoTable()
    try:
        try:
            answer: Any = getattr(resources, method)(**kwargs)
            outcome: Any = (list(answer), answer.failed) if method == "search" else answer
        except Exception as exc:  # the error is part of the answer (a repeated miss says how old it is)
            outcome = type(exc).__name__, str(exc).split(" (as of")[0]
    finally:
        if not direct:
            del resources._direct_get, resources._direct_search
            resources._get_table, resources._search_table = tables
    memos = [(_memo_of(m, k)) for m in (resources._get_memo, resources._search_memo)
             for k in list(m._young)]
    return outcome, memos


def _warm(resources: SelfHealingDiscoverer) -> None:
    """Every group loaded, indexed and ready (as the bench's warm-up)."""
    resources.search(kind="Namespace")
    for name in resources.cache.group_names():
        resources.search(group=name or None, prefix="api" if not name else None)


@pytest.mark.parametrize("mode", MODES)
def test_direct_answers_equal_the_generic_paths(mode: str, fixture_crds: list[dict[str, Any]]) -> None:
    resources = _discoverer(_cluster(mode, fixture_crds))
    _warm(resources)
    answered: Counter[tuple[str, ...]] = Counter()
    original_get, original_search = resources._direct_get, resources._direct_search

    def count(method: str, kwargs: dict[str, Any], found: Any) -> Any:
        if found is not None:
            answered[(method, *kwargs)] += 1
        return found

    questions = _questions(resources)
    assert len(questions) > 2000
    generation = resources.cache.generation
    for method, kwargs in questions:
        generic = _ask(resources, method, kwargs, direct=False)
        resources._direct_get = (  # type: ignore[method-assign]
            lambda kw, key: count("get", kw, original_get(kw, key)))
        resources._direct_search = (  # type: ignore[method-assign]
            lambda kw, key: count("search", kw, original_search(kw, key)))
        try:
            direct = _ask(resources, method, kwargs, direct=True)
        finally:
            del resources._direct_get, resources._direct_search
        assert direct == generic, (method, kwargs)
    assert resources.cache.generation == generation, "nothing was fetched: every group stayed ready"
    # The direct paths answered most of these, every shape they take (the rest: misses, ambiguities, others).
    shapes = [("get", "api_version", "kind"), ("get", "kind", "api_version"), ("get", "kind"), ("get", "name"),
              ("get", "short_names"), ("search", "kind"), ("search", "name"), ("search", "short_names")]
    assert sorted(answered) == sorted(shapes) and min(answered.values()) > 40, answered


@pytest.mark.parametrize("mode", MODES)
def test_direct_paths_answer_their_shapes(mode: str) -> None:
    """Each shape is answered by a direct path (not left to the generic path) when one object matches (search:
    any), and an ambiguity is left to the generic path."""
    resources = _discoverer(_cluster(mode, []))
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
        found = getattr(resources, f"_direct_{method}")(kwargs, memo_key(kwargs))
        if answer is None:
            assert found is None, kwargs
            continue
        assert found is not None, kwargs
        assert [f"{r.group_version} {r.name}" for r in ([found] if method == "get" else found)] == answer, kwargs


@pytest.mark.parametrize("mode", MODES)
def test_direct_paths_decline_while_a_group_is_not_ready(mode: str) -> None:
    """A group that is not ready (invalidated, unread) is the generic path's: it reads the cache."""
    resources = _discoverer(_cluster(mode, []))
    _warm(resources)
    resources.mapper.invalidate_group(A)
    assert resources._direct_get({"api_version": f"{A}/v1", "kind": "Alpha"}, ("k",)) is None
    assert resources._direct_get({"kind": "Pod"}, ("k",)) is None  # an answer from any group: every group ready
    assert resources._direct_search({"kind": "Pod"}, ("k",)) is None
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").api_version == "v1"  # the generic path reads A
    assert resources.search(kind="Pod")[0].name == "pods"
    resources.search(group=A)  # every version of A read again (legacy discovery read only v1 above): A is ready
    again = resources._direct_get({"api_version": f"{A}/v2", "kind": "Alpha"}, ("k2",))
    assert again is not None and again is resources.get(api_version=f"{A}/v2", kind="Alpha")
    assert resources._direct_search({"kind": "Pod"}, ("k3",)) == resources.search(kind="Pod")
