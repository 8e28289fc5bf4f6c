"""User code run by the library's threads or tasks (a transform, an indexer, a generation-cache build, an async
handler) may raise anything, ``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit`` included: it is that
code's failure, recorded (counted or logged) where its kind of failure is, and the informer, the watcher's CRD loop
and the handler's delivery go on. A failing indexer never leaves the store half-written."""

from __future__ import annotations

import asyncio
import copy
import threading
from typing import Any

import pytest
from helpers.store import cm, object_cache
from helpers.watch import WIDGET, Recorder, make_mapper, running

from restmapper.aio import AsyncObjectCache
from restmapper.errors import TransformError
from restmapper.store import GenerationCache
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.watch import Watcher

UNCATCHABLE = [SystemExit, KeyboardInterrupt, GeneratorExit]


@pytest.fixture
def served() -> Any:
    cluster = FakeCluster()
    cluster.apply_object(cm("a"))
    with cluster.serve() as s:
        yield s


@pytest.mark.parametrize("exc", UNCATCHABLE)
def test_a_transform_raising_any_exception_is_a_transform_error(served: ServedCluster,
                                                                exc: type[BaseException]) -> None:
    """The transform refuses "bad" with ``exc``: the informer reports a TransformError and keeps listing; once the
    transform accepts it again, the informer syncs and later writes arrive."""
    refuse = threading.Event()

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        if refuse.is_set() and obj["metadata"]["name"] == "bad":
            raise exc()
        return obj

    with object_cache(served, transform=transform) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        refuse.set()
        served.cluster.apply_object(cm("bad"))
        assert informer.wait_until(lambda i: isinstance(i.last_error, TransformError), timeout=10)
        assert informer.state != "synced"
        refuse.clear()  # the next relist (after the backoff) takes it
        assert informer.wait_for_state("synced", timeout=10)
        assert cache.get("cm", "bad", "default")
        written = served.cluster.apply_object(cm("after"))
        cache.wait_for("cm", "after", "default", resource_version=written["metadata"]["resourceVersion"], timeout=10)


@pytest.mark.parametrize("exc", UNCATCHABLE)
def test_an_indexer_raising_any_exception_leaves_the_object_unindexed(served: ServedCluster,
                                                                      exc: type[BaseException]) -> None:
    def by_name(obj: Any) -> list[str]:
        if obj["metadata"]["name"] == "bad":
            raise exc()
        return [obj["metadata"]["name"]]

    with object_cache(served) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        informer.add_indexer("name", by_name)
        served.cluster.apply_object(cm("bad"))
        written = served.cluster.apply_object(cm("after"))
        cache.wait_for("cm", "after", "default", resource_version=written["metadata"]["resourceVersion"], timeout=10)
        assert informer.state == "synced"
        assert cache.get("cm", "bad", "default")  # stored whole, just not indexed
        assert informer.by_index("name", "bad") == []
        assert [o["metadata"]["name"] for o in informer.by_index("name", "after")] == ["after"]


def _crd(group: str) -> dict[str, Any]:
    crd = copy.deepcopy(WIDGET)
    crd["metadata"]["name"] = f"widgets.{group}"
    crd["spec"]["group"] = group
    return crd


@pytest.mark.parametrize("exc", [SystemExit, KeyboardInterrupt])
def test_a_generation_cache_build_raising_any_exception_does_not_end_the_crd_watch(exc: type[BaseException]) -> None:
    def build(crd: dict[str, Any]) -> str:
        if crd["spec"]["group"] == "bad.example.com":
            raise exc("refused")
        return str(crd["metadata"]["name"])

    with FakeCluster().serve() as served:
        watcher = Watcher(make_mapper(served.url), generation_cache=GenerationCache.for_crds(build),
                          watch_apiservices=False, backoff_initial=0.01, backoff_max=0.1)
        seen = Recorder()
        watcher.add_handler(seen)
        with running(watcher, served.cluster, 1):
            served.cluster.add_crd(_crd("bad.example.com"))
            served.cluster.add_crd(_crd("good.example.com"))
            seen.wait(("ADDED", "CustomResourceDefinition", "widgets.good.example.com"))
            assert watcher.stats.build_errors >= 1 and watcher.running


@pytest.mark.parametrize("exc", UNCATCHABLE)
def test_a_generation_cache_dispose_raising_any_exception_is_counted(exc: type[BaseException]) -> None:
    def dispose(value: str) -> None:
        raise exc()

    cache: GenerationCache[dict[str, Any], str] = GenerationCache.for_crds(lambda crd: "built", dispose=dispose)
    crd = _crd("example.com")
    crd["metadata"].update(uid="u1", generation=1)
    assert cache.get(crd) == "built"
    assert cache.forget("u1")
    assert cache.stats.dispose_errors == 1


@pytest.mark.parametrize("exc", UNCATCHABLE)
def test_an_async_handler_raising_any_exception_is_counted_and_delivery_goes_on(served: ServedCluster,
                                                                                exc: type[BaseException]) -> None:
    async def scenario() -> tuple[list[str], int]:
        seen: list[str] = []
        bad, after = asyncio.Event(), asyncio.Event()
        with object_cache(served) as cache:
            acache = AsyncObjectCache(cache)

            async def on_add(obj: dict[str, Any]) -> None:
                name = obj["metadata"]["name"]
                seen.append(name)
                if name == "bad":
                    bad.set()
                    raise exc()
                if name == "after":
                    after.set()

            await acache.add_handler("cm", on_add=on_add)
            served.cluster.apply_object(cm("bad"))
            await asyncio.wait_for(bad.wait(), 10)
            served.cluster.apply_object(cm("after"))
            await asyncio.wait_for(after.wait(), 10)
            informer = await acache.informer("cm")
            return seen, informer.stats.handler_errors

    seen, errors = asyncio.run(scenario())
    assert seen[-2:] == ["bad", "after"] and errors == 1
