"""The types an :class:`~restmapper.store.Informer` reports: its state names, its transform, its counters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from restmapper.model import GroupKind
    from restmapper.store._informer import Informer
    from restmapper.store._reflectors import NamespaceState

__all__ = ["InformerInfo", "InformerStats", "State", "Transform"]

State = Literal["starting", "synced", "not_served", "failing", "stopped"]
Transform = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class InformerStats:
    """Counters of one :class:`Informer` (monotonic), gauges (``objects``, ``backlog``, ``bytes``,
    ``last_event_age_seconds``) and its sync mode.

    Attributes:
        lists: complete lists (initial, relists after 410, after a move or a restart), by either sync mode. The
            objects of such a sync (its list pages, or a WatchList's initial ``ADDED`` events up to its
            initial-events-end bookmark) are counted here, once per sync, never under ``events``.
        relists: relists the protocol needed: 410 Gone, a too large resourceVersion (an etcd restore), watches
            that ended at once again and again.
        connects: watch streams opened.
        events: ADDED/MODIFIED/DELETED watch events received after a sync (a WatchList's initial events are part
            of its sync: ``lists``).
        bookmarks: BOOKMARK events received.
        errors: failed lists/watches/lookups (each followed by a backoff).
        malformed: events or items from the server that could not be read (skipped; a transform that refuses an
            object is an error instead: ``errors`` and ``last_error``).
        not_found: 404s for the resource type (each reported to the mapper).
        moves: re-resolutions that changed the mapping (another version or scope).
        restarts: returns from ``not_served`` to being served.
        stale_drops: objects refused because they were older than the one held (no downgrade).
        handler_errors: exceptions raised by handlers, ``SystemExit`` and escaped cancellations included (logged,
            never propagated: delivery goes on, to that handler and the others).
        resyncs: periodic resyncs delivered.
        objects: objects held now.
        backlog: changes queued for handlers now.
        sync_mode: how the informer gets a complete list: ``"watch-list"`` (a watch streaming the objects, then
            their changes: KEP-3157's WatchList) or ``"list"`` (paginated lists), which it uses when the cache's
            ``watch_list`` is False or the server refused or ignored WatchList (then for the life of the cache), for
            any of its namespaces.
        bytes: an estimate of the bytes the informer's store holds now (its compact objects, its indexes and the
            recently read objects it keeps decoded; within about 20 % of what ``tracemalloc`` counts on Pods).
        last_event_age_seconds: seconds since the last event, list or bookmark from the server (a watch that
            stays silent longer than its bookmark interval, about a minute on kube-apiserver, is suspect); None
            before the first.
    """

    lists: int = 0
    relists: int = 0
    connects: int = 0
    events: int = 0
    bookmarks: int = 0
    errors: int = 0
    malformed: int = 0
    not_found: int = 0
    moves: int = 0
    restarts: int = 0
    stale_drops: int = 0
    handler_errors: int = 0
    resyncs: int = 0
    objects: int = 0
    backlog: int = 0
    sync_mode: str = "list"
    bytes: int = 0
    last_event_age_seconds: float | None = None


@dataclass(frozen=True)
class InformerInfo:
    """One informer of :meth:`ObjectCache.informers`.

    Attributes:
        kind: its GroupKind.
        scope: what it holds, e.g. ``namespaces 'a', 'b'; label selector 'tier=gold'; metadata only``.
        state: :attr:`Informer.state`.
        objects: objects held now.
        namespaces_state: :attr:`Informer.namespaces_state` (empty unless listed per namespace).
        informer: the informer itself.
    """

    kind: GroupKind
    scope: str
    state: State
    objects: int
    namespaces_state: dict[str, NamespaceState]
    informer: Informer
