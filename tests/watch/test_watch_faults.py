"""Watcher under hostile servers and awkward callers (found by adversarial testing; each test failed before its fix).

No test sleeps to wait for a thread: a wrapping transport hands out scripted streams and Events synchronise.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from helpers.watch import WIDGET, BackoffRecorder, Recorder, make_mapper, running, until

from restmapper.testing import FakeCluster, ServedCluster
from restmapper.transport import Transport
from restmapper.watch import Watcher

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    with cluster.serve() as s:
        yield s


class _ScriptedStream:
    def __init__(self, status: int, lines: list[bytes], body: bytes = b"") -> None:
        self.status, self.headers, self._lines, self._body = status, {"Content-Type": "application/json"}, lines, body

    def iter_lines(self) -> Iterator[bytes]:
        yield from self._lines

    def read(self) -> bytes:
        return self._body

    def close(self) -> None:
        pass


class _Wrap:
    """A transport that lets a test replace CRD watch streams (composition over the real one)."""

    def __init__(self, inner: Transport, hook: Callable[[int], Any]) -> None:
        self.inner, self.hook, self.calls = inner, hook, 0
        self.base_url, self.identity = inner.base_url, inner.identity

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        return self.inner.get(path, headers, **kw)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        if path == CRD_PATH:
            self.calls += 1
            replacement = self.hook(self.calls)
            if replacement is not None:
                return replacement
        return self.inner.stream(path, headers, **kw)

    def close(self) -> None:
        self.inner.close()


def _no_wait(stop: threading.Event, seconds: float) -> None:
    pass


def test_a_hostile_watch_line_never_ends_the_loop_silently() -> None:
    """A line nested 200k levels deep (RecursionError in json) is an error to back off from, not a dead thread."""
    cluster = FakeCluster()
    with cluster.serve() as served:
        mapper = make_mapper(served.url)
        hostile = _ScriptedStream(200, [b"[" * 200_000 + b"]" * 200_000])
        transport = _Wrap(mapper.transport, lambda n: hostile if n == 1 else None)
        recorder = Recorder()
        watcher = Watcher(mapper, transport=transport, sleep=_no_wait, watch_apiservices=False)
        watcher.add_handler(recorder)
        with running(watcher, cluster, streams=1):
            assert watcher.stats.errors >= 1 and watcher.last_error is not None
            cluster.add_crd(WIDGET)
            recorder.wait(("ADDED", "CustomResourceDefinition", "widgets.example.com"))
            assert mapper.resolve("widgets").resource.group == "example.com"


def test_a_410_storm_backs_off_instead_of_relisting_in_a_tight_loop() -> None:
    cluster = FakeCluster.embedded()
    recording_sleep = BackoffRecorder(5)
    delays, enough = recording_sleep.delays, recording_sleep.enough
    with cluster.serve() as served:
        mapper = make_mapper(served.url)
        gone = _ScriptedStream(410, [], b'{"kind":"Status","code":410,"reason":"Expired"}')
        watcher = Watcher(mapper, transport=_Wrap(mapper.transport, lambda n: gone),
                          sleep=recording_sleep, watch_apiservices=False, backoff_initial=0.5)
        watcher.start()
        try:
            assert enough.wait(10)
        finally:
            assert watcher.stop()
        # One list per round: the first 410 relists at once, every further one waits first, longer and longer.
        assert watcher.stats.lists <= len(delays) + 2
        assert delays[-1] > delays[0]


def test_a_handler_may_call_stop() -> None:
    """stop() from a handler must neither deadlock with the other loop nor wait for its own thread."""
    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        mapper = make_mapper(served.url)
        watcher = Watcher(mapper)
        result: dict[str, bool] = {}
        done = threading.Event()

        def handler(event_type: str, kind: str, obj: Mapping[str, Any]) -> None:
            if kind == "CustomResourceDefinition" and not done.is_set():
                result["stopped"] = watcher.stop(timeout=None)  # timeout=None deadlocked before the fix
                done.set()

        watcher.start()
        assert watcher.wait_until_healthy(10)
        watcher.add_handler(handler)
        cluster.add_crd(WIDGET)
        assert done.wait(10)
        assert result["stopped"] is False and not watcher.running
        assert watcher.stop(timeout=10)  # from outside: the threads have ended
        assert not [t for t in threading.enumerate() if t.name.startswith("restmapper-watch")]


def test_concurrent_start_and_stop_never_raise_or_leak_threads() -> None:
    cluster = FakeCluster()
    with cluster.serve() as served:
        watcher = Watcher(make_mapper(served.url), sleep=_no_wait)
        errors: list[BaseException] = []
        barrier = threading.Barrier(8)

        def hammer(seed: int) -> None:
            barrier.wait()
            for i in range(40):
                try:
                    (watcher.start if (seed + i) % 2 else watcher.stop)()
                except BaseException as exc:  # pragma: no cover - reported below
                    errors.append(exc)

        threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert watcher.stop(timeout=10)
        assert not [t for t in threading.enumerate() if t.name.startswith("restmapper-watch")]


def test_relist_reports_a_recreated_crd_deleted_then_added(served: ServedCluster) -> None:
    """Deleted and recreated (new UID) while the watch was down: a name-keyed handler must end with it present."""
    cluster = served.cluster
    cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    gate = threading.Event()

    def hook(n: int) -> Any:
        if n >= 2:
            assert gate.wait(10)  # the reconnect waits until the CRD was recreated and history compacted
        return None

    recorder = Recorder()
    watcher = Watcher(mapper, transport=_Wrap(mapper.transport, hook), sleep=_no_wait,
                      watch_apiservices=False)
    watcher.add_handler(recorder)
    with running(watcher, cluster, streams=1):
        recorder.clear()
        cluster.drop_watches()
        cluster.delete_crd("widgets.example.com")
        cluster.add_crd(WIDGET)
        cluster.compact()
        gate.set()
        until(watcher, lambda: len([e for e in recorder.events if e[2] == "widgets.example.com"]) >= 2)
        names = [e[0] for e in recorder.events if e[2] == "widgets.example.com"]
        assert names[-2:] == ["DELETED", "ADDED"]
        assert mapper.resolve("widgets").resource.group == "example.com"
