"""An answer is never confidently wrong (DESIGN 5.10): each case of the rules below as its own test.

Rule 1: a no-match (``NoKindMatchError``/``NoResourceMatchError``, ``is_no_match`` True) only when every group that
could hold the answer was read and does not have it; otherwise a ``GroupDiscoveryError`` naming the question and
the group versions that could not be checked.
Rule 2: the core group is never answered by another group, and no group answers while a failed group that would
have won by priority could not be read; a core 404 is never cached as "core serves nothing".
Rule 3: the question is honoured exactly (see the section below).

The property-style sweep over every endpoint and fault is in ``test_fault_matrix.py``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import io
import json
import pickle
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from restmapper import (
    APIResource,
    DiscoveryError,
    GroupDiscoveryError,
    GroupKind,
    GroupResource,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    MalformedDiscoveryError,
    NoKindMatchError,
    NoResourceMatchError,
    PartialDiscoveryWarning,
    RestMapperError,
    RESTMapping,
    Scope,
    TransportError,
    is_ambiguous,
    is_no_match,
)
from restmapper.aio import AsyncRESTMapper
from restmapper.cli import Session, run
from restmapper.cli._embedded import EmbeddedTransport
from restmapper.discovery import DiscoveryClient
from restmapper.errors import AmbiguousKindError, ResourceTypeNotFoundError
from restmapper.mapper import LazyRESTMapper
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

MODES = ["aggregated", "legacy"]
METRICS = [APIResource("pods", "pod", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "node", False, "NodeMetrics", ("get", "list"))]


class Clock:
    """A manual monotonic clock (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def crd(group: str, kind: str, *, plural: str | None = None, versions: tuple[str, ...] = ("v1",),
        scope: str = "Namespaced") -> dict[str, Any]:
    plural = plural or kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope,
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                 "versions": [{"name": v, "served": True, "storage": i == 0,
                               "schema": {"openAPIV3Schema": {"type": "object"}}} for i, v in enumerate(versions)]},
    }


def make_mapper(cluster: FakeCluster, clock: Clock, **options: Any) -> LazyRESTMapper:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    return LazyRESTMapper(DiscoveryClient(transport), clock=clock, **options)


def busy_cluster(mode: str) -> FakeCluster:
    """The embedded cluster plus metrics.k8s.io (serves pods and nodes) and a namespaced longhorn ``nodes``."""
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd("longhorn.io", "Node", plural="nodes"))
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    return cluster


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def assert_unread(exc: BaseException, *names: str) -> None:
    """``exc`` says "could not find out", not "not there", and names everything in ``names``."""
    assert isinstance(exc, DiscoveryError | TransportError), repr(exc)
    assert not is_no_match(exc), exc
    for name in names:
        assert name in str(exc), (name, str(exc))


