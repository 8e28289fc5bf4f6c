"""The one list-then-watch loop in restmapper: :class:`Reflector`, for any resource type.

It is the Kubernetes reflector protocol (client-go ``tools/cache.Reflector.ListAndWatch``):

* list the collection in pages (``limit``/``continue``); a ``410 Gone`` on a continue token (it expired between
  pages) restarts the list once, as client-go's pager does; the list's ``metadata.resourceVersion`` is remembered;
* watch from that resourceVersion with ``allowWatchBookmarks=true`` and ``timeoutSeconds``; every event and
  bookmark advances the resourceVersion, so a reconnect resumes exactly where the stream stopped;
* relist on ``410 Gone`` (from the watch request or an ``ERROR`` event): the sink gets the full new list and diffs
  it against what it holds, so it can deliver deletes and updates for what changed while it was away;
* reconnect at once when a stream ends cleanly (server timeout, a proxy, a load balancer);
* back off (exponential, jittered: :meth:`~restmapper.transport.RetryPolicy.backoff`) on errors; a successful watch
  connect resets the backoff; repeated 410s and streams that end at once without events back off too.

What the loop learns goes to a :class:`ReflectorSink`; the loop never interprets objects beyond ``metadata``.
It returns to its owner when the owner must decide: RBAC forbids the resource (403), the resource *type* is not
found (404: the owner reports it to the mapper and re-resolves), the owner interrupted it, or (when asked) a
stream ended well before its timeout, which is how a resource's storage going away looks from the client.
Used by the CRD/APIService :class:`~restmapper.watch.Watcher` and by every
:class:`~restmapper.store.Informer`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from restmapper._redact import scrubbing
from restmapper.errors import APIStatusError, InvalidArgumentError, RestMapperError, TransportError, release_frames
from restmapper.transport import scrub_with, status_error
from restmapper.transport.base import StreamResponse, Transport
from restmapper.transport.retry import RetryPolicy
from restmapper.wire import decode_json

__all__ = ["Outcome", "Reflector", "ReflectorSink"]

_log = logging.getLogger("restmapper.watch")

_ACCEPT = {"Accept": "application/json"}
_READ_MARGIN = 30.0  # seconds beyond timeoutSeconds before a silent stream counts as dropped
_EMPTY_ENDS_BEFORE_BACKOFF = 3  # a server that ends every watch at once must not make us spin
_EARLY_FRACTION = 0.9  # a stream that ends before this fraction of timeoutSeconds ended "early"

Outcome = Literal["stopped", "forbidden", "not_found", "interrupted", "ended_early"]
"""Why :meth:`Reflector.run` returned: the stop event was set; a 403; a 404 for the resource type;
:meth:`Reflector.interrupt` was called; a watch ended early (only with ``return_on_early_end``)."""


class ReflectorSink(Protocol):
    """What a :class:`Reflector` reports to. Every method is called on the reflector's thread."""

    def reflector_replace(self, items: list[Any], resource_version: str) -> None:
        """A complete list: ``items`` as decoded JSON (unvalidated), taken at ``resource_version``."""

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        """One ``ADDED``/``MODIFIED``/``DELETED`` watch event; ``obj`` is a JSON object (otherwise unvalidated)."""

    def reflector_bookmark(self, resource_version: str) -> None:
        """A ``BOOKMARK``: everything up to ``resource_version`` has been seen."""

    def reflector_state(self) -> None:
        """``connected``, ``failures`` or ``last_error`` changed."""


class _Gone(Exception):
    """The resource version is too old (410 Gone): relist."""


class _Return(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome)
        self.outcome: Outcome = outcome


def _wait(stop: threading.Event, seconds: float) -> None:
    stop.wait(seconds)


