"""LazyRESTMapper and DiscoveryCache against the testing kit: laziness, TTL, eviction, revalidation, isolation.

Every test talks HTTP to a FakeCluster through ``responses``; time is an injected clock; nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from restmapper import (
    APIResource,
    DiscoveryError,
    GroupDiscoveryError,
    GroupKind,
    GroupVersion,
    GroupVersionResource,
    LazyRESTMapper,
    NoKindMatchError,
    NoResourceMatchError,
    PartialDiscoveryWarning,
    Scope,
    is_no_match,
)
from restmapper.cache import DiscoveryCache
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError
from restmapper.mapper import ShortNameConflictWarning
from restmapper.testing import FakeCluster, InProcessTransport, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

MODES = ["aggregated", "legacy"]


class Clock:
    """A manual monotonic clock (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def crd(group: str, kind: str, *, versions: tuple[str, ...] = ("v1",), scope: str = "Namespaced",
        short: tuple[str, ...] = (), plural: str | None = None,
        served: dict[str, bool] | None = None) -> dict[str, Any]:
    plural = plural or kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List",
                      "shortNames": list(short)},
            "versions": [{"name": v, "served": (served or {}).get(v, True), "storage": i == 0,
                          "schema": {"openAPIV3Schema": {"type": "object"}}} for i, v in enumerate(versions)],
        },
    }


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_mapper(cluster: FakeCluster, clock: Clock, **options: Any) -> LazyRESTMapper:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    return LazyRESTMapper(DiscoveryClient(transport), clock=clock, **options)


@pytest.fixture(params=MODES)
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    c = FakeCluster.embedded(mode=request.param)
    with c.mock():
        yield c


def paths(cluster: FakeCluster) -> list[str]:
    return [r.path for r in cluster.requests]


# --- laziness and request counts --------------------------------------------------------------------------


def test_core_lookups_never_touch_apis(cluster: FakeCluster, clock: Clock) -> None:
    """DESIGN 8.1 (second half): a core v1 lookup does not read /apis at all."""
    mapper = make_mapper(cluster, clock)
    assert mapper.rest_mapping(GroupKind("", "Pod")).resource == GroupVersionResource("", "v1", "pods")
    assert mapper.resolve("pods").group_version_kind.kind == "Pod"
    assert mapper.kind_for(GroupVersionResource("", "v1", "services")).kind == "Service"
    assert mapper.resolve("Service").resource.resource == "services"
    assert not any(p.startswith("/apis") for p in paths(cluster))


def test_cold_grouped_lookup_request_budget(cluster: FakeCluster, clock: Clock) -> None:
    """Cold lookup: at most 2 requests aggregated, at most 3 legacy."""
    mapper = make_mapper(cluster, clock)
    mapping = mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate"))
    assert mapping.resource == GroupVersionResource("cert-manager.io", "v1", "certificates")
    budget = 2 if cluster.mode == "aggregated" else 3
    assert cluster.request_count() <= budget
    if cluster.mode == "legacy":
        # Lazy: only the group the lookup needs was read.
        assert [p for p in paths(cluster) if p.startswith("/apis/")] == ["/apis/cert-manager.io/v1"]


def test_warm_lookups_cost_no_request(cluster: FakeCluster, clock: Clock) -> None:
    """DESIGN 8.3 (last part): once cached, lookups are free until the TTL."""
    mapper = make_mapper(cluster, clock)
    mapper.resolve("deploy")
    before = cluster.request_count()
    for _ in range(3):
        assert mapper.resolve("deploy").resource.resource == "deployments"
        assert mapper.rest_mapping(GroupKind("apps", "Deployment"), "v1").namespaced
    clock.advance(299)
    mapper.resolve("deploy")
    assert cluster.request_count() == before


def test_two_hundred_crd_groups_cold_lookup_costs_two_requests(clock: Clock) -> None:
    """DESIGN 8.5: with 200 CRD groups a cold kind lookup costs at most 2 requests against aggregated discovery."""
    cluster = FakeCluster(crds=[crd(f"g{i}.example.com", f"Widget{i}") for i in range(200)])
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        assert mapper.resolve("widget7s").resource.group == "g7.example.com"
        assert cluster.request_count() <= 2