def cli(argv: list[str], cluster: FakeCluster) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(argv, session=Session(DiscoveryClient(EmbeddedTransport(cluster))), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# --- Rule 1: a no-match means the server said so ------------------------------------------------------------


@pytest.mark.parametrize("fault", [dict(reset=True), dict(status=503, body="unavailable")])
def test_warm_cache_unreachable_server_uncached_kind_is_not_a_no_match(
        mode: str, clock: Clock, fault: dict[str, Any]) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    with cluster.mock():
        mapper = make_mapper(cluster, clock, max_stale=1e9)
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
        mapper.rest_mapping(GroupKind("", "Pod"))
        cluster.inject("/api*", **fault)
        clock.advance(2)
        with pytest.raises(DiscoveryError) as info:
            mapper.rest_mapping(GroupKind("example.com", "Widget"))
        assert_unread(info.value, '"Widget"', "example.com", "/apis")
        with pytest.raises(DiscoveryError) as info:
            mapper.resolve("widgets")
        assert_unread(info.value, '"widgets"')
        # Within the miss interval the failed revalidation is remembered, not turned into "no".
        with pytest.raises(DiscoveryError) as info:
            mapper.rest_mapping(GroupKind("example.com", "Widget"))
        assert_unread(info.value, '"Widget"')
        # What is cached still answers (stale-on-error).
        assert mapper.rest_mapping(GroupKind("apps", "Deployment")).resource.resource == "deployments"


def test_legacy_503_on_the_needed_group_is_not_a_no_match(clock: Clock) -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.inject("/apis/cert-manager.io/v1", status=503, body="unavailable")
        mapper = make_mapper(cluster, clock)
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate"))
        assert_unread(info.value, '"Certificate"', "cert-manager.io/v1", "503")
        assert GroupVersion("cert-manager.io", "v1") in info.value.failed
        assert info.value.asked == 'kind "Certificate" in group "cert-manager.io"'


@pytest.mark.parametrize("broken", ["stale", "503"])
def test_no_such_name_with_an_unrelated_api_down_names_the_argument(
        mode: str, clock: Clock, broken: str) -> None:
    cluster = busy_cluster(mode)
    if broken == "stale":
        cluster.set_stale("metrics.k8s.io/v1beta1")
    else:
        cluster.inject("/apis/metrics.k8s.io/v1beta1", status=503, body="unavailable", content_type="text/plain")
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        if mode == "aggregated" and broken == "503":
            # An aggregated server answers from its own document: the group version path is never read.
            with pytest.raises(NoResourceMatchError):
                mapper.resolve("xyzzy")
            return
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.resolve("xyzzy")
        assert_unread(info.value, '"xyzzy"', "metrics.k8s.io/v1beta1")
        # Unrelated lookups are not affected (a warning names the unreadable version, which may outrank them).
        with pytest.warns(PartialDiscoveryWarning, match="metrics.k8s.io/v1beta1"):
            assert mapper.resolve("deploy").resource.group == "apps"
    code, out, err = cli(["resolve", "xyzzy"], cluster)
    assert code == 1 and out.splitlines()[1:] == []
    assert "xyzzy" in err and "metrics.k8s.io/v1beta1" in err and "doesn't have" not in err


def test_resolve_all_with_a_failed_category_group_is_visibly_partial(mode: str, clock: Clock) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    with cluster.mock():
        healthy = [m.resource.resource for m in make_mapper(cluster, Clock()).resolve_all("all")]
        assert "deployments" in healthy
        if mode == "aggregated":
            cluster.set_stale("apps/v1")
        else:
            cluster.inject("/apis/apps/v1", status=503, body="unavailable")
        mapper = make_mapper(cluster, clock)
        with pytest.warns(PartialDiscoveryWarning, match="apps/v1"):
            found = mapper.resolve_all("all")
        assert [m.resource.resource for m in found] == [r for r in healthy if r not in (
            "deployments", "replicasets", "statefulsets", "daemonsets")]
        assert found.partial and GroupVersion("apps", "v1") in found.failed
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.expand_category("all")
        assert_unread(info.value, '"all"', "apps/v1")
        assert [str(gr) for gr in info.value.partial][:1] == ["pods"]
    code, out, err = cli(["resolve", "all"], cluster)
    assert code == 0 and "pods" in out and "deployments" not in out
    assert err.startswith("Warning: ") and "apps/v1" in err


def test_healthy_resolve_all_is_not_partial(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock(), warnings.catch_warnings():
        warnings.simplefilter("error", PartialDiscoveryWarning)
        found = make_mapper(cluster, clock).resolve_all("all,certs")
        assert not found.partial and found.failed == {}


def test_resolve_all_raises_for_a_name_it_cannot_resolve_as_kubectl(clock: Clock) -> None:
    """Decision: a name that cannot be resolved fails the whole ``resolve_all`` call, while a category is partial.

    kubectl 1.32 ``get configmaps,certs`` with cert-manager.io/v1 at 503 prints nothing and exits 1 with an error
    for ``certs`` (its builder resolves every type before listing); ``get all`` warns and lists the rest. The
    failure stays remembered for the backoff, also after the server recovered; then the next call answers.
    """
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        fault = cluster.inject("/apis/cert-manager.io/v1", status=503, body="unavailable")
        mapper = make_mapper(cluster, clock)
        for _ in range(2):  # the second call, after the server recovered, replays the failure remembered
            with pytest.warns(PartialDiscoveryWarning, match='category "all" may be incomplete'), \
                    pytest.raises(GroupDiscoveryError) as info:
                mapper.resolve_all("all,certs")
            assert_unread(info.value, '"certs"', "cert-manager.io/v1")
            fault.remove()
        clock.advance(61)  # past the failure backoff (at most retry_max)
        found = mapper.resolve_all("all,certs")
        assert not found.partial and "certificates" in [m.resource.resource for m in found]
    cluster.inject("/apis/cert-manager.io/v1", status=503, body="unavailable")
    code, out, err = cli(["resolve", "all,certs"], cluster)
    # The CLI tabulates each argument's resolution: the rows it found, then an error line for the one it could not.
    assert code == 1 and "certificates" not in out and "pods" in out, out
    assert err.splitlines()[-1].startswith("error: ") and '"certs"' in err.splitlines()[-1], err


def test_a_remembered_no_match_says_so_and_a_fresh_one_keeps_upstreams_message(clock: Clock) -> None:
    """Within ``miss_refresh_interval`` a repeated miss is answered from memory: the message gives its age."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        fresh = {
            NoKindMatchError: 'no matches for kind "Widget" in group "example.com"',
            ResourceTypeNotFoundError: 'the server doesn\'t have a resource type "widgets"',
        }
        lookups = {NoKindMatchError: lambda: mapper.rest_mapping(GroupKind("example.com", "Widget")),
                   ResourceTypeNotFoundError: lambda: mapper.resolve("widgets")}
        for cls, lookup in lookups.items():
            clock.advance(1.0)  # past the last miss revalidation: this lookup asks the server
            with pytest.raises(cls) as first:
                lookup()
            assert str(first.value) == fresh[cls] and first.value.remembered_age is None
            clock.advance(0.4)
            with pytest.raises(cls) as again:
                lookup()
            assert str(again.value) == fresh[cls] + " (as of 0.4 s ago; misses are cached for up to 1 s)"
            assert again.value.remembered_age == pytest.approx(0.4) and is_no_match(again.value)
            assert pickle.loads(pickle.dumps(again.value)).remembered_age == pytest.approx(0.4)
            clock.advance(1.0)  # past the negative cache: asked again, a fresh answer
            with pytest.raises(cls) as later:
                lookup()
            assert str(later.value) == fresh[cls]


# --- is_no_match / is_ambiguous follow only causes that mean the same thing -----------------------------------


def _raise_from(error: BaseException, cause: BaseException | None, *, implicit: bool = False) -> BaseException:
    try:
        try:
            raise cause if cause is not None else RuntimeError("none")
        except BaseException:
            if implicit:
                raise error  # noqa: B904 - the implicit __context__ is the point of this test
            raise error from cause
    except BaseException as exc:
        return exc


NO_KIND = NoKindMatchError(GroupKind("x", "Y"))
AMBIGUOUS = AmbiguousKindError(GroupKind("x", "Y").with_version(""))


@pytest.mark.parametrize(("error", "cause", "implicit", "expected"), [
    (NO_KIND, None, False, True),
    (RuntimeError("wrapped by the caller"), NO_KIND, False, True),
    (LookupError("wrapped twice"), RuntimeError("middle"), False, False),
    (TransportError("while handling"), NO_KIND, True, False),
    (RuntimeError("while handling"), NO_KIND, True, False),
    (TransportError("from"), NO_KIND, False, False),
    (GroupDiscoveryError("x", {GroupVersion("x", "v1"): TransportError("down")}), NO_KIND, False, False),
    (DiscoveryError("aggregate", failed={GroupVersion("x", "v1"): NO_KIND}), None, False, False),
])
def test_is_no_match_follows_only_same_meaning_causes(
        error: BaseException, cause: BaseException | None, implicit: bool, expected: bool) -> None:
    raised = _raise_from(error, cause, implicit=implicit) if cause is not None else error
    assert is_no_match(raised) is expected


def test_is_no_match_on_exception_groups_needs_every_member() -> None:
    group = pytest.importorskip("builtins").__dict__.get("ExceptionGroup")
    if group is None:
        pytest.skip("ExceptionGroup needs Python 3.11")
    assert is_no_match(group("all", [NO_KIND, NoResourceMatchError(GroupVersionResource("", "", "x"))]))
    assert not is_no_match(group("mixed", [NO_KIND, TransportError("down")]))
    assert is_ambiguous(group("one", [AMBIGUOUS, TransportError("down")]))
    assert not is_ambiguous(_raise_from(TransportError("while handling"), AMBIGUOUS, implicit=True))
    assert is_ambiguous(_raise_from(RuntimeError("caller"), AMBIGUOUS))


# --- Rule 2: the core group is never answered by another group ------------------------------------------------


def _core_path(mode: str) -> str:
    return "/api" if mode == "aggregated" else "/api/v1"


CORE_FAULTS = [
    dict(status=503, body="unavailable", content_type="text/plain"),
    dict(status=500, body="boom"),
    dict(status=403, body='{"kind":"Status","message":"forbidden"}', content_type="application/json"),
    dict(status=404, body="404 page not found"),
    dict(status=200, body="<html>proxy</html>", content_type="text/html"),
    dict(reset=True),
]


# Every core document each mode reads: an aggregated client reads core from /api alone (never /api/v1).
CORE_DOCUMENTS = [(mode, path) for mode in MODES
                  for path in (("/api",) if mode.startswith("aggregated") else ("/api", _core_path(mode)))]


def core_lookups(mapper: LazyRESTMapper) -> dict[str, Callable[[], Any]]:
    """Lookups only core can answer (metrics.k8s.io serves ``pods`` and ``nodes`` too, longhorn.io ``nodes``)."""
    return {
        "resolve node": lambda: mapper.resolve("node"),
        "resolve pods": lambda: mapper.resolve("pods"),
        "resolve po": lambda: mapper.resolve("po"),
        "kind_for nodes": lambda: mapper.kind_for(GroupVersionResource("", "", "nodes")),
        "resource_for pods": lambda: mapper.resource_for(GroupVersionResource("", "", "pods")),
        "rest_mapping Pod": lambda: mapper.rest_mapping(GroupKind("", "Pod")),
        "kinds_for pods": lambda: mapper.kinds_for(GroupVersionResource("", "", "pods")),
        "is_namespaced Pod": lambda: mapper.is_namespaced(GroupVersionKind("", "v1", "Pod")),
        "async rest_mapping": lambda: asyncio.run(AsyncRESTMapper(mapper).rest_mapping(GroupKind("", "Pod"))),
    }


@pytest.mark.parametrize("fault", CORE_FAULTS, ids=["503", "500", "403", "404", "malformed", "reset"])
@pytest.mark.parametrize(("mode", "path"), CORE_DOCUMENTS, ids=[f"{m}:{p}" for m, p in CORE_DOCUMENTS])
def test_unreadable_core_is_never_answered_by_another_group(
        mode: str, path: str, clock: Clock, fault: dict[str, Any]) -> None:
    cluster = busy_cluster(mode)
    with cluster.mock():
        cluster.inject(path, **fault)
        mapper = make_mapper(cluster, clock)
        for name, lookup in core_lookups(mapper).items():
            with pytest.raises(DiscoveryError) as info:
                lookup()
            assert_unread(info.value, "v1")
            assert info.value.__class__ is GroupDiscoveryError, name


AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _answer(doc: dict[str, Any], content_type: str = "application/json") -> dict[str, Any]:
    return dict(status=200, body=json.dumps(doc), content_type=content_type)


def _aggregated_core(items: Any) -> dict[str, Any]:
    return _answer({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": items},
                   AGGREGATED_CT)


# 200 answers for core that list no v1 or no resources, or say nothing at all: core always exists and always
# serves resources, so each is a failure of core, never an empty core group.
EMPTY_CORE = {
    "legacy:/api:{}": ("legacy", "/api", _answer({})),
    "legacy:/api:versions=[]": ("legacy", "/api", _answer({"kind": "APIVersions", "versions": []})),
    "legacy:/api:versions=null": ("legacy", "/api", _answer({"kind": "APIVersions", "versions": None})),
    "legacy:/api:no-v1": ("legacy", "/api", _answer({"kind": "APIVersions", "versions": ["v2"]})),
    "legacy:/api/v1:resources=[]": ("legacy", "/api/v1", _answer(
        {"kind": "APIResourceList", "groupVersion": "v1", "resources": []})),
    "legacy:/api/v1:resources=null": ("legacy", "/api/v1", _answer(
        {"kind": "APIResourceList", "groupVersion": "v1", "resources": None})),
    "legacy:/api/v1:no-kind": ("legacy", "/api/v1", _answer({"groupVersion": "v1"})),
    "aggregated:/api:{}": ("aggregated", "/api", _answer({})),
    "aggregated:/api:legacy-versions=[]": ("aggregated", "/api", _answer({"kind": "APIVersions", "versions": []})),
    "aggregated:/api:items=[]": ("aggregated", "/api", _aggregated_core([])),
    "aggregated:/api:items=null": ("aggregated", "/api", _aggregated_core(None)),
    "aggregated:/api:core-without-versions": ("aggregated", "/api", _aggregated_core(
        [{"metadata": {"name": ""}, "versions": []}])),
    "aggregated:/api:v1-without-resources": ("aggregated", "/api", _aggregated_core(
        [{"metadata": {"name": ""}, "versions": [{"version": "v1", "freshness": "Current", "resources": []}]}])),
}


@pytest.mark.parametrize("case", list(EMPTY_CORE))
def test_an_empty_core_document_is_a_failure_of_core(case: str, clock: Clock) -> None:
    """``/api`` answering ``{}`` let metrics.k8s.io answer ``pods`` and gave confident no-matches for core."""
    mode, path, fault = EMPTY_CORE[case]
    cluster = busy_cluster(mode)
    with cluster.mock():
        injected = cluster.inject(path, **fault)
        mapper = make_mapper(cluster, clock)
        for name, lookup in core_lookups(mapper).items():
            with pytest.raises(DiscoveryError) as info:
                lookup()
            assert_unread(info.value, "v1")
            assert isinstance(info.value, GroupDiscoveryError), name
        with pytest.warns(PartialDiscoveryWarning, match="v1"):
            found = mapper.resolve_all("all")
        assert found.partial and GroupVersion("", "v1") in found.failed
        assert "pods" not in [m.resource.resource for m in found]
        # A named group asked for by name is unaffected.
        assert mapper.rest_mapping(GroupKind("apps", "Deployment")).resource.group == "apps"
        injected.remove()
        clock.advance(61)  # past the failure backoff (at most retry_max)
        assert mapper.resolve("pods").resource == GroupVersionResource("", "v1", "pods")


def test_a_rejected_core_document_keeps_the_last_good_etag(clock: Clock) -> None:
    """Warm, then ``/api`` answers an empty document with its own ETag: it is a failure of v1, and once the server
    recovers the revalidation sends the last *good* ETag, so a 304 reuses a document that was checked."""
    cluster = busy_cluster("aggregated")
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=10)
        assert mapper.resolve("pods").resource.group == ""
        good = cluster.requests[0].headers.get("If-None-Match")
        assert good is None  # the cold fetch
        fault = cluster.inject("/api", headers={"ETag": '"EMPTY"'}, **_aggregated_core([]))
        clock.advance(11)
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.resolve("pods")
        assert_unread(info.value, "v1", '"pods"')
        fault.remove()
        clock.advance(61)  # past the failure backoff
        cluster.clear_requests()
        assert mapper.resolve("pods").resource == GroupVersionResource("", "v1", "pods")
        sent = [r.headers.get("If-None-Match") for r in cluster.requests if r.path == "/api"]
        assert sent and '"EMPTY"' not in sent and all(sent), sent


def test_an_empty_core_document_fails_object_cache_reads() -> None:
    """``ObjectCache.get``/``list`` of a core kind read an empty ``/api`` as "ConfigMap is not served"."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.inject("/api", **_answer({}))
        transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
        cache = ObjectCache(LazyRESTMapper(DiscoveryClient(transport)), transport=transport, sync_timeout=0.5)
        try:
            # A typed error naming the unreadable core (the informer's sync timeout chains it), never "not served".
            for read in (lambda: cache.list(GroupKind("", "ConfigMap")),
                         lambda: cache.get(GroupKind("", "ConfigMap"), "x", namespace="default")):
                with pytest.raises(RestMapperError) as info:
                    read()
                assert not is_no_match(info.value) and "v1" in str(info.value) and "/api" in str(info.value)
        finally:
            cache.stop()


def test_empty_core_discovery_client_and_cli(mode: str) -> None:
    """The client-level rule: a 404 on ``/api`` is a server without core (client-go); a 200 without v1 is not."""
    cluster = busy_cluster(mode)
    with cluster.mock():
        cluster.inject("/api", **_answer({"kind": "APIVersions", "versions": []}))
        client = DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1)))
        for call in (client.fetch_core, client.fetch_root, client.server_groups_and_resources):
            with pytest.raises(MalformedDiscoveryError, match="v1"):
                call()
    cluster.inject("/api", **_answer({}))
    code, out, err = cli(["api-resources"], cluster)
    assert code == 1 and "pods" not in out and "/api" in err
    code, out, err = cli(["resolve", "pods"], cluster)
    assert code == 1 and "PodMetrics" not in out and '"pods"' in err and "v1" in err


