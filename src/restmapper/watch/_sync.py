"""How a :class:`~restmapper.watch.reflector.Reflector` gets a complete list: a paginated list, or WatchList.

A **sync** is one complete list handed to the sink as a :class:`Listing`: the items decoded as they arrive, a list
page or a batch of initial events at a time, so that the sink can store them as they come (the whole list is never
held decoded by the reflector). Two modes:

* **paginated list** (``limit``/``continue``, client-go's pager): a ``410 Gone`` on a continue token (it expired
  between pages) restarts the list once, and a second one lists in one request without ``limit``; the list's
  ``metadata.resourceVersion`` (its first page's) is the sync's.
* **WatchList** (KEP-3157, client-go ``Reflector.watchList``): one watch with ``sendInitialEvents=true``,
  ``resourceVersionMatch=NotOlderThan`` and ``allowWatchBookmarks=true``, without a resourceVersion (a consistent
  snapshot, as client-go asks when it has none it can use). The server sends an ``ADDED`` event for every object,
  then a ``BOOKMARK`` annotated ``k8s.io/initial-events-end: "true"`` whose resourceVersion is the sync's; the same
  stream then carries the changes (the reflector's watch goes on reading it). A stream that ends before that
  bookmark is a failure: the next sync starts over, from a fresh listing (client-go's fresh temporary store).

A server that does not serve WatchList makes the reflector fall back to paginated lists for good
(``Reflector.watch_list`` becomes False): one that refuses the parameters (``400``, or ``422 Invalid``: before 1.27
``resourceVersionMatch is forbidden for watch``, 1.27+ with the ``WatchList`` feature gate off ``sendInitialEvents
is forbidden for watch unless the WatchList feature gate is enabled``), as client-go falls back on an error of its
watch-list request; and one that ignores ``sendInitialEvents`` and starts a plain watch, which client-go does not
detect (it waits for the bookmark forever): before the initial-events-end bookmark such a server sends a
bookmark without the annotation, or nothing until the stream times out or stays silent for the idle timeout. A
server that serves WatchList annotates every bookmark before that one, and may send changes (``MODIFIED``,
``DELETED``) before it: those written after its snapshot, applied once the listing is stored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from restmapper.errors import APIStatusError, InvalidArgumentError, RestMapperError, TransportError
from restmapper.transport.base import StreamResponse, Transport

__all__ = ["ACCEPT", "INITIAL_EVENTS_END", "METADATA_ACCEPT", "Listing", "Opened", "ReflectorSync", "SyncMode"]

_log = logging.getLogger("restmapper.watch")

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""The annotation of the bookmark that ends a WatchList's initial events (``metav1.InitialEventsAnnotationKey``)."""

SyncMode = str
"""``"watch-list"`` or ``"list"``: how a reflector gets a complete list (see the module docstring)."""

