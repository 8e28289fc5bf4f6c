"""A handler's failure, whatever it raises, is counted and logged and never ends delivery, to it or to others:
``SystemExit`` from an informer or CRD-watcher handler, a ``CancelledError`` a coroutine handler lets escape."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import cm, object_cache
from helpers.watch import WIDGET, Recorder, make_mapper, running, widget

from restmapper.aio import AsyncObjectCache
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.watch import Watcher

CRD = "CustomResourceDefinition"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


class Names:
    """A handler recording the names it was called with."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.names: list[str] = []

    def __call__(self, obj: dict[str, Any]) -> None:
        with self.cond:
            self.names.append(obj["metadata"]["name"])
            self.cond.notify_all()

    def wait(self, name: str) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: name in self.names, 10), self.names


def test_informer_handler_raising_system_exit_does_not_stop_delivery(served: ServedCluster) -> None:
    first, second = Names(), Names()

    def exits(obj: dict[str, Any]) -> None:
        if obj["metadata"]["name"] == "boom":
            raise SystemExit(3)
        first(obj)

    with object_cache(served) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        informer.add_handler(on_add=exits)
        informer.add_handler(on_add=second)
        for name in ("a", "boom", "c"):
            served.cluster.apply_object(cm(name))
        second.wait("c")
        first.wait("c")
        assert first.names == ["a", "c"] and second.names == ["a", "boom", "c"]
        assert informer.stats.handler_errors == 1 and informer.state == "synced"


def test_coroutine_handler_letting_cancelled_error_escape_is_called_again(served: ServedCluster) -> None:
    async def scenario(acache: AsyncObjectCache) -> list[str]:
        seen: list[str] = []
        done = asyncio.Event()

        async def on_add(obj: dict[str, Any]) -> None:
            name = obj["metadata"]["name"]
            if name == "boom":
                raise asyncio.CancelledError  # e.g. an inner timeout's cancellation not caught
            seen.append(name)
            if name == "c":
                done.set()

        await acache.add_handler("cm", on_add=on_add)
        for name in ("a", "boom", "c"):  # in name order too: some may come as the synthetic adds of a sync
            served.cluster.apply_object(cm(name))
        await asyncio.wait_for(done.wait(), 10)
        return seen

    with object_cache(served) as cache:
        assert asyncio.run(scenario(AsyncObjectCache(cache))) == ["a", "c"]
        assert cache.informer("cm").stats.handler_errors == 1


def test_removing_an_async_handler_still_cancels_it(served: ServedCluster) -> None:
    """The handler's own cancellation is told apart from the registration's: remove_handler ends it."""
    async def scenario(acache: AsyncObjectCache) -> bool:
        started, never = asyncio.Event(), asyncio.Event()
        cancelled = asyncio.Event()

        async def on_add(obj: dict[str, Any]) -> None:
            started.set()
            try:
                await never.wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        handle = await acache.add_handler("cm", on_add=on_add)
        served.cluster.apply_object(cm("a"))
        await asyncio.wait_for(started.wait(), 10)
        assert acache.remove_handler(handle)
        await asyncio.wait_for(cancelled.wait(), 10)
        return True

    with object_cache(served) as cache:
        assert asyncio.run(scenario(AsyncObjectCache(cache)))


def test_crd_watcher_handler_raising_system_exit_does_not_stop_the_watch(served: ServedCluster) -> None:
    rec = Recorder()

    def exits(event_type: str, kind: str, obj: Any) -> None:
        if obj["metadata"]["name"] == "widgets.example.com":
            raise SystemExit(3)

    watcher = Watcher(make_mapper(served.url), watch_apiservices=False)
    watcher.add_handler(exits)
    watcher.add_handler(rec)
    with running(watcher, served.cluster, 1):
        served.cluster.add_crd(WIDGET)
        rec.wait(("ADDED", CRD, "widgets.example.com"))
        gadget = widget(names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
        gadget["metadata"]["name"] = "gadgets.example.com"
        served.cluster.add_crd(gadget)
        rec.wait(("ADDED", CRD, "gadgets.example.com"))
        assert watcher.stats.handler_errors == 1 and watcher.healthy
