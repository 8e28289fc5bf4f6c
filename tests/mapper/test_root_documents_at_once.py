"""A cold lookup reads ``/api`` and ``/apis`` at once: it waits for one request, not one after the other.

With an unresponsive server a lookup that read the two root documents in turn waited out two request deadlines
(2 x 32 s). The kit's injected latency calls a :class:`Rendezvous` instead of sleeping: each held request waits
there until ``expected`` requests are held together (or a generous safety bound passes, which only a broken fetch
reaches), so the test observes, with no timing, whether the requests were in flight at the same time.
"""

from __future__ import annotations

import threading

import pytest

from restmapper import LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.errors import APIStatusError, GroupDiscoveryError
from restmapper.model import GroupKind, GroupVersionResource
from restmapper.testing import FakeCluster, InProcessTransport

SAFETY = 10.0  # seconds; only reached when the requests are not in flight together


class Rendezvous:
    """The kit's ``sleep``: holds each delayed request until ``expected`` of them are held at the same time."""

    def __init__(self, expected: int = 2) -> None:
        self.expected = expected
        self.cond = threading.Condition()
        self.held = 0
        self.peak = 0

    def __call__(self, _seconds: float) -> None:
        with self.cond:
            self.held += 1
            self.peak = max(self.peak, self.held)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.peak >= self.expected, timeout=SAFETY)
            self.held -= 1


def _cluster(mode: str) -> tuple[FakeCluster, Rendezvous, LazyRESTMapper]:
    meeting = Rendezvous()
    cluster = FakeCluster.embedded(mode=mode, sleep=meeting)
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    return cluster, meeting, mapper


def _hold_roots(cluster: FakeCluster, **fault: object) -> None:
    cluster.inject("/api", latency=1.0, **fault)  # type: ignore[arg-type]
    cluster.inject("/apis", latency=1.0)


LOOKUPS_OF_EVERY_GROUP = {
    "kind only": lambda m: m.kind_for(GroupVersionResource("", "", "deployments")),
    "kubectl name": lambda m: m.resolve("deploy"),
    "category": lambda m: m.resolve_all("all"),
}


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("lookup", LOOKUPS_OF_EVERY_GROUP.values(), ids=LOOKUPS_OF_EVERY_GROUP.keys())
def test_cold_lookup_of_every_group_reads_both_root_documents_at_once(mode, lookup):
    cluster, meeting, mapper = _cluster(mode)
    _hold_roots(cluster)
    lookup(mapper)
    assert meeting.peak == 2
    assert cluster.request_count("/api") == 1 and cluster.request_count("/apis") == 1


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_miss_revalidation_reads_both_root_documents_at_once(mode):
    meeting = Rendezvous()
    cluster = FakeCluster.embedded(mode=mode, sleep=meeting)
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), miss_refresh_interval=0)
    mapper.resolve("deploy")  # warm
    _hold_roots(cluster)
    cluster.clear_requests()
    assert not mapper.cache.revalidate_on_miss(None)  # a miss over every group: nothing changed
    assert meeting.peak == 2
    assert cluster.request_count("/api") == 1 and cluster.request_count("/apis") == 1


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_core_lookup_still_never_reads_apis(mode):
    cluster, meeting, mapper = _cluster(mode)
    meeting.expected = 1  # nothing to meet: a core lookup holds /api alone
    _hold_roots(cluster)
    assert mapper.rest_mapping(GroupKind("", "Pod")).resource.resource == "pods"
    assert mapper.rest_mapping(GroupKind("", "ConfigMap"), "v1").resource.resource == "configmaps"
    assert cluster.request_count("/apis") == 0
    assert meeting.peak == 1


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("failing", ["/api", "/apis", "both"])
def test_a_failed_root_document_is_reported_as_when_read_in_turn(mode, failing):
    """Either document failing fails the lookup naming that document (``/api`` first when both fail, as core
    comes first); the other document, read meanwhile, is kept."""
    cluster, meeting, mapper = _cluster(mode)
    for path in (["/api", "/apis"] if failing == "both" else [failing]):
        cluster.inject(path, status=403, body="forbidden", latency=1.0)
    for path in {"/api", "/apis"} - ({"/api", "/apis"} if failing == "both" else {failing}):
        cluster.inject(path, latency=1.0)
    with pytest.raises(GroupDiscoveryError) as info:
        mapper.resolve("deploy")
    assert meeting.peak == 2
    reported = "/api" if failing in ("/api", "both") else "/apis"
    assert set(info.value.documents) == {reported}
    assert str(info.value.documents[reported]).count("403") >= 1 or "forbidden" in str(info.value.documents[reported])
    if failing == "/apis":
        # core was read alongside: a core lookup now needs no request
        before = cluster.request_count()
        assert mapper.rest_mapping(GroupKind("", "Pod")).resource.resource == "pods"
        assert cluster.request_count() == before


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("failing", [None, "/api", "/apis", "both"])
def test_the_discovery_clients_root_read_fetches_both_documents_at_once(mode, failing):
    """``DiscoveryClient.fetch_root`` (``server_groups``, ``server_groups_and_resources``: ``restmapper
    api-resources``) reads both documents at once too; ``/api``'s failure is raised first, as in turn."""
    meeting = Rendezvous()
    cluster = FakeCluster.embedded(mode=mode, sleep=meeting)
    for path in ("/api", "/apis"):
        fails = failing in (path, "both")
        cluster.inject(path, latency=1.0, **({"status": 403, "body": "forbidden"} if fails else {}))
    client = DiscoveryClient(InProcessTransport(cluster))
    if failing is None:
        root = client.fetch_root()
        assert root.groups[0].name == "" and root.group("apps") is not None
    else:
        with pytest.raises(APIStatusError) as info:
            client.fetch_root()
        assert info.value.path == ("/apis" if failing == "/apis" else "/api")
    assert meeting.peak == 2
