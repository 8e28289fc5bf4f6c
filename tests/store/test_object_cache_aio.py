"""AsyncObjectCache: awaitable reads and waits, coroutine handlers delivered on the caller's loop, in order."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import cm, key, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.store import CacheSyncTimeoutError, Informer, ObjectNotFoundError
from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


def test_async_reads_waits_and_coroutine_handlers(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a", x="1"))
    with object_cache(served) as sync_cache:
        cache = AsyncObjectCache(sync_cache)

        async def main() -> None:
            loop_thread = threading.current_thread().name
            assert (await cache.get("cm", "a", "default"))["data"] == {"x": "1"}
            assert [key(o) for o in await cache.list("cm")] == ["default/a"]
            assert await cache.wait_for_sync("cm", 10)
            with pytest.raises(ObjectNotFoundError):
                await cache.get("cm", "zz", "default")
            seen: list[tuple[str, str]] = []
            threads: set[str] = set()
            done = asyncio.Event()

            async def on_add(obj: dict[str, Any]) -> None:
                threads.add(threading.current_thread().name)
                await asyncio.sleep(0)  # a real coroutine: later changes must still arrive after this one
                seen.append(("add", key(obj)))

            def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
                seen.append(("update", key(new)))

            async def on_delete(obj: dict[str, Any]) -> None:
                seen.append(("delete", key(obj)))
                done.set()

            async def broken(obj: dict[str, Any]) -> None:
                raise RuntimeError("handler bug")

            broken_handle = await cache.add_handler("cm", on_add=broken)
            handle = await cache.add_handler("cm", on_add=on_add, on_update=on_update, on_delete=on_delete)
            rv = (await asyncio.to_thread(served.cluster.apply_object, cm("a", x="2")))["metadata"]["resourceVersion"]
            held = await cache.wait_for("cm", "a", "default", resource_version=rv, timeout=10)
            assert held["data"] == {"x": "2"}
            await asyncio.to_thread(served.cluster.delete_object, "configmaps", "a", "default")
            await asyncio.wait_for(done.wait(), 10)
            assert seen == [("add", "default/a"), ("update", "default/a"), ("delete", "default/a")]
            assert threads == {loop_thread}
            informer = await cache.informer("cm")
            assert informer.stats.handler_errors == 1
            assert cache.remove_handler(handle) and cache.remove_handler(broken_handle)
            assert not cache.remove_handler(handle)

        asyncio.run(main())


def test_async_cache_rejects_other_objects() -> None:
    with pytest.raises(TypeError):
        AsyncObjectCache(object())  # type: ignore[arg-type]


def test_many_async_waits_cost_no_threads_and_time_out_typed(served: ServedCluster) -> None:
    """100 concurrent read-your-writes waits run on the loop (the default executor has a handful of threads)."""
    from restmapper.store import ObjectWaitTimeoutError

    served.cluster.apply_object(cm("a", x="0"))
    with object_cache(served) as sync_cache:
        cache = AsyncObjectCache(sync_cache)

        async def main() -> None:
            await cache.get("cm", "a", "default")
            updated = await asyncio.to_thread(served.cluster.apply_object, cm("a", x="1"))
            threads = threading.active_count()  # after to_thread, which may start an executor thread itself
            rv = updated["metadata"]["resourceVersion"]
            waits = [cache.wait_for("cm", "a", "default", resource_version=rv, timeout=10) for _ in range(100)]
            results = await asyncio.gather(*waits)
            assert {r["data"]["x"] for r in results} == {"1"}
            assert threading.active_count() <= threads + 2  # 100 waits, not a thread each
            with pytest.raises(ObjectWaitTimeoutError):
                await cache.wait_for("cm", "a", "default", generation=99, timeout=0.05)
            assert await cache.wait_for_sync("cm", 1)

        asyncio.run(main())


@pytest.mark.parametrize("read", ["get", "list"])
def test_a_move_racing_an_inline_read_never_waits_on_the_loop(served: ServedCluster, read: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The inline read asked ``has_synced`` and then read: an informer that moved in between (made unreadable
    until its new list lands) was waited for on the event loop, blocking it up to ``sync_timeout``. The move is
    made at the one point the old code offered (its ``has_synced`` check); a wait must happen in a thread."""
    served.cluster.apply_object(cm("a", x="1"))
    with object_cache(served, sync_timeout=0.5) as sync_cache:
        informer = sync_cache.informer("cm")
        assert informer.wait_for_sync(10)
        waits_on: list[str] = []
        original_wait = Informer.wait_for_sync

        def wait_for_sync(self: Informer, timeout: float | None) -> bool:
            waits_on.append(threading.current_thread().name)
            return original_wait(self, timeout)

        def moved_after_checking(self: Informer) -> bool:
            readable = self._readable
            with self._cond:
                self._unreadable()  # what a move does first; the new list lands when the test lets it
            return readable

        monkeypatch.setattr(Informer, "wait_for_sync", wait_for_sync)
        monkeypatch.setattr(Informer, "has_synced", property(moved_after_checking))
        cache = AsyncObjectCache(sync_cache)

        async def main() -> str:
            try:
                if read == "get":
                    await cache.get("cm", "zz", "default")  # a miss: the warm path cannot answer it
                else:
                    await cache.list("cm")
            except (CacheSyncTimeoutError, ObjectNotFoundError):
                pass  # either is an answer; what matters is where the wait happened
            return threading.current_thread().name

        loop_thread = asyncio.run(main())
        assert loop_thread not in waits_on, "waited for the informer on the event loop"
