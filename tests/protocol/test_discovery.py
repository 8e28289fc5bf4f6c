"""DiscoveryClient against the testing kit: aggregated first, legacy fallback, ETags, partial failures, faults."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from restmapper import (
    APIResource,
    APIStatusError,
    DiscoveryError,
    GroupVersion,
    MalformedDiscoveryError,
    ResponseTooLargeError,
    TransportError,
)
from restmapper.discovery import DiscoveryClient
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.wire import ACCEPT_AGGREGATED

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
METRICS = [APIResource("pods", "", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "", False, "NodeMetrics", ("get", "list"))]


def client_for(cluster: FakeCluster, **options: object) -> DiscoveryClient:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1), **options)  # type: ignore[arg-type]
    return DiscoveryClient(transport)


@pytest.fixture(params=["aggregated", "aggregated-v2beta1", "legacy"])
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    c = FakeCluster.embedded(mode=request.param)
    with c.mock():
        yield c


def test_full_discovery_is_the_same_in_every_mode() -> None:
    results = {}
    for mode in ("aggregated", "aggregated-v2beta1", "legacy"):
        cluster = FakeCluster.embedded(mode=mode)
        with cluster.mock():
            groups, resources = client_for(cluster).server_groups_and_resources()
        results[mode] = ([(g.name, g.versions, g.preferred_version) for g in groups],
                         {gv: {(r.name, r.kind, r.namespaced, frozenset(r.verbs)) for r in rl.resources}
                          for gv, rl in resources.items()})
    assert results["aggregated"] == results["aggregated-v2beta1"]
    # Legacy /apis breaks priority ties by APIService name (<version>.<group>), aggregated discovery by group name
    # (kube-aggregator SortedByGroupAndVersion vs calculateAPIGroupsLocked; see test_testing_order): the CRD groups
    # (all at priority 1000) may come in another order, with the same content.
    assert sorted(results["legacy"][0]) == sorted(results["aggregated"][0])
    assert results["legacy"][1] == results["aggregated"][1]


def test_aggregated_full_listing_costs_two_requests_then_304s() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        client = client_for(cluster)
        groups, resources = client.server_groups_and_resources()
        assert sorted(r.path for r in cluster.requests) == ["/api", "/apis"]  # read at once: either may come first
        assert all(r.headers["Accept"] == ACCEPT_AGGREGATED for r in cluster.requests)
        assert groups[0].name == "" and GroupVersion("apps", "v1") in resources
        root = client.fetch_root()
        assert root.not_modified and root.aggregated
        assert all(r.headers.get("If-None-Match") for r in cluster.requests[2:])
        assert client.server_groups_and_resources()[1] == resources


def test_304_without_content_type_reuses_previous_document() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        client = client_for(cluster)
        first = client.fetch_root()
        cluster.inject("/apis", status=304, body=b"", content_type="", times=1)
        second = client.fetch_root()
        assert second.groups == first.groups and second.aggregated


def test_legacy_fetches_every_group_version_with_bounded_concurrency() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        client = client_for(cluster)
        active = 0
        peak = 0
        lock = threading.Lock()
        real_get = client.transport.get

        def counting_get(path, headers=None, **kw):  # type: ignore[no-untyped-def]
            nonlocal active, peak
            with lock:
                active += 1
                peak = max(peak, active)
            try:
                return real_get(path, headers, **kw)
            finally:
                with lock:
                    active -= 1

        client.transport.get = counting_get  # type: ignore[method-assign]
        groups, resources = client.server_groups_and_resources()
        listed = sum(len(g.versions) for g in groups)
        assert len(resources) == listed
        assert cluster.request_count() == 2 + listed
        assert peak <= 8


def test_406_falls_back_to_legacy() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        cluster.inject("/api", status=406, body="not acceptable", times=1)
        client = client_for(cluster)
        root = client.fetch_root()
        assert not root.aggregated and root.resources is None
        asked = [r.headers["Accept"] for r in cluster.requests if r.path == "/api"]
        assert asked == [ACCEPT_AGGREGATED, "application/json"]  # asked again as plain JSON


def test_v2beta1_only_server_is_served_aggregated() -> None:
    cluster = FakeCluster.embedded(mode="aggregated-v2beta1")
    with cluster.mock():
        assert client_for(cluster).fetch_root().aggregated


def test_404_on_api_is_tolerated_but_not_on_apis() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        cluster.inject("/api", status=404, body="404 page not found")
        root = client_for(cluster).fetch_root()
        assert all(g.name for g in root.groups)
        cluster.inject("/apis", status=404, body="404 page not found")
        with pytest.raises(APIStatusError) as info:
            client_for(cluster).fetch_root()
        assert info.value.not_found


def test_stale_aggregated_version_is_a_partial_failure(cluster: FakeCluster) -> None:
    """A 503 aggregated API (text/plain in legacy, Stale in aggregated) fails alone, with the rest returned."""
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    cluster.set_stale("metrics.k8s.io/v1beta1")
    with pytest.raises(DiscoveryError) as info:
        client_for(cluster).server_groups_and_resources()
    err = info.value
    assert set(err.failed) == {GroupVersion("metrics.k8s.io", "v1beta1")}
    assert str(err).startswith("unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1")
    _groups, resources = err.partial
    assert GroupVersion("apps", "v1") in resources
    assert GroupVersion("metrics.k8s.io", "v1beta1") not in resources


FAULTS = [
    pytest.param(dict(status=500, body="internal error"), APIStatusError, id="500"),
    pytest.param(dict(status=503, body="the server is currently unable to handle the request"), APIStatusError,
                 id="503-text"),
    pytest.param(dict(status=403, body='{"kind":"Status","message":"forbidden: User cannot list"}',
                      content_type="application/json"), APIStatusError, id="403"),
    pytest.param(dict(status=429, body="slow down", headers={"Retry-After": "1"}), APIStatusError, id="429"),
    pytest.param(dict(status=200, body="<!DOCTYPE html><html>proxy login</html>", content_type="text/html"),
                 MalformedDiscoveryError, id="html"),
    pytest.param(dict(status=200, body='{"groups": [', content_type="application/json"), MalformedDiscoveryError,
                 id="truncated"),
    pytest.param(dict(status=200, body='{"groups": "nope", "versions": "nope", "major": 1}',
                      content_type="application/json"),
                 MalformedDiscoveryError, id="wrong-type"),
    pytest.param(dict(status=200, body="groups: []", content_type="application/yaml"), MalformedDiscoveryError,
                 id="wrong-content-type"),
    pytest.param(dict(reset=True), TransportError, id="reset"),
]


@pytest.mark.parametrize(("fault", "error"), FAULTS)
@pytest.mark.parametrize("path", ["/api", "/apis", "/apis/apps/v1", "/version"])
def test_fault_table_for_every_endpoint(fault: dict[str, object], error: type[Exception], path: str) -> None:
    """DESIGN 6: every fault on every endpoint gives a typed error; nothing else leaks."""
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.inject(path, **fault)  # type: ignore[arg-type]
        client = client_for(cluster)
        with pytest.raises((error, DiscoveryError)) as info:
            if path == "/version":
                client.server_version()
            elif path.startswith("/apis/"):
                client.server_resources_for_group_version("apps/v1")
            else:
                client.server_groups_and_resources()
        assert isinstance(info.value, (error, DiscoveryError))
        if path == "/apis/apps/v1":
            assert isinstance(info.value, error)


def test_partial_failure_in_legacy_per_group_version_faults() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.inject("/apis/batch/v1", status=200, body="<html>", content_type="text/html")
        cluster.inject("/apis/policy/v1", status=500, body="boom")
        with pytest.raises(DiscoveryError) as info:
            client_for(cluster).server_groups_and_resources()
        failed = info.value.failed
        assert isinstance(failed[GroupVersion("batch", "v1")], MalformedDiscoveryError)
        assert isinstance(failed[GroupVersion("policy", "v1")], APIStatusError)
        assert GroupVersion("apps", "v1") in info.value.partial[1]


def test_oversized_body_is_refused() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        client = client_for(cluster, max_body_bytes=1024)
        with pytest.raises(ResponseTooLargeError):
            client.fetch_root()


def test_connection_reset_is_a_transient_transport_error() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        cluster.inject("/apis", reset=True)
        with pytest.raises(TransportError) as info:
            client_for(cluster).fetch_named()
        assert info.value.transient


def test_resource_list_naming_another_group_version_is_malformed() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.inject("/apis/apps/v1", status=200, content_type="application/json",
                       body='{"kind":"APIResourceList","groupVersion":"batch/v1","resources":[]}')
        with pytest.raises(MalformedDiscoveryError, match="batch/v1"):
            client_for(cluster).server_resources_for_group_version("apps/v1")


def test_server_version() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        assert str(client_for(cluster).server_version()) == "v1.35.0"


def test_max_workers_must_be_positive() -> None:
    with pytest.raises(ValueError):
        DiscoveryClient(RequestsTransport("https://x.invalid"), max_workers=0)


def test_a_406_falls_back_for_a_while_then_aggregated_is_asked_again() -> None:
    now = [0.0]
    cluster = FakeCluster.embedded()
    with cluster.mock():
        client = DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1)),
                                 clock=lambda: now[0])
        cluster.inject("/apis", status=406, body="not acceptable", times=1)
        assert not client.fetch_named().aggregated
        now[0] += 299
        assert not client.fetch_named().aggregated
        now[0] += 2
        assert client.fetch_named().aggregated


@pytest.mark.parametrize(("path", "items"), [
    ("/apis", [{"metadata": {"name": ""}, "versions": []}]),
    ("/apis", [{"metadata": {}, "versions": []}]),
    ("/api", [{"metadata": {"name": "apps"}, "versions": []}]),
])
def test_a_root_document_cannot_claim_the_other_documents_groups(path: str, items: list[object]) -> None:
    """An aggregated /apis naming the core group (or /api naming a named group) would overwrite it: malformed."""
    import json

    cluster = FakeCluster.embedded()
    with cluster.mock():
        cluster.inject(path, status=200, content_type=V2, body=json.dumps(
            {"apiVersion": "apidiscovery.k8s.io/v2", "kind": "APIGroupDiscoveryList", "metadata": {},
             "items": items}))
        client = client_for(cluster)
        with pytest.raises(MalformedDiscoveryError):
            client.fetch_root()


@pytest.mark.parametrize("status", [401, 502])
@pytest.mark.parametrize("path", ["/apis", "/apis/apps/v1", "/version"])
def test_server_echoing_a_credential_never_leaks_it(path: str, status: int,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """DESIGN 6: a proxy echoing the Authorization header back must not put the token in errors or logs."""
    cluster = FakeCluster.embedded(mode="legacy")
    secret = "sekrit-token-123"
    with cluster.mock(), caplog.at_level("DEBUG"):
        cluster.inject(path, status=status, body=f"denied; request had Authorization: Bearer {secret} and {secret}")
        cluster.inject("/api", status=200, content_type="text/html", body=f"<p>{secret}</p>", times=1)
        transport = RequestsTransport(cluster.base_url, token=secret, retry=RetryPolicy(max_attempts=1))
        client = DiscoveryClient(transport)
        errors: list[BaseException] = []
        for call in (client.fetch_root, client.server_version, lambda: client.server_resources_for_group_version(
                "apps/v1"), client.server_groups_and_resources):
            try:
                call()
            except Exception as exc:
                errors.append(exc)
        assert errors
        for exc in errors:
            for text in (str(exc), repr(exc), str(getattr(exc, "reason", "")), str(getattr(exc, "failed", ""))):
                assert secret not in text
        assert all(secret not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("path", ["/api", "/apis", "/apis/apps/v1", "/version"])
def test_read_timeout_on_every_endpoint_is_a_transient_transport_error(path: str) -> None:
    """A real socket read timeout (loopback server, injected latency), not a mocked exception."""
    release = threading.Event()
    cluster = FakeCluster.embedded(mode="legacy", sleep=lambda _s: release.wait(10))
    cluster.inject(path, latency=1.0)
    try:
        with cluster.serve() as served:
            client = DiscoveryClient(RequestsTransport(served.url, read_timeout=0.2,
                                                       retry=RetryPolicy(max_attempts=1)))
            with pytest.raises(TransportError) as info:
                if path == "/version":
                    client.server_version()
                elif path == "/apis/apps/v1":
                    client.server_resources_for_group_version("apps/v1")
                else:
                    client.fetch_root()
            assert info.value.transient
            release.set()
    finally:
        release.set()
