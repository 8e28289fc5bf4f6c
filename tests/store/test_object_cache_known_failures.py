"""Rule: a read never waits out ``sync_timeout`` for a failure the informer already knows waiting will not cure.

A list forbidden by RBAC (403) raises :class:`ForbiddenError` with the server's Status as soon as the server
answered; a 401 raises its status error; a kind named by GroupKind or GVK while the server is down raises the
lookup's error at once, as the same read with a string kind does. The informer keeps retrying with backoff
(driven here by a manual clock: nothing sleeps), so a later RBAC grant heals it. A transient failure (503) is
still waited for, up to ``sync_timeout``. Sync and asyncio.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import ClockBackoff, cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.errors import (
    APIStatusError,
    CacheSyncTimeoutError,
    ForbiddenError,
    RestMapperError,
    TransportError,
)
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource
from restmapper.testing import FakeCluster, ServedCluster

CM_PATH = "/api/v1/configmaps"
RBAC_MESSAGE = ('configmaps is forbidden: User "system:serviceaccount:team-a:controller" cannot list resource '
                '"configmaps" in API group "" at the cluster scope')
FORBIDDEN = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": RBAC_MESSAGE,
             "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403}
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
SLOW = 30.0  # sync_timeout: a read that waited it out would make the test take this long and raise a timeout


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", x="1"))
    with cluster.serve() as s:
        yield s


def refuse(cluster: FakeCluster, status: dict[str, Any]) -> Any:
    return cluster.inject(CM_PATH, status=status["code"], body=json.dumps(status), content_type="application/json")


def test_a_forbidden_list_raises_forbidden_with_the_status_at_once_and_a_later_grant_heals(
        served: ServedCluster, watch_list: bool) -> None:
    grant = refuse(served.cluster, FORBIDDEN)
    backoff = ClockBackoff()
    with object_cache(served, sync_timeout=SLOW, sleep=backoff, backoff_initial=1.0, backoff_max=8.0,
                      watch_list=watch_list) as cache:
        with pytest.raises(ForbiddenError) as info:
            cache.get("cm", "a", "default")
        error = info.value
        assert isinstance(error, PermissionError) and isinstance(error, APIStatusError) and not error.transient
        assert (error.status, error.path) == (403, CM_PATH) and RBAC_MESSAGE in str(error)
        assert error.server_status == FORBIDDEN
        informer = cache.informer("cm")
        assert informer.state == "failing" and isinstance(informer.last_error, ForbiddenError)
        assert not cache.wait_for_sync("cm", SLOW)  # returns at once too
        # It keeps retrying with backoff (doubling) while RBAC still says no; reads keep raising.
        backoff.wait_parked(1)
        backoff.advance(backoff.delays[-1])
        backoff.wait_parked(2)
        assert backoff.delays[1] > backoff.delays[0] * 1.5
        with pytest.raises(ForbiddenError):
            cache.list("cm")
        # Each round: the list (a refused WatchList sync is completed by a list, as client-go does).
        assert served.cluster.request_count(CM_PATH) == (4 if watch_list else 2)
        grant.remove()  # the RBAC grant
        backoff.advance(backoff.delays[-1])
        assert informer.wait_until(lambda i: i.has_synced, 10)
        assert cache.get("cm", "a", "default")["data"] == {"x": "1"}
        assert informer.wait_for_state("synced", timeout=10)


def test_a_401_list_raises_its_status_error_at_once(served: ServedCluster) -> None:
    refuse(served.cluster, UNAUTHORIZED)
    with object_cache(served, sync_timeout=SLOW) as cache:
        with pytest.raises(APIStatusError) as info:
            cache.list("cm")
        assert info.value.status == 401 and not isinstance(info.value, ForbiddenError)


def test_a_transient_list_failure_is_still_waited_for_until_sync_timeout(served: ServedCluster) -> None:
    served.cluster.inject(CM_PATH, status=503, body="unavailable")
    with object_cache(served, sync_timeout=0.2) as cache:
        with pytest.raises(CacheSyncTimeoutError) as info:
            cache.get("cm", "a", "default")
        assert isinstance(info.value.__cause__, APIStatusError) and info.value.__cause__.status == 503


KINDS = ["cm", GroupKind("", "ConfigMap"), GroupVersionKind("", "v1", "ConfigMap"),
         GroupVersionResource("", "v1", "configmaps")]


@pytest.mark.parametrize("kind", KINDS, ids=["string", "GroupKind", "GVK", "GVR"])
def test_any_kind_argument_while_the_server_is_down_raises_the_lookup_error_at_once(
        served: ServedCluster, kind: Any) -> None:
    served.cluster.inject("/*", reset=True)
    with object_cache(served, sync_timeout=SLOW) as cache:
        with pytest.raises(RestMapperError) as info:
            cache.get(kind, "a", "default")
        assert not isinstance(info.value, CacheSyncTimeoutError)
        assert isinstance(info.value, TransportError) or isinstance(info.value.__cause__, TransportError) or \
            "connection" in str(info.value).lower(), repr(info.value)
        with pytest.raises(RestMapperError) as again:
            cache.list(kind)
        assert type(again.value) is type(info.value)


def test_async_reads_raise_forbidden_and_the_lookup_error_at_once(served: ServedCluster) -> None:
    refuse(served.cluster, FORBIDDEN)

    async def forbidden(cache: AsyncObjectCache) -> None:
        with pytest.raises(ForbiddenError) as info:
            await cache.get("cm", "a", "default")
        assert info.value.server_status == FORBIDDEN
        with pytest.raises(ForbiddenError):
            await cache.list("cm")
        assert not await cache.wait_for_sync("cm", SLOW)
        with pytest.raises(ForbiddenError):
            await cache.wait_for("cm", "a", "default", resource_version="999", timeout=SLOW)

    with object_cache(served, sync_timeout=SLOW) as sync_cache:
        asyncio.run(forbidden(AsyncObjectCache(sync_cache)))

    served.cluster.clear_faults()
    served.cluster.inject("/*", reset=True)

    async def down(cache: AsyncObjectCache) -> None:
        with pytest.raises(RestMapperError) as info:
            await cache.get(GroupKind("", "ConfigMap"), "a", "default")
        assert not isinstance(info.value, CacheSyncTimeoutError)

    with object_cache(served, sync_timeout=SLOW) as sync_cache:
        asyncio.run(down(AsyncObjectCache(sync_cache)))


def test_read_your_writes_waits_end_at_a_known_failure(served: ServedCluster) -> None:
    refuse(served.cluster, FORBIDDEN)
    with object_cache(served, sync_timeout=SLOW) as cache, pytest.raises(ForbiddenError):
        cache.wait_for("cm", "a", "default", resource_version="999", timeout=SLOW)


def test_every_403_is_a_forbidden_error_with_the_status_discovery_included() -> None:
    from restmapper import LazyRESTMapper
    from restmapper.discovery import DiscoveryClient
    from restmapper.testing import InProcessTransport

    cluster = FakeCluster(mode="legacy")
    cluster.inject("/apis/apps/v1", status=403, body=json.dumps(FORBIDDEN), content_type="application/json")
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    with pytest.raises(RestMapperError) as info:
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
    failed = list(getattr(info.value, "failed", {}).values())
    assert failed and all(isinstance(e, ForbiddenError) and e.server_status == FORBIDDEN for e in failed), failed
