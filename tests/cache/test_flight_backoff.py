"""One failed response counts as one failure, however many callers shared it.

The cache fetches each document once for every thread asking at the same time (single-flight). The retry backoff
grows once per failed *fetch* and resets on success: N workers sharing one bad response back off 1 s, not
2^(N-1) s. The threads join the flight deterministically: the fault's latency goes through the cluster's injected
``sleep``, which returns only once the other N-1 callers are waiting for that fetch.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor

import pytest

from restmapper import AsyncRESTMapper, LazyRESTMapper
from restmapper.cache import DiscoveryCache
from restmapper.cache._flight import SingleFlight
from restmapper.discovery import DiscoveryClient
from restmapper.errors import GroupDiscoveryError
from restmapper.testing import FakeCluster, ManualClock
from restmapper.transport import RequestsTransport, RetryPolicy

CALLERS = 6
SAFETY = 30.0  # seconds: only a safety net, never waited for when the code is right


class Joined:
    """An injected ``sleep`` that returns once ``callers - 1`` other callers wait on a flight of ``flight`` that
    fetches the delayed path (a lookup may have other fetches in flight meanwhile: ``/api`` beside ``/apis``)."""

    def __init__(self, callers: int) -> None:
        self.callers = callers
        self.flight: SingleFlight | None = None
        self.path = ""  # the delayed path (set by the test with the fault)

    def _fetches_path(self, key: Hashable) -> bool:
        if not isinstance(key, tuple) or not key:
            return False
        if key[0] == "gvs":
            return any(gv.path == self.path for gv in key[1])
        return key[0] == self.path

    def __call__(self, _seconds: float) -> None:
        assert self.flight is not None
        deadline = time.monotonic() + SAFETY
        while self.flight.waiting(self._fetches_path) < self.callers - 1:  # bounded polling of state
            assert time.monotonic() < deadline, "the other callers never joined the flight"
            threading.Event().wait(0.001)


def _cluster(mode: str, joined: Joined) -> FakeCluster:
    return FakeCluster.embedded(mode=mode, sleep=joined)


def _client(cluster: FakeCluster) -> DiscoveryClient:
    return DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1)))


def _together(callers: int, call: Callable[[], object]) -> list[BaseException | None]:
    """Run ``call`` in ``callers`` threads at once; what each raised (None: it returned)."""
    errors: list[BaseException | None] = [None] * callers
    barrier = threading.Barrier(callers)

    def run(i: int) -> None:
        barrier.wait(SAFETY)
        try:
            call()
        except BaseException as exc:  # recorded for the assertions
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(SAFETY)
    assert not any(t.is_alive() for t in threads)
    return errors


ROOT_FAULTS = [
    ("legacy", "/api", 200, "{}"),  # malformed: permanent
    ("legacy", "/apis", 503, "down"),  # transient, nothing cached to serve
    ("aggregated", "/api", 404, "gone"),
    ("aggregated", "/apis", 200, "{}"),
]


@pytest.mark.parametrize(("mode", "path", "status", "body"), ROOT_FAULTS)
def test_a_root_document_failure_shared_by_n_callers_backs_off_once(mode: str, path: str, status: int,
                                                                    body: str) -> None:
    joined, clock = Joined(CALLERS), ManualClock()
    cluster = _cluster(mode, joined)
    with cluster.mock():
        cache = DiscoveryCache(_client(cluster), ttl=0, clock=clock)
        joined.flight = cache._flight
        joined.path = path
        cluster.inject(path, status=status, body=body, latency=1.0, times=1)
        errors = _together(CALLERS, cache.group_names)  # cold: no earlier answer may be served
        assert all(isinstance(e, GroupDiscoveryError) for e in errors), errors
        assert sum(r.path == path for r in cluster.requests) == 1  # ONE fetch, shared

        clock.advance(0.5)
        with pytest.raises(GroupDiscoveryError):
            cache.group_names()  # backing off from that one failure (not asked again)
        assert sum(r.path == path for r in cluster.requests) == 1
        clock.advance(0.5)
        assert cache.group_names()  # 1 s: the first backoff, not 2^(N-1) s



def test_consecutive_failed_fetches_still_back_off_exponentially() -> None:
    joined, clock = Joined(1), ManualClock()
    cluster = _cluster("legacy", joined)
    with cluster.mock():
        cache = DiscoveryCache(_client(cluster), ttl=0, clock=clock)
        joined.flight = cache._flight
        cluster.inject("/api", status=200, body="{}", times=2)
        for _ in range(2):
            with pytest.raises(GroupDiscoveryError):
                cache.group_names()
            clock.advance(1.0)
        with pytest.raises(GroupDiscoveryError):
            cache.group_names()  # the second failure backs off 2 s
        clock.advance(1.0)
        assert cache.group_names()
        # A success resets the count: the next failure backs off 1 s again.
        cluster.inject("/api", status=200, body="{}", times=1)
        clock.advance(0.0)
        with pytest.raises(GroupDiscoveryError):
            cache.group_names()
        clock.advance(1.0)
        assert cache.group_names()


def test_a_group_version_failure_shared_by_n_callers_backs_off_once() -> None:
    joined, clock = Joined(CALLERS), ManualClock()
    cluster = _cluster("legacy", joined)
    with cluster.mock():
        cache = DiscoveryCache(_client(cluster), ttl=0, clock=clock)
        joined.flight = cache._flight
        cache.group_names()
        joined.path = "/apis/apps/v1"
        cluster.inject("/apis/apps/v1", status=503, body="down", latency=1.0, times=1)
        _together(CALLERS, lambda: cache.groups(["apps"]))
        entry = cache.entry("apps")
        assert entry is not None and entry.failed  # cold: nothing earlier to serve
        assert sum(r.path == "/apis/apps/v1" for r in cluster.requests) == 1  # ONE fetch, shared
        clock.advance(1.0)
        cache.groups(["apps"])
        entry = cache.entry("apps")
        assert entry is not None and not entry.failed and entry.resources  # refetched after 1 s, not 2^(N-1) s


@pytest.mark.parametrize("mode", ["legacy", "aggregated"])
def test_the_mapper_and_its_async_front_end_recover_after_the_first_backoff(mode: str) -> None:
    callers = 4  # within the default executor's threads on a small machine
    joined, clock = Joined(callers), ManualClock()
    cluster = _cluster(mode, joined)
    with cluster.mock():
        mapper = LazyRESTMapper(_client(cluster), ttl=0, clock=clock)
        joined.flight = mapper.cache._flight  # type: ignore[attr-defined]
        amapper = AsyncRESTMapper(mapper, executor=ThreadPoolExecutor(callers))
        assert mapper.resolve("pods").resource.group == ""
        joined.path = "/api"
        cluster.inject("/api", status=200, body="{}", latency=1.0, times=1)

        async def ask() -> list[object]:
            return await asyncio.gather(*(amapper.resolve("pods") for _ in range(callers)),
                                        return_exceptions=True)

        answers = asyncio.run(ask())
        assert all(isinstance(a, GroupDiscoveryError) for a in answers), answers
        clock.advance(1.0)
        assert mapper.resolve("pods").resource.group == ""
