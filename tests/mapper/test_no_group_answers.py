"""Answers to questions that name no group equal kubectl's reading over the whole cluster, first-time and memoized.

Every name a no-group question may use (plurals, singulars, short names, kinds as given, lower-cased and capitalised,
categories) of the testing kit's builtin cluster, the shared CRD fixtures and CRDs whose names collide with other
groups' is asked through ``resolve``, ``resource_for``, ``kind_for`` and ``expand_category`` of a mapper whose
groups are all loaded, and compared with kubectl's reading over a static snapshot of the whole cluster: first, then
after a group refresh that changes its names, after an eviction (a CRD deleted) and after a new CRD that claims
names another group has. Memoized answers are asked again after each change: an answer about a group the change
did not touch is not recomputed, every other one equals the new snapshot's.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from restmapper import GroupVersionResource, RestMapperError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import GroupIndex, LazyRESTMapper, ShortNameConflictWarning, StaticRESTMapper
from restmapper.mapper.resolve import resolve
from restmapper.mapper.shortcut import expand_category
from restmapper.model import APIResource
from restmapper.testing import FakeCluster, ManualClock
from restmapper.transport import RequestsTransport, RetryPolicy

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(group: str, kind: str, versions: tuple[str, ...], short: tuple[str, ...], *, plural: str | None = None,
         singular: str | None = None, categories: tuple[str, ...] = ("all", "things")) -> dict[str, Any]:
    plural = plural or kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": singular or kind.lower(), "kind": kind,
                               "listKind": kind + "List", "shortNames": list(short), "categories": list(categories)},
                     "versions": [{"name": v, "served": True, "storage": i == 0, "schema": _SCHEMA}
                                  for i, v in enumerate(versions)]}}


@functools.cache
def _fixture_crds(fixtures: str) -> tuple[dict[str, Any], ...]:
    """Every CRD manifest of the shared fixtures, parsed once (with the C loader when there is one)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(doc for path in sorted(Path(fixtures, "crds").rglob("*.yaml"))
                 for doc in yaml.load_all(path.read_text(), Loader=loader) if doc)


def _cluster(fixtures: Path, mode: str) -> FakeCluster:
    cluster = FakeCluster(builtin=True, mode=mode)
    for manifest in _fixture_crds(str(fixtures)):
        cluster.add_crd(copy.deepcopy(manifest))
    # Names that collide with other groups' (kinds, plurals, short names, a kind spelled as another's singular).
    cluster.add_crd(_crd("a.example.com", "Alpha", ("v1beta1", "v1", "v2alpha1"), ("al",)))
    cluster.add_crd(_crd("b.example.com", "Alpha", ("v1",), ("al",)))
    cluster.add_crd(_crd("b.example.com", "Pod", ("v1",), ("po",)))
    cluster.add_crd(_crd("b.example.com", "Cm", ("v1",), ("bcm",)))
    cluster.add_crd(_crd("c.example.com", "Certificate", ("v1",), ("cert",), categories=("cert-manager",)))
    cluster.add_crd(_crd("e.example.com", "Oddity", ("v1",), ("oddly",), singular="odd"))
    # An aggregated API may spell names in any case (a CRD may not): upper-case short names and plurals.
    cluster.add_api_resources("d.example.com/v1", [
        APIResource("oddities", "oddity", True, "Odd", ("get",), ("Oddly", "ODD")),
        APIResource("Pods", "Pod", True, "Pod", ("get",), ("PO",)),
    ])
    return cluster


def _mapper(cluster: FakeCluster) -> LazyRESTMapper:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    return LazyRESTMapper(DiscoveryClient(transport), clock=ManualClock())


def _static(cluster: FakeCluster) -> StaticRESTMapper:
    groups, resources = DiscoveryClient(RequestsTransport(cluster.base_url)).server_groups_and_resources()
    return StaticRESTMapper(GroupIndex(g, resources) for g in groups)


