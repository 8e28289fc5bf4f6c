"""The reflector protocol under faults, seen through an informer: watch 410, dropped connection, server restart.

Each scenario is checked against what the kit recorded (the resourceVersions its writes returned, and its objects
at the end): no duplicate add, no lost or spurious event. A wrapping transport holds reconnects at a gate so the
fault happens exactly while the watch is down; nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from helpers.store import Mirror, cm, converged
from helpers.watch import BackoffRecorder, make_mapper

from restmapper.errors import TransportError
from restmapper.store import Informer, ObjectCache
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.transport import Transport

CM_PATH = "/api/v1/configmaps"


class _Broken:
    """A watch stream that yields ``lines`` then fails like a connection reset."""

    def __init__(self, inner: Any, lines: int) -> None:
        self.inner, self.lines = inner, lines
        self.status, self.headers = inner.status, inner.headers

    def iter_lines(self) -> Iterator[bytes]:
        for i, line in enumerate(self.inner.iter_lines()):
            if i >= self.lines:
                raise TransportError("connection reset by peer (injected)", path=CM_PATH)
            yield line

    def read(self) -> bytes:
        return bytes(self.inner.read())

    def close(self) -> None:
        self.inner.close()


class GatedTransport:
    """Passes everything to ``inner``; list and watch requests on ``CM_PATH`` wait at ``gate`` once ``armed``, and
    the next watch may be replaced by a stream that breaks after a number of lines."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.base_url, self.identity = inner.base_url, inner.identity
        self.gate = threading.Event()
        self.armed = False
        self.waiting = threading.Event()
        self.break_after: int | None = None
        self.hold_continue = False  # hold the next list request that carries a continue token
        self.watches: list[dict[str, str]] = []
        self.lists: list[dict[str, str]] = []

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        if path == CM_PATH:
            params = dict(kw.get("params") or {})
            self.lists.append(params)
            if self.armed or (self.hold_continue and "continue" in params):
                self.hold_continue = False
                self.waiting.set()
                assert self.gate.wait(10)
        return self.inner.get(path, headers, **kw)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        if path == CM_PATH:
            self.watches.append(dict(kw.get("params") or {}))
            if self.armed:
                self.waiting.set()
                assert self.gate.wait(10)
            if self.break_after is not None:
                lines, self.break_after = self.break_after, None
                return _Broken(self.inner.stream(path, headers, **kw), lines)
        return self.inner.stream(path, headers, **kw)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with FakeCluster().serve() as s:
        yield s


def _start(served: ServedCluster, cache: ObjectCache, n: int = 5) -> tuple[Informer, Mirror]:
    for i in range(n):
        served.cluster.apply_object(cm(f"c{i}", v="0"))
    informer = cache.informer("cm")
    mirror = Mirror()
    mirror.attach(informer)
    converged(mirror, served.cluster, "configmaps")
    assert served.cluster.wait_for_watchers(1, 10)
    mirror.clear_log()
    return informer, mirror


def _churn(cluster: FakeCluster) -> list[tuple[str, str, str]]:
    """Change, delete and create objects; return the kit's record of each write ``(type, key, rv)``."""
    writes = []
    for name, value in (("c1", "1"), ("c1", "2"), ("c2", "1")):
        writes.append(("MODIFIED", f"default/{name}", cluster.apply_object(cm(name, v=value))["metadata"]
                       ["resourceVersion"]))
    writes.append(("DELETED", "default/c3", cluster.delete_object("configmaps", "c3", "default")["metadata"]
                   ["resourceVersion"]))
    writes.append(("ADDED", "default/n1", cluster.apply_object(cm("n1"))["metadata"]["resourceVersion"]))
    return writes


def _cache(served: ServedCluster, **options: Any) -> tuple[ObjectCache, GatedTransport]:
    mapper = make_mapper(served.url, miss_refresh_interval=0.0)
    transport = GatedTransport(mapper.transport)
    cache = ObjectCache(mapper, transport=transport, backoff_initial=0.01, backoff_max=0.05, sync_timeout=10,
                        **options)
    return cache, transport