@pytest.mark.parametrize("fault", [dict(status=404, body="404 page not found"), dict(status=503, body="x")])
def test_one_transient_core_failure_heals_at_the_next_lookup(mode: str, clock: Clock, fault: dict[str, Any]) -> None:
    """A single 404 on core was cached as "core serves nothing" for the TTL, and metrics.k8s.io answered pods."""
    cluster = busy_cluster(mode)
    with cluster.mock():
        cluster.inject(_core_path(mode), times=1, **fault)
        mapper = make_mapper(cluster, clock)
        for _ in range(2):
            try:
                mapping = mapper.resolve("pods")
            except GroupDiscoveryError as exc:
                assert_unread(exc, "v1", '"pods"')
            else:
                assert mapping.resource == GroupVersionResource("", "v1", "pods")
            try:
                gvk = mapper.kind_for(GroupVersionResource("", "", "nodes"))
            except GroupDiscoveryError as exc:
                assert_unread(exc, "v1")
            else:
                assert gvk.group == "" and gvk.kind == "Node"
        clock.advance(1.5)  # past the first retry backoff
        assert mapper.resolve("pods").resource == GroupVersionResource("", "v1", "pods")
        assert mapper.resolve("node").resource == GroupVersionResource("", "v1", "nodes")
        assert mapper.kind_for(GroupVersionResource("", "", "nodes")).kind == "Node"


