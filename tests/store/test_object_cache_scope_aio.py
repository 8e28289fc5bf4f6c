"""AsyncObjectCache and from_kubeconfig take the scope options: the server sees per-namespace paths, selectors and
the metadata Accept; lazy=False refuses unstarted kinds on the loop too."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import cm, key
from helpers.watch import make_mapper

from restmapper.aio import AsyncObjectCache
from restmapper.errors import InformerNotStartedError, OutsideScopeError
from restmapper.store import ObjectCache, strip_managed_fields
from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


def seed(cluster: FakeCluster) -> None:
    for name, ns, tier in (("a1", "a", "gold"), ("a2", "a", "silver"), ("b1", "b", "gold"), ("c1", "c", "gold")):
        obj = cm(name, ns)
        obj["metadata"]["labels"] = {"tier": tier}
        cluster.apply_object(obj)


def test_async_cache_scoped_by_the_server(served: ServedCluster, watch_list: bool) -> None:
    seed(served.cluster)
    cache = AsyncObjectCache(make_mapper(served.url), namespaces=["a", "b"], label_selector="tier=gold",
                             metadata_only=True, transform=strip_managed_fields, sync_timeout=10.0,
                             watch_list=watch_list)

    async def main() -> None:
        assert [key(o) for o in await cache.list("cm")] == ["a/a1", "b/b1"]
        assert (await cache.get("cm", "b1", "b"))["kind"] == "PartialObjectMetadata"
        with pytest.raises(OutsideScopeError):
            await cache.get("cm", "c1", "c")
        infos = cache.informers()
        assert [(str(i.kind), i.scope, i.objects) for i in infos] == [
            ("ConfigMap", "namespaces 'a', 'b'; label selector 'tier=gold'; metadata only; transformed", 2)]

    try:
        asyncio.run(main())
        assert served.cluster.wait_for_watchers(2, 10)
        for ns in ("a", "b"):
            seen = [r for r in served.cluster.requests if r.path == f"/api/v1/namespaces/{ns}/configmaps"]
            listed = set() if watch_list else {
                (False, "tier=gold", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")}
            assert {("watch" in r.query, r.query.get("labelSelector"), r.headers["Accept"].split(",")[0])
                    for r in seen} == {
                (True, "tier=gold", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")} | listed
    finally:
        assert cache.cache.stop(10)


def test_async_lazy_false_and_start(served: ServedCluster) -> None:
    seed(served.cluster)
    cache = AsyncObjectCache(make_mapper(served.url), lazy=False, sync_timeout=10.0)

    async def main() -> None:
        with pytest.raises(InformerNotStartedError):
            await cache.get("cm", "a1", "a")
        with pytest.raises(InformerNotStartedError):
            await cache.add_handler("cm", on_add=lambda obj: None)
        await cache.start(kinds=["cm"])
        assert (await cache.get("cm", "a1", "a"))["metadata"]["name"] == "a1"

    try:
        asyncio.run(main())
    finally:
        assert cache.cache.stop(10)


def test_from_kubeconfig_takes_the_scope_options(served: ServedCluster) -> None:
    seed(served.cluster)
    options: dict[str, Any] = dict(namespaces=["c"], field_selector="metadata.name=c1", by_kind={"secrets": {
        "namespaces": None}}, ttl=12.0)
    sync = ObjectCache.from_kubeconfig(str(served.kubeconfig_path), **options)
    aio = AsyncObjectCache.from_kubeconfig(str(served.kubeconfig_path), **options)
    try:
        assert [key(o) for o in sync.list("cm")] == ["c/c1"]
        assert asyncio.run(aio.list("cm", "c"))[0]["metadata"]["name"] == "c1"
        assert {r.query.get("fieldSelector") for r in served.cluster.requests
                if r.path == "/api/v1/namespaces/c/configmaps"} == {"metadata.name=c1"}
        with pytest.raises(TypeError, match="options"):
            AsyncObjectCache(sync, namespaces=["a"])
    finally:
        assert sync.stop(10) and aio.cache.stop(10)
