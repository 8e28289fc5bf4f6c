"""A watch that ends at once is a failure (client-go's "very short watch": under a second, no event).

A proxy or server that accepts a watch and closes it before any event (fabric8#7896: a compacted resourceVersion
answered by a close instead of a 410) must not make the client reconnect in a tight loop, and, since events may
have been lost, a few in a row make it relist. The backoff grows from one such watch to the next (a connect does
not reset it); only a healthy period does.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from helpers.store import cm, object_cache
from helpers.watch import WIDGET, BackoffRecorder, Recorder, make_mapper, running

from restmapper.testing import FakeCluster, ManualClock, ServedCluster
from restmapper.watch import Watcher

CRD = "CustomResourceDefinition"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


def _grows(delays: list[float]) -> bool:
    return all(later > earlier for earlier, later in itertools.pairwise(delays))


def test_informer_backs_off_from_watches_ending_at_once_and_relists(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("c0", v="0"))
    sleep = BackoffRecorder(6)
    with object_cache(served, sleep=sleep, backoff_initial=0.5, backoff_max=30.0) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
        lists = informer.stats.lists
        watches = cluster.request_count("/api/v1/configmaps")
        cluster.end_watches_at_once("configmaps")
        cluster.apply_object(cm("c0", v="1"))  # no watch will deliver these: only a relist finds them
        cluster.apply_object(cm("n1"))
        cluster.drop_watches()
        assert sleep.enough.wait(10)
        # Every watch that ended at once was followed by a backoff, each longer than the one before.
        assert sleep.delays[0] == pytest.approx(0.525, abs=0.03)
        assert _grows(sleep.delays), sleep.delays
        assert cluster.request_count("/api/v1/configmaps") - watches <= len(sleep.delays) + 3
        # Three in a row relisted: the writes nobody streamed are in the cache.
        assert informer.stats.relists >= 1 and informer.stats.lists > lists
        assert informer.get("c0", "default")["data"] == {"v": "1"}
        assert informer.get("n1", "default")["metadata"]["name"] == "n1"
        assert informer.state == "failing"


def test_crd_watcher_backs_off_from_watches_ending_at_once_and_relists(served: ServedCluster) -> None:
    cluster = served.cluster
    sleep = BackoffRecorder(6)
    mapper = make_mapper(served.url)
    rec = Recorder()
    watcher = Watcher(mapper, sleep=sleep, watch_apiservices=False)
    watcher.add_handler(rec)
    with running(watcher, cluster, 1):
        cluster.end_watches_at_once()
        cluster.add_crd(WIDGET)  # streamed by no watch
        cluster.drop_watches()
        assert sleep.enough.wait(10)
        assert _grows(sleep.delays), sleep.delays
        rec.wait(("ADDED", CRD, "widgets.example.com"))  # found by the relist
        assert watcher.stats.relists >= 1


def test_a_connect_alone_does_not_reset_the_backoff(served: ServedCluster) -> None:
    """A failure right after a connect continues the backoff of the failures before it; after a healthy period
    (120 s without a failure, by the watcher's clock) it starts over."""
    cluster = served.cluster
    delays: list[float] = []
    clock = ManualClock()
    watcher = Watcher(make_mapper(served.url), sleep=lambda stop, s: delays.append(s), watch_apiservices=False,
                      backoff_initial=0.5, clock=clock)
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    with running(watcher, cluster, 1):

        def reconnected(failures: int) -> None:
            with watcher.changed:
                assert watcher.changed.wait_for(lambda: watcher.healthy and len(delays) == failures, 10)
            assert cluster.wait_for_watchers(1, 10)  # the server streams it (a drop from now on ends it)

        cluster.inject(path, reset=True, times=2)
        clock.advance(5)  # the open watch ran a while: its end is no failure
        cluster.drop_watches()
        reconnected(2)
        cluster.inject(path, reset=True, times=1)
        clock.advance(5)
        cluster.drop_watches()
        reconnected(3)
        assert delays[2] == pytest.approx(2.1, abs=0.11)  # third in a row despite the connect in between
        rec = Recorder()
        watcher.add_handler(rec)
        cluster.add_crd(WIDGET)  # a change: the next early end is not a third quiet one in a row
        rec.wait(("ADDED", CRD, "widgets.example.com"))
        cluster.inject(path, reset=True, times=1)
        clock.advance(121)
        cluster.drop_watches()
        reconnected(4)
        assert delays[3] == pytest.approx(0.525, abs=0.03)