def test_core_404_after_warm_cache_is_not_cached_as_empty_core(clock: Clock) -> None:
    cluster = busy_cluster("aggregated")
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=10)
        assert mapper.resolve("pods").resource.group == ""
        fault = cluster.inject("/api", status=404, body="404 page not found")
        clock.advance(11)
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.resolve("pods")
        assert_unread(info.value, "v1", "404")
        fault.remove()
        clock.advance(1.5)
        assert mapper.resolve("pods").resource == GroupVersionResource("", "v1", "pods")


def test_failed_group_listed_first_does_not_let_a_later_group_win(clock: Clock) -> None:
    """Two CRD groups serve ``widgets``; the first by priority is unreadable: no answer from the second."""
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.add_crd(crd("a.example.com", "Widget"))
    cluster.add_crd(crd("b.example.com", "Widget"))
    with cluster.mock():
        assert make_mapper(cluster, Clock()).resolve("widgets").resource.group == "a.example.com"
        cluster.inject("/apis/a.example.com/v1", status=503, body="unavailable")
        mapper = make_mapper(cluster, clock)
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.resolve("widgets")
        assert_unread(info.value, "a.example.com/v1", '"widgets"')
        with pytest.raises(GroupDiscoveryError):
            mapper.kind_for(GroupVersionResource("", "", "widgets"))
        # An explicit group, or a lower-priority failure, does not matter.
        assert mapper.resolve("widgets.b.example.com").resource.group == "b.example.com"
        with pytest.warns(PartialDiscoveryWarning, match="a.example.com/v1"):  # it could outrank apps
            assert mapper.resolve("deploy").resource.group == "apps"


