"""Rule: a transform that does not return the object it was given never leaves a cache that says synced.

A ``transform`` must return a dict keeping ``metadata.name``/``namespace``/``uid``/``resourceVersion``. Whatever
else it does (returns None because it forgot ``return obj``, returns a list, a copy without ``uid``, a renamed
object, another namespace, raises), on the first list or on a later watch event: reads raise
:class:`TransformError` naming the transform and what it did, the informer is ``failing`` with that
``last_error``, and it never answers from a store that misses the object. The informer keeps listing with
backoff, so an object the transform refuses that goes away heals it. Sync and asyncio.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.store import cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.errors import TransformError
from restmapper.store import Informer
from restmapper.testing import FakeCluster, ServedCluster

Obj = dict[str, Any]


def forgets_return(obj: Obj) -> None:
    obj["metadata"].pop("managedFields", None)


def wraps_in_a_list(obj: Obj) -> list[Obj]:
    return [obj]


def drops_uid(obj: Obj) -> Obj:
    slim = copy.deepcopy(obj)
    del slim["metadata"]["uid"]
    return slim


def renames(obj: Obj) -> Obj:
    obj["metadata"]["name"] = obj["metadata"]["name"].upper()
    return obj


def moves_namespace(obj: Obj) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "namespace": "elsewhere"}}


def drops_resource_version(obj: Obj) -> Obj:
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}}


def keeps_only_data(obj: Obj) -> Obj:
    return {"data": obj.get("data")}


def raises(obj: Obj) -> Obj:
    return {**obj, "spec": obj["spec"]["replicas"]}  # a ConfigMap has no spec: KeyError


BAD: dict[str, tuple[Callable[[Obj], Any], str]] = {
    "none": (forgets_return, "returned None"),
    "list": (wraps_in_a_list, "returned a list"),
    "no-uid": (drops_uid, "dropped metadata.uid"),
    "renamed": (renames, "changed metadata.name"),
    "namespace": (moves_namespace, "changed metadata.namespace"),
    "no-rv": (drops_resource_version, "dropped metadata.resourceVersion"),
    "no-metadata": (keeps_only_data, "without metadata"),
    "raises": (raises, "raised KeyError"),
}


def only_for(name: str, bad: Callable[[Obj], Any]) -> Callable[[Obj], Any]:
    """A transform that is right for every object but ``name``, where it does what ``bad`` does."""
    def transform(obj: Obj) -> Any:
        return bad(obj) if obj["metadata"]["name"] == name else obj
    transform.__qualname__ = bad.__qualname__
    return transform


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", x="1"))
    with cluster.serve() as s:
        yield s


def assert_refused(error: BaseException, bad: Callable[[Obj], Any], problem: str, name: str) -> None:
    assert isinstance(error, TransformError), repr(error)
    assert bad.__qualname__ in str(error) and problem in str(error), str(error)
    assert (error.kind, error.namespace, error.name) == ("ConfigMap", "default", name)


def assert_failing_with(informer: Informer, bad: Callable[[Obj], Any], problem: str, name: str) -> None:
    assert informer.wait_until(lambda i: i.state == "failing" and isinstance(i.last_error, TransformError), 10)
    assert informer.last_error is not None
    assert_refused(informer.last_error, bad, problem, name)
    assert not informer.has_synced


@pytest.mark.parametrize("case", list(BAD))
def test_a_refused_object_in_the_first_list_fails_reads_at_once(served: ServedCluster, case: str) -> None:
    bad, problem = BAD[case]
    with object_cache(served, transform=bad, sync_timeout=30.0) as cache:
        with pytest.raises(TransformError) as info:
            cache.get("cm", "a", "default")
        assert_refused(info.value, bad, problem, "a")
        with pytest.raises(TransformError):
            cache.list("cm")
        assert not cache.wait_for_sync("cm", timeout=30.0)
        assert_failing_with(cache.informer("cm"), bad, problem, "a")


@pytest.mark.parametrize("case", list(BAD))
def test_a_refused_object_in_a_watch_event_fails_reads_until_it_is_gone(served: ServedCluster, case: str) -> None:
    bad, problem = BAD[case]
    with object_cache(served, transform=only_for("bad", bad), sync_timeout=30.0) as cache:
        assert cache.get("cm", "a", "default")["data"] == {"x": "1"}
        informer = cache.informer("cm")
        served.cluster.apply_object(cm("bad", x="2"))
        assert_failing_with(informer, bad, problem, "bad")
        with pytest.raises(TransformError):
            cache.get("cm", "a", "default")  # the store misses an object: no answer from it
        with pytest.raises(TransformError):
            cache.list("cm")
        served.cluster.delete_object("configmaps", "bad", "default")  # it lists again with backoff: heals
        assert informer.wait_until(lambda i: i.has_synced, 10)  # wait_for_sync returns at once while failing
        assert [o["metadata"]["name"] for o in cache.list("cm")] == ["a"]


@pytest.mark.parametrize("case", ["none", "renamed", "raises"])
def test_async_reads_raise_the_transform_error(served: ServedCluster, case: str) -> None:
    bad, problem = BAD[case]

    async def main(cache: AsyncObjectCache) -> None:
        with pytest.raises(TransformError) as info:
            await cache.get("cm", "a", "default")
        assert_refused(info.value, bad, problem, "a")
        with pytest.raises(TransformError):
            await cache.list("cm")
        assert not await cache.wait_for_sync("cm", 30.0)

    with object_cache(served, transform=bad, sync_timeout=30.0) as sync_cache:
        asyncio.run(main(AsyncObjectCache(sync_cache)))


def test_a_transform_that_keeps_the_identity_may_change_anything_else(served: ServedCluster) -> None:
    def slim(obj: Obj) -> Obj:
        return {"metadata": {k: obj["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion")},
                "data": {"size": str(len(obj.get("data") or {}))}}

    with object_cache(served, transform=slim) as cache:
        assert cache.get("cm", "a", "default")["data"] == {"size": "1"}
        assert cache.informer("cm").state == "synced" and cache.informer("cm").last_error is None