ACCEPT = {"Accept": "application/json"}
_METADATA_LIST_ACCEPT = {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"}
METADATA_ACCEPT = {"Accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"}
_REFUSED = (400, 422)  # a server refusing WatchList's parameters (BadRequest, Invalid)
_BATCH = 500  # initial events handed to the page hook at a time when page_size is 0
# A batch of initial events also ends at this many bytes of lines: a batch is decoded whole before the sink stores
# it, so a batch of 500 Pods of 8 KB would be ~20 MB of dicts on top of the store during every sync and relist.
_BATCH_BYTES = 1 << 20
_ADDED_LINE = b'{"type":"ADDED",'  # how kube-apiserver (Go's encoding/json) starts an ADDED event's line
_NEAR_END = 0.9  # a stream that lasted this fraction of its timeout (or its idle timeout silent) ran out


class Listing:
    """The items of one complete list, decoded as they arrive (a list page or a batch of initial events at a time).

    Iterate it once, to the end; afterwards :attr:`resource_version` is the list's resourceVersion and
    :attr:`complete` is True. Iterating raises what the list requests or the stream raise: the sink must then leave
    what it holds as it was (the reflector lists again).

    Attributes:
        resource_version: the list's resourceVersion (``""`` until iterated to the end; still ``""`` after it when
            the list is a WatchList's initial events followed by changes sent before its end bookmark, which the
            sink then gets as watch events, the bookmark last, as soon as it returns).
        complete: every item was delivered.
        metadata_only: the items are ``PartialObjectMetadata`` (every request of the list asked for them): the
            representation the list was asked in, fixed when its first request is sent, whatever the reflector's
            ``metadata_only`` says by the time the sink reads it (another thread may have changed it meanwhile).
    """

    def __init__(self, batches: Callable[[Listing], Iterator[list[Any]]], *, metadata_only: bool = False) -> None:
        """Args: batches: ``batches(listing)`` yields the items a batch at a time and sets
        ``listing.resource_version`` before it ends. metadata_only: the representation asked for (see above)."""
        self._batches = batches(self)
        self.resource_version = ""
        self.complete = False
        self.metadata_only = metadata_only

    def __iter__(self) -> Iterator[Any]:
        for batch in self._batches:
            yield from batch
            del batch  # not kept while the next batch is read
        self.complete = True


@dataclass
class Opened:
    """A watch stream opened by a WatchList sync, read on by the reflector's watch."""

    stream: StreamResponse
    lines: Iterator[bytes]
    opened_at: float  # the reflector's clock when it was requested
    events: int  # lines read from it so far
    # The events from the first change before the initial-events-end bookmark (MODIFIED, DELETED) up to and with
    # that bookmark, applied in order once the sink holds the listing (see ReflectorSync._initial_events).
    changes: list[dict[str, Any]] = field(default_factory=list)


class _Restart(Exception):
    """The server refused the representation the pages so far were asked in (406 to metadata-only): list again from
    the first page, in full objects."""


class _Ignored(Exception):
    """The server ignored ``sendInitialEvents``: it started a plain watch (see the module docstring)."""


class ReflectorSync:
    """The syncs of a reflector (mixed into ``Reflector``, which owns the fields and methods declared here)."""

    transport: Transport
    path: str
    label: str
    params: dict[str, str]
    metadata_only: bool
    watch_list: bool
    _page: str
    _page_items: Callable[[list[Any]], list[Any]] | None
    _watch_timeout: float
    _read_timeout: float
    _clock: Callable[[], float]
    _count: Callable[[str], None]

    if TYPE_CHECKING:  # the Reflector's
        def _decode(self, body: bytes, what: str) -> dict[str, Any]: ...
        def _check(self, status: int, body: bytes, headers: Mapping[str, str]) -> None: ...
        def _error(self, status: object, body: bytes | Mapping[str, Any],
                   headers: Mapping[str, str] | None = None) -> APIStatusError: ...
        def _full_objects(self, status: int, body: bytes, headers: Mapping[str, str]) -> None: ...
        def _open(self, params: dict[str, str], metadata_only: bool) -> StreamResponse: ...
        def _closed(self, stream: StreamResponse) -> None: ...
        def _halted(self) -> None: ...
        def _hand_over(self, listing: Listing) -> None: ...
        def _initial_error(self, obj: dict[str, Any]) -> None: ...
        def _apply(self, event: object) -> bool: ...

    @property
    def sync_mode(self) -> SyncMode:
        """``"watch-list"`` while the reflector syncs by WatchList, else ``"list"``."""
        return "watch-list" if self.watch_list else "list"

    def _sync(self) -> Opened | None:
        """Hand a complete list to the sink; return the stream of a WatchList sync (open, for the watch)."""
        if self.watch_list:
            opened = self._watch_list()
            if opened is not None:
                return opened
        self._list()
        return None

    def _batch(self, items: list[Any]) -> list[Any]:
        return self._page_items(items) if self._page_items is not None else items

    # --- paginated list -----------------------------------------------------------------------------------------

    def _list(self) -> None:
        expired = 0
        while True:
            paged = bool(self._page) and expired < 2
            metadata = self.metadata_only  # every page of one list in one representation
            try:
                items, rv, cont = self._list_page("", paged, metadata)
                self._hand_over(Listing(partial(self._pages, items=items, rv=rv, cont=cont, paged=paged,
                                                metadata=metadata), metadata_only=metadata))
                return
            except _Restart:
                continue
            except _Expired:
                # The continue token expired between pages: start over; when it happens again (compaction faster
                # than our pages), list in one request, as client-go's pager falls back to a full list.
                expired += 1

    def _pages(self, listing: Listing, items: list[Any], rv: str, cont: str, paged: bool,
               metadata: bool) -> Iterator[list[Any]]:
        listing.resource_version = rv  # every page of one list is a snapshot at the first page's resourceVersion
        while True:
            yield self._batch(items)
            del items  # the page consumed is not kept while the next one is requested
            if not cont:
                return
            self._halted()
            items, _, cont = self._list_page(cont, paged, metadata)

    def _list_page(self, cont: str, paged: bool, metadata: bool) -> tuple[list[Any], str, str]:
        """One page (``metadata``: asked as ``PartialObjectMetadata``): its items (raw), the list's resourceVersion
        and the next continue token (``""``: the last).

        Raises:
            _Expired: the continue token expired (410).
            _Restart: the server refused metadata-only objects (406): list full objects from the first page.
        """
        resp = self.transport.get(self.path, _METADATA_LIST_ACCEPT if metadata else ACCEPT,
                                  params=self._page_params(cont, paged))
        if resp.status == 406 and metadata:
            self._full_objects(resp.status, resp.body, resp.headers)
            raise _Restart
        if resp.status == 410 and cont:
            raise _Expired
        if resp.status != 200:
            self._check(resp.status, resp.body, resp.headers)
        doc = self._decode(resp.body, "list")
        del resp
        return self._page_parts(doc, paged)

    def _page_params(self, cont: str, paged: bool) -> dict[str, Any]:
        """The query of a list page: the sync's parameters, with ``limit`` when ``paged`` and the ``continue``
        token when not the first page."""
        params = {**self.params, "limit": self._page} if paged else dict(self.params)
        if cont:
            params["continue"] = cont
        return params

    def _page_parts(self, doc: object, paged: bool) -> tuple[list[Any], str, str]:
        """A decoded list page's items, resourceVersion and next continue token (``""``: the last, or not
        ``paged``).

        Raises:
            InvalidArgumentError: no ``items`` list, or a resourceVersion or continue token that is not a string.
        """
        if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
            raise InvalidArgumentError(f"GET {self.path}: list without items")
        raw_meta = doc.get("metadata")
        meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        rv = meta.get("resourceVersion", "")
        following = (meta.get("continue") or "") if paged else ""
        if not isinstance(following, str) or not isinstance(rv, str):
            raise InvalidArgumentError(f"GET {self.path}: malformed list metadata")
        return doc["items"], rv, following

    # --- WatchList ----------------------------------------------------------------------------------------------

    def _watch_list(self) -> Opened | None:
        """A WatchList sync; None when this sync must list in pages instead: for good when the server refused or
        ignored WatchList (``watch_list`` is then False), this once when the request or the stream failed
        otherwise (a 403 where RBAC allows list but not watch, a 5xx, a dropped connection, a stream ending before
        its initial-events-end bookmark), as client-go falls back to a list "because making progress is better
        than deadlocking".

        Raises:
            _Relist: 410 Gone or a too large resourceVersion (the answer or an ``ERROR`` event).
            _Return: 404 for the type, stopped, interrupted.
        """
        params = {**self.params, "watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                  "allowWatchBookmarks": "true", "timeoutSeconds": str(max(1, int(self._watch_timeout)))}
        while True:
            opened_at = self._clock()
            metadata = self.metadata_only  # the representation of this listing and of the stream's changes
            stream: StreamResponse | None = None
            try:
                stream = self._open(params, metadata)
                self._halted()
                status = stream.status
                if status == 406 and metadata:
                    self._full_objects(status, stream.read(), stream.headers)
                    self._closed(stream)
                    continue
                if status in _REFUSED:
                    self._refused(str(self._error(status, stream.read(), stream.headers)))
                    self._closed(stream)
                    return None
                if status in (404, 410, 504):
                    self._check(status, stream.read(), stream.headers)  # the type's 404, a relist
                if status != 200:
                    raise self._error(status, stream.read(), stream.headers)
                return self._sync_from(stream, opened_at, metadata)
            except _Ignored as exc:
                self._closed_if(stream)
                self._halted()  # a stream the owner closed ended however it ended: not the server's doing
                self._refused(str(exc))
                return None
            except TransportError as exc:
                self._closed_if(stream)
                self._halted()
                _log.debug("%s: watch-list failed (%s); listing in pages this time", self.label, exc)
                return None
            except BaseException:
                self._closed_if(stream)
                raise

    def _sync_from(self, stream: StreamResponse, opened_at: float, metadata: bool) -> Opened:
        """Hand the sink the listing the WatchList ``stream`` (accepted, opened at ``opened_at``, of
        ``PartialObjectMetadata`` when ``metadata``) sends, then apply the changes that came before its end
        bookmark; return the stream, read up to that bookmark."""
        opened = Opened(stream, stream.iter_lines(), opened_at, 0)
        self._hand_over(Listing(partial(self._initial_events, opened=opened), metadata_only=metadata))
        changes, opened.changes = opened.changes, []
        for event in changes:  # no stop or interrupt between: the resourceVersion is the bookmark's
            self._apply(event)
        return opened

    def _closed_if(self, stream: StreamResponse | None) -> None:
        if stream is not None:
            self._closed(stream)

    def _refused(self, why: str) -> None:
        self.watch_list = False
        _log.warning("%s: the server does not serve WatchList (%s); syncing by paginated lists from now on",
                     self.label, why)

    def _initial_events(self, listing: Listing, opened: Opened) -> Iterator[list[Any]]:
        """The initial ``ADDED`` events, a batch (``page_size`` events, or fewer making 1 MiB of lines) at a time, up
        to the initial-events-end bookmark (which sets the listing's resourceVersion and ends it).

        The lines of a batch are decoded as one JSON document, as a list page is: the decoder then makes one string
        of each key for the whole batch, where a line at a time makes one for every object (with 8 KB Pods held
        as dicts, ~20 % more memory). A line that does not start as kube-apiserver encodes an ``ADDED`` event
        (``{"type":"ADDED",``) is decoded alone; the result is the same either way.

        kube-apiserver sends the changes written after its snapshot as they come and the initial-events-end bookmark
        at its next bookmark tick (about a second later), so a ``MODIFIED`` or ``DELETED`` may come before that
        bookmark. The listing is then what came before the first change, and that change and every event after it
        up to the bookmark are kept in ``opened.changes``, applied in order as watch events once the sink holds the
        listing: the end state client-go's temporary store reaches by applying them to it. Such a listing claims no
        resourceVersion (``""``: what it holds is older than the bookmark's), so nothing reads the store as
        caught up to the bookmark before its changes are in.

        Raises:
            _Ignored: the server ignored sendInitialEvents (see the module docstring).
            _Relist: an ``ERROR`` event saying 410 Gone or too large resourceVersion.
            TransportError: the stream ended or failed before the bookmark.
        """
        size = self._batch_size()
        raw: list[bytes] = []  # ADDED lines not decoded yet
        batch: list[Any] = []  # objects decoded, not handed over yet
        held = 0  # bytes of the lines read since the last batch was handed over
        heard = self._clock()
        try:
            for line in opened.lines:
                opened.events += 1
                heard = self._clock()
                held += len(line)
                if line.startswith(_ADDED_LINE):
                    raw.append(line)
                    if len(raw) + len(batch) < size and held < _BATCH_BYTES:
                        continue
                    events = self._decode_lines(raw)
                else:
                    events = [*self._decode_lines(raw), self._decode(line, "watch")]
                raw = []
                end = self._initial_events_in(events, batch, opened.changes)
                if end is not None:  # the last of events: the lines after it were not read yet
                    if batch:
                        yield self._batch(batch)
                    # With changes to follow, the listing is no snapshot at a resourceVersion the server
                    # named: it claims none, and the end bookmark claims its own once they are applied.
                    listing.resource_version = "" if opened.changes else end
                    return
                del events
                if len(batch) >= size or held >= _BATCH_BYTES:
                    yield self._batch(batch)
                    batch = []
                    held = 0
        except TransportError:
            if self._clock() - heard >= self._read_timeout * _NEAR_END:
                raise _Ignored(f"silent for {self._read_timeout:.0f}s before the {INITIAL_EVENTS_END} "
                               "bookmark") from None
            raise
        raise self._ended_before_bookmark(opened)

    def _batch_size(self) -> int:
        """Initial events handed over at a time: ``page_size``, else :data:`_BATCH`."""
        return int(self._page) if self._page else _BATCH

    def _initial_events_in(self, events: list[Any], batch: list[Any], changes: list[dict[str, Any]]) -> str | None:
        """Take each of ``events`` (see :meth:`_initial_event`); the resourceVersion of the initial-events-end
        bookmark when one of them is it (the last one: the lines after it were not read yet), else None."""
        for event in events:
            end = self._initial_event(event, batch, changes)
            if end is not None:
                return end
        return None

    def _ended_before_bookmark(self, opened: Opened) -> Exception:
        """What a WatchList stream that ended cleanly before its initial-events-end bookmark means: the server
        ignored sendInitialEvents (``_Ignored``) when it ran its whole timeout, else a TransportError."""
        lasted = self._clock() - opened.opened_at
        if lasted >= self._watch_timeout * _NEAR_END:
            return _Ignored(f"the stream ran its {self._watch_timeout:.0f}s without the {INITIAL_EVENTS_END} bookmark")
        return TransportError(f"GET {self.path}: watch-list ended after {lasted:.2f}s, before the "
                              f"{INITIAL_EVENTS_END} bookmark", path=self.path)

    def _decode_lines(self, lines: list[bytes]) -> list[Any]:
        """Watch event lines decoded as one document (see :meth:`_initial_events`); a malformed one raises as it
        would alone."""
        if not lines:
            return []
        if len(lines) == 1:
            return [self._decode(lines[0], "watch")]
        try:
            events = self._decode(b'{"items":[' + b",".join(lines) + b"]}", "watch")["items"]
        except (RestMapperError, ValueError, RecursionError):
            return [self._decode(line, "watch") for line in lines]  # the malformed line raises with its reason
        return events if isinstance(events, list) else []

    def _initial_event(self, event: object, batch: list[Any], changes: list[dict[str, Any]]) -> str | None:
        """Add an initial ``ADDED`` event's object to ``batch``, or from the first change on (a ``MODIFIED``, a
        ``DELETED``: see :meth:`_initial_events`) the event to ``changes``; return the resourceVersion of the
        initial-events-end bookmark.

        Raises:
            _Ignored: a bookmark without that annotation (kube-apiserver annotates every bookmark it sends before
                the initial events end: this server ignored sendInitialEvents).
            _Relist: an ``ERROR`` saying 410 Gone or too large resourceVersion; else the status error.
            InvalidArgumentError: an event that is not ``{type, object}``.
        """
        obj = event.get("object") if isinstance(event, dict) else None
        if not isinstance(event, dict) or not isinstance(obj, dict):
            raise InvalidArgumentError(f"watch {self.path}: event is not {{type, object}}")
        event_type = event.get("type")
        if changes or event_type != "ADDED":
            return self._initial_non_added(event, obj, changes)
        meta = obj.get("metadata")
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        if isinstance(rv, str) and rv:
            batch.append(obj)
        else:
            self._count("malformed")
            _log.warning("ignoring an initial event without metadata.resourceVersion on %s", self.label)
        return None

    def _initial_non_added(self, event: dict[str, Any], obj: dict[str, Any], changes: list[dict[str, Any]]
                           ) -> str | None:
        """:meth:`_initial_event` of any event but an ``ADDED`` before the first change: an ``ERROR`` raises, a
        bookmark must be the initial-events-end one (its resourceVersion is returned), and from the first change
        on every event (that bookmark too) goes to ``changes``."""
        event_type = event.get("type")
        if event_type == "ERROR":
            self._initial_error(obj)
        end = None
        if event_type == "BOOKMARK":
            end = _initial_events_end(obj)
            if end is None:
                raise _Ignored(f"a bookmark without {INITIAL_EVENTS_END}: \"true\" before the initial events end")
        if changes or event_type != "BOOKMARK":
            changes.append(event)  # applied as a watch event (the end bookmark too) once the listing is stored
        else:
            self._count("bookmarks")
        return end


def _initial_events_end(bookmark: dict[str, Any]) -> str | None:
    """The resourceVersion of a bookmark's object when it is the initial-events-end bookmark (annotated
    ``k8s.io/initial-events-end: "true"``, with a non-empty resourceVersion), else None."""
    meta = bookmark.get("metadata")
    if not isinstance(meta, dict):
        return None
    annotations, rv = meta.get("annotations"), meta.get("resourceVersion")
    if isinstance(annotations, dict) and annotations.get(INITIAL_EVENTS_END) == "true" and isinstance(rv, str):
        return rv or None
    return None


class _Expired(Exception):
    """A paginated list must start over: its continue token expired (410)."""

