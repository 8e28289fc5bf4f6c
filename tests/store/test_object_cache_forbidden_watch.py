"""Rule: a watch refused with an error a retry will not cure ends the list-and-watch round (the next one lists
again after the backoff, as client-go's reflector), and while it is refused reads raise that error instead of
answering from a store frozen at the last list.

RBAC granting ``list`` but not ``watch`` answers every ``watch=true`` request with a 403: the informer lists once,
then each watch is refused. Reads raise :class:`ForbiddenError` with the server's Status, every backoff ends in a
relist (so objects created meanwhile are not missed), and a later grant heals. Backoff waits run on a manual
clock: nothing sleeps. Sync, asyncio, and the CRD/APIService watcher (same reflector).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from helpers.store import ClockBackoff, cm, object_cache
from helpers.watch import Recorder, make_mapper, widget

from restmapper.aio import AsyncObjectCache
from restmapper.errors import APIStatusError, ForbiddenError
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.watch import Watcher

CM_PATH = "/api/v1/configmaps"
RBAC_MESSAGE = ('configmaps is forbidden: User "system:serviceaccount:team-a:controller" cannot watch resource '
                '"configmaps" in API group "" at the cluster scope')
FORBIDDEN = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": RBAC_MESSAGE,
             "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403}
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
SLOW = 30.0  # sync_timeout: a read that waited it out would take this long


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", x="1"))
    with cluster.serve() as s:
        yield s


def refuse_watch(cluster: FakeCluster, path: str, status: dict[str, object]) -> object:
    return cluster.inject(path, status=int(str(status["code"])), body=json.dumps(status),
                          content_type="application/json", watch=True)


def lists(cluster: FakeCluster, path: str) -> int:
    return sum(1 for r in cluster.requests if r.path == path and r.query.get("watch") not in ("1", "true"))


def test_a_forbidden_watch_relists_after_each_backoff_reads_raise_forbidden_and_a_grant_heals(
        served: ServedCluster, watch_list: bool) -> None:
    """RBAC allows list but not watch: a WatchList sync is refused too, and completed by a list (client-go)."""
    cluster = served.cluster
    grant = refuse_watch(cluster, CM_PATH, FORBIDDEN)
    backoff = ClockBackoff()
    with object_cache(served, sync_timeout=SLOW, sleep=backoff, backoff_initial=1.0, backoff_max=8.0,
                      watch_list=watch_list) as cache:
        cache.start(["cm"])
        backoff.wait_parked(1)  # listed, then the watch was refused
        informer = cache.informer("cm")
        with pytest.raises(ForbiddenError) as info:
            cache.get("cm", "a", "default")
        assert info.value.server_status == FORBIDDEN and info.value.path == CM_PATH
        with pytest.raises(ForbiddenError):
            cache.list("cm")
        assert informer.state == "failing"
        assert lists(cluster, CM_PATH) == 1
        cluster.apply_object(cm("b", x="2"))
        backoff.advance(backoff.delays[-1])
        backoff.wait_parked(2)  # the round ended: listed again, and the watch was refused again
        assert lists(cluster, CM_PATH) == 2
        with pytest.raises(ForbiddenError):
            cache.list("cm")
        grant.remove()  # the RBAC grant
        backoff.advance(backoff.delays[-1])
        assert informer.wait_for_state("synced", timeout=10)
        assert [o["metadata"]["name"] for o in cache.list("cm", namespace="default")] == ["a", "b"]
        cluster.apply_object(cm("c"))  # the watch works: changes arrive without a list
        assert informer.wait_until(lambda i: i.has_synced and len(cache.list("cm")) == 3, 10)
        assert lists(cluster, CM_PATH) == (2 if watch_list else 3)  # healed by a WatchList sync: no list


def test_a_401_watch_makes_reads_raise_its_status_error_and_relists(served: ServedCluster, watch_list: bool) -> None:
    refuse_watch(served.cluster, CM_PATH, UNAUTHORIZED)
    backoff = ClockBackoff()
    with object_cache(served, sync_timeout=SLOW, sleep=backoff, backoff_initial=1.0, backoff_max=8.0,
                      watch_list=watch_list) as cache:
        cache.start(["cm"])
        backoff.wait_parked(1)
        with pytest.raises(APIStatusError) as info:
            cache.get("cm", "a", "default")
        assert info.value.status == 401
        backoff.advance(backoff.delays[-1])
        backoff.wait_parked(2)
        assert lists(served.cluster, CM_PATH) == 2


def test_a_transient_watch_failure_is_retried_as_a_watch_and_reads_answer(served: ServedCluster,
                                                                          watch_list: bool) -> None:
    served.cluster.inject(CM_PATH, status=503, body="unavailable", watch=True)
    backoff = ClockBackoff()
    with object_cache(served, sync_timeout=SLOW, sleep=backoff, backoff_initial=1.0, backoff_max=8.0,
                      watch_list=watch_list) as cache:
        cache.start(["cm"])
        backoff.wait_parked(1)
        assert cache.get("cm", "a", "default")["data"] == {"x": "1"}
        backoff.advance(backoff.delays[-1])
        backoff.wait_parked(2)
        assert lists(served.cluster, CM_PATH) == 1


def test_async_reads_raise_forbidden_while_the_watch_is_forbidden_and_heal(served: ServedCluster) -> None:
    grant = refuse_watch(served.cluster, CM_PATH, FORBIDDEN)
    backoff = ClockBackoff()

    async def scenario(cache: AsyncObjectCache) -> None:
        with pytest.raises(ForbiddenError) as info:
            await cache.get("cm", "a", "default")
        assert info.value.server_status == FORBIDDEN
        with pytest.raises(ForbiddenError):
            await cache.list("cm")
        served.cluster.apply_object(cm("b"))
        grant.remove()  # type: ignore[attr-defined]
        backoff.advance(backoff.delays[-1])
        informer = cache.cache.informer("cm")
        assert await asyncio.to_thread(informer.wait_for_state, "synced", timeout=10)
        assert (await cache.get("cm", "b", "default"))["metadata"]["name"] == "b"

    with object_cache(served, sync_timeout=SLOW, sleep=backoff, backoff_initial=1.0, backoff_max=8.0) as sync_cache:
        sync_cache.start(["cm"])
        backoff.wait_parked(1)
        asyncio.run(scenario(AsyncObjectCache(sync_cache)))


CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def test_the_crd_watcher_relists_after_a_refused_watch_instead_of_watching_a_stale_list() -> None:
    cluster = FakeCluster()
    cluster.add_crd(widget())
    refuse_watch(cluster, CRD_PATH, UNAUTHORIZED)
    backoff = ClockBackoff()
    recorder = Recorder()
    with cluster.serve() as served:
        watcher = Watcher(make_mapper(served.url), watch_apiservices=False, sleep=backoff,
                          backoff_initial=1.0, backoff_max=8.0)
        watcher.add_handler(recorder)
        watcher.start()
        try:
            backoff.wait_parked(1)  # listed, then the watch was refused
            assert lists(cluster, CRD_PATH) == 1
            gadget = widget(names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
            gadget["metadata"]["name"] = "gadgets.example.com"
            cluster.add_crd(gadget)
            backoff.advance(backoff.delays[-1])
            backoff.wait_parked(2)  # the round ended: listed again (and the watch was refused again)
            assert lists(cluster, CRD_PATH) == 2
            recorder.wait(("ADDED", "CustomResourceDefinition", "gadgets.example.com"))
        finally:
            assert watcher.stop(timeout=10.0)
