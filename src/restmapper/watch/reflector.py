"""The one list-then-watch loop in restmapper: :class:`Reflector`, for any resource type.

It is the Kubernetes reflector protocol (client-go ``tools/cache.Reflector.ListAndWatch``):

* **sync**: get a complete list, by WatchList (``watch_list``: a watch whose initial events are the list, then
  its changes) or in pages (``limit``/``continue``), handing it to the sink as it arrives (a
  :class:`~restmapper.watch._sync.Listing`); a server that does not serve WatchList is detected and listed in
  pages from then on (:mod:`restmapper.watch._sync` says how); the list's resourceVersion is remembered;
* watch from that resourceVersion (a WatchList sync reads on its stream) with ``allowWatchBookmarks=true`` and
  ``timeoutSeconds``; every event and bookmark advances the resourceVersion, so a reconnect resumes exactly where
  the stream stopped;
* **relist** when the resourceVersion is unusable: ``410 Gone`` (compacted) or "Too large resource version"
  (``504``, cause ``ResourceVersionTooLarge``: etcd was restored from a snapshot and went back), from the watch
  request or as an ``ERROR`` event. The sink gets the full new list and makes it the truth (diffs it against what
  it holds and tells of every difference);
* a watch refused with an error but a 429 or a 5xx (401, 403, 400...) ends the round, so the next one (after the
  backoff) lists again, as client-go ends ListAndWatch: a forbidden watch never leaves a stale list as the truth;
* a stream that ends cleanly reconnects at once, but one that ends **at once** (under a second without any
  event or bookmark: a proxy closing stale watches) is a failure, and three in a row relist, as client-go's
  "very short watch"; streams ending early again and again without a change back off too;
* a stream silent for ``idle_timeout`` seconds (kube-apiserver sends a bookmark about every minute to a watch
  that allows them) is reopened at once, without counting a failure: a dead connection and a quiet collection on
  a server that sends no periodic bookmarks look the same, and only a reconnect that fails is a failure;
* a relist sooner than a healthy period (120 s) after the previous one is a failure (events and bookmarks in
  between do not make it healthy), as client-go restarts ListAndWatch through its backoff manager;
* an ``ADDED``/``MODIFIED``/``DELETED`` event whose object has no ``metadata.resourceVersion`` is malformed
  (counted, skipped);
* with ``relist_period``, a list is owed once that long has passed since the last one, however the watch ended;
* every failure backs off (exponential, jittered: :meth:`~restmapper.transport.RetryPolicy.backoff`, at least
  what a ``Retry-After`` asks for); the exponent resets only after a healthy period without failures (client-go's
  backoff manager), never by a mere connect, so a flapping endpoint cannot make it spin.
* scope the collection on the server: ``params`` (``labelSelector``, ``fieldSelector``) go on the list and on the
  watch; ``metadata_only`` asks for ``PartialObjectMetadataList``/``PartialObjectMetadata`` (the ``Accept`` header
  of client-go's metadata informer) and falls back to full objects, with a logged warning, when the server answers
  ``406 Not Acceptable``;

How a sync lists is :mod:`restmapper.watch._sync`; how a watch reads its stream and judges its end is
:mod:`restmapper.watch._watch`. What the loop learns goes to a :class:`ReflectorSink`; the loop never interprets
objects beyond ``metadata``.
It returns to its owner when the owner must decide: RBAC forbids the resource (403), the resource *type* is not
found (404: the owner reports it to the mapper and re-resolves), the owner interrupted it, or (when asked) a
stream ended well before its timeout, which is how a resource's storage going away looks from the client.
Stopping is bounded whatever the server does: :meth:`Reflector.close_stream` after the stop event is set cuts the
request in flight (a list trickled or a watch waiting for headers, through :class:`~restmapper.transport.
Cancellation`) and the open stream. Used by the CRD/APIService :class:`~restmapper.watch.Watcher` and by every
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
from restmapper.transport import Cancellation, check_seconds, scrub_with, status_error
from restmapper.transport.base import StreamResponse, Transport
from restmapper.transport.retry import RetryPolicy
from restmapper.watch._statuses import too_large_resource_version
from restmapper.watch._sync import Listing, ReflectorSync, SyncMode
from restmapper.watch._watch import READ_MARGIN, ReflectorWatch, _Relist
from restmapper.wire import decode_json

__all__ = ["DEFAULT_IDLE_TIMEOUT", "Listing", "Outcome", "Reflector", "ReflectorSink", "SyncMode",
           "too_large_resource_version"]

_log = logging.getLogger("restmapper.watch")

DEFAULT_IDLE_TIMEOUT = 70.0
"""Seconds a watch that allows bookmarks may stay silent before it is reopened as a dead connection (kube-apiserver
sends such a watch a bookmark about every minute; client-go health-checks its HTTP/2 connections at ~45 s)."""
_HEALTHY_PERIOD = 120.0  # seconds without a failure that reset the backoff exponent (client-go's backoff manager)
_MAX_RETRY_AFTER = 300.0  # a Retry-After beyond this is a hostile or broken server: wait this long at most
_WARN_EVERY = 300.0  # seconds: the longest a failing list/watch goes without a WARNING (between powers of two)

Outcome = Literal["stopped", "forbidden", "not_found", "interrupted", "ended_early"]
"""Why :meth:`Reflector.run` returned: the stop event was set; a 403; a 404 for the resource type;
:meth:`Reflector.interrupt` was called; a watch ended early (only with ``return_on_early_end``)."""


class ReflectorSink(Protocol):
    """What a :class:`Reflector` reports to. Every method is called on the reflector's thread."""

    def reflector_replace(self, items: Listing) -> None:
        """A complete list, its items (decoded JSON, unvalidated) arriving as the sink iterates ``items``; once
        iterated to the end, ``items.resource_version`` is the list's (``""``: the list is no snapshot at one, and
        the watch events and the bookmark that follow at once bring it up to date, see ``Listing``). It is the
        truth: afterwards the sink holds exactly the items, whatever the resourceVersions it held said. Iterating
        raises what the requests raise: the sink must then change nothing (the reflector lists again); what it
        leaves unread is read and dropped. ``items.metadata_only`` is the representation the list was asked in
        (``PartialObjectMetadata`` or full objects), the same for every page of it."""

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        """One ``ADDED``/``MODIFIED``/``DELETED`` watch event; ``obj`` is a JSON object (otherwise unvalidated)."""

    def reflector_bookmark(self, resource_version: str) -> None:
        """A ``BOOKMARK``: everything up to ``resource_version`` has been seen."""

    def reflector_state(self) -> None:
        """``connected``, ``failures`` or ``last_error`` changed."""


