"""A server refusing metadata-only objects (406) in one namespace makes the whole informer hold full objects: every
namespace lists them again before reads answer, reads never mix PartialObjectMetadata with full objects, and the
informer's scope reports what it holds. The rule holds whatever the other namespaces were doing when the 406 came
(a listing of theirs in flight, or half stored), in both sync modes and through the asyncio cache."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.kit import ServerPause, wait_until
from helpers.store import cm, key, object_cache, widget_cluster
from helpers.watch import WIDGET, make_mapper

from restmapper.aio import AsyncObjectCache
from restmapper.store import Informer, ObjectCache
from restmapper.testing import FakeCluster, ServedCluster

NOT_ACCEPTABLE = ('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"only application/json",'
                  '"reason":"NotAcceptable","code":406}')
FULL = [("a/a1", "ConfigMap", {"x": "1"}), ("b/b1", "ConfigMap", {"x": "1"})]


def refuse_metadata_in_a(cluster: FakeCluster, latency: float = 0.0) -> None:
    cluster.apply_object(cm("a1", "a", x="1"))
    cluster.apply_object(cm("b1", "b", x="1"))
    cluster.inject("/api/v1/namespaces/a/configmaps", status=406, body=NOT_ACCEPTABLE,
                   content_type="application/json", times=1, latency=latency)


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        refuse_metadata_in_a(s.cluster)
        yield s


def held(cache: ObjectCache) -> list[tuple[str, str, Any]]:
    return [(key(o), o["kind"], o.get("data")) for o in cache.list("cm")]


def test_a_406_in_one_namespace_makes_every_namespace_hold_full_objects(served: ServedCluster,
                                                                         watch_list: bool) -> None:
    with object_cache(served, metadata_only=True, namespaces=["a", "b"], watch_list=watch_list) as cache:
        assert held(cache) == FULL
        assert [i.scope for i in cache.informers()] == ["namespaces 'a', 'b'"]
        assert not cache.informer("cm").scope.metadata_only
        assert [key(o) for o in cache.list("cm", field_selector="data.x=1")] == ["a/a1", "b/b1"]


class Hold:
    """A transform that holds the reflector handing over an object ``when(obj)`` says (once armed) until the test
    releases it: a listing stopped between its arrival and its storing, on the reflector's own thread."""

    def __init__(self, when: Callable[[dict[str, Any]], bool]) -> None:
        self.when = when
        self.armed = True
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.armed and self.when(obj):
            self.armed = False
            self.entered.set()
            self.release.wait(10)
        return obj


def synced_in(informer: Informer, namespace: str) -> Callable[[], bool]:
    return lambda: informer.namespaces_state.get(namespace) == "synced"


class Gates:
    """The kit's injected ``sleep``: a request injected with ``latency=n`` is held by gate ``n`` (entered, then
    waiting for its release), so a test orders requests of different namespaces as it needs."""

    def __init__(self, *latencies: float) -> None:
        self.gates = {n: ServerPause() for n in latencies}

    def __call__(self, seconds: float) -> None:
        self.gates[seconds](seconds)

    def release_all(self) -> None:
        for gate in self.gates.values():
            gate.release.set()


def test_a_namespace_half_stored_as_metadata_when_another_falls_back_lists_full_objects_before_reads_answer(
        watch_list: bool) -> None:
    # b's metadata-only listing has arrived and is being stored when a's 406 makes the informer hold full objects.
    gates = Gates(2.0)
    a_refused = gates.gates[2.0]
    cluster = FakeCluster(sleep=gates)
    cluster.add_crd(WIDGET)
    refuse_metadata_in_a(cluster, latency=2.0)
    metadata_b1 = Hold(lambda o: o["kind"] == "PartialObjectMetadata" and o["metadata"]["name"] == "b1")
    relisting = Hold(lambda o: o["kind"] == "ConfigMap")  # armed once a listed its full objects
    relisting.armed = False

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        return relisting(metadata_b1(obj))

    with cluster.serve() as served, object_cache(served, metadata_only=True, namespaces=["a", "b"],
                                                 watch_list=watch_list, transform=transform) as cache:
        informer = cache.informer("cm")
        try:
            assert a_refused.entered.wait(10)  # a's request waits for its 406 ...
            assert metadata_b1.entered.wait(10)  # ... while b's metadata-only listing is being stored
            a_refused.release.set()
            assert wait_until(synced_in(informer, "a"), 10)  # a fell back and listed full objects
            assert not informer.has_synced
            relisting.armed = True
            metadata_b1.release.set()
            assert relisting.entered.wait(10)  # b's metadata listing handed over; the full relists begun
            assert not informer.has_synced, "reads answered with b holding metadata-only objects"
        finally:
            gates.release_all()
            metadata_b1.release.set()
            relisting.release.set()
        assert held(cache) == FULL
        assert not informer.scope.metadata_only


def test_a_namespace_listing_metadata_when_another_falls_back_is_listed_again_quietly(
        watch_list: bool, caplog: pytest.LogCaptureFixture) -> None:
    # b asked for metadata-only objects before a's 406 and gets them after a fell back: that listing is of the old
    # representation (neither a disagreement with the mapping, which re-resolves, nor an error); b lists full
    # objects again before reads answer.
    caplog.set_level(logging.INFO, "restmapper")
    gates = Gates(1.0, 2.0)
    a_refused, b_listing = gates.gates[2.0], gates.gates[1.0]
    cluster = FakeCluster(sleep=gates)
    cluster.add_crd(WIDGET)
    refuse_metadata_in_a(cluster, latency=2.0)
    cluster.inject("/api/v1/namespaces/b/configmaps", latency=1.0, times=1)
    with cluster.serve() as served, object_cache(served, metadata_only=True, namespaces=["a", "b"],
                                                 watch_list=watch_list) as cache:
        informer = cache.informer("cm")
        try:
            assert a_refused.entered.wait(10)
            assert b_listing.entered.wait(10)  # b's metadata-only request is in flight
            a_refused.release.set()
            assert wait_until(synced_in(informer, "a"), 10)  # a fell back and listed full objects
            assert not informer.has_synced
        finally:
            gates.release_all()
        assert held(cache) == FULL
        assert (informer.stats.errors, informer.stats.moves) == (0, 0)
        assert "re-resolving" not in caplog.text


def test_async_reads_after_a_406_hold_one_representation(served: ServedCluster, watch_list: bool) -> None:
    cache = AsyncObjectCache(make_mapper(served.url), metadata_only=True, namespaces=["a", "b"], sync_timeout=10.0,
                             watch_list=watch_list)

    async def main() -> None:
        assert [(key(o), o["kind"], o.get("data")) for o in await cache.list("cm")] == FULL

    try:
        asyncio.run(main())
    finally:
        assert cache.cache.stop(10)
