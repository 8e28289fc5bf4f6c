"""A read's constraints meet the informer's scope before it is answered: a field selector is evaluated locally only
on fields the held objects carry, a namespace however given (argument or ``metadata.namespace=``) goes through the
scope check, a read of every namespace answers only when every namespace can, and a namespace refused after its
first list stops answering (its objects are possibly stale). Sync and asyncio (DESIGN 5.10: never confidently
wrong)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import cm, key, object_cache, widget_cluster
from helpers.watch import make_mapper

from restmapper.aio import AsyncObjectCache
from restmapper.errors import ForbiddenError, OutsideScopeError
from restmapper.testing import ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def pod(name: str, node: str, phase: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}, "status": {"phase": phase}}


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objects]


def strip_status(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "status"}


def test_metadata_only_reads_refuse_field_terms_the_objects_do_not_carry(served: ServedCluster) -> None:
    served.cluster.apply_object(pod("p1", "n1", "Running"))
    served.cluster.apply_object(pod("p2", "n2", "Pending"))
    with object_cache(served, metadata_only=True) as cache:
        assert names(cache.list("pods", "default")) == ["p1", "p2"]
        for selector in ("spec.nodeName=n1", "status.phase=Running", "status.phase!=Running"):
            with pytest.raises(OutsideScopeError, match="metadata only"):
                cache.list("pods", "default", field_selector=selector)
        assert names(cache.list("pods", "default", field_selector="metadata.name=p2")) == ["p2"]
    with object_cache(served, metadata_only=True, field_selector="spec.nodeName=n1") as cache:
        # The server already filtered on the informer's own terms: nothing to evaluate locally.
        assert names(cache.list("pods", "default", field_selector="spec.nodeName==n1")) == ["p1"]
        assert names(cache.list("pods", "default", field_selector="spec.nodeName=n1,metadata.name=p1")) == ["p1"]
        with pytest.raises(OutsideScopeError, match=r"status\.phase"):
            cache.list("pods", "default", field_selector="spec.nodeName=n1,status.phase=Running")


def test_a_transform_that_strips_a_field_refuses_reads_filtering_on_it(served: ServedCluster) -> None:
    served.cluster.apply_object(pod("p1", "n1", "Running"))
    with object_cache(served, transform=strip_status) as cache:
        assert names(cache.list("pods", "default", field_selector="spec.nodeName=n1")) == ["p1"]
        with pytest.raises(OutsideScopeError, match="removed 'status'"):
            cache.list("pods", "default", field_selector="status.phase=Running")


def test_a_namespace_given_as_a_field_selector_is_checked_like_the_argument(served: ServedCluster) -> None:
    cluster = served.cluster
    for name, ns in (("a1", "a"), ("b1", "b"), ("c1", "c")):
        cluster.apply_object(cm(name, ns))
    cluster.forbid_namespace("b")
    with object_cache(served, namespaces=["a", "b"]) as cache:
        informer = cache.informer("cm")
        assert informer.wait_until(lambda i: i.namespaces_state == {"a": "synced", "b": "failing"}, timeout=30)
        assert names(cache.list("cm", field_selector="metadata.namespace=a")) == ["a1"]
        assert cache.list("cm", "a", field_selector="metadata.namespace=b") == []  # two namespaces: none
        with pytest.raises(OutsideScopeError, match="namespace 'c'"):
            cache.list("cm", field_selector="metadata.namespace=c")
        with pytest.raises(ForbiddenError):
            cache.list("cm", field_selector="metadata.namespace=b")
    cluster.allow_namespace("b")
    with object_cache(served, field_selector="metadata.namespace=a") as cache:
        assert names(cache.list("cm")) == ["a1"]
        with pytest.raises(OutsideScopeError, match="namespace 'b'"):
            cache.get("cm", "b1", "b")


def test_a_read_of_every_namespace_fails_while_one_is_refused(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a1", "a"))
    cluster.apply_object(cm("b1", "b"))
    cluster.forbid_namespace("b")
    with object_cache(served, namespaces=["a", "b"]) as cache:
        informer = cache.informer("cm")
        assert informer.wait_until(lambda i: i.namespaces_state == {"a": "synced", "b": "failing"}, timeout=10)
        assert names(cache.list("cm", "a")) == ["a1"]
        with pytest.raises(ForbiddenError, match='namespace "b"'):
            cache.list("cm")
        with pytest.raises(ForbiddenError):
            cache.list("cm", label_selector="x")


def test_a_namespace_refused_after_its_first_list_stops_answering(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a1", "a"))
    cluster.apply_object(cm("b1", "b"))
    with object_cache(served, namespaces=["a", "b"]) as cache:
        informer = cache.informer("cm")
        assert names(cache.list("cm")) == ["a1", "b1"]
        assert cluster.wait_for_watchers(2, 10)
        cluster.forbid_namespace("b")
        cluster.delete_object("configmaps", "b1", "b")  # unseen: b is refused to us
        cluster.restart()  # every watch ends; b's relist is refused
        assert informer.wait_until(lambda i: i.namespaces_state == {"a": "synced", "b": "failing"}, timeout=10)
        for read in (lambda: cache.get("cm", "b1", "b"), lambda: cache.list("cm", "b"), lambda: cache.list("cm")):
            with pytest.raises(ForbiddenError):
                read()
        assert names(cache.list("cm", "a")) == ["a1"]
        cluster.allow_namespace("b")
        assert informer.wait_until(lambda i: i.namespaces_state == {"a": "synced", "b": "synced"}, timeout=10)
        assert names(cache.list("cm")) == ["a1"]


def test_async_reads_apply_the_same_constraints(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(pod("p1", "n1", "Running", "a"))
    cluster.apply_object(cm("a1", "a"))
    cluster.apply_object(cm("b1", "b"))
    cluster.forbid_namespace("b")
    cache = AsyncObjectCache(make_mapper(served.url), namespaces=["a", "b"], metadata_only=True,
                             sync_timeout=10.0)

    async def main() -> None:
        assert [key(o) for o in await cache.list("cm", "a")] == ["a/a1"]
        with pytest.raises(OutsideScopeError, match="metadata only"):
            await cache.list("pods", "a", field_selector="spec.nodeName=n1")
        with pytest.raises(OutsideScopeError):
            await cache.list("cm", field_selector="metadata.namespace=c")
        with pytest.raises(ForbiddenError):
            await cache.list("cm", field_selector="metadata.namespace=b")
        with pytest.raises(ForbiddenError):
            await cache.list("cm")

    try:
        asyncio.run(main())
    finally:
        assert cache.cache.stop(10)
