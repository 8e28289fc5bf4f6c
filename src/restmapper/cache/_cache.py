"""The discovery cache: when to ask the server, and what to keep when it fails.

State (all guarded by ``DiscoveryCache._lock``, which is never held across network I/O):

* ``_roots``: the last ``/api`` and ``/apis`` answers (:class:`RootSlot`, by path), each with its fetch time.
* ``_entries``: one :class:`GroupEntry` per loaded API group (its served versions, their resources, and the
  versions that failed), each with its fetch time.
* ``_backoff``: per group (and per root document), when a failed fetch may be tried again.
* ``_generation``: bumped whenever cached content changes; the mapper memoizes answers on it.

One refresh path: :meth:`DiscoveryCache.groups` decides per group whether the entry is fresh (TTL), due for a
retry (failed versions past their backoff) or missing, and loads only those, sharing in-flight fetches between
threads (single-flight per document). A 404 on a listed group version evicts the group, re-reads ``/apis`` once
and retries in the same call (the Cluster API upgrade race, controller-runtime's fix). A lookup that misses
calls :meth:`DiscoveryCache.revalidate_on_miss`, rate-limited to one revalidation per ``miss_refresh_interval``.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TypeVar

from restmapper.cache._flight import SingleFlight
from restmapper.cache._scope import LookupScope
from restmapper.cache._source import DiscoverySource
from restmapper.cache._table import EntryTable, GroupLists, listed_groups, same_resources
from restmapper.cache._types import (
    CORE_V1,
    Backoff,
    CacheStats,
    GroupEntry,
    GroupView,
    RootSlot,
    StaleGroupVersionError,
    is_transient,
    root_error,
)
from restmapper.discovery import RootDiscovery
from restmapper.errors import APIStatusError, DiscoveryError, GroupDiscoveryError, RestMapperError
from restmapper.model import APIGroup, APIResourceList, GroupVersion
from restmapper.transport.base import Transport

__all__ = ["DiscoveryCache"]

log = logging.getLogger("restmapper.cache")

T = TypeVar("T")
_INF = math.inf


API, APIS = "/api", "/apis"


def _path_of(group: str) -> str:
    """The root document listing ``group``: ``/api`` for core, ``/apis`` for named groups."""
    return API if group == "" else APIS


def _needed(group: APIGroup, versions: Sequence[str] | None) -> tuple[GroupVersion, ...]:
    """The versions of ``group`` a lookup needs: all (None), the preferred one (``()``), or those listed."""
    if versions is None:
        return group.group_versions
    if not versions:
        preferred = group.preferred
        return (preferred,) if preferred is not None else group.group_versions
    return tuple(gv for gv in group.group_versions if gv.version in versions)


def _paths_for(names: Collection[str] | None) -> tuple[str, ...]:
    """The root documents a lookup of ``names`` (None: every group) reads."""
    if names is None:
        return API, APIS
    return tuple(path for path, wanted in ((API, "" in names), (APIS, any(n != "" for n in names))) if wanted)


class DiscoveryCache:
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
            retry_initial: first backoff (seconds) before a failed group or root document is fetched again.
            retry_max: cap (seconds) of that exponential backoff.

        Raises:
            ValueError: a negative ttl, interval or max_stale.
        """
        for name, value in (("ttl", ttl), ("miss_refresh_interval", miss_refresh_interval),
                            ("max_stale", max_stale)):
            if value is not None and value < 0:
                raise ValueError(f"{name} must not be negative")
        self.discovery = discovery
        self.ttl = ttl
        self.miss_refresh_interval = miss_refresh_interval
        self.max_stale = max_stale
        self.clock = clock
        self._retry_initial = retry_initial
        self._retry_max = retry_max
        self._flight = SingleFlight()
        # ``with cache.lookup():`` scopes one lookup: what it fetched stays fresh until it ends.
        self.lookup = LookupScope()
        # Guards every attribute below; never held across a discovery call.
        self._lock = threading.Lock()
        self._roots: dict[str, RootSlot | None] = {API: None, APIS: None}
        self._entries = EntryTable()
        self._backoff: dict[str, Backoff] = {}
        # A number that changes whenever cached content changes (read without the lock: an int is atomic).
        self.generation = 0
        self._last_miss_check: float | None = None
        self._last_miss_error: GroupDiscoveryError | None = None  # why the last miss revalidation failed
        self._last_eviction: dict[str, float] = {}  # group -> clock reading of its last report_not_found eviction
        # Bumped by every invalidation: a fetch that started before one must not look fresh when it lands.
        self._invalidations = 0
        self._warned_stale: set[str] = set()
        self._stats = CacheStats()

    # --- public surface ---------------------------------------------------------------------------------

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
            names: group names (``""`` is core). Only ``{""}`` never touches ``/apis``.
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
        paths = _paths_for(names)
        core = self._ensure_root(API) if API in paths else None
        named = self._ensure_root(APIS) if APIS in paths else None
        ordered = listed_groups(core, named, names)
        now = self.clock()
        seen: dict[str, GroupEntry] = {}
        to_load: list[APIGroup] = []
        with self._lock:
            for g in ordered:
                entry = self._entries.get(g.name)
                if (entry is None or not self._fresh(entry, now) or self._retry_due(g.name, now)
                        or (entry.unread and not set(entry.unread).isdisjoint(_needed(g, versions)))):
                    to_load.append(g)
                else:
                    seen[g.name] = entry
        loaded = bool(to_load)
        # Every listed group gets an entry when loaded (possibly with no versions), so one missing afterwards was
        # invalidated concurrently (a watcher event): load it again rather than answer "not listed" for it.
        for _attempt in range(3):
            if not to_load:
                break
            self._load(to_load, versions)
            with self._lock:
                for g in to_load:
                    if (entry := self._entries.get(g.name)) is not None:
                        seen[g.name] = entry
            to_load = [g for g in to_load if g.name not in seen]
        with self._lock:
            entries = tuple(seen[g.name] for g in ordered if g.name in seen)
            if not loaded:
                self._stats.hits += 1
            valid_until = self._valid_until(entries, (core, named))
            return GroupView(entries, valid_until, self.generation)

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
            until = self._entries.all_fresh_until(self._roots[API], self._roots[APIS], self.ttl, self._backoff)
            if until is not None and now < until:
                self._stats.hits += 1
                return until
        view = self.groups(None)
        with self._lock:
            self._entries.check_all_loaded(self._roots[API], self._roots[APIS])
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

    def listing(self, *, fetch: bool = False) -> tuple[str, ...]:
        """Every group name the cached root documents list, core first, in priority order.

        Args:
            fetch: first make sure ``/apis`` is cached and fresh (may do I/O); else only read the cache.

        Returns:
            The names; the same tuple object while the root documents are unchanged.

        Raises:
            GroupDiscoveryError: with ``fetch``, as :meth:`groups`.
        """
        if fetch:
            self._ensure_root("/apis")
        with self._lock:
            return self._entries.listing(self._roots[API], self._roots[APIS])

    def group_names(self, *, core: bool = True) -> tuple[str, ...]:
        """Every group name the server lists, core first, in priority order.

        Args:
            core: include the core group (reads ``/api``); False reads only ``/apis``.

        Raises:
            DiscoveryError: as :meth:`groups`.
        """
        named = tuple(g.name for g in self._ensure_root("/apis").root.groups if g.name)
        if not core:
            return named
        return tuple(g.name for g in self._ensure_root("/api").root.groups) + named

    def revalidate_on_miss(self, names: Collection[str] | None = None) -> bool:
        """Ask the server whether anything changed, because a lookup found no match.

        At most one revalidation runs per ``miss_refresh_interval`` seconds however many threads miss;
        concurrent callers share the one in flight; the others get False (the negative answer) without I/O.
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
            self._stats.misses += 1
            last = self._last_miss_check
            if last is not None and now - last < self.miss_refresh_interval:
                self._stats.negative_hits += 1
                if self._last_miss_error is not None:
                    raise self._last_miss_error
                return False
            self._last_miss_check = now
            self._last_miss_error = None
        key = ("miss", None if names is None else frozenset(names))
        try:
            return self._flight.do(key, lambda: self._revalidate(names))
        except GroupDiscoveryError as exc:
            with self._lock:
                self._last_miss_error = exc
            raise

    def unconfirmed(self, names: Collection[str] | None = None) -> GroupDiscoveryError | None:
        """Why a no-match over ``names`` (None: every group) would not be confirmed by the server, or None.

        Collects the group versions of the cached entries of ``names`` that failed or are served from an earlier
        answer (stale-on-error), and the root documents whose last refresh failed. Reads only the cache.
        """
        failed: dict[GroupVersion, BaseException] = {}
        documents: dict[str, BaseException] = {}
        with self._lock:
            for path in _paths_for(names):
                b = self._backoff.get(path)
                if b is not None and b.error is not None:
                    documents[path] = b.error
                    if path == API:
                        failed[CORE_V1] = b.error
            for name, entry in self._entries.items():
                if names is None or name in names:
                    failed.update(entry.stale)
                    failed.update(entry.failed)
        if not failed and not documents:
            return None
        group = next(iter(failed)).group if failed else ""
        return GroupDiscoveryError(group, failed, documents=documents)

    def report_not_found(self, gv: GroupVersion) -> None:
        """Tell the cache a request to ``gv`` answered 404 Not Found: the whole group is evicted.

        The next lookup of the group re-reads ``/apis`` (conditionally) and the group's versions, as
        controller-runtime does after a Cluster API upgrade removed a served version. Callers that may report in a
        loop (the dynamic drop-in) rate-limit themselves; see :meth:`report_not_found_limited`.
        """
        self.invalidate_group(gv.group)

    def report_not_found_limited(self, gv: GroupVersion) -> bool:
        """:meth:`report_not_found`, at most once per group per ``miss_refresh_interval`` (like misses).

        A loop of 404s (a client probing, a controller retrying) must not become a loop of discovery requests.

        Returns:
            True when the group was evicted; False when rate-limited (counted in ``stats.negative_hits``).
        """
        now = self.clock()
        with self._lock:
            last = self._last_eviction.get(gv.group)
            if last is not None and now - last < self.miss_refresh_interval:
                self._stats.negative_hits += 1
                return False
            self._last_eviction[gv.group] = now
        self.report_not_found(gv)
        return True

    def invalidate_group(self, group: str) -> None:
        """Drop one group (its versions and resources); the next lookup that needs it refetches.

        Dropping a named group also marks ``/apis`` for a conditional revalidation, so that new or removed
        versions are seen.
        """
        with self._lock:
            self._invalidations += 1
            if self._entries.drop(group) is not None:
                self._stats.evictions += 1
            else:
                self._entries.touch(group)  # not loaded (new, or deleted): readers must still hear of it
            self._backoff.pop(group, None)
            slot = self._roots[_path_of(group)]
            if slot is not None:
                slot.expired = True
            self.generation += 1

    def invalidate_group_version(self, gv: GroupVersion) -> None:
        """Drop the group of ``gv`` (a version change can change the group's preferred version)."""
        self.invalidate_group(gv.group)

    def invalidate_all(self) -> None:
        """Drop everything; ETags are kept, so the next fetch is still conditional."""
        with self._lock:
            self._invalidations += 1
            self._stats.evictions += len(self._entries)
            self._entries.clear()
            self._backoff.clear()
            for slot in self._roots.values():
                if slot is not None:
                    slot.expired = True
            self.generation += 1

    # --- freshness ----------------------------------------------------------------------------------------

    def _within_stale(self, fetched_at: float, now: float) -> bool:
        """True when an answer fetched at ``fetched_at`` may still be served after a transient failure."""
        return now - fetched_at <= self.max_stale + (self.ttl or 0)

    def _fresh(self, entry: GroupEntry | RootSlot, now: float) -> bool:
        """Fresh by TTL, or fetched during this thread's current lookup (``ttl=0``: once per lookup)."""
        return self.ttl is None or now - entry.fetched_at < self.ttl or self.lookup.fetched(entry)

    def _retry_due(self, group: str, now: float) -> bool:
        b = self._backoff.get(group)
        return b is not None and now >= b.retry_at

    def _valid_until(self, entries: Iterable[GroupEntry], slots: Iterable[RootSlot | None]) -> float:
        if self.ttl is None:
            until = _INF
        else:
            stamps = [e.fetched_at for e in entries] + [s.fetched_at for s in slots if s is not None]
            until = min(stamps, default=_INF) + self.ttl
        if any(s is not None and s.expired for s in slots):
            return -_INF
        for e in entries:
            b = self._backoff.get(e.name)
            if b is not None:
                until = min(until, b.retry_at)
        return until

    def _schedule_retry(self, key: str, error: BaseException, now: float) -> None:
        b = self._backoff.setdefault(key, Backoff())
        b.attempts += 1
        b.error = error
        b.retry_at = now + min(self._retry_initial * 2 ** (b.attempts - 1), self._retry_max)

    # --- root documents -----------------------------------------------------------------------------------

    def _ensure_root(self, path: str, *, force: bool = False, stale_ok: bool = True) -> RootSlot:
        """The slot of ``/api`` or ``/apis``, refreshed when expired (or ``force``).

        On a transient failure an earlier answer is served within ``max_stale`` when ``stale_ok``; otherwise
        (and for permanent failures: 403, 404, malformed) a :class:`GroupDiscoveryError` is raised.
        """
        now = self.clock()
        with self._lock:
            slot = self._roots[path]
            if slot is not None and not force and not slot.expired and self._fresh(slot, now):
                return slot
            backoff = self._backoff.get(path)
            if backoff is not None and now < backoff.retry_at:
                error = backoff.error
                if (stale_ok and slot is not None and error is not None and is_transient(error)
                        and self._within_stale(slot.fetched_at, now)):
                    self._stats.stale_served += 1
                    self._restore_evicted(slot, path)
                    return slot
                raise root_error(path, error or DiscoveryError(f"unable to retrieve {path}")) from error
        try:
            return self._flight.do(path, lambda: self._refresh_root(path))
        except RestMapperError as exc:
            with self._lock:
                slot = self._roots[path]
                now = self.clock()
                self._schedule_retry(path, exc, now)
                if stale_ok and slot is not None and is_transient(exc) and self._within_stale(slot.fetched_at, now):
                    if path not in self._warned_stale:
                        self._warned_stale.add(path)
                        log.warning("serving cached %s after a transient failure: %s", path, exc)
                    self._stats.stale_served += 1
                    self._restore_evicted(slot, path)
                    return slot
                if slot is not None and not is_transient(exc):
                    # 403/404/malformed: never mask a permanent answer with an earlier one.
                    self._roots[path] = None
            raise root_error(path, exc) from exc

    def _restore_evicted(self, slot: RootSlot, path: str) -> None:
        """Serving a stale aggregated root: bring back groups evicted since it was fetched (caller holds the lock).

        Without this, a group evicted by a 404 or an invalidation would be *absent* while the server is briefly
        unreachable, and lookups would say "no match" (read by controllers as "not installed") instead of
        answering from the last good document.
        """
        root = slot.root
        if root.resources is None:
            return
        missing = [g for g in root.groups if g.name not in self._entries and _path_of(g.name) == path]
        if not missing:
            return
        stale = set(root.stale)
        for g in missing:
            resources = GroupLists(root.resources, g.group_versions)  # converted when a lookup reads them
            failed: dict[GroupVersion, RestMapperError] = {
                gv: StaleGroupVersionError(gv) for gv in stale if gv.group == g.name}
            self._put(APIGroup(g.name, g.versions, g.preferred_version), resources, failed, slot.fetched_at)

    def _refresh_root(self, path: str) -> RootSlot:
        fetch = self.discovery.fetch_core if path == "/api" else self.discovery.fetch_named
        epoch = self._invalidations
        try:
            root = fetch()
        except RestMapperError:
            with self._lock:
                self._stats.fetches[path] += 1
                self._stats.errors += 1
            raise
        now = self.clock()
        with self._lock:
            self._stats.fetches[path] += 1
            if root.not_modified:
                self._stats.not_modified += 1
            self._backoff.pop(path, None)
            self._warned_stale.discard(path)
            # An invalidation that raced with this fetch wins: use the answer, but revalidate on next use.
            slot = RootSlot(root, now, expired=epoch != self._invalidations)
            self.lookup.mark(slot)
            self._roots[path] = slot
            if not root.not_modified:
                self.generation += 1
            if root.resources is not None:
                self._install_aggregated(root, now, path)
            else:
                self._forget_unlisted(root, path)
        return slot

    def _install_aggregated(self, root: RootDiscovery, now: float, path: str) -> None:
        """Rebuild the entries of every group in an aggregated document (caller holds the lock)."""
        assert root.resources is not None
        stale_by_group: dict[str, list[GroupVersion]] = {}
        for gv in root.stale:
            stale_by_group.setdefault(gv.group, []).append(gv)
        names = {g.name for g in root.groups}
        for g in root.groups:
            resources = GroupLists(root.resources, g.group_versions)  # converted when a lookup reads them
            failed: dict[GroupVersion, RestMapperError] = {
                gv: StaleGroupVersionError(gv) for gv in stale_by_group.get(g.name, ())}
            self._put(APIGroup(g.name, g.versions, g.preferred_version), resources, failed, now)
            if failed:
                self._schedule_retry(g.name, next(iter(failed.values())), now)
            else:
                self._backoff.pop(g.name, None)
        for name in list(self._entries):
            if name not in names and _path_of(name) == path:
                self._entries.drop(name)
                self.generation += 1

    def _forget_unlisted(self, root: RootDiscovery, path: str) -> None:
        """Drop entries of groups a legacy root document no longer lists (caller holds the lock)."""
        listed = {g.name: g for g in root.groups}
        for name, entry in list(self._entries.items()):
            if _path_of(name) != path:
                continue
            g = listed.get(name)
            if g is None or set(g.versions) - set(entry.group.versions) - {gv.version for gv in entry.failed}:
                # Gone, or new versions appeared: reload lazily.
                self._entries.drop(name)
                self.generation += 1

    def _put(self, group: APIGroup, resources: Mapping[GroupVersion, APIResourceList],
             failed: Mapping[GroupVersion, RestMapperError], now: float,
             stale: Mapping[GroupVersion, RestMapperError] | None = None,
             unread: tuple[GroupVersion, ...] = ()) -> None:
        old = self._entries.get(group.name)
        stale = dict(stale or {})
        if old is not None and old.group == group and same_resources(old.resources, resources) and (
                set(old.failed) == set(failed)) and set(old.stale) == set(stale) and old.unread == unread:
            entry = GroupEntry(group, old.resources, failed, now, old.generation, stale, unread)
        else:
            self.generation += 1
            kept = resources if isinstance(resources, GroupLists) else dict(resources)  # GroupLists: immutable
            entry = GroupEntry(group, kept, dict(failed), now, self.generation, stale, unread)
        self._entries.set(entry)
        self.lookup.mark(entry)

    # --- legacy group loading -----------------------------------------------------------------------------

    def _load(self, groups: list[APIGroup], versions: Sequence[str] | None = None) -> None:
        """Bring the entries of ``groups`` up to date (aggregated: re-read the root; legacy: their versions)."""
        with self._lock:
            aggregated_paths = {path for path, slot in self._roots.items()
                                if slot is not None and slot.root.resources is not None}
        legacy: list[APIGroup] = []
        reload: dict[str, None] = {}
        for g in groups:
            path = _path_of(g.name)
            if path in aggregated_paths:
                reload[path] = None  # one document holds every group: read it once, not once per group
            else:
                legacy.append(g)
        for path in reload:
            self._reload_aggregated_root(path)
        if legacy:
            self._load_legacy(legacy, retried=False, versions=versions)

    def _reload_aggregated_root(self, path: str) -> None:
        now = self.clock()
        with self._lock:
            slot = self._roots[path]
            if slot is not None and not slot.expired and self._fresh(slot, now) and not (
                    any(self._retry_due(g.name, now) for g in slot.root.groups)):
                return
        self._ensure_root(path, force=True)

    def _load_legacy(self, groups: list[APIGroup], *, retried: bool, versions: Sequence[str] | None = None) -> None:
        epoch = self._invalidations
        now = self.clock()
        have: dict[str, GroupEntry] = {}
        if versions is not None:
            with self._lock:
                # Loading some versions: a fresh entry keeps what it read; only needed unread versions are fetched.
                have = {g.name: e for g in groups if (e := self._entries.get(g.name)) is not None
                        and self._fresh(e, now) and not self._retry_due(g.name, now)}
        gvs = [gv for g in groups for gv in _needed(g, versions)
               if g.name not in have or gv in have[g.name].unread]
        ok, failed = self._fetch_group_versions(gvs)
        gone = {gv for gv, e in failed.items() if isinstance(e, APIStatusError) and e.not_found}
        if gone and not retried:
            # A version the listing still names answered 404: the listing may be stale (a CRD version stopped
            # being served). Evict the group, re-read /apis once and retry in this same call.
            affected = {gv.group for gv in gone}
            with self._lock:
                self._stats.evictions += len(affected)
                for name in affected:
                    self._entries.drop(name)
            fresh: list[APIGroup] = []
            for path in {_path_of(n) for n in affected}:
                slot = self._ensure_root(path, force=True)
                fresh.extend(g for g in slot.root.groups if g.name in affected)
            keep = [g for g in groups if g.name not in affected]
            self._install_legacy(keep, ok, failed, epoch, have)
            if fresh:
                self._load_legacy(fresh, retried=True, versions=versions)
            return
        self._install_legacy(groups, ok, failed, epoch, have)

    def _fetch_group_versions(
        self, gvs: list[GroupVersion]
    ) -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError]]:
        ok: dict[GroupVersion, APIResourceList] = {}
        failed: dict[GroupVersion, RestMapperError] = {}

        def fetch_all() -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError]]:
            res, errs = self.discovery.fetch_group_versions(gvs)
            with self._lock:
                for gv in gvs:
                    self._stats.fetches[gv.path] += 1
                self._stats.errors += len(errs)
            return res, errs

        # One flight per batch: threads asking for the same groups share it; distinct batches run in parallel.
        res, errs = self._flight.do(("gvs", tuple(gvs)), fetch_all)
        ok.update(res)
        failed.update(errs)
        return ok, failed

    def _install_legacy(self, groups: list[APIGroup], ok: Mapping[GroupVersion, APIResourceList],
                        failed: Mapping[GroupVersion, RestMapperError], epoch: int,
                        have: Mapping[str, GroupEntry]) -> None:
        now = self.clock()
        with self._lock:
            # Raced with an invalidation: install the answer for this lookup, but as already expired.
            stamp = now if epoch == self._invalidations else -_INF
            for g in groups:
                old = self._entries.get(g.name)
                served: list[str] = []
                resources: dict[GroupVersion, APIResourceList] = {}
                errors: dict[GroupVersion, RestMapperError] = {}
                stale: dict[GroupVersion, RestMapperError] = {}
                unread: list[GroupVersion] = []
                kept = have.get(g.name)
                for gv in g.group_versions:
                    err = failed.get(gv)
                    if gv not in ok and err is None:
                        # Not fetched by this load: what a fresh entry read stays, the rest is unread.
                        served.append(gv.version)
                        if kept is not None and gv in kept.resources:
                            resources[gv] = kept.resources[gv]
                        elif kept is not None and gv in kept.failed:
                            errors[gv] = kept.failed[gv]
                        else:
                            unread.append(gv)
                    elif gv in ok:
                        resources[gv] = ok[gv]
                        served.append(gv.version)
                    elif isinstance(err, APIStatusError) and err.not_found and g.name != "":
                        # Core always exists: a core 404 is a failure, never "core serves nothing" (which would
                        # let another group answer core names).
                        log.info("%s is listed by the server but answers 404; treating it as not served", gv)
                    elif err is not None:
                        served.append(gv.version)
                        if (old is not None and gv in old.resources and is_transient(err)
                                and self._within_stale(old.fetched_at, now)):
                            resources[gv] = old.resources[gv]
                            stale[gv] = err
                            self._stats.stale_served += 1
                            if g.name not in self._warned_stale:
                                self._warned_stale.add(g.name)
                                log.warning("serving cached %s after a transient failure: %s", gv, err)
                            self._schedule_retry(g.name, err, now)
                        else:
                            errors[gv] = err
                preferred = g.preferred_version if g.preferred_version in served else (
                    served[0] if served else None)
                if kept is not None and stamp != -_INF:
                    stamp = min(stamp, kept.fetched_at)  # kept versions expire when the entry they came from does
                self._put(APIGroup(g.name, tuple(served), preferred), resources, errors, stamp, stale, tuple(unread))
                if errors:
                    self._schedule_retry(g.name, next(iter(errors.values())), now)
                elif not stale:
                    self._backoff.pop(g.name, None)
                    self._warned_stale.discard(g.name)

    # --- miss revalidation --------------------------------------------------------------------------------

    def _revalidate(self, names: Collection[str] | None) -> bool:
        before = self.generation
        for path in _paths_for(names):
            self._ensure_root(path, force=True, stale_ok=False)
        with self._lock:
            legacy_loaded = [
                e.group for e in self._entries.values()
                if (names is None or e.name in names)
                and (slot := self._roots[_path_of(e.name)]) is not None and slot.root.resources is None
            ]
        if legacy_loaded:
            listed: dict[str, APIGroup] = {}
            with self._lock:
                for slot in self._roots.values():
                    if slot is not None:
                        listed.update((g.name, g) for g in slot.root.groups)
            self._load_legacy([listed[g.name] for g in legacy_loaded if g.name in listed], retried=False)
        return self.generation != before
