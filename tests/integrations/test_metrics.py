"""Optional Prometheus metrics: client-go's request metric names, our counters, nothing registered by default."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY, CollectorRegistry

from restmapper import GroupKind, LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.errors import TransportError
from restmapper.metrics import RequestMetrics, StatsCollector, path_template
from restmapper.store import GenerationCache
from restmapper.testing import FakeCluster, InProcessTransport

HOST = "kube.restmapper.test"


@pytest.mark.parametrize(("path", "template"), [
    ("/api", "/api"),
    ("/apis", "/apis"),
    ("/version", "/version"),
    ("/api/v1", "/api/{version}"),
    ("/apis/apps/v1", "/apis/{group}/{version}"),
    ("/apis/apps", "/apis/{group}"),
    ("/apis/apps/v1/deployments", "/apis/{group}/{version}/{resource}"),
    ("/apis/apps/v1/namespaces/default/deployments/web/scale",
     "/apis/{group}/{version}/namespaces/{namespace}/{resource}"),
    ("/api/v1/pods?watch=1", "/api/{version}/{resource}"),
    ("/api/v1/namespaces/kube-system/configmaps/x", "/api/{version}/namespaces/{namespace}/{resource}"),
    ("/metrics", "other"),
])
def test_path_template_bounds_label_values(path: str, template: str) -> None:
    assert path_template(path) == template


def test_nothing_is_registered_unless_asked() -> None:
    before = set(REGISTRY._names_to_collectors)  # type: ignore[attr-defined]
    metrics = RequestMetrics()
    mapper = LazyRESTMapper(DiscoveryClient(metrics.instrument(InProcessTransport(FakeCluster.embedded()))))
    mapper.resolve("deploy")
    StatsCollector({"discovery": mapper})
    assert set(REGISTRY._names_to_collectors) == before  # type: ignore[attr-defined]
    assert REGISTRY.get_sample_value("rest_client_requests_total",
                                     {"code": "200", "method": "GET", "host": HOST, "path": "/apis"}) is None


def test_requests_are_counted_and_timed_under_client_go_names() -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry=registry)
    cluster = FakeCluster.embedded(mode="legacy")
    mapper = LazyRESTMapper(DiscoveryClient(metrics.instrument(InProcessTransport(cluster))))
    mapper.rest_mapping(GroupKind("apps", "Deployment"))
    sample = registry.get_sample_value
    assert sample("rest_client_requests_total",
                  {"code": "200", "method": "GET", "host": HOST, "path": "/apis"}) == 1
    assert sample("rest_client_requests_total",
                  {"code": "200", "method": "GET", "host": HOST, "path": "/apis/{group}/{version}"}) >= 1
    assert sample("rest_client_request_duration_seconds_count",
                  {"verb": "GET", "host": HOST, "path": "/apis"}) == 1
    total = sum(s.value for m in registry.collect() if m.name == "rest_client_requests"
                for s in m.samples if s.name == "rest_client_requests_total")
    assert total == cluster.request_count()


def test_a_request_without_answer_is_counted_as_error() -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry=registry)
    cluster = FakeCluster.embedded()
    cluster.inject("/apis", reset=True)
    transport = metrics.instrument(InProcessTransport(cluster))
    with pytest.raises(TransportError):
        transport.get("/apis")
    assert registry.get_sample_value("rest_client_requests_total",
                                     {"code": "<error>", "method": "GET", "host": HOST, "path": "/apis"}) == 1
    with pytest.raises(ValueError):
        metrics.register(registry)  # already there: prometheus_client refuses duplicates


def test_stats_collector_exposes_cache_and_generation_cache_counters() -> None:
    registry = CollectorRegistry()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())))
    built = GenerationCache(lambda obj: obj["metadata"]["name"])
    registry.register(StatsCollector({"discovery": mapper, "generation_cache": built}))
    mapper.resolve("deploy")
    mapper.resolve("deploy")
    built.get({"metadata": {"uid": "u1", "name": "a", "generation": 1}})
    sample = registry.get_sample_value
    assert sample("restmapper_discovery_fetches_total", {"key": "/apis"}) == 1
    assert sample("restmapper_discovery_hits_total") == mapper.stats.hits
    assert sample("restmapper_generation_cache_builds_total") == 1
    with pytest.raises(TypeError):
        StatsCollector({"bad": object()})
    with pytest.raises(TypeError):
        StatsCollector({"Not-A-Name": mapper})


def test_stats_collector_exposes_object_cache_informers_by_kind() -> None:
    from restmapper.store import ObjectCache

    cluster = FakeCluster.embedded()
    cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}})
    registry = CollectorRegistry()
    with cluster.serve() as served:
        cache = ObjectCache(LazyRESTMapper.from_kubeconfig(str(served.kubeconfig_path)))
        try:
            registry.register(StatsCollector({"object_cache": cache}))
            cache.get("cm", "a", "default")
            sample = registry.get_sample_value
            assert sample("restmapper_object_cache_lists_total", {"kind": "ConfigMap"}) == 1
            assert sample("restmapper_object_cache_objects", {"kind": "ConfigMap"}) == 1  # a gauge
        finally:
            cache.stop()


def test_stats_collector_exposes_each_informers_bytes_and_the_age_of_its_last_event() -> None:
    from restmapper.store import ObjectCache

    cluster = FakeCluster.embedded()
    for i in range(3):
        cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": f"c{i}", "namespace": "default"}, "data": {"k": "v" * 100}})
    registry = CollectorRegistry()
    with cluster.serve() as served:
        cache = ObjectCache(LazyRESTMapper.from_kubeconfig(str(served.kubeconfig_path)))
        try:
            registry.register(StatsCollector({"informer": cache}))
            cache.get("cm", "c0", "default")
            sample = registry.get_sample_value
            held = sample("restmapper_informer_bytes", {"kind": "ConfigMap"})
            assert held is not None and 3 * 100 < held < 3 * 4096
            age = sample("restmapper_informer_last_event_age_seconds", {"kind": "ConfigMap"})
            assert age is not None and 0 <= age < 60
            stats = cache.informer(GroupKind("", "ConfigMap")).stats
            assert stats.bytes > 0 and stats.last_event_age_seconds is not None
        finally:
            cache.stop()
