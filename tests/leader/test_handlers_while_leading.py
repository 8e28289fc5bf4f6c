"""Handlers bound to a leader elector: attached while it leads, detached when it stops; the informer never stops.

The cache lists and watches over the loopback kit; the elector writes the Lease in-process on the same cluster and
is driven turn by turn on a ManualClock.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from helpers.kit import wait_until
from helpers.leader import NAME, NAMESPACE, candidate, mapper_for
from helpers.store import cm, object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.leader import AsyncLeaderElector
from restmapper.store import LeadershipBinding, ObjectCache
from restmapper.testing import FakeCluster, ManualClock

CONFIGMAPS = "/api/v1/configmaps"


def _lists(cluster: FakeCluster) -> int:
    return sum(1 for r in cluster.requests
               if r.method == "GET" and r.path == CONFIGMAPS and r.query.get("watch") not in ("1", "true"))


def test_handlers_follow_the_lease_and_the_informer_never_relists_across_ten_losses() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    for name in ("a", "b"):
        cluster.apply_object(cm(name, x="0"))
    elector = candidate(cluster, clock, "me")
    seen: list[tuple[str, str, bool]] = []  # (event, name, is_leader when called)
    lock = threading.Lock()

    def record(event: str, obj: dict[str, Any]) -> None:
        with lock:
            seen.append((event, obj["metadata"]["name"], elector.elector.is_leader))

    def events() -> list[tuple[str, str, bool]]:
        with lock:
            return list(seen)

    with cluster.serve() as served, object_cache(served) as cache:
        binding = cache.add_handler("configmaps", on_add=lambda o: record("add", o),
                                    on_update=lambda old, new: record("update", new), while_leading=elector.elector)
        assert isinstance(binding, LeadershipBinding) and not binding.attached
        assert cache.wait_for_sync("configmaps", timeout=10)
        informer = cache.informer("configmaps")
        lists = _lists(cluster)
        elector.tick()
        assert binding.attached
        assert wait_until(lambda: {(e, n) for e, n, _ in events()} == {("add", "a"), ("add", "b")}, 10)

        for loss in range(10):
            cluster.steal_lease(NAME, NAMESPACE, "other")
            clock.advance(2.0)
            elector.tick()  # sees the other holder: stops leading, handlers detached first
            assert not elector.elector.is_leader and not binding.attached
            before = len(events())
            changed = cluster.apply_object(cm("a", x=str(loss + 1)))  # a change the loser must not handle
            cache.wait_for("configmaps", "a", "default", resource_version=changed["metadata"]["resourceVersion"],
                           timeout=10)
            cluster.expire_lease(NAME, NAMESPACE)
            elector.tick()  # regains the lease: attached again, synthetic adds of what is held now
            assert elector.elector.is_leader and binding.attached
            assert wait_until(lambda n=before: len(events()) >= n + 2, 10)
            assert sorted((e, n) for e, n, _ in events()[before:]) == [("add", "a"), ("add", "b")]

        assert all(leading for _, _, leading in events())  # never called while not leading
        assert _lists(cluster) == lists  # ten lease losses, no relist
        assert cache.informer("configmaps") is informer and informer.state == "synced"
        assert elector.events.count("started") == 11 and elector.events.count("stopped") == 10

        assert cache.remove_handler(binding)
        assert not binding.attached and not binding.active
        cluster.apply_object(cm("b", x="late"))
        elector.elector.stop()
    assert ("update", "b", True) not in events()


def test_a_binding_made_while_leading_attaches_at_once() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a"))
    elector = candidate(cluster, clock, "me")
    elector.tick()
    added: list[str] = []
    with cluster.serve() as served, object_cache(served) as cache:
        binding = cache.add_handler("configmaps", on_add=lambda o: added.append(o["metadata"]["name"]),
                                    while_leading=elector.elector)
        assert binding.attached  # type: ignore[attr-defined]
        assert wait_until(lambda: added == ["a"], 10)
        elector.elector.stop()  # detached before the release
        assert not binding.attached  # type: ignore[attr-defined]


def test_async_handlers_follow_an_async_elector() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a"))

    async def scenario(cache: ObjectCache) -> None:
        async_cache = AsyncObjectCache(cache)
        elector = AsyncLeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="me", clock=clock)
        names: asyncio.Queue[str] = asyncio.Queue()

        async def on_add(obj: dict[str, Any]) -> None:
            await names.put(obj["metadata"]["name"])

        binding = await async_cache.add_handler("configmaps", on_add=on_add, while_leading=elector)
        assert isinstance(binding, LeadershipBinding) and not binding.attached
        await elector.tick()
        assert await asyncio.wait_for(names.get(), 10) == "a"
        cluster.steal_lease(NAME, NAMESPACE, "other")
        clock.advance(2.0)
        await elector.tick()
        assert not binding.attached
        made = cluster.apply_object(cm("b"))  # added while not leading: not handled now
        await asyncio.to_thread(cache.wait_for, "configmaps", "b", "default",
                                resource_version=made["metadata"]["resourceVersion"], timeout=10)
        cluster.expire_lease(NAME, NAMESPACE)
        await elector.tick()
        got = {await asyncio.wait_for(names.get(), 10) for _ in range(2)}
        assert got == {"a", "b"} and names.empty()  # the synthetic adds of the new term, nothing else
        assert async_cache.remove_handler(binding) and not binding.attached
        await elector.stop()

    with cluster.serve() as served, object_cache(served) as cache:
        asyncio.run(scenario(cache))