def test_failed_preferred_version_does_not_let_another_version_win(clock: Clock) -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.add_crd(crd("example.com", "Widget", versions=("v2", "v1")))
    with cluster.mock():
        assert make_mapper(cluster, Clock()).rest_mapping(GroupKind("example.com", "Widget")).resource.version == "v2"
        cluster.inject("/apis/example.com/v2", status=503, body="unavailable")
        mapper = make_mapper(cluster, clock)
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.rest_mapping(GroupKind("example.com", "Widget"))
        assert_unread(info.value, "example.com/v2", '"Widget"')
        # Asking for v1 explicitly is answerable: v2 cannot change that answer.
        assert mapper.rest_mapping(GroupKind("example.com", "Widget"), "v1").resource.version == "v1"
        with pytest.raises(GroupDiscoveryError) as info:
            mapper.rest_mappings(GroupKind("example.com", "Widget"))
        assert [m.resource.version for m in info.value.partial] == ["v1"]


# --- Rule 3: the question is honoured exactly ------------------------------------------------------------------


@pytest.fixture
def embedded(mode: str) -> Iterator[FakeCluster]:
    cluster = FakeCluster.embedded(mode=mode)
    with cluster.mock():
        yield cluster


def test_a_version_in_a_group_version_kind_is_required(embedded: FakeCluster, clock: Clock) -> None:
    """Decision: every method taking a GroupKind honours a GroupVersionKind's version (never silently dropped)."""
    mapper = make_mapper(embedded, clock)
    hpa = mapper.rest_mapping(GroupVersionKind("autoscaling", "v1", "HorizontalPodAutoscaler"))
    assert hpa.resource == GroupVersionResource("autoscaling", "v1", "horizontalpodautoscalers")
    assert mapper.rest_mapping(GroupVersionKind("autoscaling", "v1", "HorizontalPodAutoscaler")) == hpa  # memoized
    assert mapper.cached_rest_mapping(GroupVersionKind("autoscaling", "v1", "HorizontalPodAutoscaler")) == hpa
    assert mapper.rest_mapping(GroupKind("autoscaling", "HorizontalPodAutoscaler")).resource.version == "v2"
    with pytest.raises(NoKindMatchError, match='in version "apps/v1beta1"') as info:
        mapper.rest_mapping(GroupVersionKind("apps", "v1beta1", "Deployment"))
    assert is_no_match(info.value)
    assert [m.resource.version for m in mapper.rest_mappings(GroupVersionKind("autoscaling", "v1",
                                                                              "HorizontalPodAutoscaler"))] == ["v1"]
    with pytest.raises(TypeError, match="not both"):
        mapper.rest_mapping(GroupVersionKind("apps", "v1", "Deployment"), "v1")  # type: ignore[arg-type]