def test_watch_410_relists_with_deletes_and_updates_and_no_duplicate_adds(served: ServedCluster,
                                                                          watch_list: bool) -> None:
    cache, transport = _cache(served, watch_list=watch_list)
    try:
        informer, mirror = _start(served, cache)
        lists = informer.stats.lists
        transport.armed = True
        served.cluster.drop_watches()
        assert transport.waiting.wait(10)  # the informer is reconnecting, held at the gate
        _churn(served.cluster)
        served.cluster.compact()  # the resourceVersion it will resume from is now too old: 410
        transport.armed = False
        transport.gate.set()
        converged(mirror, served.cluster, "configmaps")
        # A relist cannot see intermediate states: one update for c1 (two writes), one for c2.
        assert sorted(e[:2] for e in mirror.log) == [("ADDED", "default/n1"), ("DELETED", "default/c3"),
                                                     ("MODIFIED", "default/c1"), ("MODIFIED", "default/c2")]
        assert not mirror.errors
        assert informer.stats.lists == lists + 1 and informer.stats.relists == 1
    finally:
        assert cache.stop(10)


def test_dropped_connection_resumes_from_the_last_version_without_a_relist(served: ServedCluster,
                                                                           watch_list: bool) -> None:
    cache, transport = _cache(served, watch_list=watch_list)
    try:
        informer, mirror = _start(served, cache)
        lists = informer.stats.lists
        transport.break_after = 2  # the next stream delivers two events, then the connection resets
        transport.armed = True
        served.cluster.drop_watches()
        assert transport.waiting.wait(10)
        writes = _churn(served.cluster)
        transport.armed = False
        transport.gate.set()
        converged(mirror, served.cluster, "configmaps")
        # Exactly the kit's writes, in order: nothing lost, nothing twice, across the reset and the reconnect.
        assert mirror.log == writes and not mirror.errors
        assert informer.stats.lists == lists and informer.stats.errors >= 1
        resumed = [w["resourceVersion"] for w in transport.watches[-2:]]
        assert resumed[1] == writes[1][2]  # the reconnect resumed after the second event
    finally:
        assert cache.stop(10)


