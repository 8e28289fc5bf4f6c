"""The discovery cache: when to ask the server, and what to keep when it fails.

State (all guarded by ``DiscoveryCache._lock``, which is never held across network I/O; methods named
``..._locked`` expect the caller to hold it, every other private method takes it itself and may do I/O):

* ``_roots``: one :class:`RootSlot` per root document (:data:`~restmapper.cache._roots.ROOTS`: ``/api`` and
  ``/apis``, handled alike), by path: the last answer and its fetch time.
* ``_entries``: one :class:`GroupEntry` per loaded API group (its served versions, their resources, and the
  versions that failed), each with its fetch time.
* ``_backoff``: per root document (by path) and per group (by name), the failure being backed off from.
* ``generation``: bumped whenever cached content changes; the mapper memoizes answers on it.

One refresh path (its I/O is in :mod:`restmapper.cache._fetching`): every cached answer is described as a
:class:`~restmapper.cache._freshness.SlotState` and :func:`~restmapper.cache._freshness.decide` says whether it is
fresh, to be revalidated or refetched, served stale or failed. :meth:`DiscoveryCache.groups` loads only the groups
that are not fresh, sharing in-flight fetches between threads (single-flight per document). A 404 on a listed
group version evicts the group, re-reads its root document once and retries in the same call (the Cluster API
upgrade race, controller-runtime's fix). A lookup that misses calls :meth:`DiscoveryCache.revalidate_on_miss`,
rate-limited so that no negative answer is older than ``miss_refresh_interval``.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Collection, Iterable, Sequence

from restmapper.cache._fetching import FetchingState
from restmapper.cache._freshness import Action, Timing
from restmapper.cache._legacy import needed_versions
from restmapper.cache._replay import error_with_replays, gate_failures, scope_note
from restmapper.cache._roots import CORE, NAMED, ROOTS, Want, root_of, roots_for, want_for
from restmapper.cache._source import DiscoverySource
from restmapper.cache._table import listed_groups
from restmapper.cache._types import CacheStats, GroupEntry, GroupView, RootSlot
from restmapper.errors import GroupDiscoveryError, InvalidArgumentError, RestMapperError
from restmapper.model import APIGroup, GroupVersion
from restmapper.transport.base import Transport
from restmapper.transport.retry import RetryPolicy

__all__ = ["DiscoveryCache"]

_INF = math.inf


class DiscoveryCache(FetchingState):
    """A TTL'd, self-healing cache of API groups over a :class:`~restmapper.discovery.DiscoveryClient`.

    Thread-safe. Mirrors and extends controller-runtime's lazy REST mapper cache: lazy per-group loading,
    whole-group eviction on a 404, plus what upstream lacks: a TTL, noticing new versions and kinds on a miss,
    single-flight, rate-limited miss revalidation with a negative cache, stale-on-error and failure isolation.
    """

    def __init__(
        self,
        discovery: DiscoverySource,
        *,
        ttl: float | None = 300.0,
        miss_refresh_interval: float = 1.0,
        max_stale: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        retry_initial: float = 1.0,
        retry_max: float = 60.0,
    ) -> None:
        """Create a cache.

        Args:
            discovery: the discovery client to read through (a :class:`~restmapper.discovery.DiscoveryClient`, or
                anything with its :class:`~restmapper.cache._source.DiscoverySource` interface).
            ttl: seconds a group entry stays fresh; 0 revalidates on every lookup; None never expires.
            miss_refresh_interval: seconds between two revalidations caused by misses (the negative-cache
                lifetime).
            max_stale: seconds an entry may still be served after a transient refresh failure.
            clock: a monotonic clock in seconds (inject one in tests).
            retry_initial: first backoff (seconds) before a failed group or root document is fetched again;
                doubled by each failed fetch (one per lookup; the transport's ``RetryPolicy`` retries within it).
                A miss revalidation (at most one per ``miss_refresh_interval``) reads failing group versions
                again whatever their backoff.
            retry_max: cap (seconds) of that exponential backoff.

        Raises:
            TypeError: a ttl, interval or max_stale that is not a number of seconds (``ttl="5"``), or a ``clock``
                that is not callable.
            ValueError: a negative ttl, interval or max_stale.
            InvalidArgumentError: a ttl, interval or max_stale that is NaN or infinite (a ``ValueError``;
                ``ttl=None`` is how to never expire), or a negative ``retry_initial`` or ``retry_max``.
        """
        for name, value in (("ttl", ttl), ("miss_refresh_interval", miss_refresh_interval),
                            ("max_stale", max_stale)):
            if value is None and name == "ttl":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                allowed = "a number of seconds or None" if name == "ttl" else "a number of seconds"
                raise TypeError(f"{name} must be {allowed}, not {type(value).__name__} {value!r}")
            if not math.isfinite(value):
                raise InvalidArgumentError(f"{name} must be a finite number of seconds, not {value!r}"
                                           + (" (ttl=None never expires)" if name == "ttl" else ""))
            if value < 0:
                raise ValueError(f"{name} must not be negative")
        if not callable(clock):
            raise TypeError(f"clock must be a callable returning seconds (such as time.monotonic), "
                            f"not {type(clock).__name__}")
        timing = Timing(ttl, max_stale, miss_refresh_interval,
                        RetryPolicy(initial_backoff=retry_initial, max_backoff=retry_max, jitter=0.0))
        super().__init__(discovery, timing, clock)

    # --- public surface ---------------------------------------------------------------------------------

    @property
    def ttl(self) -> float | None:
        """Seconds an answer stays fresh (0: once per lookup; None: never expires)."""
        return self.timing.ttl

    @property
    def max_stale(self) -> float:
        """Seconds past its TTL an answer may still be served after a transient refresh failure."""
        return self.timing.max_stale

    @property
    def miss_refresh_interval(self) -> float:
        """Seconds between two revalidations caused by misses (the negative-cache lifetime)."""
        return self.timing.miss_interval

    @property
    def invalidations(self) -> int:
        """How many invalidations (``invalidate_group``, ``invalidate_all``, ``report_not_found``) ran so far.

        A lookup reads it before and after it reads the cache: when it moved, a group may have been dropped while
        the lookup read the others, so what the lookup found is not a reading of every group in scope (no I/O).
        """
        return self._invalidations

    @property
    def stats(self) -> CacheStats:
        """A snapshot of the counters."""
        with self._lock:
            return self._stats.copy()

    @property
    def transport(self) -> Transport:
        """The transport discovery reads over (list/watch layers above reuse its connection and credentials)."""
        return self.discovery.transport

    def groups(self, names: Collection[str] | None = None, versions: Sequence[str] | None = None) -> GroupView:
        """Return the cached entries of ``names`` (None: every group), loading what is missing or expired.

        Args:
            names: group names (``""`` is core). Only ``{""}`` never touches ``/apis``. One named group (with or
                without core) is looked up from the group listing when ``/apis`` is not cached yet: ``/apis`` as a
                legacy ``APIGroupList`` and that group's versions as legacy documents (2 small requests instead of
                every resource of every group); any other ``names``, or one once more than 8 groups are loaded,
                reads the aggregated ``/apis`` (when served) and keeps it.
            versions: None to load every version of each group; else only these versions are needed, and ``()``
                means the preferred version. With legacy discovery only the needed versions are fetched (the
                others stay ``unread`` in the entry); aggregated entries always hold every version.

        Returns:
            A :class:`GroupView` in server priority order; groups the server does not list are absent.

        Raises:
            GroupDiscoveryError: ``/api`` or ``/apis`` could not be read and no usable earlier answer exists
                (``documents`` names the path; ``/api`` is also named as ``v1`` in ``failed``; the cause is
                chained). Failures of single group versions are *not* raised: they are in ``GroupEntry.failed``,
                so only lookups that need them fail.
        """
        slots = self._ensure_roots(roots_for(names), want=want_for(names))
        core, named = slots.get(CORE), slots.get(NAMED)
        ordered = listed_groups(core, named, names)
        now = self.clock()
        seen: dict[str, GroupEntry] = {}
        with self._lock:
            to_load = [g for g in ordered if not self._take_fresh_locked(g, versions, now, seen)]
        loaded = bool(to_load)
        # Every listed group gets an entry when loaded (possibly with no versions), so one missing afterwards was
        # invalidated concurrently (a watcher event): load it again rather than answer "not listed" for it.
        for _attempt in range(3):
            if not to_load:
                break
            self._load(to_load, versions)
            with self._lock:
                to_load = [g for g in to_load if not self._take_locked(g.name, seen)]
        with self._lock:
            entries = tuple(seen[g.name] for g in ordered if g.name in seen)
            if not loaded:
                self._stats.hits += 1
            valid_until = self._valid_until_locked(entries, (core, named))
            return GroupView(entries, valid_until, self.generation)

    def _take_fresh_locked(self, g: APIGroup, versions: Sequence[str] | None, now: float,
                           seen: dict[str, GroupEntry]) -> bool:
        """Put ``g``'s entry in ``seen`` when it is fresh and holds ``versions`` (see :meth:`groups`); False when
        it must be loaded."""
        entry = self._entries.get(g.name)
        if (entry is None or self._decide_locked(entry.name, entry, now) is not Action.FRESH
                or (entry.unread and not set(entry.unread).isdisjoint(needed_versions(g, versions)))):
            return False
        seen[g.name] = entry
        return True

    def _take_locked(self, name: str, seen: dict[str, GroupEntry]) -> bool:
        """Put the entry of ``name`` in ``seen`` when there is one; False when there is none."""
        entry = self._entries.get(name)
        if entry is not None:
            seen[name] = entry
        return entry is not None

    def ensure_all(self) -> float:
        """Make sure every listed group is loaded and fresh, as ``groups(None)`` does; return until when.

        Costs O(log n) when nothing expired, was dropped or newly listed since the last full check (the warm
        path of a lookup that may match any group); otherwise it is :meth:`groups` with ``None``.

        Returns:
            Clock reading (seconds) until which every listed group stays loaded and fresh, barring changes
            (which bump :attr:`generation` and show in :meth:`changes`).

        Raises:
            GroupDiscoveryError: as :meth:`groups`.
        """
        now = self.clock()
        with self._lock:
            until = self._entries.all_fresh_until(*self._root_slots_locked(), self.timing, self._backoff)
            if until is not None and now < until:
                self._stats.hits += 1
                return until
        view = self.groups(None)
        with self._lock:
            self._entries.check_all_loaded(*self._root_slots_locked())
        return view.valid_until

    def changes(self, since: int) -> tuple[int, tuple[str, ...] | None]:
        """The groups whose cached entry got new content or was dropped since change number ``since``.

        For readers that derive state per group (the mapper's merged index): they update only those groups.

        Args:
            since: the number returned by the previous call (0 the first time).

        Returns:
            ``(now, names)``; ``names`` is None when the change log no longer reaches back that far (compare
            every group with :meth:`entry`).
        """
        with self._lock:
            return self._entries.changes(since)

    def entry(self, name: str) -> GroupEntry | None:
        """The cached entry of group ``name`` as it is now (no I/O, no freshness check), or None."""
        with self._lock:
            return self._entries.get(name)

    def loaded_names(self) -> tuple[str, ...]:
        """The names of every cached group entry (no I/O)."""
        with self._lock:
            return tuple(self._entries)

    def listing(self, *, fetch: bool = False, whole: bool = False) -> tuple[str, ...]:
        """Every group name the cached root documents list, core first, in priority order.

        Args:
            fetch: first make sure ``/apis`` is cached and fresh (may do I/O); else only read the cache. A first
                fetch asks for the group listing alone (names are all a listing question needs), not every
                group's resources.
            whole: a first fetch reads every group's resources (the caller will read several groups).

        Returns:
            The names; the same tuple object while the root documents are unchanged.

        Raises:
            GroupDiscoveryError: with ``fetch``, as :meth:`groups`.
        """
        if fetch:
            self._ensure_root(NAMED, want=Want.RESOURCES if whole else Want.LISTING)
        with self._lock:
            return self._entries.listing(*self._root_slots_locked())

    def group_names(self, *, core: bool = True) -> tuple[str, ...]:
        """Every group name the server lists, core first, in priority order.

        Args:
            core: include the core group (reads ``/api``); False reads only ``/apis``.

        Raises:
            DiscoveryError: as :meth:`groups`.
        """
        slots = self._ensure_roots(ROOTS if core else (NAMED,))
        return tuple(g.name for doc, slot in slots.items() for g in slot.root.groups if doc.lists(g.name))

    def served_versions(self, group: str) -> tuple[str, ...]:
        """The versions the server lists for ``group`` (``""``: core), in server order; ``()`` when it lists no
        such group. Reads the root document of ``group`` (``/api`` or ``/apis``), fetching it when not fresh.

        Raises:
            DiscoveryError: as :meth:`groups`.
        """
        doc = root_of(group)
        return next((g.versions for g in self._ensure_root(doc).root.groups if g.name == group and doc.lists(group)),
                    ())

    def read_ahead(self, names: Collection[str] | None) -> None:
        """On a cold start, read at once the root documents a lookup of ``names`` (None: every group) may need.

        For a lookup that reads core first and the named groups only when core has no answer (a kind or resource
        name without a group, as kubectl's priority puts core first): read one after the other, the two documents
        of a cold start would cost it two round trips, and two request deadlines when the server does not
        answer. Nothing is done when ``names`` is core alone (a core lookup never reads ``/apis``) or when either
        document is held already. A failure is not raised here: it is recorded (as every fetch failure, with its
        backoff) and the read that needs the document raises it, as its own.
        """
        docs = roots_for(names)
        if len(docs) < 2:
            return
        with self._lock:
            if any(self._roots[doc.path] is not None for doc in docs):
                return
        with contextlib.suppress(RestMapperError):
            self._ensure_roots(docs, want=want_for(names))

    def revalidate_on_miss(self, names: Collection[str] | None = None) -> bool:
        """Ask the server whether anything changed, because a lookup found no match.

        Nothing is asked when the current lookup (``with cache.lookup():``) fetched all of it. Otherwise a
        revalidation runs only when something a no-match over ``names`` reads (:meth:`miss_confirmed_at`) was
        last confirmed more than ``miss_refresh_interval`` seconds ago: misses over what the last revalidation
        read get False (the negative answer) without I/O, so a storm of misses costs one revalidation per
        interval, and no negative answer is older than the interval (a miss over more, say ``/api`` too after a
        revalidation of ``/apis`` alone, asks again). Concurrent callers share the one in flight.
        Aggregated servers answer a conditional ``GET /apis`` (304 = the miss is real); legacy servers are
        re-listed and the group versions of ``names`` (None: every loaded group) re-read.

        Args:
            names: the groups the failed lookup needed (None: all).

        Returns:
            True when cached content changed (the caller should look again).

        Raises:
            GroupDiscoveryError: a root document could not be read *now*: the miss is not confirmed by the
                server (earlier answers are never served here, whatever ``max_stale`` says). Within the rate
                limit, a revalidation that failed keeps failing the same way instead of answering "no".
        """
        now = self.clock()
        with self._lock:
            if self._miss_answered_locked(names, now):
                return False
        key = ("miss", None if names is None else frozenset(names))
        gate = now + self.timing.miss_interval
        try:
            changed = self._flight.do(key, lambda: self._revalidate(names))
        except GroupDiscoveryError as exc:
            with self._lock:
                self._last_miss_error = exc
            gate_failures(exc, gate)
            raise
        # The next miss revalidation (from ``gate``) re-reads the group versions still failing: a replay of their
        # failure promises the earlier of that and their own backoff.
        left = self.unconfirmed(names)
        if left is not None:
            gate_failures(left, gate)
        return changed

    def _miss_answered_locked(self, names: Collection[str] | None, now: float) -> bool:
        """Count a miss over ``names``; True when it is answered "still no" without I/O (this lookup read all of
        it, or it was confirmed within the interval), else start the interval of a revalidation (False).

        Raises:
            GroupDiscoveryError: within the interval, the last revalidation's failure (a replay).
        """
        self._stats.misses += 1
        read = self._miss_read_locked(names)
        if read and all(self.lookup.fetched(h) for h in read) and self._all_answered_locked(read, names):
            # This very lookup read all of it, and all of it answered: the server's word already, and a
            # confirmation as good as a revalidation's (misses over it within the interval are rate-limited).
            self._last_miss_check, self._last_miss_error = now, None
            return True
        if self.timing.rate_limited(self._last_miss_check, now) and (
                self._last_miss_error is not None
                or all(self.timing.rate_limited(h.fetched_at, now) for h in read)):  # confirmed recently
            self._stats.negative_hits += 1
            if self._last_miss_error is not None:  # a replay: says how old, unless this lookup got it
                raise error_with_replays(self._last_miss_error, scope_note(self.lookup, now))
            return True
        self._last_miss_check = now
        self._last_miss_error = None
        return False

    def unconfirmed(self, names: Collection[str] | None = None) -> GroupDiscoveryError | None:
        """Why a no-match over ``names`` (None: every group) would not be confirmed by the server, or None.

        Collects the group versions of the cached entries of ``names`` that failed or are served from an earlier
        answer (stale-on-error), and the root documents whose last refresh failed. Reads only the cache.
        """
        failed: dict[GroupVersion, BaseException] = {}
        documents: dict[str, BaseException] = {}
        with self._lock:
            for doc in roots_for(names):
                b = self._backoff.get(doc.path)
                if b is not None and b.error is not None:
                    documents[doc.path] = b.error
                    failed.update(doc.failed_versions(b.error))
            for entry in self._entries_of_locked(names):
                failed.update(entry.stale)
                failed.update(entry.failed)
        if not failed and not documents:
            return None
        group = next(iter(failed)).group if failed else ""
        return GroupDiscoveryError(group, failed, documents=documents)

    def _entries_of_locked(self, names: Collection[str] | None) -> Iterable[GroupEntry]:
        """The cached entries of ``names`` (None: every group)."""
        if names is None:
            return self._entries.values()
        return [entry for name in names if (entry := self._entries.get(name)) is not None]  # a few, among many

    def documents_failing(self) -> bool:
        """Whether a root document's last refresh failed (so what it lists may be out of date). Reads only the
        cache; two dictionary reads."""
        with self._lock:
            return any((b := self._backoff.get(doc.path)) is not None and b.error is not None for doc in ROOTS)

    def miss_confirmed_at(self, names: Collection[str] | None = None) -> float | None:
        """When the server last confirmed what a no-match over ``names`` (None: every group) read.

        What a no-match reads: the root documents of ``names`` and the cached entries of those groups. Reads
        only the cache (no I/O).

        Args:
            names: the groups the lookup needed (None: all), as given to :meth:`revalidate_on_miss`.

        Returns:
            None when the current lookup of this thread (``with cache.lookup():``) fetched or revalidated all of
            it: the no-match is the server's word now. Else the earliest clock reading (seconds) at which one of
            them was last fetched or revalidated (a 304 counts): the no-match is as old as that. A miss
            revalidation rate-limited by ``miss_refresh_interval`` leaves it at the last revalidation's time.
        """
        with self._lock:
            held = self._miss_read_locked(names)
        if all(self.lookup.fetched(h) for h in held):
            return None
        return min(h.fetched_at for h in held)

    def _miss_read_locked(self, names: Collection[str] | None) -> list[RootSlot | GroupEntry]:
        """What a no-match over ``names`` reads: their root documents held and their cached entries."""
        held: list[RootSlot | GroupEntry] = [s for doc in roots_for(names) if (s := self._roots[doc.path]) is not None]
        held.extend(e for name, e in self._entries.items() if names is None or name in names)
        return held

    def _all_answered_locked(self, read: list[RootSlot | GroupEntry], names: Collection[str] | None) -> bool:
        """Whether nothing of ``read`` (what a no-match over ``names`` reads) failed or is served stale, and no
        root document of ``names`` is backing off from a failure (as :meth:`unconfirmed` judges, under the lock)."""
        return not any(isinstance(h, GroupEntry) and (h.failed or h.stale) for h in read) and not any(
            self._backoff.get(doc.path) for doc in roots_for(names))

    def report_not_found(self, gv: GroupVersion) -> None:
        """Tell the cache a request to ``gv`` answered 404 Not Found: the whole group is evicted.

        The next lookup of the group re-reads ``/apis`` (conditionally) and the group's versions, as
        controller-runtime does after a Cluster API upgrade removed a served version. Callers that may report in a
        loop (the dynamic drop-in) rate-limit themselves; see :meth:`report_not_found_limited`.
        """
        with self._lock:
            self._invalidate_group_locked(gv.group, gone=True)

    def report_not_found_limited(self, gv: GroupVersion) -> bool:
        """:meth:`report_not_found`, at most once per group per ``miss_refresh_interval`` (like misses).

        A loop of 404s (a client probing, a controller retrying) must not become a loop of discovery requests.

        Returns:
            True when the group was evicted; False when rate-limited (counted in ``stats.negative_hits``).
        """
        now = self.clock()
        with self._lock:
            if self.timing.rate_limited(self._last_eviction.get(gv.group), now):
                self._stats.negative_hits += 1
                return False
            self._last_eviction[gv.group] = now
        self.report_not_found(gv)
        return True

    def invalidate_group(self, group: str) -> None:
        """Drop one group (its versions and resources); the next lookup that needs it refetches.

        Dropping a named group also marks ``/apis`` for a conditional revalidation, so that new or removed
        versions are seen. Should ``/apis`` then fail transiently, the group is answered from its earlier entry
        only as stale (within ``max_stale``; never a no-match), until the server answers again.
        """
        with self._lock:
            self._invalidate_group_locked(group)

    def invalidate_group_version(self, gv: GroupVersion) -> None:
        """Drop the group of ``gv`` (a version change can change the group's preferred version)."""
        self.invalidate_group(gv.group)

    def invalidate_all(self) -> None:
        """Drop everything; ETags are kept, so the next fetch is still conditional."""
        with self._lock:
            self._invalidations += 1
            self._relist_roots.update(self._roots)
            self._stats.evictions += self._evict_locked(None)
            self._backoff.clear()
            self._absent.clear()
            for slot in self._roots.values():
                if slot is not None:
                    slot.expired = True
            self.generation += 1