@pytest.mark.parametrize(("kind", "served"), [("deployment", "Deployment"), ("Deployment", "Deployment")])
def test_the_kind_returned_is_the_kind_served(embedded: FakeCluster, clock: Clock, kind: str, served: str) -> None:
    mapper = make_mapper(embedded, clock)
    assert mapper.rest_mapping(GroupKind("apps", kind)).group_version_kind.kind == served
    assert [m.group_version_kind.kind for m in mapper.rest_mappings(GroupKind("apps", kind))] == [served]
    assert mapper.resolve(kind).group_version_kind.kind == served
    assert mapper.resolve(f"{kind}.apps").group_version_kind.kind == served


WRONG_TYPES = [
    ("rest_mapping", ("Deployment",), "GroupKind"),
    ("rest_mapping", (GroupKind("apps", "Deployment"), ["v1"]), "separate str"),
    ("rest_mappings", ("Deployment",), "GroupKind"),
    ("cached_rest_mapping", (("apps", "Deployment"),), "GroupKind"),
    ("kind_for", ("deployments",), "GroupVersionResource"),
    ("kinds_for", (GroupKind("apps", "Deployment"),), "GroupVersionResource"),
    ("resource_for", ("deployments",), "GroupVersionResource"),
    ("resources_for", (("apps", "v1", "deployments"),), "GroupVersionResource"),
    ("report_not_found", ("apps/v1",), "GroupVersion"),
    ("invalidate_group_version", ("apps/v1",), "GroupVersion"),
    ("invalidate_group", (GroupVersion("apps", "v1"),), "group name"),
    ("resolve", (GroupKind("apps", "Deployment"),), "str"),
    ("resolve_all", (["deploy"],), "str"),
    ("resource_singularizer", (GroupVersionResource("", "", "pods"),), "str"),
    ("expand_category", (None,), "str"),
    ("is_namespaced", (GroupKind("", "Pod"),), "GroupVersionKind"),
]


