"""A flapping endpoint (a proxy that ends every watch at once) makes every watch of an informer end early; each
early end asks discovery again whether the kind moved, but at most once per the mapper's ``miss_refresh_interval``
for the group: N flapped watches are not N discovery requests."""

from __future__ import annotations

from helpers.store import cm
from helpers.watch import make_mapper

from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ManualClock

DISCOVERY = ("/api", "/api/v1", "/apis")


def test_flapping_watches_ask_discovery_at_most_once_an_interval() -> None:
    cluster = FakeCluster()
    cluster.apply_object(cm("a"))
    with cluster.serve() as served:
        mapper = make_mapper(served.url, miss_refresh_interval=60.0, clock=ManualClock())
        cache = ObjectCache(mapper, backoff_initial=0.001, backoff_max=0.01, sync_timeout=10)
        try:
            informer = cache.informer("cm")
            assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
            cluster.clear_requests()
            cluster.end_watches_at_once("configmaps")
            cluster.drop_watches()
            assert informer.wait_until(lambda i: i.stats.errors >= 8, timeout=10)
            asked = [r.path for r in list(cluster.requests) if r.path in DISCOVERY]
            assert len(asked) <= 2, asked  # one refetch of the core group's documents, not one per flapped watch
        finally:
            cluster.end_watches_at_once(on=False)
            assert cache.stop(10)
