"""One list-then-watch loop for one resource type (CRDs or APIServices), run on its own thread.

The loop is the Kubernetes reflector protocol (client-go ``tools/cache.Reflector.ListAndWatch``): list with
``limit``/``continue`` and remember ``metadata.resourceVersion``; watch from it with ``allowWatchBookmarks``;
advance the resource version on every event and bookmark; relist on 410 Gone (from the watch request or an
``ERROR`` event); reconnect at once when a stream ends cleanly; back off exponentially (reset by a successful
connect) on errors. What it learns goes to its owner through :class:`LoopOwner`; the loop never touches the mapper.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

import tenacity

from restmapper.errors import APIStatusError, InvalidArgumentError, RestMapperError, TransportError, release_frames
from restmapper.transport import Response, StreamResponse, Transport, status_error
from restmapper.watch._objects import Known, ResourceKind, known_from

__all__ = ["LoopOwner", "ResourceLoop"]

_log = logging.getLogger("restmapper.watch")

_ACCEPT = {"Accept": "application/json"}
_PAGE = "500"
_READ_MARGIN = 30.0  # seconds beyond timeoutSeconds before a silent stream counts as dropped
_EMPTY_ENDS_BEFORE_BACKOFF = 3  # a server that ends every watch at once must not make us spin

Outcome = Literal["ended", "gone", "forbidden"]


class _Forbidden(Exception):
    """RBAC forbids listing or watching this resource (403)."""


class _Gone(Exception):
    """The resource version is too old (410 Gone): relist."""


class LoopOwner(Protocol):
    """What a loop reports to (implemented by :class:`~restmapper.watch.Watcher`)."""

    def _loop_event(self, loop: ResourceLoop, event_type: str, obj: Mapping[str, Any],
                    groups: frozenset[str]) -> None: ...

    def _loop_state(self, loop: ResourceLoop) -> None: ...

    def _loop_forbidden(self, loop: ResourceLoop, error: APIStatusError) -> None: ...

    def _loop_relisted(self, loop: ResourceLoop, live: frozenset[str]) -> None: ...


class ResourceLoop:
    """List-then-watch of one resource type for one watcher session.

    Attributes guarded by the owner's GIL-atomic reads only (each is written by the loop thread alone):
    ``known`` (uid -> Known), ``resource_version``, ``synced`` (a list succeeded), ``connected`` (a watch
    stream is open), ``disabled`` (403), ``failures`` (consecutive failures, the backoff exponent).
    """

    def __init__(self, owner: LoopOwner, kind: ResourceKind, transport: Transport, stop: threading.Event, *,
                 backoff: Callable[[int], float], sleep: Callable[[threading.Event, float], None],
                 watch_timeout: float, count: Callable[[str], None]) -> None:
        self.owner = owner
        self.kind = kind
        self._transport = transport
        self.stop = stop
        self._backoff = backoff
        self._sleep = sleep
        self._watch_timeout = watch_timeout
        self._count = count
        self.known: dict[str, Known] = {}
        self.resource_version = ""
        self.synced = False
        self.connected = False
        self.disabled = False
        self.failures = 0
        self.last_error: BaseException | None = None
        # Guards _stream: the stopping thread closes it to wake a reader blocked in iter_lines().
        self._stream_lock = threading.Lock()
        self._stream: StreamResponse | None = None
        self.thread: threading.Thread | None = None

    # --- thread body ---------------------------------------------------------------------------------------

    def run(self) -> None:
        """Loop until the session stops or RBAC forbids the resource."""
        need_list = True
        empty_ends = 0
        gone_streak = 0
        while not self.stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                outcome, events = self._watch()
            except _Forbidden:
                return
            except _Gone:
                outcome, events = "gone", 0
            except Exception as exc:
                # Anything else (a transport error, a hostile body: malformed JSON, RecursionError on absurd
                # nesting, a bug) must never end the thread silently while `running` says True (seed 3):
                # record it, back off, and list and watch again.
                if self.stop.is_set():
                    return
                if not isinstance(exc, (RestMapperError, ValueError)):
                    self._count("malformed")
                self._fail(exc)
                need_list = need_list or not self.synced
                continue
            if outcome == "gone":
                self._count("relists")
                need_list = True
                # The first 410 relists at once; a server answering 410 again and again gets the backoff too
                # (client-go's reflector restarts ListAndWatch through a backoff manager).
                gone_streak = 0 if events else gone_streak + 1
                if gone_streak > 1 and not self.stop.is_set():
                    self.failures = max(self.failures, gone_streak - 2)  # the streak, not the connect, sets the delay
                    self._fail(TransportError(f"GET {self.kind.path}: 410 Gone {gone_streak} times in a row",
                                              path=self.kind.path))
            elif outcome == "ended":
                gone_streak = 0
                empty_ends = 0 if events else empty_ends + 1
                if empty_ends >= _EMPTY_ENDS_BEFORE_BACKOFF and not self.stop.is_set():
                    self._fail(TransportError(f"GET {self.kind.path}: watch ended {empty_ends} times without "
                                              "events", path=self.kind.path))

    def _fail(self, exc: BaseException) -> None:
        self.failures += 1
        self.last_error = release_frames(exc)  # kept until the next failure: not with the body it was about
        self.connected = False
        self._count("errors")
        delay = self._backoff(self.failures)
        log = _log.warning if self.failures == 1 else _log.debug
        log("watch of %s failed (%s); retrying in %.2fs (attempt %d)", self.kind.label, exc, delay,
            self.failures + 1)
        self.owner._loop_state(self)
        self._sleep(self.stop, delay)

    # --- list -----------------------------------------------------------------------------------------------

    def _get(self, params: dict[str, str]) -> Response:
        resp = self._transport.get(self.kind.path, _ACCEPT, params=params)
        if resp.status == 403:
            self._forbidden(status_error(self._transport, self.kind.path, resp.status, resp.body, resp.headers))
        return resp

    def _list(self) -> None:
        items: list[Any] = []
        cont = ""
        restarted = False
        while True:
            params = {"limit": _PAGE}
            if cont:
                params["continue"] = cont
            resp = self._get(params)
            if resp.status == 410 and cont and not restarted:
                # The continue token expired between pages: start over once, as client-go's pager does.
                items, cont, restarted = [], "", True
                continue
            if resp.status != 200:
                raise status_error(self._transport, self.kind.path, resp.status, resp.body, resp.headers)
            doc = json.loads(resp.body)
            if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
                raise InvalidArgumentError(f"GET {self.kind.path}: list without items")
            raw_meta = doc.get("metadata")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            items.extend(doc["items"])
            rv = meta.get("resourceVersion", "")
            cont = meta.get("continue") or ""
            if not isinstance(cont, str) or not isinstance(rv, str):
                raise InvalidArgumentError(f"GET {self.kind.path}: malformed list metadata")
            if not cont or self.stop.is_set():
                break
        self._count("lists")
        self._replace(items, rv)

    def _replace(self, items: list[Any], rv: str) -> None:
        fresh: dict[str, Known] = {}
        objects: dict[str, Mapping[str, Any]] = {}
        for item in items:
            try:
                known = known_from(self.kind, item)
            except InvalidArgumentError as exc:
                self._count("malformed")
                _log.warning("ignoring malformed %s in list: %s", self.kind.kind, exc)
                continue
            fresh[known.uid] = known
            objects[known.uid] = item
        old = self.known
        # Diff against what we knew: a relist after missed events invalidates only what changed (the first list
        # of a session knows nothing, so everything listed counts as added and is invalidated). Deletions go
        # first, as a live stream would have sent them: a CRD deleted and recreated (new UID) while the watch was
        # down must end up present for a handler keyed by name.
        for uid, vanished in old.items():
            if uid not in fresh:
                self._emit("DELETED", vanished.slim, frozenset({vanished.group}))
        for uid, known in fresh.items():
            before = old.get(uid)
            if before is None:
                self._emit("ADDED", objects[uid], frozenset({known.group}))
            elif before.fingerprint != known.fingerprint:
                self._emit("MODIFIED", objects[uid], frozenset({known.group, before.group}))
            elif before.resource_version != known.resource_version:
                self._emit("MODIFIED", objects[uid], frozenset())
        self.known = fresh
        self.resource_version = rv
        self.synced = True
        self.owner._loop_relisted(self, frozenset(fresh))

    def _emit(self, event_type: str, obj: Mapping[str, Any], groups: frozenset[str]) -> None:
        if not self.stop.is_set():
            self.owner._loop_event(self, event_type, obj, groups)

    def _forbidden(self, error: APIStatusError) -> None:
        self.disabled = True
        self.connected = False
        self.last_error = error
        self.owner._loop_forbidden(self, error)
        raise _Forbidden

    # --- watch ------------------------------------------------------------------------------------------------

    def close_stream(self) -> None:
        """Close the open stream, if any (called by the stopping thread to wake the reader)."""
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def _watch(self) -> tuple[Outcome, int]:
        params = {"watch": "1", "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(max(1, int(self._watch_timeout)))}
        stream = self._transport.stream(self.kind.path, _ACCEPT, params=params,
                                        timeout=self._watch_timeout + _READ_MARGIN)
        with self._stream_lock:
            self._stream = stream
        events = 0
        try:
            if self.stop.is_set():
                return "ended", 0
            if stream.status == 410:
                return "gone", 0
            if stream.status != 200:
                error = status_error(self._transport, self.kind.path, stream.status, stream.read(), stream.headers)
                if stream.status == 403:
                    self._forbidden(error)
                raise error
            self._count("connects")
            self.failures = 0  # a successful connect resets the backoff
            self.connected = True
            self.owner._loop_state(self)
            for line in stream.iter_lines():
                if self.stop.is_set():
                    break
                if self._event(line):
                    return "gone", events
                events += 1
            return "ended", events
        finally:
            with self._stream_lock:
                self._stream = None
            stream.close()
            if self.connected:
                self.connected = False
                self.owner._loop_state(self)

    def _event(self, line: bytes) -> bool:
        """Apply one watch event; True when the server said 410 Gone."""
        event = json.loads(line)
        if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
            raise InvalidArgumentError(f"watch {self.kind.path}: event is not {{type, object}}")
        event_type, obj = event.get("type"), event["object"]
        if event_type == "ERROR":
            code = obj.get("code")
            if code == 410:
                return True
            raise status_error(self._transport, self.kind.path, code, obj)
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if event_type == "BOOKMARK":
            self._count("bookmarks")
            if isinstance(rv, str) and rv:
                self.resource_version = rv
            return False
        if event_type not in ("ADDED", "MODIFIED", "DELETED"):
            self._count("malformed")
            _log.debug("ignoring watch event of type %r on %s", event_type, self.kind.label)
            return False
        self._count("events")
        self._apply(event_type, obj)
        if isinstance(rv, str) and rv:
            self.resource_version = rv
        return False

    def _apply(self, event_type: str, obj: Mapping[str, Any]) -> None:
        try:
            known = known_from(self.kind, obj)
        except InvalidArgumentError as exc:
            self._count("malformed")
            _log.warning("ignoring malformed %s event on %s: %s", event_type, self.kind.kind, exc)
            return
        before = self.known.get(known.uid)
        groups = {known.group} | ({before.group} if before is not None else set())
        if event_type == "DELETED":
            self.known.pop(known.uid, None)
            self._emit(event_type, obj, frozenset(groups))
            return
        self.known[known.uid] = known
        changed = before is None or before.fingerprint != known.fingerprint
        # A status heartbeat or a no-op update changes nothing discovery serves: do not invalidate for it.
        self._emit(event_type, obj, frozenset(groups) if changed else frozenset())


def exponential_backoff(initial: float, maximum: float) -> Callable[[int], float]:
    """Return ``failures -> seconds``: ``initial * 2**(failures-1)`` capped at ``maximum``, plus up to 10 % of
    ``initial`` of jitter (tenacity's wait strategies; client-go's reflector backs off the same way)."""
    strategy = (tenacity.wait_exponential(multiplier=initial, min=initial, max=maximum)
                + tenacity.wait_random(0, initial * 0.1))
    state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
    lock = threading.Lock()  # the call state is shared by both loop threads

    def delay(failures: int) -> float:
        with lock:
            state.attempt_number = max(1, failures)
            return float(strategy(state))

    return delay

