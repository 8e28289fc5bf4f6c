"""How a :class:`~restmapper.watch.reflector.Reflector` watches: one stream from a resourceVersion, its events applied.

A watch asks for ``watch=1`` from the reflector's resourceVersion with ``allowWatchBookmarks=true`` and
``timeoutSeconds`` (or goes on reading the stream of a WatchList sync). Every event and bookmark advances the
resourceVersion, so the next stream resumes exactly where this one stopped. How the stream ended is judged here:

* a ``410 Gone`` or a too large resourceVersion (as the answer or an ``ERROR`` event) raises :class:`_Relist`;
* a stream silent for the read timeout (the idle timeout) is reopened at once, without counting a failure;
* a stream that ends **at once** (under a second without any event or bookmark) is a failure, and three in a row
  owe a relist (client-go's "very short watch");
* a stream that ends before 90 % of its timeout ended "early"; three early ends in a row without a change are a
  failure (a server that ends every watch must not make the loop spin).

An ``ADDED``/``MODIFIED``/``DELETED`` event whose object has no ``metadata.resourceVersion`` is malformed (counted,
skipped). The rest of the loop (lists, failures and their backoff, when to return) is the reflector's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from restmapper.errors import APIStatusError, InvalidArgumentError, TransportError
from restmapper.transport.base import StreamResponse, Transport
from restmapper.watch._statuses import retries_watch, too_large_resource_version
from restmapper.watch._sync import ACCEPT, METADATA_ACCEPT, Opened

if TYPE_CHECKING:
    from restmapper.watch.reflector import ReflectorSink

__all__ = ["READ_MARGIN", "ReflectorWatch"]

_log = logging.getLogger("restmapper.watch")

READ_MARGIN = 30.0  # seconds beyond timeoutSeconds before a silent stream counts as dropped
_SHORT_WATCH = 1.0  # seconds: a stream that ends sooner without any event failed (client-go's "very short watch")
_SHORT_WATCHES_BEFORE_RELIST = 3
_QUIET_ENDS_BEFORE_BACKOFF = 3  # streams ending early without a change: a server that ends every watch must not spin
_EARLY_FRACTION = 0.9  # a stream that ends before this fraction of timeoutSeconds ended "early"
_IDLE_FRACTION = 0.9  # a stream error after this fraction of the read timeout in silence is that timeout expiring


class _Relist(Exception):
    """The resourceVersion cannot be watched from (410 Gone, or too large): list again."""


class ReflectorWatch:
    """The watches of a reflector (mixed into ``Reflector``, which owns the fields and methods declared here)."""

    transport: Transport
    path: str
    label: str
    sink: ReflectorSink
    stop: threading.Event
    params: dict[str, str]
    metadata_only: bool
    resource_version: str
    connected: bool
    failures: int
    _interrupted: bool
    _watch_timeout: float
    _read_timeout: float
    _clock: Callable[[], float]
    _count: Callable[[str], None]
    _relist_owed: bool
    _short_streak: int
    _quiet_streak: int
    _stream_lock: threading.Lock
    _stream: StreamResponse | None

    if TYPE_CHECKING:  # the Reflector's
        def fail(self, exc: BaseException) -> None: ...
        def _works(self) -> None: ...
        def _decode(self, body: bytes, what: str) -> dict[str, Any]: ...
        def _check(self, status: int, body: bytes, headers: Mapping[str, str]) -> None: ...
        def _error(self, status: object, body: bytes | Mapping[str, Any],
                   headers: Mapping[str, str] | None = None) -> APIStatusError: ...
        def _full_objects(self, status: int, body: bytes, headers: Mapping[str, str]) -> None: ...

    def _open(self, params: dict[str, str], metadata_only: bool) -> StreamResponse:
        """Open a watch stream of ``PartialObjectMetadata`` (``metadata_only``) or full objects (``close_stream``
        closes it from then on)."""
        stream = self.transport.stream(self.path, METADATA_ACCEPT if metadata_only else ACCEPT,
                                       params=params, timeout=self._read_timeout)
        with self._stream_lock:
            self._stream = stream
        return stream

    def _closed(self, stream: StreamResponse) -> None:
        """Close a stream :meth:`_open` opened."""
        with self._stream_lock:
            self._stream = None
        stream.close()

    def _watch(self, opened: Opened | None) -> bool:
        """Watch until the stream ends (``opened``: read on the stream of a WatchList sync); True when it ended
        early (before 90 % of its timeout) without an error.

        Raises:
            _Relist: 410 Gone or a too large resourceVersion (answer or ``ERROR`` event).
            _Return: 403, 404, stopped.
        """
        stream, started, lines, metadata = self._watch_stream(opened)
        changes = 0
        idle = False
        try:
            if not self._connected(stream, metadata):
                return False
            heard = self._clock()
            try:
                for line in stream.iter_lines() if opened is None else opened.lines:  # a read timeout raises
                    if self.stop.is_set() or self._interrupted:
                        return False
                    if self._event(line):
                        changes += 1
                        self._works()
                    lines += 1
                    heard = self._clock()
            except TransportError:
                if not self._read_timed_out(heard):
                    raise  # a connection that failed while the stream was not idle
                idle = True  # the read timeout: silent for the whole idle timeout (see below)
        finally:
            self._closed(stream)
            self._disconnected()
        if idle:
            # Silent for idle_timeout: a dead connection, or a healthy watch of a quiet collection on a server that
            # sends no periodic bookmarks (an aggregated API server, a resource without the watch cache); both
            # look the same from here. Reconnect at once from the last resourceVersion, with no failure counted
            # and the backoff left alone: only when that reconnect fails is it a failure.
            _log.info("%s: watch silent for %.0fs; reconnecting", self.label, self._read_timeout)
            return False
        return self._ended(self._clock() - started, lines, changes)

    def _watch_stream(self, opened: Opened | None) -> tuple[StreamResponse, float, int, bool]:
        """The stream to watch, when it was opened (clock seconds), the lines read from it so far and whether it
        was asked for ``PartialObjectMetadata``: ``opened``'s (a WatchList sync's, accepted already), else a watch
        opened now from :attr:`resource_version`."""
        if opened is not None:
            return opened.stream, opened.opened_at, opened.events, False
        params = {**self.params, "watch": "1", "resourceVersion": self.resource_version,
                  "allowWatchBookmarks": "true", "timeoutSeconds": str(max(1, int(self._watch_timeout)))}
        started = self._clock()
        metadata = self.metadata_only
        return self._open(params, metadata), started, 0, metadata

    def _connected(self, stream: StreamResponse, metadata: bool) -> bool:
        """Accept the watch ``stream``'s answer (asked for ``PartialObjectMetadata`` when ``metadata``): a 200
        connects (failures reset, the sink told); False (nothing done) when the reflector is stopping or
        interrupted.

        Raises:
            _Relist: 410 Gone, or a 406 to a metadata-only watch (list again: full objects only).
            _Return: as :meth:`_check` for any other status (a relist owed first unless the status is retried).
        """
        if self.stop.is_set() or self._interrupted:
            return False
        if stream.status == 410:
            raise _Relist("410 Gone")
        if stream.status == 406 and metadata:
            self._full_objects(stream.status, stream.read(), stream.headers)
            raise _Relist("406 Not Acceptable: metadata-only refused")  # list again: full objects only
        if stream.status != 200:
            if not retries_watch(stream.status):
                self._relist_owed = True  # the round ends: the next one lists again (after the backoff)
            self._check(stream.status, stream.read(), stream.headers)
        self._count("connects")
        self.failures = 0  # connected: no longer failing (the backoff exponent waits for a healthy period)
        self.connected = True
        self.sink.reflector_state()
        return True

    def _read_timed_out(self, heard: float) -> bool:
        """Whether a read that failed with the last line ``heard`` (clock seconds) is the idle timeout: the watch
        was silent for (nearly) the whole read timeout, and the reflector is neither stopping nor interrupted."""
        silent = self._clock() - heard
        if self.stop.is_set() or self._interrupted:
            return False
        return silent >= self._read_timeout * _IDLE_FRACTION

    def _disconnected(self) -> None:
        """After a watch stream closed: when it had connected, no longer connected (the sink told)."""
        if self.connected:
            self.connected = False
            self.sink.reflector_state()

    def _ended(self, lasted: float, lines: int, changes: int) -> bool:
        """Judge a stream that ended without error; True when it ended early (see :meth:`_watch`)."""
        if self.stop.is_set() or self._interrupted:
            return False
        if lines == 0 and lasted < _SHORT_WATCH:
            # Accepted and closed before anything (a proxy closing stale watches, a compacted resourceVersion
            # answered by a close): a failure; a few in a row, and events may have been lost: relist.
            self._short_streak += 1
            if self._short_streak >= _SHORT_WATCHES_BEFORE_RELIST:
                self._short_streak = 0
                self._relist_owed = True
                self._count("relists")
            self.fail(TransportError(f"GET {self.path}: watch ended after {lasted:.2f}s without any event",
                                     path=self.path))
            return True
        self._short_streak = 0
        early = lasted < self._watch_timeout * _EARLY_FRACTION
        if not early:
            self._works()
        self._quiet_streak = 0 if changes or not early else self._quiet_streak + 1
        if self._quiet_streak >= _QUIET_ENDS_BEFORE_BACKOFF:
            self.fail(TransportError(f"GET {self.path}: watch ended early without a change "
                                     f"{self._quiet_streak} times in a row", path=self.path))
        return early

    def _initial_error(self, obj: dict[str, Any]) -> None:
        """Raise what an ``ERROR`` event's Status means: ``_Relist`` for 410 Gone or a too large resourceVersion,
        else the status error (the round ends, and the next one lists again, unless it is a 429 or a 5xx)."""
        code = obj.get("code")
        if code == 410:
            raise _Relist("410 Gone")
        if too_large_resource_version(obj):
            raise _Relist("too large resource version")
        if not retries_watch(code):
            self._relist_owed = True
        raise self._error(code, obj)

    def _event(self, line: bytes) -> bool:
        """Apply one watch event line; True for a change (ADDED/MODIFIED/DELETED).

        Raises:
            _Relist: an ``ERROR`` event saying 410 Gone or too large resourceVersion.
        """
        return self._apply(self._decode(line, "watch"))

    def _bookmark(self, rv: object) -> None:
        """A ``BOOKMARK`` event at ``rv``: counted; a non-empty resourceVersion becomes the one to resume from."""
        self._count("bookmarks")
        if isinstance(rv, str) and rv:
            self.resource_version = rv
            self.sink.reflector_bookmark(rv)

    def _apply(self, event: object) -> bool:
        """Apply one decoded watch event (see :meth:`_event`)."""
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            raise InvalidArgumentError(f"watch {self.path}: event is not {{type, object}}")
        event_type, obj = event.get("type"), event["object"]
        if event_type == "ERROR":
            self._initial_error(obj)
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if event_type == "BOOKMARK":
            self._bookmark(rv)
            return False
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            self._count("malformed")
            _log.debug("ignoring watch event of type %r on %s", event_type, self.label)
            return False
        if not isinstance(rv, str) or not rv:
            # Every object the API server sends has one; without it a change cannot be told from a repeat, nor
            # the watch resumed after it: malformed, as an object without a name.
            self._count("malformed")
            _log.warning("ignoring a %s event without metadata.resourceVersion on %s", event_type, self.label)
            return False
        self._count("events")
        self.sink.reflector_event(event_type, obj)
        self.resource_version = rv
        return True