@pytest.mark.parametrize(("method", "args", "expected"), WRONG_TYPES, ids=[f"{m}-{e}" for m, _, e in WRONG_TYPES])
def test_wrong_argument_types_are_type_errors_naming_the_expected_type(
        embedded: FakeCluster, clock: Clock, method: str, args: tuple[Any, ...], expected: str) -> None:
    mapper = make_mapper(embedded, clock)
    with pytest.raises(TypeError, match=expected) as info:
        getattr(mapper, method)(*args)
    assert method in str(info.value)
    assert mapper.rest_mapping(GroupKind("apps", "Deployment")).resource.resource == "deployments"  # unharmed


class Name(str):
    """A str subclass (an enum value, a typed alias): accepted wherever a str is."""


BAD_FIELDS = [
    (GroupVersionResource, ("", "", None), "GroupVersionResource.resource", "NoneType"),
    (GroupVersionResource, ("", "", 5), "GroupVersionResource.resource", "int"),
    (GroupVersionResource, ("", "", b"pods"), "GroupVersionResource.resource", "bytes"),
    (GroupVersionResource, (None, "", "pods"), "GroupVersionResource.group", "NoneType"),
    (GroupVersionResource, ("", None, "pods"), "GroupVersionResource.version", "NoneType"),
    (GroupKind, ("", None), "GroupKind.kind", "NoneType"),
    (GroupKind, (None, "Pod"), "GroupKind.group", "NoneType"),
    (GroupVersionKind, ("apps", 1, "Deployment"), "GroupVersionKind.version", "int"),
    (GroupVersion, ("apps", None), "GroupVersion.version", "NoneType"),
    (GroupResource, (["apps"], "deployments"), "GroupResource.group", "list"),
]


