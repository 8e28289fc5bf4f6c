"""A silently dead watch (a NAT or load balancer dropped the flow: no data, no FIN) is noticed within about a
minute by default: kube-apiserver sends a bookmark about every minute to a watch that allows them, so a stream
silent longer than ``watch_idle_timeout`` is reopened at once. That is no failure (a quiet watch on a server that
sends no periodic bookmarks looks the same); a reconnect that fails is one. A watch answered
429/503 with ``Retry-After`` waits at least that long, as a list does."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from helpers.store import cm, object_cache
from helpers.watch import make_mapper, running

from restmapper.errors import TransportError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ManualClock, ServedCluster
from restmapper.transport import Transport
from restmapper.watch import Watcher

CM_PATH = "/api/v1/configmaps"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster(bookmark_interval=None).serve() as s:  # a quiet watch sends nothing at all
        yield s


class StreamTimeouts:
    """A transport passing everything on and recording the read timeout of every watch it opens."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.base_url, self.identity = inner.base_url, inner.identity
        self.timeouts: list[float | None] = []
        self.opened = threading.Event()

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        return self.inner.get(path, headers, **kw)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        self.timeouts.append(kw.get("timeout"))
        self.opened.set()
        return self.inner.stream(path, headers, **kw)

    def close(self) -> None:
        self.inner.close()


def test_default_idle_limit_is_about_a_minute(served: ServedCluster) -> None:
    mapper = make_mapper(served.url)
    transport = StreamTimeouts(mapper.transport)
    cache = ObjectCache(mapper, transport=transport, sync_timeout=10)
    watcher = Watcher(mapper, transport=transport, watch_apiservices=False)
    try:
        assert cache.wait_for_sync("cm", 10)
        with running(watcher, served.cluster, 2):
            assert len(transport.timeouts) >= 2
            assert all(t is not None and 45 <= t <= 75 for t in transport.timeouts), transport.timeouts
    finally:
        assert cache.stop(10)


def test_a_silent_watch_is_reopened_at_once_without_a_failure(served: ServedCluster) -> None:
    """A quiet collection on a server without periodic bookmarks: each idle expiry reconnects at once from the
    last resourceVersion; no failure is counted, the state stays synced and a write arrives without a backoff."""
    cluster = served.cluster
    cluster.apply_object(cm("c0"))
    with object_cache(served, watch_idle_timeout=0.3) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        assert informer.wait_until(lambda i: i.stats.connects >= 3, timeout=10)  # reopened twice
        assert informer.stats.errors == 0 and informer.last_error is None
        assert informer.state == "synced" and informer.stats.lists == 1
        written = cluster.apply_object(cm("c1"))
        cache.wait_for("cm", "c1", "default", resource_version=written["metadata"]["resourceVersion"], timeout=10)


def test_a_silent_watch_whose_reconnect_fails_is_a_failure(served: ServedCluster) -> None:
    """The idle expiry itself is no failure; the reconnect that follows failing is one (shown in the state)."""
    cluster = served.cluster
    cluster.apply_object(cm("c0"))
    with object_cache(served, watch_idle_timeout=0.3) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
        cluster.inject(CM_PATH, status=503, times=1)  # the reconnect after the idle expiry
        assert informer.wait_until(lambda i: i.stats.errors >= 1, timeout=10)
        assert isinstance(informer.last_error, TransportError)
        assert informer.wait_until(lambda i: i.state == "synced", timeout=10)


def test_crd_watcher_reopens_a_silent_watch_without_a_failure(served: ServedCluster) -> None:
    watcher = Watcher(make_mapper(served.url), watch_apiservices=False, watch_idle_timeout=0.3,
                      backoff_initial=0.01, backoff_max=0.05)
    with running(watcher, served.cluster, 1):
        with watcher.changed:
            assert watcher.changed.wait_for(lambda: watcher.stats.connects >= 3, 10)
        assert watcher.stats.errors == 0 and watcher.last_error is None


class Delays:
    """A backoff ``sleep`` recording every wait and returning at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.cond = threading.Condition()

    def __call__(self, stop: threading.Event, seconds: float) -> None:
        with self.cond:
            self.delays.append(seconds)
            self.cond.notify_all()

    def wait(self, n: int) -> list[float]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.delays) >= n, 10), self.delays
            return list(self.delays)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_on_a_watch_is_honoured(served: ServedCluster, status: int) -> None:
    cluster = served.cluster
    sleep = Delays()
    with object_cache(served, sleep=sleep, watch_timeout=1) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
        cluster.inject(CM_PATH, status=status, headers={"Retry-After": "7"}, times=1)  # the watch after this one
        assert sleep.wait(1)[0] == pytest.approx(7.0)


def test_crd_watcher_honours_retry_after_on_a_watch(served: ServedCluster) -> None:
    sleep = Delays()
    clock = ManualClock()
    watcher = Watcher(make_mapper(served.url), watch_apiservices=False, sleep=sleep, clock=clock)
    with running(watcher, served.cluster, 1):
        served.cluster.inject("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", status=429,
                              headers={"Retry-After": "5"}, times=1)
        clock.advance(5)  # the open watch ran a while: its end is no failure of its own
        served.cluster.drop_watches()
        assert sleep.wait(1)[0] == pytest.approx(5.0)