@pytest.mark.parametrize("keep_objects", [True, False])
def test_server_restart(served: ServedCluster, keep_objects: bool, watch_list: bool) -> None:
    """A restart drops every watch and compacts history (the re-watch gets 410 and relists); with
    keep_objects=False the objects vanish without events and the relist delivers their deletes."""
    cache, transport = _cache(served, watch_list=watch_list)
    try:
        informer, mirror = _start(served, cache)
        transport.armed = True
        # A write elsewhere first: the informer's resourceVersion is then older than the compaction point.
        served.cluster.apply_object({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
        served.cluster.restart(keep_objects=keep_objects)
        assert transport.waiting.wait(10)
        if keep_objects:
            _churn(served.cluster)
        transport.armed = False
        transport.gate.set()
        converged(mirror, served.cluster, "configmaps")
        expected = ([("ADDED", "default/n1"), ("DELETED", "default/c3"), ("MODIFIED", "default/c1"),
                     ("MODIFIED", "default/c2")] if keep_objects else [("DELETED", f"default/c{i}") for i in range(5)])
        assert sorted(e[:2] for e in mirror.log) == expected
        assert not mirror.errors and informer.stats.relists == 1
        assert informer.wait_for_state("synced", timeout=10)
    finally:
        assert cache.stop(10)


def test_expired_continue_token_restarts_the_list_without_duplicates(served: ServedCluster) -> None:
    """The second page's continue token expires (its snapshot was compacted) while the list is paged: the list
    starts over and the handlers see one consistent list: every object once, in its final state."""
    for i in range(7):
        served.cluster.apply_object(cm(f"c{i}", v="0"))
    cache, transport = _cache(served, page_size=3, watch_list=False)  # continue tokens: paginated lists
    try:
        transport.hold_continue = True
        informer = cache.informer("cm")
        mirror = Mirror()
        mirror.attach(informer)  # before the first list: it hears that list's adds
        assert transport.waiting.wait(10)  # page 1 read; the request for page 2 is held
        writes = _churn(served.cluster)
        served.cluster.compact()  # the token's snapshot is gone: 410 Expired
        transport.gate.set()
        converged(mirror, served.cluster, "configmaps")
        assert sorted(e[1] for e in mirror.log) == sorted(f"default/{n}" for n in (
            "c0", "c1", "c2", "c4", "c5", "c6", "n1"))
        assert {e[0] for e in mirror.log} == {"ADDED"} and not mirror.errors
        assert mirror.versions()["default/c1"] == writes[1][2]
        assert [("continue" in p) for p in transport.lists] == [False, True, False, True, True]
        assert informer.stats.lists == 1 and informer.stats.relists == 0  # watched from the restarted list's RV
    finally:
        assert cache.stop(10)


class _Empty:
    status, headers = 200, {"Content-Type": "application/json"}

    def iter_lines(self) -> Iterator[bytes]:
        return iter(())

    def read(self) -> bytes:
        return b""

    def close(self) -> None:
        pass


def test_a_server_ending_every_watch_at_once_gets_backoff_not_a_tight_loop(served: ServedCluster) -> None:
    """Each early end re-resolves the mapping (a teardown looks like that); three in a row back off, growing."""
    sleep = BackoffRecorder(4)
    delays, enough = sleep.delays, sleep.enough
    mapper = make_mapper(served.url, miss_refresh_interval=0.0)
    inner = mapper.transport

    class EmptyWatches(GatedTransport):
        def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
            if path == CM_PATH:
                self.watches.append(dict(kw.get("params") or {}))
                return _Empty()
            return self.inner.stream(path, headers, **kw)

    transport = EmptyWatches(inner)
    cache = ObjectCache(mapper, transport=transport, sleep=sleep, backoff_initial=0.5, sync_timeout=10)
    try:
        assert cache.wait_for_sync("cm", 10)
        assert enough.wait(10)
        assert len(transport.watches) <= 3 * len(delays) + 3
        assert delays[-1] > delays[0]
    finally:
        assert cache.stop(10)


def test_a_watch_list_broken_before_its_bookmark_is_completed_by_a_list_without_duplicates(
        served: ServedCluster) -> None:
    """The WatchList stream resets after two of five initial events: that listing is dropped, a paginated list
    completes the sync, and the handlers hear of every object once; the next relist tries WatchList again."""
    for i in range(5):
        served.cluster.apply_object(cm(f"c{i}", v="0"))
    cache, transport = _cache(served, page_size=1)
    try:
        transport.break_after = 2
        informer = cache.informer("cm")
        mirror = Mirror()
        mirror.attach(informer)
        converged(mirror, served.cluster, "configmaps")
        assert sorted(e[:2] for e in mirror.log) == [("ADDED", f"default/c{i}") for i in range(5)]
        assert not mirror.errors and informer.stats.lists == 1
        assert transport.watches[0].get("sendInitialEvents") == "true" and len(transport.lists) == 5
        assert informer.stats.sync_mode == "watch-list"  # a failure, not a server without WatchList
        mirror.clear_log()
        served.cluster.compact()
        served.cluster.apply_object(cm("c1", v="1"))
        served.cluster.compact()
        served.cluster.drop_watches()  # resumes from a compacted resourceVersion: 410, a relist by WatchList
        converged(mirror, served.cluster, "configmaps")
        assert [w.get("sendInitialEvents") for w in transport.watches].count("true") >= 2 and not mirror.errors
    finally:
        assert cache.stop(10)
