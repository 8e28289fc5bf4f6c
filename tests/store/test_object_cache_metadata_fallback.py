"""A server refusing metadata-only objects (406) in one namespace makes the whole informer hold full objects: every
namespace lists them again before reads answer, reads never mix PartialObjectMetadata with full objects, and the
informer's scope reports what it holds."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from helpers.store import cm, key, object_cache, widget_cluster
from helpers.watch import make_mapper

from restmapper.aio import AsyncObjectCache
from restmapper.testing import ServedCluster

NOT_ACCEPTABLE = ('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"only application/json",'
                  '"reason":"NotAcceptable","code":406}')


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        s.cluster.apply_object(cm("a1", "a", x="1"))
        s.cluster.apply_object(cm("b1", "b", x="1"))
        s.cluster.inject("/api/v1/namespaces/a/configmaps", status=406, body=NOT_ACCEPTABLE,
                         content_type="application/json", times=1)
        yield s


def test_a_406_in_one_namespace_makes_every_namespace_hold_full_objects(served: ServedCluster) -> None:
    with object_cache(served, metadata_only=True, namespaces=["a", "b"]) as cache:
        assert [(key(o), o["kind"], o.get("data")) for o in cache.list("cm")] == [
            ("a/a1", "ConfigMap", {"x": "1"}), ("b/b1", "ConfigMap", {"x": "1"})]
        assert [i.scope for i in cache.informers()] == ["namespaces 'a', 'b'"]
        assert not cache.informer("cm").scope.metadata_only
        assert [key(o) for o in cache.list("cm", field_selector="data.x=1")] == ["a/a1", "b/b1"]


def test_async_reads_after_a_406_hold_one_representation(served: ServedCluster) -> None:
    cache = AsyncObjectCache(make_mapper(served.url), metadata_only=True, namespaces=["a", "b"], sync_timeout=10.0)

    async def main() -> None:
        assert {o["kind"] for o in await cache.list("cm")} == {"ConfigMap"}

    try:
        asyncio.run(main())
    finally:
        assert cache.cache.stop(10)