# --- TTL ---------------------------------------------------------------------------------------------------


def test_ttl_expiry_revalidates_with_etags(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=60)
        # A resource without a group may match any group: it reads the aggregated documents (a lookup of one
        # named group reads the group listing, which has no ETag: see test_cold_scoped).
        mapper.resource_for(GroupVersionResource("", "", "deployments"))
        clock.advance(61)
        cluster.clear_requests()
        mapper.resource_for(GroupVersionResource("", "", "deployments"))
        assert [r.path for r in cluster.requests] == ["/api", "/apis"]
        assert all(r.headers.get("If-None-Match") for r in cluster.requests)
        assert mapper.stats.not_modified >= 1


def test_ttl_zero_revalidates_every_lookup_and_none_never(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        eager = make_mapper(cluster, clock, ttl=0)
        eager.rest_mapping(GroupKind("apps", "Deployment"))
        n = cluster.request_count()
        eager.rest_mapping(GroupKind("apps", "Deployment"))
        assert cluster.request_count() > n
        never = make_mapper(cluster, clock, ttl=None)
        never.rest_mapping(GroupKind("apps", "Deployment"))
        n = cluster.request_count()
        clock.advance(10**9)
        never.rest_mapping(GroupKind("apps", "Deployment"))
        assert cluster.request_count() == n


def test_negative_values_are_rejected(clock: Clock) -> None:
    with pytest.raises(ValueError):
        make_mapper(FakeCluster(), clock, ttl=-1)


# --- healing ---------------------------------------------------------------------------------------------


def test_cluster_api_upgrade_race_heals_without_error(clock: Clock) -> None:
    """DESIGN 1 seed 2: v1alpha4 is still listed by /apis but 404s on its own path; v1beta1 keeps working."""
    cluster = FakeCluster(mode="legacy", crds=[crd("cluster.x-k8s.io", "Cluster", versions=("v1beta1", "v1alpha4"))])
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=60)
        assert mapper.rest_mapping(GroupKind("cluster.x-k8s.io", "Cluster"), "v1alpha4").resource.version == "v1alpha4"
        cluster.set_listed_but_gone("cluster.x-k8s.io/v1alpha4")
        clock.advance(61)
        mapping = mapper.rest_mapping(GroupKind("cluster.x-k8s.io", "Cluster"))
        assert mapping.resource == GroupVersionResource("cluster.x-k8s.io", "v1beta1", "clusters")
        with pytest.raises(NoKindMatchError):
            mapper.rest_mapping(GroupKind("cluster.x-k8s.io", "Cluster"), "v1alpha4")
        # The preferred version answered the first lookup alone; asking for the gone version evicts the group.
        assert mapper.stats.evictions >= 1


