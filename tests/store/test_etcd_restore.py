"""The object cache and the CRD watcher follow the server through an etcd restore from a snapshot.

Without a revision bump, resourceVersions go back: a watch from the resourceVersion the client holds is answered
"Too large resource version" (504, cause ``ResourceVersionTooLarge``; kubernetes#107457), as an ``ERROR`` event
or as the watch's answer; the client relists. With the documented safe restore (``--bump-revision
--mark-compacted``, etcd#16028) every watch gets 410 and the client relists. Either way the relist is the truth:
afterwards the cache holds exactly what the server lists, older resourceVersions included, and handlers hear of
every difference (an update back, a delete of what the restore removed, an add of what it brought back).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import cm, object_cache
from helpers.watch import WIDGET, Recorder, make_mapper, running, widget

from restmapper.aio import AsyncObjectCache
from restmapper.store import GenerationCache, ObjectCache
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.watch import Watcher

CRD = "CustomResourceDefinition"
RESTORES = [pytest.param(0, False, id="resourceVersions-go-back"),
            pytest.param(1000, True, id="bump-revision-mark-compacted")]


class Tally:
    """Handlers keeping ``key -> resourceVersion`` from the events alone, and every ``(type, key)`` they heard.

    Unlike the Mirror of the other object-cache tests it accepts an update to an older resourceVersion: after a
    restore that is the truth."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.state: dict[str, str] = {}
        self.log: list[tuple[str, str]] = []
        self.errors: list[str] = []

    def _key(self, obj: dict[str, Any]) -> str:
        return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"

    def on_add(self, obj: dict[str, Any]) -> None:
        with self.cond:
            if self._key(obj) in self.state:
                self.errors.append(f"duplicate add {self._key(obj)}")
            self._put("ADDED", obj)

    def on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        with self.cond:
            if self._key(new) not in self.state:
                self.errors.append(f"update of unknown {self._key(new)}")
            self._put("MODIFIED", new)

    def on_delete(self, obj: dict[str, Any]) -> None:
        with self.cond:
            if self.state.pop(self._key(obj), None) is None:
                self.errors.append(f"delete of unknown {self._key(obj)}")
            self.log.append(("DELETED", self._key(obj)))
            self.cond.notify_all()

    def _put(self, kind: str, obj: dict[str, Any]) -> None:
        self.state[self._key(obj)] = obj["metadata"]["resourceVersion"]
        self.log.append((kind, self._key(obj)))
        self.cond.notify_all()

    def wait_for(self, expected: dict[str, str], timeout: float = 10.0) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: self.state == expected, timeout), (self.state, expected, self.log)


def server_state(cluster: FakeCluster) -> dict[str, str]:
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"]
            for o in cluster.list_objects("configmaps")}


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


def _restore_scenario(cluster: FakeCluster) -> tuple[Any, dict[str, str]]:
    """Seed c0..c3, snapshot; return the snapshot and the state at it."""
    for i in range(4):
        cluster.apply_object(cm(f"c{i}", v="0"))
    return cluster.snapshot(), server_state(cluster)


def _write_after_snapshot(cluster: FakeCluster) -> None:
    cluster.apply_object(cm("c1", v="1"))
    cluster.delete_object("configmaps", "c2", "default")
    cluster.apply_object(cm("n1"))


@pytest.mark.parametrize(("bump", "mark_compacted"), RESTORES)
def test_informer_after_a_restore_holds_what_the_server_lists_and_sees_later_writes(
        served: ServedCluster, bump: int, mark_compacted: bool, watch_list: bool) -> None:
    cluster = served.cluster
    snap, at_snapshot = _restore_scenario(cluster)
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer("cm")
        tally = Tally()
        informer.add_handler(tally.on_add, tally.on_update, tally.on_delete)
        _write_after_snapshot(cluster)
        tally.wait_for(server_state(cluster))
        held_rv = informer.get("c1", "default")["metadata"]["resourceVersion"]
        tally.log.clear()

        cluster.restore(snap, bump_revision=bump, mark_compacted=mark_compacted)
        tally.wait_for(at_snapshot)  # c1 back to its older resourceVersion, c2 back, n1 gone
        assert sorted(tally.log) == [("ADDED", "default/c2"), ("DELETED", "default/n1"), ("MODIFIED", "default/c1")]
        assert informer.get("c1", "default")["data"] == {"v": "0"}
        assert int(informer.get("c1", "default")["metadata"]["resourceVersion"]) < int(held_rv)
        assert informer.stats.relists >= 1 and informer.stats.stale_drops == 0 and not tally.errors

        written = cluster.apply_object(cm("c3", v="after"))  # a write after the restore reaches the cache
        got = cache.wait_for("cm", "c3", "default", resource_version=written["metadata"]["resourceVersion"],
                             timeout=10)
        assert got["data"] == {"v": "after"}
        tally.wait_for(server_state(cluster))


