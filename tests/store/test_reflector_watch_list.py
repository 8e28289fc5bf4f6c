"""How the reflector syncs by WatchList (KEP-3157), against a scripted server (a small Transport answering each
list and watch as the test says):

* one watch with ``sendInitialEvents=true``, ``resourceVersionMatch=NotOlderThan``, ``allowWatchBookmarks=true``
  and no resourceVersion; its ``ADDED`` events are the list, handed to the sink as they arrive, up to the bookmark
  annotated ``k8s.io/initial-events-end: "true"`` (the list's resourceVersion); the same stream then carries the
  changes; changes before that bookmark (written after the server's snapshot) are applied after the list, in order;
* a server refusing the parameters (400, 422) or ignoring ``sendInitialEvents`` (a bookmark without the
  annotation before the initial-events-end bookmark, or a stream running out its time without it) makes the
  reflector list in pages from then on;
* a watch-list that fails otherwise (a stream ending before that bookmark, a 403 or a 5xx answer) is completed by
  a paginated list this once, as client-go; a 410 inside it starts it over. The sink sees an incomplete listing
  fail, never a partial list as the truth.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from restmapper.testing import ManualClock
from restmapper.transport.base import Response
from restmapper.watch.reflector import Listing, Reflector

PATH = "/api/v1/configmaps"
END = {"k8s.io/initial-events-end": "true"}
GONE = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
INVALID = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 422, "reason": "Invalid",
           "message": "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is "
                      "forbidden for watch unless the WatchList feature gate is enabled"}


def line(event_type: str, obj: Mapping[str, Any]) -> bytes:
    """An event line as kube-apiserver encodes it (Go's encoding/json: compact)."""
    return json.dumps({"type": event_type, "object": obj}, separators=(",", ":")).encode()


def spaced(event_type: str, obj: Mapping[str, Any]) -> bytes:
    """The same event, encoded otherwise (the reflector must not depend on the encoding)."""
    return json.dumps({"type": event_type, "object": obj}, indent=None).encode()


def cm(name: str, rv: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "d", "uid": "u-" + name, "resourceVersion": rv}}


def bookmark(rv: str, annotations: Mapping[str, str] | None = None) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": rv}
    if annotations:
        meta["annotations"] = dict(annotations)
    return line("BOOKMARK", {"metadata": meta})


class Stream:
    """One scripted watch response: its status, ``lines`` (``advance`` seconds pass on the clock before the end)."""

    headers: Mapping[str, str] = {}

    def __init__(self, lines: list[bytes], status: int = 200, body: Mapping[str, Any] | None = None,
                 clock: ManualClock | None = None, advance: float = 0.0) -> None:
        self.lines, self.status, self.body = lines, status, body
        self.clock, self.advance = clock, advance

    def iter_lines(self) -> Iterator[bytes]:
        yield from self.lines
        if self.clock is not None:
            self.clock.advance(self.advance)

    def read(self) -> bytes:
        return json.dumps(self.body or {}).encode()

    def close(self) -> None:
        pass


class Server:
    """A transport: every list answers ``items`` at resourceVersion 50; the n-th watch (from 1) is ``watch(n)`` and
    the one after ``watches`` of them sets ``stop`` (the test's end)."""

    base_url = "http://scripted.invalid"
    identity = "scripted"

    def __init__(self, stop: threading.Event, watch: Callable[[int], Stream], watches: int,
                 items: list[dict[str, Any]]) -> None:
        self.stop, self.watch, self.limit, self.items = stop, watch, watches, items
        self.lists: list[dict[str, str]] = []
        self.watches: list[dict[str, str]] = []

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Response:
        self.lists.append(dict(kw.get("params") or {}))
        body = {"metadata": {"resourceVersion": "50"}, "items": self.items}
        return Response(200, {}, json.dumps(body).encode(), path)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Stream:
        self.watches.append(dict(kw.get("params") or {}))
        if len(self.watches) > self.limit:
            self.stop.set()
            return Stream([])
        return self.watch(len(self.watches))

    def close(self) -> None:
        pass


class Sink:
    """Records each complete list (names, resourceVersion), each listing that failed part way (the names it got),
    and each event."""

    def __init__(self) -> None:
        self.lists: list[tuple[list[str], str]] = []
        self.failed: list[list[str]] = []
        self.events: list[tuple[str, str]] = []
        self.bookmarks: list[str] = []

    def reflector_replace(self, items: Listing) -> None:
        got: list[str] = []
        try:
            for obj in items:
                got.append(obj["metadata"]["name"])
        except BaseException:
            self.failed.append(got)
            raise
        self.lists.append((got, items.resource_version))

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        self.events.append((event_type, obj["metadata"]["name"]))

    def reflector_bookmark(self, resource_version: str) -> None:
        self.bookmarks.append(resource_version)

    def reflector_state(self) -> None:
        pass