def test_group_whose_version_404s_does_not_break_other_groups(clock: Clock) -> None:
    """DESIGN 8.1: a group still listed whose version answers 404 must not break lookups in other groups."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.set_listed_but_gone("cert-manager.io/v1")
        mapper = make_mapper(cluster, clock)
        assert mapper.resolve("deploy").resource.group == "apps"
        with pytest.raises(NoResourceMatchError):
            mapper.resolve("certificates.cert-manager.io")
        assert mapper.resolve("challenges").resource.group == "acme.cert-manager.io"


@pytest.mark.parametrize("ttl", [None, 300.0])
def test_a_relisting_keeps_a_group_whose_listed_version_answered_404(clock: Clock, ttl: float | None) -> None:
    """Model-based test finding (tests/certainty/test_model_never_wrong.py): g1's preferred v2 is listed but answers 404
    (the upgrade race), so its entry serves v1 only. Another group's 404 (g0's only version) re-reads ``/apis``
    during a lookup; that listing still names g1/v2, which the relisting took for a new version and dropped g1
    (to reload it lazily) after the lookup had loaded it: the answer was computed without g1, a confident
    no-match for ``gadgets`` that g1/v1 serves. A version the entry already found answering 404 is not new."""
    cluster = FakeCluster(mode="legacy", crds=[crd("g0.example.com", "Thing"),
                                               crd("g1.example.com", "Gadget", versions=("v2", "v1")),
                                               crd("g1.example.com", "Sprocket")])
    cluster.set_listed_but_gone("g0.example.com/v1")
    cluster.set_listed_but_gone("g1.example.com/v2")
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=ttl)
        gadgets = GroupVersionResource("", "", "gadgets")
        assert mapper.resource_for(gadgets).version == "v1"
        with pytest.raises(NoKindMatchError):
            mapper.rest_mapping(GroupKind("g1.example.com", "Sprocket"), "v2")  # only v2 is asked: gone
        assert mapper.rest_mapping(GroupKind("g1.example.com", "Gadget")).resource.version == "v1"
        for _ in range(3):
            assert mapper.resource_for(gadgets) == GroupVersionResource("g1.example.com", "v1", "gadgets")
            assert mapper.kind_for(GroupVersionResource("", "", "sprockets")).group == "g1.example.com"


def test_new_kind_in_cached_group_found_on_next_miss(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock)
    mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate"))
    cluster.add_crd(crd("cert-manager.io", "Renewal"))
    mapping = mapper.rest_mapping(GroupKind("cert-manager.io", "Renewal"))
    assert mapping.resource == GroupVersionResource("cert-manager.io", "v1", "renewals")


def test_new_version_in_cached_group_found_on_next_miss(cluster: FakeCluster, clock: Clock) -> None:
    cluster.add_crd(crd("demo.example.com", "Gizmo", versions=("v1",)))
    mapper = make_mapper(cluster, clock)
    assert mapper.rest_mapping(GroupKind("demo.example.com", "Gizmo")).resource.version == "v1"
    cluster.add_crd(crd("demo.example.com", "Gizmo", versions=("v1", "v2")))
    assert mapper.rest_mapping(GroupKind("demo.example.com", "Gizmo"), "v2").resource.version == "v2"
    assert mapper.rest_mapping(GroupKind("demo.example.com", "Gizmo")).resource.version == "v2"


def test_crd_appearing_after_first_lookup(cluster: FakeCluster, clock: Clock) -> None:
    """DESIGN 8.3: the first lookup misses, the next one after the interval finds it, the one after is free."""
    mapper = make_mapper(cluster, clock)
    with pytest.raises(NoResourceMatchError):
        mapper.resolve("sprockets")
    cluster.add_crd(crd("late.example.com", "Sprocket"))
    with pytest.raises(NoResourceMatchError):
        mapper.resolve("sprockets")  # still inside the negative-cache interval
    clock.advance(1.0)
    assert mapper.resolve("sprockets").resource.group == "late.example.com"
    n = cluster.request_count()
    assert mapper.resolve("sprockets").resource.group == "late.example.com"
    assert cluster.request_count() == n


def test_deleted_crd_stops_resolving_after_ttl(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock, ttl=30)
    assert mapper.resolve("certificates").resource.group == "cert-manager.io"
    cluster.remove_crd("certificates.cert-manager.io")
    assert mapper.resolve("certificates").resource.group == "cert-manager.io"  # cached, within the TTL
    clock.advance(31)
    with pytest.raises(NoResourceMatchError):
        mapper.resolve("certificates")


def test_deleted_crd_stops_resolving_on_first_404(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock)
    gv = mapper.resolve("certificates").resource.group_version
    cluster.remove_crd("certificates.cert-manager.io")
    mapper.report_not_found(gv)
    with pytest.raises(NoResourceMatchError):
        mapper.resolve("certificates")


def test_crd_recreated_with_other_scope_is_picked_up_after_404(cluster: FakeCluster, clock: Clock) -> None:
    """DESIGN 8.2: the old mapping 404s; after reporting it the mapping is re-resolved with the new scope."""
    cluster.add_crd(crd("scope.example.com", "Thing"))
    mapper = make_mapper(cluster, clock)
    assert mapper.resolve("things").scope is Scope.NAMESPACED
    cluster.remove_crd("things.scope.example.com")
    cluster.add_crd(crd("scope.example.com", "Thing", scope="Cluster"))
    assert mapper.resolve("things").scope is Scope.NAMESPACED  # cached until told otherwise
    mapper.report_not_found(GroupVersion("scope.example.com", "v1"))
    assert mapper.resolve("things").scope is Scope.CLUSTER


def test_miss_storm_causes_one_revalidation_per_interval(cluster: FakeCluster, clock: Clock) -> None:
    """32 threads missing at once: one revalidation per interval, everyone gets a clean no-match."""
    mapper = make_mapper(cluster, clock)
    mapper.resolve("deploy")
    before = cluster.request_count()
    barrier = threading.Barrier(32)
    errors: list[BaseException] = []

    def miss() -> None:
        barrier.wait()
        for _ in range(20):
            try:
                mapper.rest_mapping(GroupKind("nope.example.com", "Nope"))
            except NoKindMatchError:
                pass
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

    threads = [threading.Thread(target=miss) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # One revalidation: a conditional (aggregated) or plain (legacy) GET /apis; the group is not listed, so
    # there is no group version to re-read. Every other miss was answered from the negative cache.
    assert paths(cluster)[before:] == ["/apis"]
    assert mapper.stats.misses >= 1


# --- failure isolation and stale-on-error ------------------------------------------------------------------


METRICS = [APIResource("pods", "", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "", False, "NodeMetrics", ("get", "list"))]


def test_unavailable_aggregated_api_is_isolated_and_recovers(cluster: FakeCluster, clock: Clock) -> None:
    """DESIGN 8.4: metrics.k8s.io answers 503 at startup; everything else works; it recovers with the server."""
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    cluster.set_stale("metrics.k8s.io/v1beta1")
    mapper = make_mapper(cluster, clock)
    with pytest.warns(PartialDiscoveryWarning, match="metrics.k8s.io/v1beta1"):  # it could outrank apps
        assert mapper.resolve("deploy").resource.group == "apps"
    with pytest.raises(GroupDiscoveryError) as info:
        mapper.rest_mapping(GroupKind("metrics.k8s.io", "PodMetrics"))
    assert GroupVersion("metrics.k8s.io", "v1beta1") in info.value.failed
    assert "metrics.k8s.io/v1beta1" in str(info.value)
    cluster.set_stale("metrics.k8s.io/v1beta1", False)
    clock.advance(2.0)  # past the first retry backoff
    mapping = mapper.rest_mapping(GroupKind("metrics.k8s.io", "PodMetrics"))
    assert mapping.resource == GroupVersionResource("metrics.k8s.io", "v1beta1", "pods")


def test_broken_group_is_never_cached_as_empty(clock: Clock) -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        fault = cluster.inject("/apis/cert-manager.io/v1", status=200, body="<html>proxy</html>",
                               content_type="text/html")
        mapper = make_mapper(cluster, clock)
        with pytest.raises(GroupDiscoveryError):
            mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate"))
        fault.remove()
        clock.advance(1.5)
        assert mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate")).resource.resource == "certificates"


def test_stale_on_error_serves_cached_answers_for_transient_failures(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock, ttl=10, max_stale=100)
    mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate"))
    cluster.inject("/apis*", status=500, body="boom")
    clock.advance(11)
    assert mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate")).resource.resource == "certificates"
    assert mapper.stats.stale_served >= 1
    clock.advance(200)
    with pytest.raises(DiscoveryError):
        mapper.rest_mapping(GroupKind("cert-manager.io", "Certificate"))


def test_forbidden_is_never_masked(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=10)
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
        cluster.inject("/apis", status=403, body='{"kind":"Status","message":"forbidden"}',
                       content_type="application/json")
        clock.advance(11)
        with pytest.raises(DiscoveryError) as info:
            mapper.rest_mapping(GroupKind("apps", "Deployment"))
        assert "403" in str(info.value)


def test_malformed_root_document_is_a_typed_error_and_caches_nothing(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        fault = cluster.inject("/apis", status=200, body='{"kind": "APIGroupDiscoveryList", "items": [',
                               content_type="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
        mapper = make_mapper(cluster, clock)
        with pytest.raises(DiscoveryError):
            mapper.rest_mapping(GroupKind("apps", "Deployment"))
        fault.remove()
        clock.advance(2)
        assert mapper.rest_mapping(GroupKind("apps", "Deployment")).resource.resource == "deployments"


# --- mapper semantics over real discovery ----------------------------------------------------------------


def test_kind_in_several_versions_resolves_to_preferred(cluster: FakeCluster, clock: Clock) -> None:
    """DESIGN 8.7: HorizontalPodAutoscaler in autoscaling v2 (preferred) and v1 resolves to v2."""
    mapper = make_mapper(cluster, clock)
    assert mapper.rest_mapping(GroupKind("autoscaling", "HorizontalPodAutoscaler")).resource.version == "v2"
    assert mapper.kind_for(GroupVersionResource("", "", "horizontalpodautoscalers")).version == "v2"
    kinds = mapper.kinds_for(GroupVersionResource("autoscaling", "", "horizontalpodautoscalers"))
    assert [g.version for g in kinds] == ["v2", "v1"]


@pytest.mark.parametrize("kind", ["service", "Service"])
def test_kind_case(cluster: FakeCluster, clock: Clock, kind: str) -> None:
    """DESIGN 8.8: kind="service" and kind="Service" both resolve."""
    mapper = make_mapper(cluster, clock)
    assert mapper.rest_mapping(GroupKind("", kind)).resource.resource == "services"


def test_short_name_conflict_warns(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("shadow.example.com", "Deputy", short=("deploy",)))
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        with pytest.warns(ShortNameConflictWarning, match="deputys.shadow.example.com"):
            assert mapper.resolve("deploy").resource.group == "apps"


def test_resolve_all_expands_categories_and_lists(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock)
    names = [m.resource.resource for m in mapper.resolve_all("all,certs")]
    assert names[:3] == ["pods", "replicationcontrollers", "services"]
    assert names[-1] == "certificates"
    assert [str(gr) for gr in mapper.expand_category("all")][-1] == "jobs.batch"


def test_is_no_match_sees_through_group_failure_chain(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock)
    with pytest.raises(NoResourceMatchError) as info:
        mapper.resolve("doesnotexist")
    assert is_no_match(info.value)


# --- concurrency ---------------------------------------------------------------------------------------------


def test_concurrent_lookups_while_the_cluster_changes(clock: Clock) -> None:
    """32 threads look up kinds while CRDs come and go: only documented mapping errors, no deadlock."""
    cluster = FakeCluster.embedded()
    for i in range(8):
        cluster.add_crd(crd(f"c{i}.example.com", f"Churn{i}"))
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=0.5)
        stop = threading.Event()
        unexpected: list[BaseException] = []
        args = ["deploy", "pods", "certs", "hpa", "churn0s", "churn3s", "churn7s", "Deployment.apps", "nope"]

        def lookups(seed: int) -> None:
            i = seed
            while not stop.is_set():
                i += 1
                try:
                    mapper.resolve(args[i % len(args)])
                except (NoResourceMatchError, NoKindMatchError, GroupDiscoveryError):
                    pass
                except BaseException as exc:  # pragma: no cover - reported below
                    unexpected.append(exc)
                    return
                if i - seed > 200:
                    return

        threads = [threading.Thread(target=lookups, args=(n,)) for n in range(32)]
        for t in threads:
            t.start()
        for round_ in range(20):
            n = round_ % 8
            cluster.remove_crd(f"churn{n}s.c{n}.example.com")
            clock.advance(0.6)
            cluster.add_crd(crd(f"c{n}.example.com", f"Churn{n}", scope="Cluster" if round_ % 2 else "Namespaced"))
            mapper.invalidate_group(f"c{n}.example.com")
        for t in threads:
            t.join(timeout=120)
        stop.set()
        assert not any(t.is_alive() for t in threads)
        assert not unexpected, unexpected[:3]


def test_cache_can_be_shared_and_counts(clock: Clock) -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
        cache = DiscoveryCache(DiscoveryClient(transport), clock=clock)
        a, b = LazyRESTMapper(cache), LazyRESTMapper(cache)
        a.resolve("deploy")
        n = cluster.request_count()
        b.resolve("deploy")
        assert cluster.request_count() == n
        stats = cache.stats
        assert stats.fetches["/apis"] == 1 and stats.hits >= 1
        cache.invalidate_all()
        assert cache.stats.evictions > 0


def test_cached_group_lookup_never_waits_for_another_groups_fetch(clock: Clock) -> None:
    """No lock is held across I/O: while batch/v1 is being fetched (blocked), a cached apps lookup answers."""
    entered, release = threading.Event(), threading.Event()

    def blocking_sleep(_seconds: float) -> None:
        entered.set()
        assert release.wait(30)

    cluster = FakeCluster.embedded(mode="legacy", sleep=blocking_sleep)
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
        cluster.inject("/apis/batch/v1", latency=1.0)
        slow = threading.Thread(target=mapper.rest_mapping, args=(GroupKind("batch", "Job"),))
        slow.start()
        assert entered.wait(30)
        try:
            assert mapper.rest_mapping(GroupKind("apps", "Deployment"), "v1").resource.resource == "deployments"
            assert mapper.resolve("pods").resource.resource == "pods"
        finally:
            release.set()
            slow.join(30)
        assert not slow.is_alive()


def test_concurrent_cold_lookups_share_one_fetch(clock: Clock) -> None:
    """Single-flight: 16 threads cold-looking-up one group cause one /apis and one group-version request."""
    entered, release = threading.Event(), threading.Event()

    def blocking_sleep(_seconds: float) -> None:
        entered.set()
        assert release.wait(30)

    cluster = FakeCluster.embedded(mode="legacy", sleep=blocking_sleep)
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        cluster.inject("/apis", latency=1.0, times=1)
        results: list[str] = []
        threads = [threading.Thread(target=lambda: results.append(
            mapper.rest_mapping(GroupKind("batch", "Job")).resource.resource)) for _ in range(16)]
        for t in threads:
            t.start()
        assert entered.wait(30)
        release.set()
        for t in threads:
            t.join(30)
        assert results == ["jobs"] * 16
        assert cluster.request_count("/apis") == 1
        assert cluster.request_count("/apis/batch/v1") == 1


def test_stale_serving_is_logged_once_per_group(clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        mapper = make_mapper(cluster, clock, ttl=10)
        mapper.rest_mapping(GroupKind("batch", "Job"))
        cluster.inject("/apis/batch/v1", status=503, body="unavailable")
        for _ in range(5):
            clock.advance(11)
            assert mapper.rest_mapping(GroupKind("batch", "Job")).resource.resource == "jobs"
        warnings_logged = [r for r in caplog.records if "transient failure" in r.getMessage() and "batch" in
                           r.getMessage()]
        assert len(warnings_logged) == 1


class _GateTransport:
    """A transport that pauses once after receiving the answer for ``path`` (composition, not patching)."""

    def __init__(self, inner: RequestsTransport, path: str) -> None:
        self.inner, self.path = inner, path
        self.base_url, self.identity = inner.base_url, inner.identity
        self.armed = False
        self.entered, self.release = threading.Event(), threading.Event()

    def get(self, path: str, headers: Any = None, **kw: Any) -> Any:
        resp = self.inner.get(path, headers, **kw)
        if path == self.path and self.armed:
            self.armed = False
            self.entered.set()
            assert self.release.wait(30)
        return resp

    def stream(self, path: str, headers: Any = None, **kw: Any) -> Any:
        return self.inner.stream(path, headers, **kw)

    def close(self) -> None:
        self.inner.close()


def test_fetch_racing_an_invalidation_does_not_look_fresh(clock: Clock) -> None:
    """A group fetched before an invalidation (e.g. from a watcher) and installed after it is revalidated next time."""
    cluster = FakeCluster(mode="legacy", crds=[crd("race.example.com", "Gizmo")])
    with cluster.mock():
        gate = _GateTransport(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1)),
                              "/apis/race.example.com/v1")
        mapper = LazyRESTMapper(DiscoveryClient(gate), clock=clock, ttl=60, miss_refresh_interval=10**6)
        mapper.rest_mapping(GroupKind("race.example.com", "Gizmo"))
        with pytest.raises(NoResourceMatchError):
            mapper.resolve("nothing-here")  # uses up the one miss revalidation of the interval
        clock.advance(61)
        gate.armed = True
        slow = threading.Thread(target=mapper.rest_mapping, args=(GroupKind("race.example.com", "Gizmo"),))
        slow.start()
        assert gate.entered.wait(30)
        cluster.add_crd(crd("race.example.com", "Gadget"))
        mapper.invalidate_group("race.example.com")  # what the watcher does on the CRD event
        gate.release.set()
        slow.join(30)
        assert mapper.rest_mapping(GroupKind("race.example.com", "Gadget")).resource.resource == "gadgets"


def test_is_namespaced_rejects_a_group_kind_clearly(cluster: FakeCluster, clock: Clock) -> None:
    mapper = make_mapper(cluster, clock)
    assert mapper.is_namespaced(GroupKind("apps", "Deployment").with_version("v1"))
    assert not mapper.is_namespaced(GroupKind("", "Namespace").with_version("v1"))
    with pytest.raises(TypeError, match="GroupVersionKind"):
        mapper.is_namespaced(GroupKind("", "Namespace"))  # type: ignore[arg-type]


@pytest.mark.parametrize("evict", ["report_not_found", "invalidate_group", "invalidate_all"])
@pytest.mark.parametrize("fault", [dict(status=503, body="unavailable"), dict(reset=True)])
def test_evicted_group_during_a_transient_outage_is_not_a_no_match(
        clock: Clock, evict: str, fault: dict[str, Any]) -> None:
    """Stale-on-error must cover evicted groups: "no match" would read as "CRD not installed".

    An invalidated group is answered from its earlier content, flagged stale; a group the server answered 404 for
    is never answered from its pre-404 content (5.2): a discovery error until it can be read.
    """
    cluster = FakeCluster.embedded()
    with cluster.mock():
        mapper = make_mapper(cluster, clock)
        gk = GroupKind("cert-manager.io", "Certificate")
        assert mapper.rest_mapping(gk).resource.resource == "certificates"
        assert mapper.rest_mapping(GroupKind("", "Pod")).resource.resource == "pods"
        if evict == "invalidate_all":
            mapper.invalidate_all()
        else:
            getattr(mapper, evict)(GroupVersion("cert-manager.io", "v1") if evict == "report_not_found"
                                   else "cert-manager.io")
        cluster.inject("/api*", **fault)
        if evict == "report_not_found":
            with pytest.raises(GroupDiscoveryError):
                mapper.rest_mapping(gk)
        else:
            assert mapper.rest_mapping(gk).resource.resource == "certificates"
            entry = mapper.cache.entry("cert-manager.io")
            assert entry is not None and entry.stale  # served only as stale
        assert mapper.rest_mapping(GroupKind("", "Pod")).resource.resource == "pods"
        assert mapper.stats.stale_served >= 1


def _lazy_mapper(cluster: FakeCluster | None = None, **options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster or FakeCluster.embedded())), **options)


def test_invalidate_group_of_the_crd_group_makes_the_new_version_seen() -> None:
    cluster = FakeCluster.embedded()
    mapper = _lazy_mapper(cluster, ttl=None)
    cluster.add_crd(crd_manifest("example.com", "Gadget"))
    assert mapper.rest_mapping(GroupKind("example.com", "Gadget")).resource.version == "v1"
    cluster.update_crd(crd_manifest("example.com", "Gadget", versions=("v2", "v1")))
    with pytest.raises(InvalidArgumentError, match="invalidate_group_version"):
        mapper.invalidate_group("example.com/v1")
    mapper.invalidate_group("")  # core: the empty group is a group
    mapper.invalidate_group("example.com")
    assert mapper.rest_mapping(GroupKind("example.com", "Gadget")).resource.version == "v2"