class _Return(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome)
        self.outcome: Outcome = outcome


def _wait(stop: threading.Event, seconds: float) -> None:
    stop.wait(seconds)


class Reflector(ReflectorSync, ReflectorWatch):
    """List-then-watch of one collection path, on the caller's thread (see the module docstring).

    Attributes (written by the running thread only; other threads read them GIL-atomically):
        path: the collection path (``/apis/apps/v1/deployments``, ``/api/v1/namespaces/ns/configmaps``); the
            owner may change it between runs.
        params: the query parameters of every list and watch (the owner may change them between runs).
        metadata_only: lists and watches ask for ``PartialObjectMetadata`` (false after a 406 fallback).
        watch_list: syncs use WatchList (false once the server refused it or ignored it).
        sync_mode: ``"watch-list"`` or ``"list"``, as ``watch_list`` says.
        resource_version: the last list, event or bookmark resourceVersion (``""`` before the first list).
        synced: a list completed since the last :meth:`reset`.
        connected: a watch stream is open.
        failures: consecutive failures since the last successful watch connect (0: healthy).
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
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        relist_period: float | None = None,
        page_size: int = 500,
        count: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        return_on_early_end: bool = False,
        params: Mapping[str, str] | None = None,
        metadata_only: bool = False,
        page: Callable[[list[Any]], list[Any]] | None = None,
        watch_list: bool = False,
    ) -> None:
        """Create a reflector (nothing runs until :meth:`run`).

        Args:
            transport: sends the list and watch requests.
            path: the collection path.
            sink: receives lists, events, bookmarks and state changes.
            stop: set by the owner to end :meth:`run` (the owner then calls :meth:`close_stream`, which cuts the
                request in flight).
            label: a short name for log lines.
            backoff: the wait after a failure (``backoff.backoff(n)`` seconds for the n-th failure since the last
                healthy period of 120 s); None uses 0.5 s doubling to 30 s with 10 % jitter.
            sleep: ``sleep(stop, seconds)`` for backoff waits; should return early once ``stop`` is set.
            watch_timeout: ``timeoutSeconds`` asked of the server per watch, seconds; the stream then ends and is
                reopened from the last resourceVersion.
            idle_timeout: seconds a watch stream may send nothing (no event, no bookmark) before it is reopened
                (at once, not a failure; a failing reconnect is one); the read timeout of the stream is the smaller
                of it and ``watch_timeout`` + 30 s.
            relist_period: list again when a stream ends, however it ends, this many seconds or more after the
                last list (the list is the truth: it repairs an event the server dropped without a 410); None:
                only when the protocol needs it (client-go's reflector has no such period).
            page_size: ``limit`` of each list page (client-go's pager uses 500); 0 lists in one request.
            count: called with a counter name (``lists``, ``relists``, ``connects``, ``events``, ``bookmarks``,
                ``errors``, ``malformed``) for each occurrence.
            clock: monotonic seconds: tells a stream that ended at once or early from a timeout, and times the
                healthy period that resets the backoff.
            return_on_early_end: return ``"ended_early"`` when a stream with no error ends before 90 % of
                ``watch_timeout`` (a storage teardown, a restart); otherwise reconnect.
            params: query parameters sent on every list and watch (``labelSelector``, ``fieldSelector``).
            metadata_only: list and watch ``PartialObjectMetadata`` (see the module docstring).
            page: called with each list page's items (or each batch of a WatchList's initial events, ``page_size``
                of them) as it arrives; what it returns is what the sink's listing yields (an owner's transform:
                the whole list is then never held untransformed). What it raises ends the sync (the sink gets
                it from the listing).
            watch_list: sync by WatchList (client-go's ``WatchListClient``), falling back to paginated lists for
                good when the server does not serve it; False: paginated lists.

        Raises:
            InvalidArgumentError: a ``watch_timeout``, ``idle_timeout`` or ``relist_period`` that is not positive
                and finite, or a negative ``page_size``.
            TypeError: one of those seconds options is not a number.
        """
        check_seconds("Reflector", "watch_timeout", watch_timeout)
        check_seconds("Reflector", "idle_timeout", idle_timeout)
        check_seconds("Reflector", "relist_period", relist_period, optional=True)
        if page_size < 0:
            raise InvalidArgumentError(f"need page_size >= 0, got {page_size}")
        self.transport = transport
        self.path = path
        self.sink = sink
        self.stop = stop
        self.label = label or path
        self._backoff = backoff or RetryPolicy(initial_backoff=0.5, max_backoff=30.0)
        self._sleep = sleep or _wait
        self._watch_timeout = watch_timeout
        self._read_timeout = min(idle_timeout, watch_timeout + READ_MARGIN)
        self._page = str(page_size) if page_size else ""
        self._count = count or (lambda name: None)
        self._clock = clock
        self._return_on_early_end = return_on_early_end
        self.params = dict(params or {})
        self._page_items = page
        self.metadata_only = metadata_only
        self.watch_list = watch_list
        self.resource_version = ""
        self.synced = False
        self.connected = False
        self.failures = 0
        self.last_error: BaseException | None = None
        self._interrupted = False
        # The loop's memory across runs (the owner may return between streams): the backoff exponent and when
        # it last grew, the streaks of streams that ended at once / early without a change, a relist owed.
        self._backoff_exponent = 0
        self._last_failure_at: float | None = None
        # Failures since the list/watch last worked (a watch delivered a change or ran its full time): the
        # WARNING log is rated by it, and an INFO says when it works again.
        self._failing_count = 0
        self._warned_at = 0.0
        self._short_streak = 0
        self._quiet_streak = 0
        self._last_relist_at: float | None = None
        self._relist_owed = False
        self._relist_period = relist_period
        self._listed_at = 0.0
        # Guards _stream: another thread closes it to wake a reader blocked in iter_lines().
        self._stream_lock = threading.Lock()
        self._stream: StreamResponse | None = None
        self._cancel = Cancellation()  # cuts the request in flight once stopped (see close_stream)

    # --- control from other threads --------------------------------------------------------------------------

    def close_stream(self) -> None:
        """Close the open stream, if any, and once the stop event is set cut any request in flight and every later
        one (wakes the reading thread; safe from any thread)."""
        if self.stop.is_set():
            self._cancel.cancel()
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def interrupt(self) -> None:
        """Make :meth:`run` return ``"interrupted"`` soon (after the request in flight); safe from any thread."""
        self._interrupted = True
        self.close_stream()

    def resume(self) -> None:
        """Forget an :meth:`interrupt` that did not end a run (owner's thread, between runs): the next :meth:`run`
        lists or watches instead of returning ``"interrupted"`` at once."""
        self._interrupted = False

    def reset(self) -> None:
        """Forget the resourceVersion: the next :meth:`run` lists from scratch (owner's thread, between runs)."""
        self.resource_version = ""
        self.synced = False

    def reset_backoff(self) -> None:
        """Start the next failure's backoff from the first step again (owner's thread, e.g. a kind served again)."""
        self.failures = 0
        self._backoff_exponent = 0
        self._last_failure_at = None

    # --- the loop ----------------------------------------------------------------------------------------------

    def run(self, *, relist: bool = True) -> Outcome:
        """List (unless ``relist`` is false, a resourceVersion is known and no relist is owed) then watch, until
        the owner must act.

        Returns:
            Why it returned (see :data:`Outcome`). Transport errors, 5xx, malformed bodies, 410s and too large
            resourceVersions are handled inside (backoff, relist) and never returned or raised.
        """
        if relist or not self.resource_version:
            self._relist_owed = True
        while True:
            outcome = self._before_round()
            if outcome is not None:
                return outcome
            try:
                outcome = self._round()
            except _Return as ret:
                return ret.outcome
            except _Relist as relist_now:
                self._relist(relist_now)
                continue
            except BaseException as exc:
                if self._failed_round(exc):
                    return "stopped"
                continue
            if outcome is not None:
                return outcome

    def _before_round(self) -> Outcome | None:
        """Before a round of :meth:`run`: "stopped" or "interrupted" (clearing the interruption) when it must
        return; else None, a relist owed when the relist period has passed since the last list."""
        if self.stop.is_set():
            return "stopped"
        if self._interrupted:
            self._interrupted = False
            return "interrupted"
        if (self._relist_period is not None and self.synced
                and self._clock() - self._listed_at >= self._relist_period):
            self._relist_owed = True  # however the last watch ended: cleanly, idle, by an error, at once
        return None

    def _round(self) -> Outcome | None:
        """One round of :meth:`run`: list (when a relist is owed) then watch; "ended_early" when the watch ended
        early (see :meth:`_watch`) and :meth:`run` must say so, else None. Raises what they raise."""
        with self._cancel:
            opened = None
            if self._relist_owed:
                opened = self._sync()
                self._relist_owed = False
            early = self._watch(opened)
        if early and self._return_on_early_end and not self.stop.is_set() and not self._interrupted:
            return "ended_early"
        return None

    def _failed_round(self, exc: BaseException) -> bool:
        """Handle a round that raised ``exc`` (neither ``_Return`` nor ``_Relist``); True when :meth:`run` must
        return "stopped", False when it goes on (after the backoff when it was a failure).

        A transport error, a hostile body (malformed JSON, RecursionError on absurd nesting), a bug, a sink's user
        code raising SystemExit: never end a worker thread silently; record it, back off, and list or watch
        again. On the main thread, Ctrl-C and SystemExit still end the program (re-raised).
        """
        if not isinstance(exc, Exception) and threading.current_thread() is threading.main_thread():
            raise exc
        if self.stop.is_set():
            return True
        if self._interrupted:
            return False
        if not isinstance(exc, (RestMapperError, ValueError)):
            self._count("malformed")
        self.fail(exc)
        return False

    def _relist(self, why: _Relist) -> None:
        self._count("relists")
        self._relist_owed = True
        # A relist after a healthy period (120 s since the previous one) is at once; one sooner is a failure and
        # waits the backoff, as client-go's reflector restarts ListAndWatch through its backoff manager. Events
        # or bookmarks the watch delivered meanwhile do not count: a server that answers every watch with one
        # event then a 410 must not make the loop list and watch without pause.
        now = self._clock()
        last, self._last_relist_at = self._last_relist_at, now
        _log.info("%s: %s; relisting", self.label, why)
        if last is not None and now - last < _HEALTHY_PERIOD and not self.stop.is_set():
            self.fail(TransportError(f"GET {self.path}: {why} again {now - last:.1f}s after the last relist",
                                     path=self.path))

    def fail(self, exc: BaseException) -> None:
        """Record a failure and wait the backoff for it (the running thread; owners call it for an outcome they
        treat as an error, e.g. a 404 on a collection that must exist).

        The wait is ``backoff.backoff(n)`` for the n-th failure since the last healthy period (120 s without a
        failure), and at least what a ``Retry-After`` of the error asks for (at most 300 s). Logged (logger
        ``restmapper.watch``) at WARNING on the 1st, 2nd, 4th, 8th... failure in a row and at least every 300 s
        while it keeps failing, with the count and the error, else at DEBUG; an INFO says when it works again."""
        now = self._clock()
        if self._last_failure_at is not None and now - self._last_failure_at >= _HEALTHY_PERIOD:
            self._backoff_exponent = 0
        self._last_failure_at = now
        self._backoff_exponent += 1
        self.failures += 1
        self.last_error = release_frames(exc)  # kept until the next failure: not with the body it was about
        self.connected = False
        self._count("errors")
        delay = self._backoff.backoff(self._backoff_exponent)
        retry_after = exc.retry_after if isinstance(exc, APIStatusError) else None
        if retry_after is not None and retry_after > delay:
            delay = min(retry_after, _MAX_RETRY_AFTER)
        # A WARNING on the 1st, 2nd, 4th, 8th... failure in a row and at least every 5 minutes, with the count and
        # the last error; DEBUG in between (a flapping endpoint fails every few seconds: not a line each time).
        self._failing_count += 1
        count = self._failing_count
        warn = count & (count - 1) == 0 or now - self._warned_at >= _WARN_EVERY
        if warn:
            self._warned_at = now
        (_log.warning if warn else _log.debug)(
            "list/watch of %s failing (%d failure%s in a row, the last: %s); retrying in %.2fs", self.label, count,
            "" if count == 1 else "s", exc, delay)
        self.sink.reflector_state()
        self._sleep(self.stop, delay)

    def _full_objects(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        """The server does not serve PartialObjectMetadata here (406): ask for full objects from now on."""
        self.metadata_only = False
        _log.warning("%s: the server refused metadata-only objects (%s); listing and watching full objects instead",
                     self.label, self._error(status, body, headers))

    def _works(self) -> None:
        """The list/watch works again (a watch delivered a change or ran its full time): say so once."""
        if self._failing_count:
            _log.info("list/watch of %s works again after %d failure%s", self.label, self._failing_count,
                      "" if self._failing_count == 1 else "s")
            self._failing_count = 0

    # --- list ----------------------------------------------------------------------------------------------------

    def _decode(self, body: bytes, what: str) -> dict[str, Any]:
        """A JSON object from server bytes, or a typed error quoting at most a scrubbed excerpt of them."""
        with scrubbing(lambda text: scrub_with(self.transport, text)):
            return decode_json(body, document=f"{what} {self.path}")

    def _error(self, status: object, body: bytes | Mapping[str, Any],
               headers: Mapping[str, str] | None = None) -> APIStatusError:
        return status_error(self.transport, self.path, status, body, headers)  # scrubbed, as every status error

    def _check(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        """Raise what a non-200 answer to a list or watch request means for the loop."""
        if status == 403:
            self._refuse("forbidden", self._error(status, body, headers))
        if status == 404:
            self._refuse("not_found", self._error(status, body, headers))
        if status == 504 and self._status_doc(body, too_large_resource_version):
            raise _Relist("too large resource version")
        raise self._error(status, body, headers)

    def _status_doc(self, body: bytes, test: Callable[[object], bool]) -> bool:
        try:
            return test(self._decode(body, "status"))
        except (RestMapperError, ValueError, RecursionError):
            return False

    def _refuse(self, outcome: Outcome, error: APIStatusError) -> None:
        self.connected = False
        self.last_error = release_frames(error)
        self.sink.reflector_state()
        raise _Return(outcome)

    def _halted(self) -> None:
        """Raise ``_Return`` when the owner stopped or interrupted the loop."""
        if self.stop.is_set() or self._interrupted:
            raise _Return("stopped" if self.stop.is_set() else "interrupted")

    def _hand_over(self, listing: Listing) -> None:
        """Hand a complete list to the sink (which reads it as it arrives) and remember its resourceVersion."""
        self.sink.reflector_replace(listing)
        for _ in listing:  # what the sink left unread: the list is complete only once read to the end
            pass
        self._count("lists")
        if self.stop.is_set():
            raise _Return("stopped")
        self.resource_version = listing.resource_version
        self.synced = True
        self._short_streak = 0
        self._listed_at = self._clock()
