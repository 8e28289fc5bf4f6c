"""A cold lookup of one named group on an aggregated server reads the group listing and that group's version.

Why: the aggregated ``/apis`` of a thousand CRD groups is megabytes, every resource of every
group; a question about one group needs the group listing (``APIGroupList``: names, versions, preferred versions)
and that group's own version document, as client-go's and kubectl's lazy clients read it. A question that may
match any group still reads the aggregated document, once, and the cache keeps it from then on.

Every test talks HTTP to a FakeCluster through ``responses``; time is an injected clock; nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from restmapper import (
    GroupDiscoveryError,
    GroupKind,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    MalformedDiscoveryError,
    NoKindMatchError,
    Scope,
)
from restmapper.cache._roots import LISTED_GROUPS_MAX
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.wire import ACCEPT_AGGREGATED, ACCEPT_JSON

GROUPS = 30
WIDGET = GroupKind("g7.example.com", "Widget7")


def make_cluster(mode: str = "aggregated") -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    for i in range(GROUPS):
        cluster.add_crd(crd_manifest(f"g{i}.example.com", f"Widget{i}", versions=("v2", "v1"),
                                     scope="Cluster" if i % 2 else "Namespaced", short_names=(f"wg{i}",)))
    return cluster


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = make_cluster()
    with c.mock():
        yield c


def mapper_for(cluster: FakeCluster, clock: ManualClock | None = None) -> LazyRESTMapper:
    transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
    return LazyRESTMapper(DiscoveryClient(transport), clock=clock or ManualClock())


def asked(cluster: FakeCluster) -> list[tuple[str, str]]:
    """(path, Accept) of every request so far."""
    return [(r.path, r.headers.get("Accept", "")) for r in cluster.requests]


def test_cold_lookup_naming_a_version_reads_the_listing_and_that_version(cluster: FakeCluster) -> None:
    mapping = mapper_for(cluster).rest_mapping(WIDGET, "v1")
    assert mapping.resource == GroupVersionResource("g7.example.com", "v1", "widget7s")
    assert mapping.scope is Scope.CLUSTER
    assert asked(cluster) == [("/apis", ACCEPT_JSON), ("/apis/g7.example.com/v1", ACCEPT_JSON)]


def test_cold_lookup_without_a_version_reads_the_listing_and_the_preferred_version(cluster: FakeCluster) -> None:
    mapping = mapper_for(cluster).rest_mapping(WIDGET)
    assert mapping.group_version_kind == GroupVersionKind("g7.example.com", "v2", "Widget7")
    assert asked(cluster) == [("/apis", ACCEPT_JSON), ("/apis/g7.example.com/v2", ACCEPT_JSON)]


@pytest.mark.parametrize("question", [
    pytest.param(lambda m: m.kind_for(GroupVersionResource("g7.example.com", "v1", "widget7s")), id="kind_for GVR"),
    pytest.param(lambda m: m.kind_for(GroupVersionResource("g7.example.com", "", "widget7")), id="kind_for GR"),
    pytest.param(lambda m: m.resource_for(GroupVersionResource("g7.example.com", "", "widget7s")),
                 id="resource_for GR"),
    pytest.param(lambda m: m.resources_for(GroupVersionResource("g7.example.com", "v1", "widget7s")),
                 id="resources_for GVR"),
    pytest.param(lambda m: m.kinds_for(GroupVersionResource("g7.example.com", "", "widget7s")), id="kinds_for GR"),
])
def test_a_cold_resource_question_naming_a_group_reads_the_listing_not_every_group(cluster: FakeCluster,
                                                                                    question: object) -> None:
    """A resource (not kind) question naming a group read the whole aggregated document (megabytes at a thousand
    groups) to learn that the group is listed: the listing says as much."""
    oracle = question(mapper_for(cluster))  # type: ignore[operator]
    cluster.clear_requests()
    assert question(mapper_for(cluster)) == oracle  # type: ignore[operator]
    paths = asked(cluster)
    assert paths[0] == ("/apis", ACCEPT_JSON)
    assert all(accept == ACCEPT_JSON for _, accept in paths), paths
    assert {p for p, _ in paths[1:]} <= {"/apis/g7.example.com/v1", "/apis/g7.example.com/v2"}


def test_a_lookup_that_may_match_any_group_then_reads_the_whole_document_once(cluster: FakeCluster) -> None:
    mapper = mapper_for(cluster)
    mapper.rest_mapping(WIDGET, "v1")
    cluster.clear_requests()
    assert mapper.resource_for(GroupVersionResource("", "", "widget12s")) == GroupVersionResource(
        "g12.example.com", "v2", "widget12s")
    assert asked(cluster) == [("/api", ACCEPT_AGGREGATED), ("/apis", ACCEPT_AGGREGATED)]
    cluster.clear_requests()
    # From then on every group is answered from that document: no request, whatever group is asked about.
    assert mapper.rest_mapping(GroupKind("g21.example.com", "Widget21"), "v1").scope is Scope.CLUSTER
    assert mapper.rest_mapping(WIDGET, "v2").resource.version == "v2"
    assert mapper.resolve("wg3").resource.group == "g3.example.com"
    assert cluster.requests == []


def test_answers_after_a_scoped_start_equal_those_of_a_whole_document_start(cluster: FakeCluster) -> None:
    scoped, whole = mapper_for(cluster), mapper_for(cluster)
    whole.resource_for(GroupVersionResource("", "", "pods"))  # reads the aggregated document first
    scoped.rest_mapping(WIDGET)
    for i in range(0, GROUPS, 7):
        gk = GroupKind(f"g{i}.example.com", f"Widget{i}")
        for version in ((), ("v1",), ("v2",)):
            assert scoped.rest_mapping(gk, *version) == whole.rest_mapping(gk, *version)
        assert scoped.rest_mappings(gk) == whole.rest_mappings(gk)
        assert scoped.resolve(f"wg{i}") == whole.resolve(f"wg{i}")


def test_a_scoped_miss_is_a_no_match_only_once_the_server_confirmed_it(cluster: FakeCluster) -> None:
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    mapper.rest_mapping(WIDGET, "v1")
    cluster.add_crd(crd_manifest("g7.example.com", "Gadget", versions=("v2", "v1")))
    cluster.clear_requests()
    # The group's version was read before the kind existed: the miss revalidates, and finds it.
    assert mapper.rest_mapping(GroupKind("g7.example.com", "Gadget"), "v1").resource.resource == "gadgets"
    assert ("/apis/g7.example.com/v1", ACCEPT_JSON) in asked(cluster)
    clock.advance(5)
    with pytest.raises(NoKindMatchError):
        mapper.rest_mapping(GroupKind("g7.example.com", "Nothing"), "v1")
    assert all(accept == ACCEPT_JSON for _, accept in asked(cluster))  # never the whole document for one group


def test_a_legacy_server_is_asked_for_the_whole_listing_once() -> None:
    cluster = make_cluster("legacy")
    with cluster.mock():
        mapper = mapper_for(cluster)
        mapper.rest_mapping(WIDGET, "v1")
        mapper.resource_for(GroupVersionResource("", "", "widget12s"))
        cluster.clear_requests()
        # The server answered the aggregated Accept with its listing: nothing more to upgrade to.
        assert mapper.resource_for(GroupVersionResource("", "", "widget13s")).group == "g13.example.com"
        assert mapper.rest_mapping(GroupKind("g14.example.com", "Widget14")).resource.version == "v2"
        assert cluster.request_count("/apis") == 0


def test_an_etag_is_sent_again_only_with_the_accept_it_came_with(cluster: FakeCluster) -> None:
    client = DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1)))
    assert client.fetch_named().aggregated
    listing = client.fetch_named(listing=True)
    assert not listing.aggregated and listing.resources is None and not listing.not_modified
    assert listing.group("g7.example.com") is not None
    again = client.fetch_named()
    assert again.aggregated and not again.not_modified
    assert client.fetch_named().not_modified  # the aggregated ETag is still asked about with its own Accept
    sent = [(r.headers.get("Accept"), "If-None-Match" in r.headers) for r in cluster.requests]
    assert sent == [(ACCEPT_AGGREGATED, False), (ACCEPT_JSON, False), (ACCEPT_AGGREGATED, False),
                    (ACCEPT_AGGREGATED, True)]


def test_a_malformed_listing_is_a_typed_error_and_caches_nothing(cluster: FakeCluster) -> None:
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    cluster.inject("/apis", status=200, content_type="application/json", body='{"kind":"APIGroupList","groups":7}',
                   times=1)
    with pytest.raises(GroupDiscoveryError) as info:
        mapper.rest_mapping(WIDGET, "v1")
    causes = []
    cause: BaseException | None = info.value
    while cause is not None:
        causes.append(cause)
        cause = cause.__cause__
    assert any(isinstance(c, MalformedDiscoveryError) for c in causes)
    assert mapper.cache.entry("g7.example.com") is None
    clock.advance(120)  # past the backoff
    assert mapper.rest_mapping(WIDGET, "v1").resource.resource == "widget7s"


def test_the_listing_is_not_asked_for_when_the_whole_document_is_held(cluster: FakeCluster) -> None:
    mapper = mapper_for(cluster)
    mapper.resource_for(GroupVersionResource("", "", "widget1s"))
    cluster.clear_requests()
    mapper.cache.invalidate_group("g7.example.com")
    assert mapper.rest_mapping(WIDGET, "v1").resource.version == "v1"
    assert asked(cluster) == [("/apis", ACCEPT_AGGREGATED)]
    assert GroupVersion("g7.example.com", "v2") in mapper.cache.entry("g7.example.com").resources  # type: ignore[union-attr]


def test_lookups_that_range_over_many_groups_soon_read_the_whole_document(cluster: FakeCluster) -> None:
    mapper = mapper_for(cluster)
    for i in range(LISTED_GROUPS_MAX + 1):
        mapper.rest_mapping(GroupKind(f"g{i}.example.com", f"Widget{i}"))
    assert cluster.request_count("/apis") == 1  # the listing, then one version document per group
    cluster.clear_requests()
    more = LISTED_GROUPS_MAX + 1
    assert mapper.rest_mapping(GroupKind(f"g{more}.example.com", f"Widget{more}"), "v1").resource.version == "v1"
    assert asked(cluster) == [("/apis", ACCEPT_AGGREGATED)]
    cluster.clear_requests()
    for i in range(GROUPS):
        mapper.rest_mapping(GroupKind(f"g{i}.example.com", f"Widget{i}"))
    assert cluster.requests == []


def test_ttl_expiry_of_a_listing_relists_and_rereads_the_group(cluster: FakeCluster) -> None:
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))),
                            clock=clock, ttl=60)
    first = mapper.rest_mapping(WIDGET, "v1")
    clock.advance(61)
    cluster.clear_requests()
    assert mapper.rest_mapping(WIDGET, "v1") == first
    assert asked(cluster) == [("/apis", ACCEPT_JSON), ("/apis/g7.example.com/v1", ACCEPT_JSON)]
    assert mapper.stats.not_modified == 1  # the same listing: nothing changed


@pytest.mark.parametrize("evict", ["report_not_found", "invalidate_group", "invalidate_all"])
def test_a_group_evicted_during_an_outage_is_served_only_as_stale(cluster: FakeCluster, evict: str) -> None:
    """Stale-on-error covers a group loaded from a listing and then invalidated, as it covers an aggregated root:
    its earlier entry answers, flagged stale and due at once; a group the server answered 404 for is not masked."""
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    first = mapper.rest_mapping(WIDGET, "v1")
    if evict == "invalidate_all":
        mapper.invalidate_all()
    elif evict == "report_not_found":
        mapper.report_not_found(GroupVersion("g7.example.com", "v1"))
    else:
        mapper.invalidate_group("g7.example.com")
    fault = cluster.inject("/api*", status=503, body="unavailable")
    if evict == "report_not_found":
        with pytest.raises(GroupDiscoveryError):  # never the pre-404 content, never a no-match
            mapper.rest_mapping(WIDGET, "v1")
    else:
        assert mapper.rest_mapping(WIDGET, "v1") == first
        entry = mapper.cache.entry("g7.example.com")
        assert entry is not None and entry.stale
    assert mapper.stats.stale_served >= 1
    with pytest.raises(GroupDiscoveryError):  # never read: nothing earlier to serve, and never a no-match
        mapper.rest_mapping(GroupKind("g8.example.com", "Widget8"), "v1")
    fault.remove()
    clock.advance(61)  # past the longest backoff (60 s), within the TTL (300 s) of the earlier entry
    cluster.clear_requests()
    assert mapper.rest_mapping(WIDGET, "v1") == first
    assert ("/apis/g7.example.com/v1", ACCEPT_JSON) in asked(cluster)  # the first lookup after the fault refetches


def test_a_listing_landing_after_the_whole_document_does_not_replace_it() -> None:
    """A one-group lookup's listing fetch races a lookup that read the aggregated /apis: the cache keeps the latter."""
    entered, release = threading.Event(), threading.Event()

    def blocking_sleep(_seconds: float) -> None:
        entered.set()
        assert release.wait(30)

    cluster = FakeCluster.embedded(sleep=blocking_sleep)
    for i in range(GROUPS):
        cluster.add_crd(crd_manifest(f"g{i}.example.com", f"Widget{i}", versions=("v2", "v1")))
    with cluster.mock():
        mapper = mapper_for(cluster)
        cluster.inject("/apis", latency=1.0, times=1)  # holds the first /apis request: the listing
        scoped: list[str] = []
        thread = threading.Thread(target=lambda: scoped.append(mapper.rest_mapping(WIDGET, "v1").resource.version))
        thread.start()
        assert entered.wait(30)
        assert mapper.resource_for(GroupVersionResource("", "", "widget12s")).group == "g12.example.com"
        release.set()
        thread.join(30)
        assert scoped == ["v1"]
        cluster.clear_requests()
        assert mapper.resource_for(GroupVersionResource("", "", "widget13s")).group == "g13.example.com"
        assert mapper.rest_mapping(GroupKind("g14.example.com", "Widget14"), "v1").resource.version == "v1"
        assert cluster.requests == []


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("question", [
    pytest.param(lambda m: m.kind_for(GroupVersionResource("g1.example.com", "", "things")), id="kind_for"),
    pytest.param(lambda m: m.rest_mapping(GroupKind("g1.example.com", "Thing")), id="rest_mapping"),
    pytest.param(lambda m: m.resolve("things.g1.example.com"), id="resolve"),
])
def test_a_cold_miss_does_not_ask_again_for_what_the_same_lookup_just_read(mode: str, question: object) -> None:
    """A cold miss in a named group reads the listing and the group's versions; the miss revalidation must not
    read all of it again in the same lookup (it took 6-7 requests): what this very lookup fetched is the
    server's word already. Each document is read once (the no-match is final: the oracle agrees)."""
    cluster = FakeCluster.embedded(mode=mode)
    with cluster.mock():
        cluster.add_crd(crd_manifest("g1.example.com", "Gizmo", versions=("v2", "v1")))
        cluster.clear_requests()
        with pytest.raises(Exception) as info:
            question(mapper_for(cluster))  # type: ignore[operator]
        from restmapper import is_no_match
        assert is_no_match(info.value), info.value
        paths = [p for p, _ in asked(cluster)]
        assert len(paths) == len(set(paths)), paths
        # Still revalidated once the interval passed (a later miss is asked again).