def run(watch: Callable[[int], Stream], watches: int, *, items: list[dict[str, Any]] | None = None,
        clock: ManualClock | None = None, **options: Any) -> tuple[Server, Sink, Reflector, Counter[str]]:
    stop = threading.Event()
    server = Server(stop, watch, watches, items or [])
    sink, counts = Sink(), Counter[str]()
    reflector = Reflector(server, PATH, sink, stop, sleep=lambda stop, seconds: None, clock=clock or ManualClock(),
                          count=lambda n: counts.update((n,)), watch_list=True, **options)
    assert reflector.run() == "stopped"
    return server, sink, reflector, counts


def watch_list_request(params: Mapping[str, str]) -> bool:
    return params.get("sendInitialEvents") == "true"


def test_the_initial_events_are_the_list_and_the_same_stream_carries_the_changes() -> None:
    def watch(n: int) -> Stream:
        return Stream([line("ADDED", cm("a", "1")), line("ADDED", cm("b", "2")), bookmark("3", END),
                       line("MODIFIED", cm("a", "4"))])

    server, sink, reflector, counts = run(watch, 1, page_size=1)
    assert sink.lists == [(["a", "b"], "3")] and sink.events == [("MODIFIED", "a")]
    assert server.lists == [] and len(server.watches) == 2  # the second is after the first ended (then stopped)
    first = server.watches[0]
    assert first["sendInitialEvents"] == "true" and first["resourceVersionMatch"] == "NotOlderThan"
    assert first["allowWatchBookmarks"] == "true" and "resourceVersion" not in first
    assert server.watches[1]["resourceVersion"] == "4" and not watch_list_request(server.watches[1])
    assert reflector.sync_mode == "watch-list" and counts["lists"] == 1 and counts["connects"] == 1


@pytest.mark.parametrize("status", [422, 400])
def test_a_server_refusing_watch_list_is_listed_in_pages_from_then_on(status: int) -> None:
    def watch(n: int) -> Stream:
        if n == 1:
            return Stream([], status=status, body=INVALID)
        return Stream([line("ERROR", GONE)])  # every plain watch: 410, so the reflector relists

    server, sink, reflector, _ = run(watch, 3, items=[cm("a", "1")])
    assert reflector.sync_mode == "list" and not reflector.watch_list
    assert [watch_list_request(w) for w in server.watches] == [True, False, False, False]
    assert len(server.lists) == 3 and sink.lists == [(["a"], "50")] * 3  # the first list and two relists


def test_changes_before_the_initial_events_end_are_applied_after_the_list_in_their_order() -> None:
    """kube-apiserver sends the changes written after its snapshot as they come, and the initial-events-end
    bookmark only at its next bookmark tick: a change (even a delete and a re-create of a listed object) before
    that bookmark is WatchList served, not ignored. As client-go's temporary store, the sync ends with every
    change applied in order; the listing is what came before the first change."""
    def watch(n: int) -> Stream:
        return Stream([line("ADDED", cm("a", "1")), line("ADDED", cm("b", "2")), line("MODIFIED", cm("a", "3")),
                       line("DELETED", cm("b", "4")), line("ADDED", cm("b", "5")), line("ADDED", cm("c", "6")),
                       bookmark("7", END), line("MODIFIED", cm("c", "8"))])

    server, sink, reflector, counts = run(watch, 1, page_size=1)
    # The listing claims no resourceVersion (its state is no snapshot at one the server named): the end bookmark's
    # is claimed by that bookmark, handed as one after the changes it follows.
    assert sink.lists == [(["a", "b"], "")] and sink.failed == [] and sink.bookmarks == ["7"]
    assert sink.events == [("MODIFIED", "a"), ("DELETED", "b"), ("ADDED", "b"), ("ADDED", "c"), ("MODIFIED", "c")]
    assert reflector.sync_mode == "watch-list" and server.lists == []
    assert server.watches[1]["resourceVersion"] == "8" and counts["events"] == 5


