"""stop() ends every informer and watcher thread within a few seconds whatever the server does: a list body
trickled a few bytes at a time (every read gets a byte, so no read timeout fires), a watch whose answer does not
come. The request in flight is cut (its socket shut down) rather than waited for."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from helpers.kit import ServerPause
from helpers.kit import pause as pause  # a fixture, used by name
from helpers.store import cm
from helpers.watch import make_mapper, running

from restmapper.model import GroupKind
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.watch import Watcher

STOP_BOUND = 5.0  # seconds; the request deadline (32 s) is what stop() used to wait for


@pytest.fixture
def served(pause: ServerPause) -> Iterator[ServedCluster]:
    cluster = FakeCluster(sleep=pause)
    for i in range(20):
        cluster.apply_object(cm(f"c{i}", payload="x" * 200))
    with cluster.serve() as s:
        yield s


def _ours() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("restmapper-informer", "restmapper-watch"))]


def _timed_stop(stop: object) -> tuple[bool, float]:
    started = time.monotonic()
    ended = stop(timeout=STOP_BOUND)  # type: ignore[operator]
    return ended, time.monotonic() - started


def test_stop_during_a_trickled_list(served: ServedCluster, pause: ServerPause) -> None:
    cluster = served.cluster
    cluster.inject("/api/v1/configmaps", trickle=0.2, latency=0.001)  # ~5 KB at 40 B/s: minutes
    cache = ObjectCache(make_mapper(served.url), sync_timeout=10)
    cache.informer("cm")
    assert pause.entered.wait(10)
    pause.release.set()  # the list's answer now trickles
    ended, took = _timed_stop(cache.stop)
    assert ended and took < STOP_BOUND and not _ours(), (took, _ours())


def test_stop_while_a_watch_waits_for_its_answer(served: ServedCluster, pause: ServerPause) -> None:
    cluster = served.cluster
    cache = ObjectCache(make_mapper(served.url), sync_timeout=10)
    informer = cache.informer("cm")
    assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
    cluster.inject("/api/v1/configmaps", latency=60)  # the server holds the next answer
    cluster.drop_watches()
    assert pause.entered.wait(10)  # the reconnecting watch waits for its headers
    ended, took = _timed_stop(cache.stop)
    assert ended and took < STOP_BOUND and not _ours(), (took, _ours())


def test_stop_during_a_trickled_watch(served: ServedCluster) -> None:
    cluster = served.cluster
    cache = ObjectCache(make_mapper(served.url), sync_timeout=10)
    informer = cache.informer("cm")
    assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
    cluster.inject("/api/v1/configmaps", trickle=0.2)
    cluster.drop_watches()
    assert cluster.wait_for_watchers(1, 10)
    cluster.apply_object(cm("c0", payload="y" * 500))  # its event trickles
    ended, took = _timed_stop(cache.stop)
    assert ended and took < STOP_BOUND and not _ours(), (took, _ours())


def test_watcher_stop_during_a_trickled_list(served: ServedCluster, pause: ServerPause) -> None:
    served.cluster.inject("/apis/apiregistration.k8s.io/v1/apiservices", trickle=0.2, latency=0.001)
    watcher = Watcher(make_mapper(served.url)).start()
    assert pause.entered.wait(10)
    pause.release.set()
    ended, took = _timed_stop(watcher.stop)
    assert ended and took < STOP_BOUND and not _ours(), (took, _ours())


def test_stop_does_not_wait_for_informers_waiting_for_discovery(served: ServedCluster, pause: ServerPause) -> None:
    """Three informers resolve their kinds on their own threads while discovery does not answer: stop() tells them
    all, waits once, and does not wait for the discovery request (the mapper's, shared: never cut). Once that
    request answers, the threads end without another request, and the mapper answers as before."""
    cluster = served.cluster
    cluster.inject("/api*", latency=60)  # the server holds every discovery answer
    mapper = make_mapper(served.url)
    cache = ObjectCache(mapper, sync_timeout=10)
    for kind in ("ConfigMap", "Secret", "Service"):
        cache.informer(GroupKind("", kind))
    assert pause.entered.wait(10)
    ended, took = _timed_stop(cache.stop)
    assert ended and took < STOP_BOUND, took
    cluster.clear_faults()
    cluster.clear_requests()
    pause.release.set()
    for thread in threading.enumerate():
        if thread.name.startswith("restmapper-informer"):
            thread.join(10)
    assert not _ours()
    assert not [r for r in cluster.requests if r.path.startswith("/api/v1/")]  # no list or watch after stop
    assert mapper.rest_mapping(GroupKind("", "ConfigMap")).resource.resource == "configmaps"


def test_watcher_stop_ends_the_request_deadline_thread(served: ServedCluster) -> None:
    watcher = Watcher(make_mapper(served.url))
    with running(watcher, served.cluster, 2):
        assert "restmapper-deadlines" in {t.name for t in threading.enumerate()}
    assert "restmapper-deadlines" not in {t.name for t in threading.enumerate()}
