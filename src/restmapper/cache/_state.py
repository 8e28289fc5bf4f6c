"""The discovery cache's state, and the helpers that read and change it under its lock.

:class:`CacheState` holds everything :class:`~restmapper.cache.DiscoveryCache` knows. Every method here is named
``..._locked``: the caller holds ``_lock``, and none does I/O (controller-runtime's naming; unlike it, the cache
never holds the lock across a request: fetches happen between two short critical sections, in ``_cache.py``).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Collection, Iterable

from restmapper.cache._flight import SingleFlight
from restmapper.cache._freshness import Action, SlotState, Timing, decide
from restmapper.cache._legacy import EntryParts, aggregated_parts
from restmapper.cache._replay import stamp_failure
from restmapper.cache._roots import CORE, NAMED, ROOTS, RootDoc, root_of
from restmapper.cache._scope import LookupScope
from restmapper.cache._source import DiscoverySource
from restmapper.cache._table import EntryTable, kept_resources, renewable, same_resources
from restmapper.cache._types import Backoff, CacheStats, GroupEntry, RootSlot
from restmapper.discovery import RootDiscovery
from restmapper.errors import APIStatusError, GroupDiscoveryError, RestMapperError
from restmapper.model import APIGroup, GroupVersion
from restmapper.wire import GroupResourceLists, LazyResourceLists

__all__ = ["CacheState"]

log = logging.getLogger("restmapper.cache")

_INF = math.inf


def _lists(listed: dict[str, APIGroup], gv: GroupVersion) -> bool:
    """True when a root document whose groups are ``listed`` (by name) lists ``gv``."""
    g = listed.get(gv.group)
    return g is not None and gv.version in g.versions


class CacheState:
    """What the cache knows (see the ``_cache`` module docstring for each attribute), and its ``_locked`` helpers.

    Every method below expects the caller to hold ``self._lock`` (a plain, non-reentrant ``threading.Lock``) and
    returns without releasing it or doing I/O.
    """

    def __init__(self, discovery: DiscoverySource, timing: Timing, clock: Callable[[], float]) -> None:
        self.discovery = discovery
        self.timing = timing
        self.clock = clock
        self._flight = SingleFlight()
        # ``with cache.lookup():`` scopes one lookup: what it fetched stays fresh until it ends.
        self.lookup = LookupScope()
        # Guards every attribute below; never held across a discovery call.
        self._lock = threading.Lock()
        self._roots: dict[str, RootSlot | None] = {doc.path: None for doc in ROOTS}
        self._entries = EntryTable()
        # Entries dropped by an invalidation, until their group is installed again: what a legacy root document
        # served stale restores (an aggregated one restores its groups from itself), see _restore_evicted_locked.
        self._evicted: dict[str, GroupEntry] = {}
        # Groups evicted by a 404 (report_not_found, a listed version answering 404) until the server answers for
        # them again: a stale root document never brings back their earlier content (5.2: a 404 is not masked).
        self._gone: set[str] = set()
        # Listed group versions that answered 404 again after a re-list still listed them (installed as not
        # served): when, and the error (marked in the lookup that fetched it). See _known_absent_locked.
        self._absent: dict[GroupVersion, tuple[float, RestMapperError]] = {}
        # Groups (and root paths, for invalidate_all) invalidated since their root document was last read: until it
        # is read again, the versions it lists for them are pre-invalidation content (see _install_relisted_locked).
        self._relist: set[str] = set()
        self._relist_roots: set[str] = set()
        # Per legacy group: the versions its listing named that answered 404 when it was last loaded (the upgrade
        # race). Its entry leaves them out; a relisting that still names them has nothing new for it.
        self._unserved: dict[str, frozenset[str]] = {}
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

    def _slot_state_locked(self, key: str, answer: GroupEntry | RootSlot | None) -> SlotState:
        """The state of the answer cached under ``key`` (a group name or a root document's path)."""
        b = self._backoff.get(key)
        retry_at, error = (None, None) if b is None else (b.retry_at, b.error)
        if answer is None:
            return SlotState(retry_at=retry_at, error=error)
        expired = isinstance(answer, RootSlot) and answer.expired
        return SlotState(answer.fetched_at, expired, self.lookup.fetched(answer), retry_at, error)

    def _decide_locked(self, key: str, answer: GroupEntry | RootSlot | None, now: float, *, force: bool = False,
                       stale_ok: bool = True) -> Action:
        """:func:`decide` for the answer cached under ``key`` (a group name or a root document's path)."""
        if (answer is not None and not force and key not in self._backoff
                and not (isinstance(answer, RootSlot) and answer.expired)
                and self.timing.fresh(answer.fetched_at, now)):
            return Action.FRESH  # the warm path, as decide() answers it, without building a SlotState
        return decide(self._slot_state_locked(key, answer), now, self.timing, force=force, stale_ok=stale_ok)

    def _retry_due_locked(self, key: str, now: float) -> bool:
        b = self._backoff.get(key)
        return b is not None and now >= b.retry_at

    def _root_slots_locked(self) -> tuple[RootSlot | None, RootSlot | None]:
        """The slots of ``/api`` and ``/apis``, in that order."""
        return self._roots[CORE.path], self._roots[NAMED.path]

    def _valid_until_locked(self, entries: Iterable[GroupEntry], slots: Iterable[RootSlot | None]) -> float:
        """Until when answers derived from ``entries`` and root ``slots`` may be reused (clock seconds)."""
        held = [s for s in slots if s is not None]
        if any(s.expired for s in held):
            return -_INF
        stamps = [e.fetched_at for e in entries] + [s.fetched_at for s in held]
        until = self.timing.expires_at(min(stamps, default=_INF))
        for e in entries:
            b = self._backoff.get(e.name)
            if b is not None:
                until = min(until, b.retry_at)
        return until

    def _schedule_retry_locked(self, key: str, error: BaseException, now: float, fetch: object = None) -> None:
        """Record a failure of the answer under ``key``: back off exponentially before fetching it again.

        ``fetch`` names the request that failed (one token per fetch, shared by every caller of a single-flight):
        a fetch counts as one failure however many callers or failed versions report it, so N threads sharing
        one bad response back off 1 s, not 2^(N-1) s. None: a failure of its own.
        """
        b = self._backoff.setdefault(key, Backoff())
        if fetch is not None and b.fetch is fetch:
            b.error = error
            stamp_failure(error, now, b.retry_at)
            return
        b.fetch = fetch
        b.attempts += 1
        b.error = error
        b.retry_at = self.timing.retry_at(b.attempts, now)
        stamp_failure(error, now, b.retry_at)

    def _stamp_failures_locked(self, key: str, errors: Iterable[BaseException], now: float) -> None:
        """Stamp every failure kept in the entry under ``key`` with that key's backoff (see ``_replay``): lookups
        answered from the entry before the next retry say they are replays."""
        b = self._backoff.get(key)
        if b is not None:
            for error in errors:
                stamp_failure(error, now, b.retry_at)

    def _succeeded_locked(self, key: str) -> None:
        """The answer under ``key`` was fetched: no backoff, and warn again at its next stale serving."""
        self._backoff.pop(key, None)
        self._warned_stale.discard(key)

    def _serve_stale_locked(self, key: str, what: object, error: BaseException) -> None:
        """Count an earlier answer served after a transient failure; warn once per failing streak of ``key``."""
        self._stats.stale_served += 1
        if key not in self._warned_stale:
            self._warned_stale.add(key)
            log.warning("serving cached %s after a transient failure: %s", what, error)

    # --- listed versions answering 404 ---------------------------------------------------------------------------

    def _known_absent_locked(self, gvs: Iterable[GroupVersion], now: float) -> dict[GroupVersion, RestMapperError]:
        """Those of ``gvs`` that answered 404 (after a re-list still listed them) within the last
        ``miss_refresh_interval``, or earlier in the current lookup: taken as still not served, without a request.

        A version that keeps answering 404 (an APIService registering, a CRD version being removed) is asked
        about once per interval however many lookups need its group; a miss revalidation asks again about every
        one of them that this lookup did not read (:meth:`_forget_absent_locked`), so a no-match is never older
        than the interval (DESIGN 5.2).
        """
        known: dict[GroupVersion, RestMapperError] = {}
        for gv in gvs:
            mark = self._absent.get(gv)
            if mark is not None and (self.lookup.fetched(mark[1]) or self.timing.rate_limited(mark[0], now)):
                known[gv] = mark[1]
        return known

    def _note_absent_locked(self, listed: APIGroup, ok: Iterable[GroupVersion],
                            failed: dict[GroupVersion, RestMapperError], now: float) -> float | None:
        """Record which listed versions of ``listed`` answered 404 in a load (named groups only: core never
        lacks a version) and forget those that answered.

        Returns:
            When the oldest 404 this load took as known (:meth:`_known_absent_locked`) was answered, unless the
            current lookup read it: the entry is only as new as that answer (None: every version was read by
            this lookup or this load).
        """
        for gv in ok:
            self._absent.pop(gv, None)
        if not listed.name:
            return None
        earliest: float | None = None
        for gv in listed.group_versions:
            err = failed.get(gv)
            if isinstance(err, APIStatusError) and err.not_found:
                mark = self._absent.get(gv)
                if mark is None or mark[1] is not err:  # a new answer (not a version skipped as known)
                    self._absent[gv] = (now, err)
                    self.lookup.mark(err)
                elif not self.lookup.fetched(err):
                    earliest = mark[0] if earliest is None else min(earliest, mark[0])
        return earliest

    def _forget_absent_locked(self, names: Collection[str] | None, *, keep_this_lookup: bool = True) -> None:
        """Versions of ``names`` (None: all) that answered 404 are asked about again: on a miss revalidation (rate
        -limited to one per interval) those the current lookup did not read, on an invalidation every one."""
        for gv, (_, err) in list(self._absent.items()):
            if (names is None or gv.group in names) and not (keep_this_lookup and self.lookup.fetched(err)):
                del self._absent[gv]

    # --- installing answers --------------------------------------------------------------------------------------

    def _restore_evicted_locked(self, slot: RootSlot, doc: RootDoc, error: RestMapperError, now: float) -> None:
        """Serving a stale root document after ``error``: bring back, as stale, groups evicted since it was fetched
        (from an aggregated document itself; from their dropped entries when it is a group listing).

        Without this, a group evicted by an invalidation would be *absent* while the server is briefly
        unreachable, and lookups would say "no match" (read by controllers as "not installed"), or answer from a
        lower-ranked group, instead of answering from the last good document. What comes back is only an earlier
        answer: every version is flagged stale (a positive answer, never a no-match or an any-group answer it
        could outrank), counted in ``stats.stale_served``, and due at once (the first lookup after the failure
        asks the server again, so the invalidation takes effect as soon as it answers). A group evicted by a 404,
        content past ``max_stale`` (and any with ``max_stale=0``) comes back with no content: every version
        failed with ``error``, so lookups that need it raise :class:`GroupDiscoveryError`.
        """
        for g in self._restorable_locked(slot):
            if g.name in self._entries or not doc.lists(g.name):
                continue
            parts, fetched_at = self._earlier_parts_locked(slot, g, now)
            self._put_earlier_locked(APIGroup(g.name, g.versions, g.preferred_version), parts, error, fetched_at, now)

    def _restorable_locked(self, slot: RootSlot) -> list[APIGroup]:
        """The groups a stale root document may bring back: every group of an aggregated one; of a group listing,
        those evicted (or gone) that it lists."""
        root = slot.root
        if root.resources is not None:
            return list(root.groups)
        listed = slot.group_index()
        names = [n for n in (*self._evicted, *self._gone) if n in listed]
        return [root.groups[listed[n]] for n in dict.fromkeys(names)]

    def _earlier_parts_locked(self, slot: RootSlot, g: APIGroup, now: float) -> tuple[EntryParts | None, float]:
        """What group ``g`` comes back with from a stale root document (see :meth:`_restore_evicted_locked`),
        and when that was fetched: its part of an aggregated document, its dropped entry within ``max_stale``,
        or nothing (None: every version fails)."""
        root = slot.root
        if g.name in self._gone or self.timing.max_stale <= 0:
            return None, slot.fetched_at
        if root.resources is not None:
            return aggregated_parts(root, g, root.stale), slot.fetched_at
        old = self._evicted.get(g.name)
        if old is None or not self.timing.within_stale(old.fetched_at, now):
            return None, slot.fetched_at
        return EntryParts(old.group, old.resources, dict(old.failed), dict(old.stale), old.unread), old.fetched_at

    def _misses_invalidated_locked(self, slot: RootSlot, doc: RootDoc) -> bool:
        """Whether root document ``doc`` (held in ``slot``) lacks a group invalidated since it was read.

        A watcher invalidates a group when a CRD of it is added: when the group is new, the earlier document does
        not list it, so nothing could bring it back for an outage, and any answer from that document would say the
        group serves nothing: a lower-ranked group answering in its place, a category list without it (DESIGN
        5.10). Such a document is not served stale: lookups that need it raise :class:`GroupDiscoveryError` until
        it is read again (groups cached and fresh, and core through ``/api``, still answer).
        """
        if not self._relist:
            return False
        listed = slot.group_index()
        return any(doc.lists(name) and name not in listed for name in self._relist)

    def _listing_outdated_locked(self, name: str) -> RestMapperError | None:
        """Why the version list the root document names for group ``name`` cannot be trusted: the group was
        invalidated since that document was read, and reading it again failed (the error). None otherwise."""
        path = root_of(name).path
        if name not in self._relist and path not in self._relist_roots:
            return None
        failure = self._backoff.get(path)
        return failure.error if failure is not None and isinstance(failure.error, RestMapperError) else None

    def _root_read_locked(self, doc: RootDoc) -> None:
        """Root document ``doc`` was read after the last invalidation: the versions it lists are current again."""
        self._relist_roots.discard(doc.path)
        self._relist = {name for name in self._relist if not doc.lists(name)}

    def _install_relisted_locked(self, listed: APIGroup, parts: EntryParts, error: RestMapperError,
                                 now: float) -> None:
        """Install a group loaded with the version list of a root document read before the group was invalidated
        (reading it again failed with ``error``): its resources are current, its versions may not be (a version
        added since, a new preferred one). Installed as :meth:`_restore_evicted_locked` brings groups back: every
        version flagged stale, due at once, and with ``max_stale=0`` no content (every listed version failed).
        Nor when every listed version answered 404: nothing would be left to flag, and an empty group would vouch
        for absence (a lower-ranked group answering in its place) while versions added since are unknown."""
        slot = self._roots[root_of(listed.name).path]
        keep = self.timing.max_stale > 0 and bool(parts.resources)
        self._put_earlier_locked(listed, parts if keep else None, error,
                                 slot.fetched_at if slot is not None else now, now)

    def _put_earlier_locked(self, listed: APIGroup, parts: EntryParts | None, error: RestMapperError,
                            fetched_at: float, now: float) -> None:
        """Install group ``listed`` as an earlier answer served because a root document failed with ``error``:
        ``parts`` with every version that has content flagged stale (and counted), or, without ``parts``, no
        content at all (every listed version failed with ``error``: :class:`GroupDiscoveryError`); either way due
        again at once, never fresh."""
        name = listed.name
        if parts is None:
            parts = EntryParts(listed, {}, dict.fromkeys(listed.group_versions, error))
        for gv in parts.resources:
            if gv not in parts.failed and gv not in parts.stale:
                parts.stale[gv] = error
                self._serve_stale_locked(name, gv, error)
        self._put_locked(parts, fetched_at, restored=True)
        self._backoff[name] = Backoff(retry_at=now, error=error)  # due now: never fresh

    def _invalidate_group_locked(self, group: str, *, gone: bool = False) -> None:
        """Drop one group (``gone``: the server answered 404 for it, so its content is never restored)."""
        self._relist.add(group)
        self._forget_absent_locked((group,), keep_this_lookup=False)  # it changed, says the caller: ask again
        self._invalidations += 1
        if self._evict_locked(group):
            self._stats.evictions += 1
        else:
            self._entries.touch(group)  # not loaded (new, or deleted): readers must still hear of it
        self._backoff.pop(group, None)
        if gone:
            self._evict_gone_locked(group)
        slot = self._roots[root_of(group).path]
        if slot is not None:
            slot.expired = True
        self.generation += 1

    def _evict_gone_locked(self, name: str) -> None:
        """Group ``name`` answered 404: its earlier content is never served again (until it is read again)."""
        self._gone.add(name)
        self._evicted.pop(name, None)
        self._backoff.pop(name, None)

    def _install_aggregated_locked(self, root: RootDiscovery, now: float, doc: RootDoc) -> None:
        """Rebuild the entry of every group in an aggregated document; drop the groups it no longer lists.

        A healthy group whose entry already reads this very document's part for it (a 304, or the same document
        installed again after an invalidation elsewhere) only has its fetch time renewed: a thousand unchanged
        groups cost a thousand small renewals, not a thousand rebuilds and comparisons (14.7 ms under the lock at
        1,000 groups on every revalidation of ``/apis``, now about 2 ms).
        """
        lists = root.resources
        parts_of = lists.group if isinstance(lists, LazyResourceLists) else None
        stale_groups = {gv.group for gv in root.stale}
        for g in root.groups:
            if parts_of is None or g.name in stale_groups or not self._renewed_locked(g, parts_of(g.name), now):
                self._put_aggregated_locked(aggregated_parts(root, g, root.stale), now)
        self._drop_unlisted_locked({g.name for g in root.groups}, doc)

    def _drop_unlisted_locked(self, names: Collection[str], doc: RootDoc) -> None:
        """Drop the entries (and what else is kept) of groups root document ``doc`` does not list, ``names``
        being those it does."""
        for name in [n for n in self._entries if n not in names and doc.lists(n)]:
            self._entries.drop(name)
            self._backoff.pop(name, None)  # an unlisted group's retry would keep every lookup on the slow path
            self.generation += 1
        self._let_go_unlisted_locked(names, doc)

    def _renewed_locked(self, g: APIGroup, part: GroupResourceLists, now: float) -> bool:
        """Renew the fetch time of ``g``'s entry when installing it from ``part`` would change nothing else
        (:func:`renewable`); False when it would (the caller installs it)."""
        old = self._entries.get(g.name)
        if old is None or not renewable(old, g, part):
            return False
        self._settle_locked(GroupEntry(old.group, old.resources, old.failed, now, old.generation), False, True)
        self._backoff.pop(g.name, None)
        return True

    def _put_aggregated_locked(self, parts: EntryParts, now: float) -> None:
        """Install a group's entry from an aggregated document: its stale versions back off as failures."""
        self._put_locked(parts, now)
        name = parts.group.name
        if parts.failed:
            self._schedule_retry_locked(name, next(iter(parts.failed.values())), now)
            self._stamp_failures_locked(name, parts.failed.values(), now)
        else:
            self._backoff.pop(name, None)

    def _let_go_unlisted_locked(self, listed: Collection[str], doc: RootDoc) -> None:
        """Forget what is kept of groups root document ``doc`` (just read) does not list, ``listed`` being those it
        does: their entries dropped by an invalidation (``_evicted``), 404 marks (``_gone``) and unserved versions.

        Kept for an outage, an evicted entry was let go only when its group was installed again: a group removed
        from the cluster kept it for good (memory never released, one per group ever removed). The server said the
        group is gone: should it come back, what it serves then is read, never its pre-removal content.
        """
        for name in [n for n in (*self._evicted, *self._gone, *self._unserved) if n not in listed and doc.lists(n)]:
            self._evicted.pop(name, None)
            self._gone.discard(name)
            self._unserved.pop(name, None)

    def _forget_unlisted_locked(self, root: RootDiscovery, doc: RootDoc) -> None:
        """Drop the entries of groups a legacy root document no longer lists, or lists with new versions."""
        listed = {g.name: g for g in root.groups}
        for name, entry in list(self._entries.items()):
            if not doc.lists(name):
                continue
            g = listed.get(name)
            if g is None:  # gone
                self._entries.drop(name)
                self._backoff.pop(name, None)
                self._unserved.pop(name, None)
                self.generation += 1
            elif self._new_versions_locked(g, entry):  # reload lazily
                self._entries.drop(name)
                self.generation += 1
        for gv in [gv for gv in self._absent if doc.lists(gv.group) and not _lists(listed, gv)]:
            del self._absent[gv]  # no longer listed: nothing to remember about it
        self._let_go_unlisted_locked(listed, doc)

    def _new_versions_locked(self, g: APIGroup, entry: GroupEntry) -> set[str]:
        """The versions a listing of ``g`` names that ``entry`` did not know. A version that answered 404 when the
        entry was loaded is not new: dropping the entry for it dropped a group a lookup had just read, and the
        answer computed without it was a confident no-match."""
        return (set(g.versions) - set(entry.group.versions) - {gv.version for gv in entry.failed}
                - self._unserved.get(g.name, frozenset()))

    def _evict_locked(self, name: str | None) -> int:
        """Drop the entry of group ``name`` (None: every entry), keeping it as an earlier answer; returns how many."""
        if name is None:
            self._evicted.update(self._entries.items())
            return self._entries.clear()
        dropped = self._entries.drop(name)
        if dropped is None:
            return 0
        self._evicted[name] = dropped
        return 1

    def _put_locked(self, parts: EntryParts, now: float, *, restored: bool = False, read: bool = True) -> None:
        """Install a group's entry; a new generation only when its content changed.

        ``restored``: an earlier answer brought back by a stale root document (a 404 eviction stands), or a group
        read with such a document's version list; the entry is :attr:`~GroupEntry.outdated`.
        ``read``: the current lookup read all of it (else it does not count as confirmed by this lookup).
        """
        group, resources, failed, stale, unread = parts.group, parts.resources, parts.failed, parts.stale, parts.unread
        old = self._entries.get(group.name)
        if old is not None and old.group == group and same_resources(old.resources, resources) and (
                set(old.failed) == set(failed)) and set(old.stale) == set(stale) and old.unread == unread and (
                old.outdated == restored):
            entry = GroupEntry(group, kept_resources(old.resources, resources), failed, now, old.generation, stale,
                               unread, restored)
        else:
            self.generation += 1
            entry = GroupEntry(group, resources, failed, now, self.generation, stale, unread, restored)
        self._settle_locked(entry, restored, read)

    def _settle_locked(self, entry: GroupEntry, restored: bool, read: bool) -> None:
        """Put ``entry`` in the table and settle what it answers for (see :meth:`_put_locked`)."""
        name = entry.name
        self._entries.set(entry)
        self._evicted.pop(name, None)
        if not restored and self._gone and name in self._gone and any(
                gv not in entry.stale for gv in entry.resources):
            self._gone.discard(name)  # the server answered for it again
        if not restored and read:
            self.lookup.mark(entry)

