"""What one lookup sends when a group version fails, and the backoff after it, as the README and the docstrings of
``DiscoveryCache`` and ``RetryPolicy`` say: one fetch of the version per lookup (the transport's ``RetryPolicy``
attempts within it), then no request until the cache's backoff allows one: 1 s after a first failure, then 2 s,
4 s, ... (``retry_initial``, doubled up to ``retry_max``), or a miss revalidation (at most one per
``miss_refresh_interval``) reads it again, whichever comes first.

It was two fetches per lookup, and the backoff doubled twice (2 s, 8 s, 32 s): the miss revalidation that follows
a lookup's failure re-read the very version this lookup had just fetched. Requests are counted on the FakeCluster's
own request log (one server per test, no other client); time is an injected clock; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from restmapper import GroupDiscoveryError, GroupKind
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

GV_PATH = "/apis/g5.example.com/v1"
WIDGET = GroupKind("g5.example.com", "Widget")


@pytest.fixture(params=["legacy", "aggregated"])
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    c = FakeCluster.embedded(mode=request.param)
    with c.mock():
        c.add_crd(crd_manifest("g5.example.com", "Widget", versions=("v1",)))
        yield c


def failing_lookup(mapper: LazyRESTMapper) -> GroupDiscoveryError:
    with pytest.raises(GroupDiscoveryError) as info:
        mapper.rest_mapping(WIDGET)
    return info.value


def failing_mapper(cluster: FakeCluster, clock: ManualClock, attempts: int, sleeps: list[float],
                   miss_refresh_interval: float = 1.0) -> LazyRESTMapper:
    retry = RetryPolicy(max_attempts=attempts, sleep=sleeps.append, clock=clock)
    mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=retry)), clock=clock,
                            miss_refresh_interval=miss_refresh_interval)
    assert mapper.rest_mapping(GroupKind("apps", "Deployment")).resource.resource == "deployments"
    cluster.inject(GV_PATH, status=503, body="unavailable")
    cluster.clear_requests()
    return mapper


@pytest.mark.parametrize("attempts", [1, 4])
def test_one_failing_lookup_fetches_the_version_once(cluster: FakeCluster, attempts: int) -> None:
    """One fetch: ``attempts`` requests (the transport's retries of the one GET), never twice that."""
    sleeps: list[float] = []
    mapper = failing_mapper(cluster, ManualClock(), attempts, sleeps)
    error = failing_lookup(mapper)
    assert cluster.request_count(GV_PATH) == attempts, cluster.requests
    assert len(sleeps) == attempts - 1
    assert "HTTP 503" in str(error) and error.replayed_age is None  # this lookup's own failure


def test_the_backoff_is_one_second_then_doubles_once_per_failed_fetch(cluster: FakeCluster) -> None:
    """Misses revalidated rarely (``miss_refresh_interval=100``): the backoff alone says when the next request goes."""
    clock = ManualClock()
    mapper = failing_mapper(cluster, clock, 1, [], miss_refresh_interval=100.0)
    failing_lookup(mapper)
    for wait in (1.0, 2.0, 4.0, 8.0):
        assert cluster.request_count(GV_PATH) == 1
        cluster.clear_requests()
        clock.advance(wait / 2)  # within the backoff: the failure again, without a request
        replay = failing_lookup(mapper)
        assert cluster.request_count(GV_PATH) == 0
        assert replay.retry_in == pytest.approx(wait / 2), (wait, str(replay))
        clock.advance(wait / 2)  # the backoff allows the next request: one
        failing_lookup(mapper)
    cluster.clear_faults()
    cluster.clear_requests()
    clock.advance(16.0)
    assert mapper.rest_mapping(WIDGET).resource.resource == "widgets"  # recovered at the first allowed lookup
    assert cluster.request_count(GV_PATH) == 1


def test_a_lookup_that_misses_asks_again_once_per_miss_refresh_interval(cluster: FakeCluster) -> None:
    """A lookup whose answer hinges on the failing version is a miss, revalidated at most once per
    ``miss_refresh_interval`` (1 s), and the revalidation reads the version again, whatever its backoff (2 s here):
    a replay's ``retry_in`` says the earlier of the two, the time of the next request."""
    clock = ManualClock()
    mapper = failing_mapper(cluster, clock, 1, [])
    failing_lookup(mapper)  # t=0: backoff 1 s
    clock.advance(1.0)
    failing_lookup(mapper)  # t=1: asked again (one request), backoff 2 s
    assert cluster.request_count(GV_PATH) == 2
    clock.advance(0.5)
    replay = failing_lookup(mapper)
    assert cluster.request_count(GV_PATH) == 2 and replay.retry_in == pytest.approx(0.5)  # the miss interval's
    clock.advance(0.5)
    failing_lookup(mapper)  # t=2: the miss revalidation reads it again, one request
    assert cluster.request_count(GV_PATH) == 3