@pytest.mark.parametrize(("cls", "args", "field", "got"), BAD_FIELDS, ids=[f"{f}-{g}" for _, _, f, g in BAD_FIELDS])
def test_model_fields_of_the_wrong_type_are_type_errors(cls: Any, args: tuple[Any, ...], field: str,
                                                        got: str) -> None:
    """A None group was read as "any" and a None kind gave a no-match whose str() raised: both are type errors."""
    with pytest.raises(TypeError, match=rf"^{re.escape(field)} must be a str, not {got}"):
        cls(*args)
    name = field.split(".")[1]
    bad = dict(zip([f.name for f in dataclasses.fields(cls)], args, strict=True))[name]
    with pytest.raises(TypeError, match=rf"^{re.escape(field)} must be a str"):
        dataclasses.replace(cls(*(Name("x") for _ in args)), **{name: bad})


def test_model_fields_accept_str_subclasses_and_survive_pickle_and_replace(embedded: FakeCluster,
                                                                           clock: Clock) -> None:
    gk = GroupKind(Name("apps"), Name("Deployment"))
    assert gk == GroupKind("apps", "Deployment") and hash(gk) == hash(GroupKind("apps", "Deployment"))
    mapping = make_mapper(embedded, clock).rest_mapping(gk)
    assert mapping.resource == GroupVersionResource("apps", "v1", "deployments")
    for value in (gk, mapping.resource, mapping.group_version_kind, mapping.resource.group_version,
                  mapping.resource.group_resource, mapping):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
    assert dataclasses.replace(mapping.resource, version="v2") == GroupVersionResource("apps", "v2", "deployments")
    with pytest.raises(TypeError, match=r"RESTMapping\.scope must be a Scope"):
        dataclasses.replace(mapping, scope="Namespaced")
    with pytest.raises(TypeError, match=r"RESTMapping\.resource must be a GroupVersionResource"):
        RESTMapping(GroupResource("apps", "deployments"),  # type: ignore[arg-type]
                    mapping.group_version_kind, Scope.NAMESPACED)


def test_mapper_construction_with_the_wrong_thing_is_a_type_error() -> None:
    cluster = FakeCluster.embedded()
    with pytest.raises(TypeError, match="DiscoveryClient"):
        LazyRESTMapper("http://127.0.0.1:8080")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"DiscoveryClient\(transport\)"):
        LazyRESTMapper(RequestsTransport(cluster.base_url))  # type: ignore[arg-type]


def test_misspelt_option_names_the_method_called(tmp_path: Any) -> None:
    with pytest.raises(TypeError, match=r"LazyRESTMapper\.from_kubeconfig\(\).*'tll'.*did you mean 'ttl'"):
        LazyRESTMapper.from_kubeconfig(str(tmp_path / "missing"), tll=3)


def test_ttl_zero_revalidates_once_per_lookup(mode: str, clock: Clock) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=0)
        mapper.resolve("certs")
        for _ in range(2):
            cluster.clear_requests()
            assert mapper.resolve("certs").resource.resource == "certificates"
            paths = [r.path for r in cluster.requests]
            assert len(paths) == len(set(paths)), paths  # every document at most once per lookup
            if mode == "aggregated":
                assert sorted(paths) == ["/api", "/apis"]
        cluster.clear_requests()
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
        assert cluster.request_count() == (1 if mode == "aggregated" else 2)