@pytest.mark.parametrize(("bump", "mark_compacted"), RESTORES)
def test_async_handlers_after_a_restore_hear_every_difference(served: ServedCluster, bump: int,
                                                              mark_compacted: bool, watch_list: bool) -> None:
    cluster = served.cluster
    snap, at_snapshot = _restore_scenario(cluster)

    async def scenario(cache: ObjectCache) -> None:
        acache = AsyncObjectCache(cache)
        changed = asyncio.Event()
        state: dict[str, str] = {}
        log: list[tuple[str, str]] = []

        async def on_add(obj: dict[str, Any]) -> None:
            state[obj["metadata"]["name"]] = obj["metadata"]["resourceVersion"]
            log.append(("ADDED", obj["metadata"]["name"]))
            changed.set()

        async def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
            state[new["metadata"]["name"]] = new["metadata"]["resourceVersion"]
            log.append(("MODIFIED", new["metadata"]["name"]))
            changed.set()

        async def on_delete(obj: dict[str, Any]) -> None:
            state.pop(obj["metadata"]["name"], None)
            log.append(("DELETED", obj["metadata"]["name"]))
            changed.set()

        async def until(expected: dict[str, str]) -> None:
            want = {k.split("/")[1]: v for k, v in expected.items()}

            async def converged() -> None:
                while state != want:
                    await changed.wait()
                    changed.clear()

            await asyncio.wait_for(converged(), 10)

        await acache.add_handler("cm", on_add, on_update, on_delete)
        _write_after_snapshot(cluster)
        await until(server_state(cluster))
        log.clear()
        cluster.restore(snap, bump_revision=bump, mark_compacted=mark_compacted)
        await until(at_snapshot)
        assert sorted(log) == [("ADDED", "c2"), ("DELETED", "n1"), ("MODIFIED", "c1")]
        written = cluster.apply_object(cm("c3", v="after"))
        got = await acache.wait_for("cm", "c3", "default", resource_version=written["metadata"]["resourceVersion"],
                                    timeout=10)
        assert got["data"] == {"v": "after"}

    with object_cache(served, watch_list=watch_list) as cache:
        asyncio.run(scenario(cache))


def test_too_large_resource_version_as_the_watch_answer_relists(served: ServedCluster, watch_list: bool) -> None:
    """The 504 "Too large resource version" can come as the watch request's answer (not an event): relist too."""
    cluster = served.cluster
    cluster.apply_object(cm("c0"))
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 504,
              "reason": "Timeout", "message": "Too large resource version: 99, current: 12",
              "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                          "retryAfterSeconds": 1}}
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and cluster.wait_for_watchers(1, 10)
        lists = informer.stats.lists
        cluster.inject("/api/v1/configmaps", status=504, body=json.dumps(status), content_type="application/json",
                       times=1)  # the reconnecting watch gets it
        cluster.drop_watches()
        assert informer.wait_until(lambda i: i.stats.lists > lists, timeout=10)
        assert informer.stats.relists == 1
        written = cluster.apply_object(cm("c1"))
        cache.wait_for("cm", "c1", "default", resource_version=written["metadata"]["resourceVersion"], timeout=10)


def _gc() -> GenerationCache[Any, int]:
    return GenerationCache.for_crds(lambda crd: int(crd["metadata"]["generation"]))


@pytest.mark.parametrize(("bump", "mark_compacted"), RESTORES)
def test_crd_watcher_after_a_restore_learns_the_restored_crds(served: ServedCluster, bump: int,
                                                              mark_compacted: bool) -> None:
    """The CRD watcher shares the rule: after the restore it reports what the restore changed (a CRD back at
    generation 1, a CRD created after the snapshot deleted), its generation-aware cache holds the restored CRD's
    value, and a CRD added after the restore reaches the mapper."""
    cluster = served.cluster
    cluster.add_crd(WIDGET)
    snap = cluster.snapshot()
    mapper = make_mapper(served.url)
    gc = _gc()
    rec = Recorder()
    watcher = Watcher(mapper, generation_cache=gc, watch_apiservices=False)
    watcher.add_handler(rec)
    with running(watcher, cluster, 1):
        uid = cluster.get_crd("widgets.example.com")["metadata"]["uid"]  # type: ignore[index]
        cluster.update_crd(widget(versions=[*WIDGET["spec"]["versions"],
                                            {"name": "v2", "served": True, "storage": False}]))
        rec.wait(("MODIFIED", CRD, "widgets.example.com"))
        assert gc.peek(uid) == 2
        gadget = widget(names={"plural": "gadgets", "singular": "gadget", "kind": "Gadget"})
        gadget["metadata"]["name"] = "gadgets.example.com"
        cluster.add_crd(gadget)
        rec.wait(("ADDED", CRD, "gadgets.example.com"))
        rec.clear()

        cluster.restore(snap, bump_revision=bump, mark_compacted=mark_compacted)
        rec.wait(("DELETED", CRD, "gadgets.example.com"))
        rec.wait(("MODIFIED", CRD, "widgets.example.com"))
        assert gc.peek(uid) == 1  # the relist is the truth, not the higher generation held

        sprocket = widget(group="sprockets.example.com",
                          names={"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket"})
        sprocket["metadata"]["name"] = "sprockets.sprockets.example.com"
        cluster.add_crd(sprocket)
        rec.wait(("ADDED", CRD, "sprockets.sprockets.example.com"))