class Reflector:
    """List-then-watch of one collection path, on the caller's thread (see the module docstring).

    Attributes (written by the running thread only; other threads read them GIL-atomically):
        path: the collection path (``/apis/apps/v1/deployments``, ``/api/v1/namespaces/ns/configmaps``); the
            owner may change it between runs.
        resource_version: the last list, event or bookmark resourceVersion (``""`` before the first list).
        synced: a list completed since the last :meth:`reset`.
        connected: a watch stream is open.
        failures: consecutive failures (the backoff exponent); a successful connect sets it to 0.
        last_error: the most recent failure, or None.
    """

    def __init__(
        self,
        transport: Transport,
        path: str,
        sink: ReflectorSink,
        stop: threading.Event,
        *,
        label: str = "",
        backoff: RetryPolicy | None = None,
        sleep: Callable[[threading.Event, float], None] | None = None,
        watch_timeout: float = 300.0,
        page_size: int = 500,
        count: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        return_on_early_end: bool = False,
    ) -> None:
        """Create a reflector (nothing runs until :meth:`run`).

        Args:
            transport: sends the list and watch requests.
            path: the collection path.
            sink: receives lists, events, bookmarks and state changes.
            stop: set by the owner to end :meth:`run` (the owner also calls :meth:`close_stream` to wake a read).
            label: a short name for log lines.
            backoff: the wait after a failure (``backoff.backoff(failures)``, seconds); None uses 0.5 s doubling
                to 30 s with 10 % jitter.
            sleep: ``sleep(stop, seconds)`` for backoff waits; should return early once ``stop`` is set.
            watch_timeout: ``timeoutSeconds`` asked of the server per watch, seconds (the read timeout is 30 s
                longer); the stream then ends and is reopened from the last resourceVersion.
            page_size: ``limit`` of each list page (client-go's pager uses 500); 0 lists in one request.
            count: called with a counter name (``lists``, ``relists``, ``connects``, ``events``, ``bookmarks``,
                ``errors``, ``malformed``) for each occurrence.
            clock: monotonic seconds, to tell an early stream end from a timeout.
            return_on_early_end: return ``"ended_early"`` when a stream with no error ends before 90 % of
                ``watch_timeout`` (a storage teardown, a restart); otherwise reconnect at once.

        Raises:
            InvalidArgumentError: a non-positive ``watch_timeout`` or a negative ``page_size``.
        """
        if watch_timeout <= 0 or page_size < 0:
            raise InvalidArgumentError("need watch_timeout > 0 and page_size >= 0")
        self.transport = transport
        self.path = path
        self.sink = sink
        self.stop = stop
        self.label = label or path
        self._backoff = backoff or RetryPolicy(initial_backoff=0.5, max_backoff=30.0)
        self._sleep = sleep or _wait
        self._watch_timeout = watch_timeout
        self._page = str(page_size) if page_size else ""
        self._count = count or (lambda name: None)
        self._clock = clock
        self._return_on_early_end = return_on_early_end
        self.resource_version = ""
        self.synced = False
        self.connected = False
        self.failures = 0
        self.last_error: BaseException | None = None
        self._interrupted = False
        # Guards _stream: another thread closes it to wake a reader blocked in iter_lines().
        self._stream_lock = threading.Lock()
        self._stream: StreamResponse | None = None

    # --- control from other threads --------------------------------------------------------------------------

    def close_stream(self) -> None:
        """Close the open stream, if any (wakes the reading thread; safe from any thread)."""
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def interrupt(self) -> None:
        """Make :meth:`run` return ``"interrupted"`` soon (after the request in flight); safe from any thread."""
        self._interrupted = True
        self.close_stream()

    def reset(self) -> None:
        """Forget the resourceVersion: the next :meth:`run` lists from scratch (owner's thread, between runs)."""
        self.resource_version = ""
        self.synced = False

    # --- the loop ----------------------------------------------------------------------------------------------

    def run(self, *, relist: bool = True) -> Outcome:
        """List (unless ``relist`` is false and a resourceVersion is known) then watch, until the owner must act.

        Returns:
            Why it returned (see :data:`Outcome`). Transport errors, 5xx, malformed bodies and 410s are handled
            inside (backoff, relist) and never returned or raised.
        """
        need_list = relist or not self.resource_version
        empty_ends = 0
        gone_streak = 0
        while True:
            if self.stop.is_set():
                return "stopped"
            if self._interrupted:
                self._interrupted = False
                return "interrupted"
            try:
                if need_list:
                    self._list()
                    need_list = False
                outcome, events, early = self._watch()
            except _Return as ret:
                return ret.outcome
            except _Gone:
                outcome, events, early = "gone", 0, False
            except Exception as exc:
                # A transport error, a hostile body (malformed JSON, RecursionError on absurd nesting), a bug:
                # never end the thread silently; record it, back off, and list or watch again.
                if self.stop.is_set():
                    return "stopped"
                if self._interrupted:
                    continue
                if not isinstance(exc, (RestMapperError, ValueError)):
                    self._count("malformed")
                self.fail(exc)
                continue
            if outcome == "gone":
                self._count("relists")
                need_list = True
                # The first 410 relists at once; a server answering 410 again and again gets the backoff too
                # (client-go's reflector restarts ListAndWatch through a backoff manager).
                gone_streak = 0 if events else gone_streak + 1
                if gone_streak > 1 and not self.stop.is_set():
                    self.failures = max(self.failures, gone_streak - 2)
                    self.fail(TransportError(f"GET {self.path}: 410 Gone {gone_streak} times in a row",
                                              path=self.path))
                continue
            gone_streak = 0
            if early and self._return_on_early_end and not self.stop.is_set() and not self._interrupted:
                return "ended_early"
            empty_ends = 0 if events else empty_ends + 1
            if empty_ends >= _EMPTY_ENDS_BEFORE_BACKOFF and not self.stop.is_set():
                self.fail(TransportError(f"GET {self.path}: watch ended {empty_ends} times without events",
                                          path=self.path))

    def fail(self, exc: BaseException) -> None:
        """Record a failure and wait the backoff for it (the running thread; owners call it for an outcome they
        treat as an error, e.g. a 404 on a collection that must exist)."""
        self.failures += 1
        self.last_error = release_frames(exc)  # kept until the next failure: not with the body it was about
        self.connected = False
        self._count("errors")
        delay = self._backoff.backoff(self.failures)
        log = _log.warning if self.failures == 1 else _log.debug
        log("list/watch of %s failed (%s); retrying in %.2fs (attempt %d)", self.label, exc, delay,
            self.failures + 1)
        self.sink.reflector_state()
        self._sleep(self.stop, delay)

    # --- list ----------------------------------------------------------------------------------------------------

    def _decode(self, body: bytes, what: str) -> dict[str, Any]:
        """A JSON object from server bytes, or a typed error quoting at most a scrubbed excerpt of them."""
        with scrubbing(lambda text: scrub_with(self.transport, text)):
            return decode_json(body, document=f"{what} {self.path}")

    def _error(self, status: object, body: bytes | Mapping[str, Any],
               headers: Mapping[str, str] | None = None) -> APIStatusError:
        return status_error(self.transport, self.path, status, body, headers)  # scrubbed, as every status error

    def _check(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        if status == 403:
            self._refuse("forbidden", self._error(status, body, headers))
        if status == 404:
            self._refuse("not_found", self._error(status, body, headers))

    def _refuse(self, outcome: Outcome, error: APIStatusError) -> None:
        self.connected = False
        self.last_error = release_frames(error)
        self.sink.reflector_state()
        raise _Return(outcome)

    def _list(self) -> None:
        items: list[Any] = []
        cont = ""
        restarted = False
        rv = ""
        while True:
            params = {"limit": self._page} if self._page else {}
            if cont:
                params["continue"] = cont
            resp = self.transport.get(self.path, _ACCEPT, params=params)
            if resp.status == 410 and cont and not restarted:
                # The continue token expired between pages: start over once, as client-go's pager does.
                items, cont, rv, restarted = [], "", "", True
                continue
            self._check(resp.status, resp.body, resp.headers)
            if resp.status != 200:
                raise self._error(resp.status, resp.body, resp.headers)
            doc = self._decode(resp.body, "list")
            if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
                raise InvalidArgumentError(f"GET {self.path}: list without items")
            raw_meta = doc.get("metadata")
            meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            items.extend(doc["items"])
            page_rv = meta.get("resourceVersion", "")
            cont = meta.get("continue") or ""
            if not isinstance(cont, str) or not isinstance(page_rv, str):
                raise InvalidArgumentError(f"GET {self.path}: malformed list metadata")
            rv = rv or page_rv  # every page of one list is a snapshot at the first page's resourceVersion
            if not cont:
                break
            if self.stop.is_set() or self._interrupted:
                raise _Return("stopped" if self.stop.is_set() else "interrupted")
        self._count("lists")
        if self.stop.is_set():
            raise _Return("stopped")
        self.sink.reflector_replace(items, rv)
        self.resource_version = rv
        self.synced = True

    # --- watch ---------------------------------------------------------------------------------------------------

    def _watch(self) -> tuple[Literal["gone", "ended"], int, bool]:
        params = {"watch": "1", "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(max(1, int(self._watch_timeout)))}
        opened = self._clock()
        stream = self.transport.stream(self.path, _ACCEPT, params=params,
                                       timeout=self._watch_timeout + _READ_MARGIN)
        with self._stream_lock:
            self._stream = stream
        events = 0
        try:
            if self.stop.is_set() or self._interrupted:
                return "ended", 0, False
            if stream.status == 410:
                return "gone", 0, False
            if stream.status != 200:
                body = stream.read()
                self._check(stream.status, body, stream.headers)
                raise self._error(stream.status, body, stream.headers)
            self._count("connects")
            self.failures = 0  # a successful connect resets the backoff
            self.connected = True
            self.sink.reflector_state()
            for line in stream.iter_lines():
                if self.stop.is_set() or self._interrupted:
                    return "ended", events, False
                if self._event(line):
                    return "gone", events, False
                events += 1
            early = self._clock() - opened < self._watch_timeout * _EARLY_FRACTION
            return "ended", events, early
        finally:
            with self._stream_lock:
                self._stream = None
            stream.close()
            if self.connected:
                self.connected = False
                self.sink.reflector_state()

    def _event(self, line: bytes) -> bool:
        """Apply one watch event; True when the server said 410 Gone."""
        event = self._decode(line, "watch")
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            raise InvalidArgumentError(f"watch {self.path}: event is not {{type, object}}")
        event_type, obj = event.get("type"), event["object"]
        if event_type == "ERROR":
            code = obj.get("code")
            if code == 410:
                return True
            raise self._error(code, obj)
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if event_type == "BOOKMARK":
            self._count("bookmarks")
            if isinstance(rv, str) and rv:
                self.resource_version = rv
                self.sink.reflector_bookmark(rv)
            return False
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            self._count("malformed")
            _log.debug("ignoring watch event of type %r on %s", event_type, self.label)
            return False
        self._count("events")
        self.sink.reflector_event(event_type, obj)
        if isinstance(rv, str) and rv:
            self.resource_version = rv
        return False
