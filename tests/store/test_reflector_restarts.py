"""How the reflector restarts list and watch, against a scripted server (a small Transport that answers each list
and watch as the test says):

* a relist sooner than a healthy period (120 s) after the previous one waits the backoff, whatever the watch
  delivered in between (events, bookmarks): a server answering every watch with one line then ``410 Gone`` (or
  "Too large resource version") must not make the loop list and watch without pause; after a healthy period a
  relist is at once again (client-go restarts ListAndWatch through its backoff manager);
* ``relist_period`` applies however the watch ended: by an error too, not only cleanly;
* a change event whose object has no ``metadata.resourceVersion`` is malformed: counted, never handed on.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from restmapper.errors import TransportError
from restmapper.testing import ManualClock
from restmapper.transport.base import Response
from restmapper.watch.reflector import Listing, Reflector

PATH = "/api/v1/configmaps"
GONE = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
TOO_LARGE = {"kind": "Status", "code": 504, "reason": "Timeout", "message": "Too large resource version: 9, current: 5",
             "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]}}


def line(event_type: str, obj: Mapping[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}).encode()


def cm(rv: str | None, name: str = "a") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "d", "uid": "u-" + name}
    if rv is not None:
        meta["resourceVersion"] = rv
    return {"metadata": meta, "data": {"rv": rv or ""}}


class Stream:
    """One scripted watch response: ``lines``, then ``error`` raised (or a clean end)."""

    status = 200
    headers: Mapping[str, str] = {}

    def __init__(self, lines: list[bytes], error: BaseException | None = None) -> None:
        self.lines, self.error = lines, error

    def iter_lines(self) -> Iterator[bytes]:
        yield from self.lines
        if self.error is not None:
            raise self.error

    def read(self) -> bytes:
        return b""

    def close(self) -> None:
        pass


class Server:
    """A transport: every list answers the collection at resourceVersion 5; the n-th watch is ``watch(n)``. The
    watch after ``watches`` of them sets ``stop`` (the test's end), so a loop that never waits still ends."""

    base_url = "http://scripted.invalid"
    identity = "scripted"

    def __init__(self, stop: threading.Event, watch: Callable[[int], Stream], watches: int) -> None:
        self.stop, self.watch, self.limit = stop, watch, watches
        self.lists = self.watches = 0

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Response:
        self.lists += 1
        return Response(200, {}, json.dumps({"metadata": {"resourceVersion": "5"}, "items": []}).encode(), path)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Stream:
        self.watches += 1
        if self.watches > self.limit:
            self.stop.set()
            return Stream([])
        return self.watch(self.watches)

    def close(self) -> None:
        pass


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def reflector_replace(self, items: Listing) -> None:
        pass

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        self.events.append((event_type, obj))

    def reflector_bookmark(self, resource_version: str) -> None:
        pass

    def reflector_state(self) -> None:
        pass


class Waits:
    """A backoff ``sleep`` that records each wait and advances the clock by it (nothing really sleeps)."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.delays: list[float] = []

    def __call__(self, stop: threading.Event, seconds: float) -> None:
        self.delays.append(seconds)
        self.clock.advance(seconds)


def run(watch: Callable[[int], Stream], watches: int, clock: ManualClock,
        **options: Any) -> tuple[Server, Waits, Counter[str], Sink]:
    stop = threading.Event()
    server = Server(stop, watch, watches)
    waits, counts, sink = Waits(clock), Counter[str](), Sink()
    reflector = Reflector(server, PATH, sink, stop, sleep=waits, clock=clock, count=lambda n: counts.update((n,)),
                          **options)
    assert reflector.run() == "stopped"
    return server, waits, counts, sink


@pytest.mark.parametrize("first", ["event", "bookmark"])
@pytest.mark.parametrize("error", [GONE, TOO_LARGE], ids=["410", "too large"])
def test_a_watch_ending_in_gone_every_time_relists_through_the_backoff(first: str, error: dict[str, Any]) -> None:
    """Every watch delivers one line (an event or a bookmark), then the ERROR: each relist but the first waits a
    growing backoff; none is at once."""
    def watch(n: int) -> Stream:
        head = line("MODIFIED", cm(str(5 + n))) if first == "event" else line("BOOKMARK", cm(str(5 + n)))
        return Stream([head, line("ERROR", error)])

    _, waits, counts, _ = run(watch, 12, ManualClock())
    assert counts["relists"] >= 10
    assert len(waits.delays) >= counts["relists"] - 1, (waits.delays, counts)
    assert waits.delays[:4] == sorted(waits.delays[:4]) and waits.delays[3] > waits.delays[0]


def test_a_relist_after_a_healthy_period_is_at_once() -> None:
    """A 410 after a long healthy watch (the common case: compaction while we watched) relists without waiting."""
    clock = ManualClock()

    def watch(n: int) -> Stream:
        clock.advance(300.0)  # each watch lasted five minutes
        return Stream([line("MODIFIED", cm(str(5 + n))), line("ERROR", GONE)])

    _, waits, counts, _ = run(watch, 4, clock)
    assert counts["relists"] >= 3 and waits.delays == []


def test_relist_period_applies_when_every_watch_ends_by_an_error() -> None:
    """Watches that each run 40 s and die (a proxy resetting connections): with relist_period=100 the loop
    lists again every few of them, as it would after clean ends."""
    clock = ManualClock()

    def watch(n: int) -> Stream:
        clock.advance(40.0)
        return Stream([line("MODIFIED", cm(str(5 + n)))], TransportError("connection reset", path=PATH))

    server, _, _, _ = run(watch, 10, clock, relist_period=100.0)
    assert server.lists >= 3, server.lists


def test_a_change_without_resource_version_is_malformed_and_not_handed_on() -> None:
    def watch(n: int) -> Stream:
        return Stream([line("MODIFIED", cm(None, "norv")), line("ADDED", cm("", "empty")), line("MODIFIED", cm("7"))])

    _, _, counts, sink = run(watch, 1, ManualClock())
    assert [(t, o["metadata"]["name"]) for t, o in sink.events] == [("MODIFIED", "a")]
    assert counts["malformed"] == 2 and counts["events"] == 1