def test_a_sync_interrupted_as_it_is_stored_still_applies_its_changes_before_the_end() -> None:
    """The resourceVersion of the sync is the end bookmark's only with the changes before it applied: an owner
    that interrupts the loop and watches on from that resourceVersion misses none of them."""
    stop = threading.Event()

    class Interrupting(Sink):
        def reflector_replace(self, items: Listing) -> None:
            reflector.interrupt()
            super().reflector_replace(items)

    server = Server(stop, lambda n: Stream([line("ADDED", cm("a", "1")), line("MODIFIED", cm("a", "3")),
                                            line("DELETED", cm("a", "4")), bookmark("7", END)]), 1, [])
    sink = Interrupting()
    reflector = Reflector(server, PATH, sink, stop, sleep=lambda stop, seconds: None, clock=ManualClock(),
                          watch_list=True)
    assert reflector.run() == "interrupted"
    assert sink.lists == [(["a"], "")] and sink.events == [("MODIFIED", "a"), ("DELETED", "a")]
    assert reflector.resource_version == "7" and reflector.synced


def test_a_server_ignoring_send_initial_events_is_detected_and_listed_in_pages() -> None:
    before_end = bookmark("3")  # kube-apiserver annotates every bookmark before the initial events end
    def watch(n: int) -> Stream:
        if n == 1:  # an older server: a plain watch from "now", the current objects as ADDED first
            return Stream([line("ADDED", cm("a", "1")), line("ADDED", cm("b", "2")), before_end])
        return Stream([line("MODIFIED", cm("b", "60"))])

    server, sink, reflector, _ = run(watch, 2, items=[cm("a", "1"), cm("b", "2")], page_size=1)
    assert reflector.sync_mode == "list"
    assert sink.failed == [["a", "b"]] and sink.lists == [(["a", "b"], "50")]  # never the stream as the truth
    assert [watch_list_request(w) for w in server.watches] == [True, False, False]
    assert server.watches[1]["resourceVersion"] == "50"


def test_a_stream_running_out_its_time_without_the_bookmark_is_a_server_ignoring_watch_list() -> None:
    clock = ManualClock()

    def watch(n: int) -> Stream:
        if n == 1:
            return Stream([line("ADDED", cm("a", "1"))], clock=clock, advance=60.0)
        return Stream([])

    _, sink, reflector, _ = run(watch, 1, items=[cm("a", "1")], clock=clock, watch_timeout=60)
    assert reflector.sync_mode == "list" and sink.lists == [(["a"], "50")]


@pytest.mark.parametrize("first", [
    pytest.param(Stream([line("ADDED", cm("a", "1")), line("ADDED", cm("b", "2"))]), id="ends before the bookmark"),
    pytest.param(Stream([]), id="ends at once"),
    pytest.param(Stream([], status=503, body={"kind": "Status", "code": 503}), id="503"),
    pytest.param(Stream([], status=403, body={"kind": "Status", "code": 403}), id="403"),
])
def test_a_failed_watch_list_is_completed_by_a_paginated_list_and_the_next_sync_tries_again(first: Stream) -> None:
    """As client-go: making progress is better than deadlocking. The listing that failed is never the truth."""
    def watch(n: int) -> Stream:
        if n == 1:
            return first
        if n == 2:
            return Stream([line("ERROR", GONE)])  # the watch after the list: 410, a relist
        return Stream([line("ADDED", cm("a", "1")), line("ADDED", cm("c", "5")), bookmark("60", END)])

    server, sink, reflector, counts = run(watch, 3, items=[cm("a", "1"), cm("b", "2")], page_size=1)
    assert sink.failed == ([["a", "b"]] if first.lines else [[]] if first.status == 200 else [])
    assert sink.lists == [(["a", "b"], "50"), (["a", "c"], "60")]
    assert [watch_list_request(w) for w in server.watches] == [True, False, True, False]
    assert reflector.sync_mode == "watch-list" and len(server.lists) == 1 and counts["lists"] == 2


def test_a_410_inside_the_initial_stream_relists_by_watch_list_again() -> None:
    def watch(n: int) -> Stream:
        if n == 1:
            return Stream([line("ADDED", cm("a", "1")), line("ERROR", GONE)])
        return Stream([line("ADDED", cm("a", "7")), bookmark("8", END)])

    server, sink, reflector, counts = run(watch, 2, page_size=1)
    assert sink.failed == [["a"]] and sink.lists == [(["a"], "8")]
    assert counts["relists"] == 1 and reflector.sync_mode == "watch-list"
    assert [watch_list_request(w) for w in server.watches] == [True, True, False]


