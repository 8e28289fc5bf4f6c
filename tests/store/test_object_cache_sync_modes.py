"""The object cache syncs by WatchList when the server serves it, by paginated lists otherwise, and says which.

* By default (``watch_list=True``, as client-go from 1.35) an informer's first list and every relist is one watch
  streaming the objects (``sendInitialEvents``), read on afterwards for the changes: no list request at all;
  ``informer.stats.sync_mode`` is ``"watch-list"``.
* A server refusing WatchList (the kit's ``FakeCluster(watch_list=False)``: its feature gate off, or
  ``release="1.20"``: before 1.27; both ``422 Invalid``) is detected once per API group version of the cache: that
  informer, and every later one of the group version, lists in pages, and ``sync_mode`` says ``"list"``.
  ``watch_list=False`` lists in pages from the start.
* Namespaced caches (one reflector per namespace) and the asyncio cache sync the same way.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import Mirror, cm, converged, key, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.testing import FakeCluster, ServedCluster

CM = "/api/v1/configmaps"
SECRETS = "/api/v1/secrets"
INVALID = json.dumps({
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Invalid", "code": 422,
    "message": 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden '
               "for watch unless the WatchList feature gate is enabled"})


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    for ns in ("a", "b"):
        for i in range(3):
            cluster.apply_object(cm(f"c{i}", ns))
    with cluster.serve() as s:
        yield s


def _requests(cluster: FakeCluster, path: str) -> list[str]:
    """Each request of the collection at ``path``: ``"watch-list"``, ``"watch"`` or ``"list"``."""
    kinds = []
    for r in cluster.requests:
        if r.path != path:
            continue
        if r.query.get("sendInitialEvents") == "true":
            kinds.append("watch-list")
        else:
            kinds.append("watch" if "watch" in r.query else "list")
    return kinds


def test_the_cache_syncs_by_watch_list_and_says_so(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        informer = cache.informer("cm")
        mirror = Mirror()
        mirror.attach(informer)
        converged(mirror, served.cluster, "configmaps")
        assert informer.stats.sync_mode == "watch-list" and informer.stats.lists == 1
        written = served.cluster.apply_object(cm("late", "a"))  # a change arrives on the same stream
        converged(mirror, served.cluster, "configmaps")
        assert informer.get("late", "a")["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]
        assert _requests(served.cluster, CM) == ["watch-list"] and not mirror.errors
        assert informer.stats.connects == 1


def test_watch_list_false_lists_in_pages(served: ServedCluster) -> None:
    with object_cache(served, watch_list=False) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        assert informer.stats.sync_mode == "list"
        assert _requests(served.cluster, CM)[0] == "list" and "watch-list" not in _requests(served.cluster, CM)


@pytest.mark.parametrize("options", [{"watch_list": False}, {"release": "1.20"}],
                         ids=["feature gate off", "before 1.27"])
def test_a_server_refusing_watch_list_is_listed_in_pages_once_per_group_version(options: dict[str, Any]) -> None:
    cluster = FakeCluster(**options)
    for i in range(3):
        cluster.apply_object(cm(f"c{i}", "a"))
    with cluster.serve() as served, object_cache(served) as cache:
        informer = cache.informer("cm")
        mirror = Mirror()
        mirror.attach(informer)
        converged(mirror, cluster, "configmaps")
        assert informer.stats.sync_mode == "list" and cluster.wait_for_watchers(1, 10)
        assert _requests(cluster, CM)[:3] == ["watch-list", "list", "watch"]
        # A relist (410) lists again; a later informer of the same group version does not ask again.
        cluster.apply_object(cm("n1", "a"))
        cluster.compact()
        cluster.drop_watches()
        converged(mirror, cluster, "configmaps")
        assert not mirror.errors and informer.stats.relists >= 1
        secrets = cache.informer("secrets")
        assert secrets.wait_for_sync(10) and secrets.stats.sync_mode == "list"
        assert "watch-list" not in _requests(cluster, SECRETS)
        assert _requests(cluster, CM).count("watch-list") == 1


def test_a_refusal_injected_once_is_remembered_for_the_cache(served: ServedCluster) -> None:
    """Detected once per API group version: even when the server would serve WatchList later, the cache lists."""
    served.cluster.inject("/api/v1/*", status=422, body=INVALID, content_type="application/json", watch=True,
                          times=1)
    with object_cache(served) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and informer.stats.sync_mode == "list"
        secrets = cache.informer("secrets")
        assert secrets.wait_for_sync(10) and secrets.stats.sync_mode == "list"
        assert "watch-list" not in _requests(served.cluster, SECRETS)


@pytest.mark.parametrize("namespaces", [["a"], ["a", "b"]], ids=["one namespace", "per namespace"])
def test_namespaced_caches_sync_by_watch_list(served: ServedCluster, namespaces: list[str]) -> None:
    with object_cache(served, namespaces=namespaces) as cache:
        informer = cache.informer("cm")
        mirror = Mirror()
        mirror.attach(informer)
        mirror.wait(lambda m: len(m.state) == 3 * len(namespaces))
        assert sorted(mirror.state) == [f"{ns}/c{i}" for ns in namespaces for i in range(3)]
        assert informer.stats.sync_mode == "watch-list" and not mirror.errors
        kinds = [_requests(served.cluster, f"/api/v1/namespaces/{ns}/configmaps") for ns in namespaces]
        assert all(k[0] == "watch-list" and "list" not in k for k in kinds)
        served.cluster.apply_object(cm("late", namespaces[-1]))
        mirror.wait(lambda m: f"{namespaces[-1]}/late" in m.state)


def test_the_asyncio_cache_syncs_by_watch_list(served: ServedCluster) -> None:
    async def scenario(cache: AsyncObjectCache) -> list[str]:
        assert await cache.wait_for_sync("cm", 10)
        return [key(o) for o in await cache.list("cm", "a")]

    with object_cache(served) as sync_cache:
        assert asyncio.run(scenario(AsyncObjectCache(sync_cache))) == [f"a/c{i}" for i in range(3)]
        assert sync_cache.informer("cm").stats.sync_mode == "watch-list"
        assert _requests(served.cluster, CM) == ["watch-list"]


def test_watch_list_must_be_a_bool(served: ServedCluster) -> None:
    with pytest.raises(TypeError, match="watch_list"), object_cache(served, watch_list="yes"):
        pass


def test_one_namespace_refusing_watch_list_makes_the_informer_say_list(served: ServedCluster) -> None:
    """``sync_mode`` is the informer's, not its first namespace's: one namespace's reflector listing in pages (its
    server refused WatchList) is enough to say ``"list"``."""
    served.cluster.inject("/api/v1/namespaces/b/*", status=422, body=INVALID, content_type="application/json",
                          watch=True, times=1)
    with object_cache(served, namespaces=["a", "b"]) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        assert _requests(served.cluster, "/api/v1/namespaces/b/configmaps")[:2] == ["watch-list", "list"]
        assert informer.stats.sync_mode == "list"
