"""Watch streams of the fake cluster: newline-delimited ``watch.Event`` JSON, as kube-apiserver streams them.

Which events a stream starts with follows the API concepts' "Semantics for watch"
(https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-watch) and the WatchList streaming
(KEP-3157, ``sendInitialEvents``):

- no ``resourceVersion`` or ``"0"`` ("get state and start at most recent" / "start at any"): an ``ADDED`` event
  for every current object, then changes;
- ``resourceVersion=X`` ("start at exact"): every stored event after X, or a single ``ERROR`` event carrying a
  ``410 Expired`` Status ("too old resource version: X (oldest)") when history after X was compacted, or a
  ``504 Timeout`` Status "Too large resource version" (cause ``ResourceVersionTooLarge``) when X is newer than
  the cluster's resourceVersion (after an etcd restore), and the stream ends (as the watch cache's error watcher);
- ``sendInitialEvents=true`` (with ``resourceVersionMatch=NotOlderThan``): ``ADDED`` for the current state (not
  older than X), then, when bookmarks are allowed, a ``BOOKMARK`` annotated ``k8s.io/initial-events-end: "true"``
  at the state's resourceVersion; ``sendInitialEvents=false``: changes after X (or from now when X is unset/"0");
- then changes as they happen: with a label or field selector, a change that makes an object stop matching arrives
  as ``DELETED`` (with the new object) and one that makes it match as ``ADDED``, as the watch cache's
  ``cacheWatcher`` does; with ``Accept: ...;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`` every object is its
  ``PartialObjectMetadata``; and ``BOOKMARK`` events (when ``allowWatchBookmarks``) every
  ``bookmark_interval`` seconds (the cacher's ~1 minute), when the test calls ``FakeCluster.send_bookmarks()``, and
  at ``timeoutSeconds`` just before the stream ends.

A stream ends at ``timeoutSeconds``, on :meth:`FakeCluster.drop_watches`/``restart()``, when the storage of its
resource is torn down (its CRD deleted, or its spec or accepted names changed, as apiextensions'
``removeStorage_locked`` tears the cacher down), when the server stops or the client goes away.

Front ends: the loopback server streams in real time (``stream``). The ``responses`` mock cannot hold a response
open, so ``collect`` returns what is available now (waiting at most ``FakeCluster.mock_watch_wait`` seconds for a
first event when there is none) followed by a ``BOOKMARK`` when allowed, and the response ends: a client sees a
watch that ends early and re-watches from the last resourceVersion, as after a server-side timeout.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from restmapper.testing import _documents as docs
from restmapper.testing._list import too_large_status
from restmapper.testing._meta import as_metadata
from restmapper.testing._store import WatchEvent
from restmapper.testing.objects.selectors import METADATA_FIELDS, compile_selectors

if TYPE_CHECKING:
    from restmapper.testing._store import ObjectStore

_POLL_SECONDS = 0.05  # how often a blocked stream checks should_stop (client gone, server stopping)
_BOOKMARK_LEAD_SECONDS = 0.0  # bookmarks are sent at the deadline itself: deterministic for short test timeouts


@dataclass
class WatchSpec:
    """What one watch request asked for."""

    key: str
    api_version: str
    kind: str
    namespace: str | None
    label_selector: str | None
    field_selector: str | None
    since: int | None  # None: start from the current state
    bookmarks: bool
    send_initial_events: bool  # the initial-events-end bookmark after the initial ADDED events
    timeout: float
    initial_events: bool = True  # with ``since`` None: ADDED for every current object first
    bookmark_interval: float | None = None  # seconds between periodic bookmarks (None: none)
    fields: tuple[str, ...] = METADATA_FIELDS  # the field selectors the resource supports
    metadata_only: bool = False  # objects as PartialObjectMetadata (see restmapper.testing._meta)


class WatchStream:
    """One watch response body (implements the router's ``StreamBody``)."""

    def __init__(self, store: ObjectStore, spec: WatchSpec, *, mock_wait: float | None = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._spec = spec
        self._mock_wait = mock_wait
        self._clock = clock
        self._selected = compile_selectors(spec.label_selector, spec.field_selector, spec.fields)
        # With ``watch_delay``: the resourceVersion of the first event held back and when it is due (None: none).
        self._held: tuple[int, float] | None = None

    def _encode(self, event_type: str, obj: dict[str, Any]) -> bytes:
        if event_type != "ERROR":
            obj = copy.deepcopy(obj)
            obj["apiVersion"], obj["kind"] = self._spec.api_version, self._spec.kind
            if self._spec.metadata_only:
                obj = as_metadata(obj)
        return docs.dumps({"type": event_type, "object": obj}) + b"\n"

    def _bookmark(self, initial_end: bool = False) -> bytes:
        rv = self._store.resource_version if self._held is None else self._held[0] - 1  # never past a held event
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return self._encode("BOOKMARK", {"metadata": meta})

    def _matches(self, key: str, namespace: str, obj: dict[str, Any]) -> bool:
        s = self._spec
        return key == s.key and (s.namespace is None or namespace == s.namespace) and self._selected(obj)

    def _seen(self, event: WatchEvent) -> WatchEvent | None:
        """The event as this watch sees it, or None: a change that moves an object out of the selection is a
        ``DELETED`` (carrying the new object) and one that moves it in an ``ADDED``, as the watch cache's
        ``cacheWatcher`` filters a change by both the new and the previous object."""
        now = self._matches(event.key, event.namespace, event.object)
        if event.type != "MODIFIED":
            return event if now else None
        before = event.prev is not None and self._matches(event.key, event.namespace, event.prev)
        if now == before:
            return event if now else None
        return dataclasses.replace(event, type="ADDED" if now else "DELETED")

    def _expired(self, since: int) -> bytes:
        status = docs.status_doc(410, "Expired", f"too old resource version: {since} "
                                                 f"({self._store.oldest_available})")
        del status["details"]
        return self._encode("ERROR", status)

    def _pending(self, last: int) -> tuple[list[WatchEvent] | None, int]:
        """New matching events after ``last`` (None: compacted) and the new ``last`` (lock held)."""
        for hook in self._store.hooks:
            hook()
        events = self._store.events_since(last)
        if events is None:
            return None, last
        self._held = None
        delay = self._store.watch_delay
        if delay:
            now = self._clock()
            for i, event in enumerate(events):  # history is in the order of the changes: hold a suffix back
                if event.recorded_at + delay > now:
                    self._held = (event.resource_version, event.recorded_at + delay)
                    events = events[:i]
                    break
        new_last = events[-1].resource_version if events else last
        return [seen for seen in map(self._seen, events) if seen is not None], new_last

    def _start(self) -> tuple[list[bytes], int, bool]:
        """The first chunks, the resourceVersion they reach and whether the stream already ended (lock held)."""
        s, store = self._spec, self._store
        for hook in store.hooks:
            hook()
        if s.since is None:
            return self._initial_chunks(), store.resource_version, False
        if s.since > store.resource_version:
            # A resourceVersion from the future (etcd restored from a snapshot): the watch cache's error watcher.
            return [self._encode("ERROR", too_large_status(s.since, store.resource_version))], s.since, True
        events, last = self._pending(s.since)
        if events is None:
            return [self._expired(s.since)], s.since, True
        return [self._encode(e.type, e.object) for e in events], last, False

    def _initial_chunks(self) -> list[bytes]:
        """A watch from the current state: ``ADDED`` for every matching object (unless ``sendInitialEvents=false``),
        then the initial-events-end bookmark when asked for (lock held)."""
        s, store = self._spec, self._store
        state = store.sorted_state(s.key, store.resource_version) if s.initial_events else None
        objects = state.objects if state is not None else []
        chunks = [self._encode("ADDED", obj) for obj in objects
                  if self._matches(s.key, obj["metadata"].get("namespace") or "", obj)]
        if s.send_initial_events and s.bookmarks:
            chunks.append(self._bookmark(initial_end=True))
        return chunks

    def _ended(self, epoch: int, key_epoch: int) -> bool:
        """True when the stream must end: dropped, or its resource's storage torn down (lock held)."""
        return self._store.epoch != epoch or self._store.key_epochs.get(self._spec.key, 0) != key_epoch

    def _changes(self, last: int) -> tuple[list[bytes], int, bool]:
        """The chunks of the matching changes after ``last``, the resourceVersion they reach and whether the stream
        ended (its history compacted: a 410 ``ERROR`` event) (lock held)."""
        events, last = self._pending(last)
        if events is None:
            return [self._expired(last)], last, True
        return [self._encode(e.type, e.object) for e in events], last, False

    def stream(self, should_stop: Callable[[], bool]) -> Iterator[bytes]:
        """Yield events in real time until timeout, drop, ``should_stop()`` or a 410; counts as an open watch."""
        store, spec = self._store, self._spec
        with store.cond:
            if self._ends_at_once():
                return
            started = store.epoch, store.key_epochs.get(spec.key, 0), store.bookmark_requests
            store.open_watches += 1
            store.cond.notify_all()
        try:
            with store.cond:
                chunks, last, ended = self._start()
            yield from chunks
            now = self._clock()  # the timeout and bookmark interval count from the end of the initial events
            live = _Live(*started, now + spec.timeout,
                         now + spec.bookmark_interval if spec.bookmark_interval else None)
            while not ended:
                with store.cond:
                    chunks, last, ended = self._changes(last)
                    now = self._clock()
                    if not ended and self._bookmark_due(live, now) and spec.bookmarks:
                        chunks.append(self._bookmark())  # after the events: its resourceVersion covers them
                    if not chunks:
                        if self._ended(live.epoch, live.key_epoch) or should_stop():
                            return
                        chunks, ended = self._idle(live, now)
                yield from chunks
        finally:
            with store.cond:
                store.open_watches -= 1
                store.cond.notify_all()

    def _bookmark_due(self, live: _Live, now: float) -> bool:
        """Whether a bookmark is due at ``now``: the test asked for one (``send_bookmarks``) or the periodic interval
        passed; schedules the next one (lock held)."""
        requested = self._store.bookmark_requests != live.bookmarks_seen
        if not requested and (live.next_bookmark is None or now < live.next_bookmark):
            return False
        live.bookmarks_seen = self._store.bookmark_requests
        if self._spec.bookmark_interval:
            live.next_bookmark = now + self._spec.bookmark_interval
        return True

    def _idle(self, live: _Live, now: float) -> tuple[list[bytes], bool]:
        """Nothing to send at ``now``: at the deadline, the last bookmark (when allowed) and the end; before it,
        wait for a change, a held-back event coming due or the next periodic bookmark (lock held)."""
        if live.deadline - now <= _BOOKMARK_LEAD_SECONDS:
            return ([self._bookmark()] if self._spec.bookmarks else []), True
        wake = [live.deadline - now, _POLL_SECONDS]
        if self._held is not None:
            wake.append(max(self._held[1] - now, 0.0))
        if live.next_bookmark is not None:
            wake.append(max(live.next_bookmark - now, 0.0))
        self._store.cond.wait(min(wake))
        return [], False

    def _ends_at_once(self) -> bool:
        """True when this resource's watches end before any event (``FakeCluster.end_watches_at_once``; lock held)."""
        ends = self._store.watches_end_at_once
        return bool(ends) and ("*" in ends or self._spec.key in ends)

    def collect(self) -> bytes:
        """Return the events available now (see the module docstring for the mock front end's semantics)."""
        with self._store.cond:
            if self._ends_at_once():
                return b""
            chunks, last, ended = self._start()
            if not chunks and not ended and self._mock_wait != 0:
                chunks, ended = self._wait_for_first(last)
            if not ended and self._spec.bookmarks:
                chunks.append(self._bookmark())
        return b"".join(chunks)

    def _wait_for_first(self, last: int) -> tuple[list[bytes], bool]:
        """Wait for the first changes after ``last`` (at most ``mock_wait`` seconds, None: up to the watch's
        timeout), counting as an open watch meanwhile; return their chunks and whether the stream ended (lock
        held)."""
        store, spec = self._store, self._spec
        epoch, key_epoch = store.epoch, store.key_epochs.get(spec.key, 0)
        wait = spec.timeout if self._mock_wait is None else min(self._mock_wait, spec.timeout)
        deadline = self._clock() + wait
        chunks: list[bytes] = []
        ended = False
        store.open_watches += 1
        store.cond.notify_all()
        try:
            while not chunks and not ended and not self._ended(epoch, key_epoch):
                remaining = deadline - self._clock()
                if remaining <= 0:
                    break
                store.cond.wait(remaining)
                chunks, last, ended = self._changes(last)
        finally:
            store.open_watches -= 1
            store.cond.notify_all()
        return chunks, ended


@dataclass
class _Live:
    """Where a live stream stands: the store epochs it started in (a change ends it), the bookmark requests it has
    answered, when it times out and when its next periodic bookmark is due (clock seconds; None: no periodic
    bookmarks)."""

    epoch: int
    key_epoch: int
    bookmarks_seen: int
    deadline: float
    next_bookmark: float | None