def test_a_sink_that_stops_reading_still_gets_a_complete_sync() -> None:
    """What the sink leaves unread is read (and dropped): the resourceVersion is the list's, never a partial one."""
    class Lazy(Sink):
        def reflector_replace(self, items: Listing) -> None:
            self.lists.append(([next(iter(items))["metadata"]["name"]], ""))

    def watch(n: int) -> Stream:
        return Stream([line("ADDED", cm("a", "1")), line("ADDED", cm("b", "2")), bookmark("3", END)])

    stop = threading.Event()
    server = Server(stop, watch, 1, [])
    reflector = Reflector(server, PATH, Lazy(), stop, sleep=lambda stop, seconds: None, clock=ManualClock(),
                          watch_list=True, page_size=1)
    assert reflector.run() == "stopped"
    assert server.watches[1]["resourceVersion"] == "3"


@pytest.mark.parametrize("encode", [line, spaced], ids=["compact", "spaced"])
def test_initial_events_decode_the_same_in_batches_and_one_by_one(encode: Callable[..., bytes]) -> None:
    def watch(n: int) -> Stream:
        return Stream([encode("ADDED", cm(f"o{i}", str(i + 1))) for i in range(7)] + [bookmark("9", END)])

    _, sink, _, _ = run(watch, 1, page_size=3)
    assert sink.lists == [([f"o{i}" for i in range(7)], "9")]


def test_a_malformed_line_in_a_batch_fails_the_sync_with_its_own_reason() -> None:
    def watch(n: int) -> Stream:
        if n == 1:
            return Stream([line("ADDED", cm("a", "1")), b'{"type":"ADDED","object":{"metadata":', bookmark("3", END)])
        return Stream([line("ADDED", cm("a", "1")), bookmark("3", END)])

    _, sink, reflector, counts = run(watch, 2, page_size=5)
    assert sink.failed == [[]] and sink.lists == [(["a"], "3")]
    assert counts["errors"] == 1 and "watch /api/v1/configmaps" in str(reflector.last_error)


def test_a_watch_list_cut_by_an_interrupt_late_in_its_time_is_not_taken_for_a_server_ignoring_it() -> None:
    """A stream closed by the owner ends however it ends (here cleanly, after most of its time): that says nothing
    about the server, which keeps being synced by WatchList."""
    clock = ManualClock()
    stop = threading.Event()

    class Interrupting(Sink):
        def reflector_replace(self, items: Listing) -> None:
            reflector.interrupt()
            super().reflector_replace(items)

    server = Server(stop, lambda n: Stream([line("ADDED", cm("a", "1"))], clock=clock, advance=60.0), 1, [])
    sink = Interrupting()
    reflector = Reflector(server, PATH, sink, stop, sleep=lambda stop, seconds: None, clock=clock,
                          watch_timeout=60, watch_list=True)
    assert reflector.run() == "interrupted"
    assert reflector.watch_list and sink.lists == [] and server.lists == []


def test_a_stream_failing_after_the_initial_events_end_resumes_from_that_bookmark_without_a_list() -> None:
    """The sync is complete at the bookmark: a failure after it is a watch failure (client-go: the watch resumes
    from the bookmark's resourceVersion), neither a list nor a second watch-list."""
    def watch(n: int) -> Stream:
        if n == 1:
            return Stream([line("ADDED", cm("a", "1")), bookmark("3", END),
                           line("ERROR", {"kind": "Status", "code": 500, "reason": "InternalError"})])
        return Stream([line("MODIFIED", cm("a", "4"))])

    server, sink, reflector, _ = run(watch, 2)
    assert sink.lists == [(["a"], "3")] and sink.events == [("MODIFIED", "a")] and server.lists == []
    assert [watch_list_request(w) for w in server.watches] == [True, False, False]
    assert server.watches[1]["resourceVersion"] == "3" and reflector.sync_mode == "watch-list"


def test_the_fallback_warning_carries_the_servers_whole_reason(caplog: pytest.LogCaptureFixture) -> None:
    message = ("ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is "
               "forbidden for watch unless sendInitialEvents is provided, sendInitialEvents: Forbidden: "
               "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled, "
               "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided]")
    refused = {**INVALID, "message": message}

    def watch(n: int) -> Stream:
        return Stream([], status=422, body=refused) if n == 1 else Stream([line("ERROR", GONE)])

    with caplog.at_level("WARNING", logger="restmapper"):
        run(watch, 1, items=[cm("a", "1")])
    warnings = [r.getMessage() for r in caplog.records if "does not serve WatchList" in r.getMessage()]
    assert len(warnings) == 1 and message in warnings[0]