def _names(static: StaticRESTMapper) -> tuple[list[str], list[str]]:
    """Every name a no-group question may use, in several spellings, and every category."""
    names: set[str] = set()
    categories: set[str] = set()
    for index in static.indexes:
        for key in (*index.names, *index.short_names, *index.kind_first):
            names.update((key, key.lower(), key[:1].upper() + key[1:]))
        categories.update(index.categories)
    categories.update(c.upper() for c in list(categories))
    for index in static.indexes:  # dotted forms (the direct path, not the table) of the groups that change
        if index.name in _CHANGING:
            for key in (*index.names, *index.short_names, *index.kind_first):
                names.update(f"{key}.{suffix}" for suffix in (index.name, *(f"{v}.{index.name}"
                                                                             for v in index.versions)))
    return sorted(names), sorted(categories | {"nothing"})


_CHANGING = {"a.example.com", "b.example.com", "aa.example.com", "zz.example.com", "c.example.com",
             "cert-manager.io", "apps"}


def _outcome(ask: Any, *args: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            answer = ask(*args)
        except (RestMapperError, ValueError) as exc:
            return type(exc).__name__
    return answer, tuple(str(w.message) for w in caught)


def _expected(static: StaticRESTMapper, names: list[str], categories: list[str]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for name in names:
        result = _outcome(lambda a: resolve(a, static, expand_categories=False), name)
        out["resolve", name] = result if isinstance(result, str) else (result[0].mapping, result[0].warnings)
        gvr = GroupVersionResource("", "", name)
        out["resource_for", name] = _outcome(static.resource_for, gvr)
        out["kind_for", name] = _outcome(static.kind_for, gvr)
    for name in categories:
        out["expand_category", name] = _outcome(lambda c: list(expand_category(c, static)), name)
    return out


def _asked(mapper: LazyRESTMapper, questions: list[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for method, name in questions:
        if method == "resolve":
            out[method, name] = _outcome(mapper.resolve, name)
        elif method == "expand_category":
            out[method, name] = _outcome(mapper.expand_category, name)
        else:
            out[method, name] = _outcome(getattr(mapper, method), GroupVersionResource("", "", name))
    return out


def _compare(mapper: LazyRESTMapper, static: StaticRESTMapper, names: list[str], categories: list[str]) -> None:
    expected = _expected(static, names, categories)
    got = _asked(mapper, list(expected))
    wrong = {q: (got[q], expected[q]) for q in expected if _shape(got[q]) != _shape(expected[q])}
    assert not wrong, list(wrong.items())[:5]


def _shape(outcome: Any) -> Any:
    """An outcome to compare: the error's class, or the answer and the warnings' texts (resolve errors of the
    mapper are worded for the user, the static path's are its own: only their classes count)."""
    if isinstance(outcome, str):
        return "error"
    return outcome


@pytest.fixture(params=["aggregated", "legacy"])
def ready(request: pytest.FixtureRequest, fixtures_dir: Path) -> Iterator[tuple[FakeCluster, LazyRESTMapper]]:
    cluster = _cluster(fixtures_dir, request.param)
    with cluster.mock():
        mapper = _mapper(cluster)
        mapper.expand_category("all")  # every group loaded
        yield cluster, mapper


def _counting(mapper: LazyRESTMapper, name: str) -> list[int]:
    calls = [0]
    original = getattr(mapper, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    setattr(mapper, name, counted)
    return calls


def test_first_time_answers_equal_kubectls(ready: tuple[FakeCluster, LazyRESTMapper]) -> None:
    cluster, mapper = ready
    static = _static(cluster)
    names, categories = _names(static)
    assert len(names) > 300 and categories
    _compare(mapper, static, names, categories)


def test_a_refresh_an_eviction_and_colliding_names_recompute_only_what_they_touch(
        ready: tuple[FakeCluster, LazyRESTMapper]) -> None:
    cluster, mapper = ready
    names, categories = _names(_static(cluster))
    _asked(mapper, [(m, n) for m in ("resolve", "resource_for", "kind_for") for n in names])  # memoized

    # Refresh: a.example.com gains a version, a kind and a short name (its names change).
    cluster.add_crd(_crd("a.example.com", "Alpha", ("v2", "v1beta1", "v1"), ("al", "alf")))
    cluster.add_crd(_crd("a.example.com", "Gamma", ("v1",), ("ga", "po")))
    mapper.invalidate_group("a.example.com")
    mapper.expand_category("all")  # loads it again
    unmemoized = _counting(mapper, "_resolve_unmemoized")
    for name in ("Issuer", "issuers", "Gateway", "gateways", "deploy", "Deployment"):  # other groups: kept
        mapper.resolve(name)
    # An answer that read a name no group serves shares that name's cell with 1/1,024 of all such names (by string
    # hash, which differs per process): a new name of the refreshed group may move it, and that answer alone is
    # computed again. So the answers about other groups stay memoized, save such a rare collision.
    assert unmemoized[0] <= 1, "answers about groups the refresh did not touch stay memoized"
    static = _static(cluster)
    names, categories = _names(static)
    _compare(mapper, static, names, categories)

    # Eviction: b.example.com loses Alpha (its short name "al" now has one claimant) and Pod.
    cluster.delete_crd("alphas.b.example.com")
    cluster.delete_crd("pods.b.example.com")
    mapper.invalidate_group("b.example.com")
    mapper.expand_category("all")
    static = _static(cluster)
    names, categories = _names(static)
    _compare(mapper, static, names, categories)

    # A new group whose names collide with others': a kind another group serves, a plural, short names.
    cluster.add_crd(_crd("aa.example.com", "Certificate", ("v1",), ("al", "deploy", "oddity"),
                         plural="deployments", singular="certificate", categories=("all", "cert-manager")))
    cluster.add_crd(_crd("zz.example.com", "Issuer", ("v1",), ("iss", "alphas"), plural="issuers",
                         singular="oddity"))  # the lower-case form of e.example.com's kind Oddity
    cluster.add_api_resources("cc.example.com/v1", [  # a short name spelled as another group's kind
        APIResource("widgets", "widget", True, "Widget", ("get",), ("Certificate", "Oddly"))])
    for group in ("aa.example.com", "zz.example.com", "cc.example.com"):
        mapper.invalidate_group(group)
    mapper.expand_category("all")
    static = _static(cluster)
    names, categories = _names(static)
    _compare(mapper, static, names, categories)

    # The whole group goes: every name it had is answered without it.
    cluster.delete_crd("deployments.aa.example.com")
    mapper.invalidate_group("aa.example.com")
    mapper.expand_category("all")
    static = _static(cluster)
    names, categories = _names(static)
    _compare(mapper, static, names, categories)

    # The only group spelling a name so (the kind Oddity) goes, then the group it read as (zz's singular
    # "oddity") changes: the answer about "Oddity" follows, though no group has that key any more.
    assert mapper.resolve("Oddity").resource.group == "zz.example.com"
    cluster.delete_crd("odditys.e.example.com")
    mapper.invalidate_group("e.example.com")
    mapper.expand_category("all")
    assert mapper.resolve("Oddity").resource.group == "zz.example.com"
    cluster.add_crd(_crd("zz.example.com", "Issuer", ("v1",), ("iss",), plural="issuers"))
    mapper.invalidate_group("zz.example.com")
    mapper.expand_category("all")
    assert mapper.resolve("Oddity").resource.group == "d.example.com"
    static = _static(cluster)
    names, categories = _names(static)
    _compare(mapper, static, [*names, "Oddity"], categories)


def test_a_name_is_answered_again_once_an_invalidated_group_is_read(ready: tuple[FakeCluster, LazyRESTMapper]
                                                                     ) -> None:
    """DESIGN 5.10: a dropped group may claim the name again (or give it up): no answer from before holds."""
    cluster, mapper = ready
    with pytest.warns(ShortNameConflictWarning, match="alphas.b.example.com"):  # both groups call it al
        assert mapper.resolve("al").resource.group == "a.example.com"
    mapper.resolve("Certificate")
    cluster.add_crd(_crd("a.example.com", "Alpha", ("v1",), ("alf",)))  # a.example.com gives "al" up
    mapper.invalidate_group("a.example.com")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert mapper.resolve("al").resource.group == "b.example.com"


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_lone_lookup_then_others_answer_as_the_usual_path(mode: str) -> None:
    """A one-shot process (the command line's ``resolve deploy``) loads and indexes every group for its question;
    the no-group questions after it answer as the dotted ones."""
    cluster = FakeCluster(builtin=True, mode=mode)
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url)))
        assert mapper.resolve("deploy").resource == GroupVersionResource("apps", "v1", "deployments")
        assert mapper.resolve("svc").resource == GroupVersionResource("", "v1", "services")
        assert mapper.resolve("deploy") == mapper.resolve("deployments.apps")
