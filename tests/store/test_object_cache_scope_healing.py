"""Everything that heals in the object cache still heals with every scope (per-namespace, label selector,
metadata-only): a lease lost and regained, a 410 relist, the kind moving version, the CRD deleted and recreated
(as cluster-scoped: the per-namespace reflectors make way for one). Handlers see each change once, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.kit import wait_until
from helpers.store import WIDGETS, Mirror, key, object_cache, widget_cluster, widget_obj
from helpers.watch import WIDGET, make_mapper, widget

from restmapper.aio import AsyncObjectCache
from restmapper.errors import NoKindMatchError, ObjectNotFoundError
from restmapper.model import GroupKind
from restmapper.testing import FakeCluster, ServedCluster

WIDGET_GK = GroupKind("example.com", "Widget")
SCOPES = {
    "namespaces": {"namespaces": ["default", "other"]},
    "label_selector": {"label_selector": "tier=gold"},
    "metadata_only": {"metadata_only": True},
}


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def gold(name: str, namespace: str | None = "default", version: str = "v1", tier: str = "gold",
         **spec: Any) -> dict[str, Any]:
    obj = widget_obj(name, namespace, version, **spec)
    obj["metadata"]["labels"] = {"tier": tier}
    return obj


def in_scope(obj: dict[str, Any], options: dict[str, Any]) -> bool:
    namespaces = options.get("namespaces")
    ns = obj["metadata"].get("namespace")
    if namespaces is not None and ns is not None and ns not in namespaces:
        return False
    return "label_selector" not in options or obj["metadata"].get("labels", {}).get("tier") == "gold"


def scoped_versions(cluster: FakeCluster, options: dict[str, Any]) -> dict[str, str]:
    return {key(o): o["metadata"]["resourceVersion"] for o in cluster.list_objects(WIDGETS) if in_scope(o, options)}


def converged(mirror: Mirror, cluster: FakeCluster, options: dict[str, Any]) -> None:
    mirror.wait(lambda m: m.versions() == scoped_versions(cluster, options))


@pytest.mark.parametrize("scope", SCOPES)
def test_every_scope_heals(served: ServedCluster, scope: str) -> None:
    options = SCOPES[scope]
    cluster = served.cluster
    cluster.apply_object(gold("a"))
    cluster.apply_object(gold("b", "other"))
    cluster.apply_object(gold("x", "elsewhere"))
    cluster.apply_object(gold("s", tier="silver"))
    with object_cache(served, **options) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)
        term1 = Mirror()
        handle = term1.attach(informer)
        converged(term1, cluster, options)

        # Lease lost and regained: a new term gets synthetic adds of what is held, then live events.
        assert cache.remove_handler(handle)
        cluster.apply_object(gold("c"))
        term2 = Mirror()
        term2.attach(informer)
        converged(term2, cluster, options)
        assert sorted(e[0] for e in term2.log) == ["ADDED"] * len(scoped_versions(cluster, options))

        # 410: the watches drop and cannot come back (503) while objects change and history is compacted; the
        # re-watch gets 410 Gone and the relist finds the changes.
        down = cluster.inject("/apis/example.com/v1/*", status=503, body="unavailable")
        cluster.drop_watches()
        assert wait_until(lambda: down.hits >= 1, 10)
        cluster.apply_object(gold("a", size=2))
        cluster.apply_object(gold("s", tier="gold"))
        cluster.delete_object(WIDGETS, "c", "default")
        cluster.compact()
        down.remove()
        converged(term2, cluster, options)
        assert informer.stats.relists >= 1

        # The kind moves version: one relist, no delete/add storm.
        term2.clear_log()
        cluster.set_served(WIDGETS, False, version="v1")
        assert informer.wait_until(lambda i: i.mapping is not None and i.mapping.resource.version == "v1beta1"
                                   and i.has_synced, timeout=10)
        updated = cluster.apply_object(gold("a", version="v1beta1", size=3))
        got = cache.wait_for(WIDGETS, "a", "default", resource_version=updated["metadata"]["resourceVersion"],
                             timeout=10)
        assert got["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
        converged(term2, cluster, options)
        assert [e[:2] for e in term2.log] == [("MODIFIED", "default/a")]

        # The CRD deleted and recreated cluster-scoped: deletes, the no-match while gone, then the new objects
        # from one cluster-wide reflector.
        assert cluster.wait_for_watchers(1, 10)
        cluster.delete_crd(WIDGETS)
        assert informer.wait_for_state("not_served", timeout=10)
        with pytest.raises(NoKindMatchError):
            cache.get(WIDGET_GK, "a", "default")
        term2.wait(lambda m: not m.state)
        cluster.clear_requests()
        cluster.add_crd(widget(scope="Cluster"))
        cluster.apply_object(gold("k", namespace=None))
        cluster.apply_object(gold("t", namespace=None, tier="silver"))
        converged(term2, cluster, options)
        assert informer.wait_for_sync(10) and informer.namespaces_state == {}
        assert cache.get(WIDGET_GK, "k")["metadata"]["name"] == "k"
        assert not any("/namespaces/" in r.path for r in cluster.requests if "widgets" in r.path)
        assert not term1.errors and not term2.errors
        if scope == "metadata_only":
            assert all(o["kind"] == "PartialObjectMetadata" for o in cache.list(WIDGETS))


def test_per_namespace_informer_comes_back_namespaced(served: ServedCluster) -> None:
    """A cluster-scoped kind becoming namespaced again gets its per-namespace reflectors back."""
    cluster = served.cluster
    cluster.delete_crd(WIDGETS)
    cluster.add_crd(widget(scope="Cluster"))
    cluster.apply_object(gold("k", namespace=None))
    with object_cache(served, namespaces=["default", "other"]) as cache:
        informer = cache.informer(WIDGET_GK)
        assert informer.wait_for_sync(10) and informer.namespaces_state == {}
        assert cache.get(WIDGET_GK, "k")["metadata"]["name"] == "k"
        assert cluster.wait_for_watchers(1, 10)
        cluster.delete_crd(WIDGETS)
        assert informer.wait_for_state("not_served", timeout=10)
        cluster.add_crd(WIDGET)
        cluster.apply_object(gold("a"))
        cluster.apply_object(gold("x", "elsewhere"))
        assert informer.wait_until(lambda i: i.namespaces_state == {"default": "synced", "other": "synced"},
                                   timeout=10)
        assert [o["metadata"]["name"] for o in cache.list(WIDGET_GK)] == ["a"]


def test_backoff_after_a_per_namespace_run_really_waits(served: ServedCluster) -> None:
    """After the per-namespace reflectors' run ends (a 404 for the type: report, re-resolve), the informer's own
    backoff waits on its stop event, not on the ended run's (already set: every wait would return at once and the
    informer would spin against the server)."""
    cluster = served.cluster
    cluster.apply_object(gold("a"))
    waits: list[bool] = []

    def sleep(stop: Any, seconds: float) -> None:
        waits.append(stop.is_set())
        stop.wait(min(seconds, 0.01))

    with object_cache(served, namespaces=["default", "other"], sleep=sleep) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10) and cluster.wait_for_watchers(2, 10)
        gone = cluster.inject("/apis/example.com/v1/namespaces/default/widgets", status=404,
                              body="404 page not found")
        cluster.drop_watches()  # the re-watch of "default" is a 404 again and again: the informer backs off
        assert informer.wait_until(lambda i: i.stats.not_found >= 3 and len(waits) >= 2, timeout=10)
        assert not any(waits), waits
        gone.remove()
        assert informer.wait_for_state("synced", timeout=10)


def recreate_cluster_scoped_while_down(cluster: FakeCluster) -> None:
    """Delete the Widget CRD and recreate it cluster-scoped while every list and watch of the group fails (the
    cache never sees the kind unserved), with one cluster-scoped Widget; then let the requests through."""
    down = cluster.inject("/apis/example.com/v1/*", status=503, body="unavailable")
    cluster.drop_watches()
    assert wait_until(lambda: down.hits >= 2, 10)
    cluster.delete_crd(WIDGETS)
    cluster.add_crd(widget(scope="Cluster"))
    cluster.apply_object(gold("k", namespace=None))
    cluster.clear_requests()
    down.remove()


def test_a_per_namespace_cache_of_a_kind_recreated_cluster_scoped_while_down_lists_it_cluster_wide(
        served: ServedCluster, watch_list: bool) -> None:
    """Its namespaced paths answer 404: the informer re-resolves, moves to one cluster-wide reflector and answers
    only once that listed; handlers hear the namespaced objects deleted and the cluster-scoped one added."""
    cluster = served.cluster
    cluster.apply_object(gold("a"))
    cluster.apply_object(gold("b", "other"))
    with object_cache(served, namespaces=["default", "other"], watch_list=watch_list) as cache:
        informer = cache.informer(WIDGETS)
        mirror = Mirror()
        mirror.attach(informer)
        converged(mirror, cluster, {})
        recreate_cluster_scoped_while_down(cluster)
        assert informer.wait_until(lambda i: i.has_synced and i.mapping is not None and not i.mapping.namespaced,
                                   timeout=10)
        assert [key(o) for o in cache.list(WIDGET_GK)] == ["/k"]
        assert cache.get(WIDGET_GK, "k")["metadata"].get("namespace") is None
        with pytest.raises(ObjectNotFoundError):
            cache.get(WIDGET_GK, "a", "default")
        assert informer.namespaces_state == {}
        assert [i.scope for i in cache.informers()] == ["the cluster scope"]
        converged(mirror, cluster, {})
        assert sorted(e[:2] for e in mirror.log) == [("ADDED", "/k"), ("ADDED", "default/a"), ("ADDED", "other/b"),
                                                     ("DELETED", "default/a"), ("DELETED", "other/b")]
        assert not mirror.errors
        served_paths = {r.path for r in cluster.requests if "widgets" in r.path}
        assert "/apis/example.com/v1/widgets" in served_paths


def test_the_async_cache_of_a_kind_recreated_cluster_scoped_while_down_lists_it_cluster_wide(
        served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(gold("a"))
    cache = AsyncObjectCache(make_mapper(served.url, miss_refresh_interval=0.0), namespaces=["default", "other"],
                             sync_timeout=10.0, backoff_initial=0.01, backoff_max=0.1)

    async def main() -> None:
        assert [key(o) for o in await cache.list(WIDGET_GK)] == ["default/a"]
        informer = await cache.informer(WIDGET_GK)
        recreate_cluster_scoped_while_down(cluster)
        assert await asyncio.to_thread(informer.wait_until, lambda i: i.mapping is not None
                                       and not i.mapping.namespaced, 10)
        assert [key(o) for o in await cache.list(WIDGET_GK)] == ["/k"]
        assert (await cache.get(WIDGET_GK, "k"))["metadata"]["name"] == "k"

    try:
        asyncio.run(main())
    finally:
        assert cache.cache.stop(10)

