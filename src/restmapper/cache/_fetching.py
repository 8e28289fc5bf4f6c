"""The discovery cache's I/O: reading root documents and loading groups, each under the refresh rules.

:class:`FetchingState` is the base of :class:`~restmapper.cache.DiscoveryCache` that talks to the server: it
fetches without the lock, installs with it (the ``..._locked`` helpers of :class:`~restmapper.cache._state.CacheState`),
and shares in-flight fetches between threads. Kept apart from the public surface in :mod:`restmapper.cache._cache`
(see its docstring for the state and the rules), so each module stays readable.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from restmapper.cache._freshness import Action, decide
from restmapper.cache._legacy import legacy_parts, needed_versions
from restmapper.cache._replay import error_with_replays, scope_note
from restmapper.cache._roots import ROOTS, RootDoc, Want, root_of, roots_for
from restmapper.cache._state import CacheState
from restmapper.cache._types import GroupEntry, RootSlot, is_transient
from restmapper.errors import APIStatusError, DiscoveryError, RestMapperError
from restmapper.model import APIGroup, APIResourceList, GroupVersion

__all__ = ["FetchingState"]

_INF = math.inf


@dataclass(frozen=True)
class _RootFetch:
    """A fetch of a root document that :meth:`FetchingState._plan_root` decided on."""

    listing: bool  # ask for the group listing only (see RootDoc.listing_fetch)
    epoch: int  # the invalidations the caller had seen when it decided


class FetchingState(CacheState):
    """Root documents and group loading: the methods of the cache that may do I/O (never under the lock)."""

    # --- root documents ------------------------------------------------------------------------------------------

    def _ensure_root(self, doc: RootDoc, *, force: bool = False, stale_ok: bool = True,
                     want: Want = Want.ANY) -> RootSlot:
        """The slot of a root document, refreshed when :func:`decide` says so (``force``: always asks).

        ``want`` says what the lookup needs (:meth:`RootDoc.listing_fetch`): a group listing held by choice is
        replaced by the whole document when the lookup needs every group's resources.

        Takes the lock itself; fetches without it. On a transient failure an earlier answer is served within
        ``max_stale`` when ``stale_ok``; otherwise (and for permanent failures: 403, 404, malformed) a
        :class:`GroupDiscoveryError` is raised.
        """
        plan = self._plan_root(doc, force=force, stale_ok=stale_ok, want=want)
        return plan if isinstance(plan, RootSlot) else self._fetch_root(doc, plan, stale_ok=stale_ok)

    def _ensure_roots(self, docs: Sequence[RootDoc], *, force: bool = False, stale_ok: bool = True,
                      want: Want = Want.ANY) -> dict[RootDoc, RootSlot]:
        """:meth:`_ensure_root` of each of ``docs``, their fetches at once: waits for one request, not one each.

        A cold lookup of every group reads ``/api`` and ``/apis``; one after the other, an unresponsive server
        would cost it two request deadlines. The second document is fetched in a helper thread (bound to this
        lookup: what it fetches counts as this lookup's), single-flight as any fetch. Every document is read
        before a failure is raised, and the failure raised is the first in ``docs`` order, as when they were read
        one by one.

        Raises:
            GroupDiscoveryError: as :meth:`_ensure_root`, for the first document of ``docs`` that failed.
        """
        results: dict[RootDoc, RootSlot | _RootFetch | BaseException] = {}
        for doc in docs:
            try:
                results[doc] = self._plan_root(doc, force=force, stale_ok=stale_ok, want=want)
            except RestMapperError as exc:
                results[doc] = exc
        fetches = [(doc, plan) for doc, plan in results.items() if isinstance(plan, _RootFetch)]
        helpers: list[tuple[RootDoc, threading.Thread, list[RootSlot | BaseException]]] = []
        for doc, plan in fetches[1:]:
            out: list[RootSlot | BaseException] = []
            run = self.lookup.bind(functools.partial(self._fetch_root_into, out, doc, plan, stale_ok))
            thread = threading.Thread(target=run, name="restmapper-discovery-root", daemon=True)
            thread.start()
            helpers.append((doc, thread, out))
        if fetches:
            out = []
            self._fetch_root_into(out, *fetches[0], stale_ok)
            results[fetches[0][0]] = out[0]
        for doc, thread, out in helpers:
            thread.join()  # bounded: the fetch has the transport's request deadline
            results[doc] = out[0]
        slots: dict[RootDoc, RootSlot] = {}
        for doc in docs:
            result = results[doc]
            if isinstance(result, BaseException):
                raise result
            assert isinstance(result, RootSlot)
            slots[doc] = result
        return slots

    def _fetch_root_into(self, out: list[RootSlot | BaseException], doc: RootDoc, plan: _RootFetch,
                         stale_ok: bool) -> None:
        """:meth:`_fetch_root`, its slot or its failure appended to ``out`` (to be raised by the lookup's thread)."""
        try:
            out.append(self._fetch_root(doc, plan, stale_ok=stale_ok))
        except BaseException as exc:  # handed to the lookup's thread, which raises it
            out.append(exc)

    def _plan_root(self, doc: RootDoc, *, force: bool, stale_ok: bool, want: Want) -> RootSlot | _RootFetch:
        """What :meth:`_ensure_root` does about ``doc`` now (under the lock, no I/O): the slot when no fetch is
        needed, else the fetch to make.

        Raises:
            GroupDiscoveryError: backing off from a failure of the document, with no earlier answer to serve.
        """
        path = doc.path
        epoch = self._invalidations  # what this caller was told before it began
        now = self.clock()
        with self._lock:
            slot = self._roots[path]
            listing = doc.listing_fetch(want, slot, len(self._entries))
            force = force or (slot is not None and slot.listing and not listing)
            action = self._decide_locked(path, slot, now, force=force, stale_ok=stale_ok)
            if action is Action.FRESH and slot is not None:
                return slot
            if action is Action.SERVE_STALE and slot is not None and not self._misses_invalidated_locked(slot, doc):
                self._stats.stale_served += 1  # the failure was warned about when it happened
                error = self._backoff[path].error
                assert isinstance(error, RestMapperError)  # SERVE_STALE without a fetch: backing off from it
                self._restore_evicted_locked(slot, doc, error, now)
                return slot
            if action in (Action.FAIL, Action.SERVE_STALE):
                error = self._backoff[path].error  # FAIL without a fetch: backing off from that failure
                replay = doc.error(error or DiscoveryError(f"unable to retrieve {path}"))
                raise error_with_replays(replay, scope_note(self.lookup, now)) from error  # says so, unless this lookup
                # fetched it (it reads the document again after a failure of its own)
        return _RootFetch(listing, epoch)

    def _fetch_root(self, doc: RootDoc, plan: _RootFetch, *, stale_ok: bool) -> RootSlot:
        """Fetch ``doc`` as ``plan`` says (single-flight, without the lock); on failure serve stale or raise, as
        :meth:`_ensure_root` describes."""
        path, listing = doc.path, plan.listing
        try:
            fetched = self._flight.do((path, listing), lambda: self._refresh_root(doc, listing))
            if fetched.expired and plan.epoch == self._invalidations:
                # Shared a fetch that raced with an invalidation this caller had seen before it began: the
                # document may predate what the caller was told, so read it once more (a new flight).
                fetched = self._flight.do((path, listing), lambda: self._refresh_root(doc, listing))
            return fetched
        except RestMapperError as exc:
            # The flight's leader recorded the failure (once per fetch); each caller only decides what to serve.
            self.lookup.mark(exc)  # this lookup's own failure, should it read the document again
            with self._lock:
                slot = self._roots[path]
                now = self.clock()
                state = self._slot_state_locked(path, slot)
                if (decide(state, now, self.timing, stale_ok=stale_ok, failure=exc) is Action.SERVE_STALE
                        and slot is not None and not self._misses_invalidated_locked(slot, doc)):
                    self._serve_stale_locked(path, path, exc)
                    self._restore_evicted_locked(slot, doc, exc, now)
                    return slot
            raise doc.error(exc) from exc

    def _refresh_root(self, doc: RootDoc, listing: bool = False) -> RootSlot:
        """Fetch a root document (without the lock; ``listing``: as a group listing) and install it (under it)."""
        path = doc.path
        epoch = self._invalidations
        try:
            root = doc.fetch(self.discovery, listing=listing)
        except RestMapperError as exc:
            with self._lock:
                self._stats.fetches[path] += 1
                self._stats.errors += 1
                # Only the flight's leader gets here: one failed response is one failure, whoever shared it.
                self._schedule_retry_locked(path, exc, self.clock())
                if not is_transient(exc):
                    # 403/404/malformed: never mask a permanent answer with an earlier one.
                    self._roots[path] = None
            raise
        now = self.clock()
        with self._lock:
            self._stats.fetches[path] += 1
            if root.not_modified:
                self._stats.not_modified += 1
            self._succeeded_locked(path)
            held = self._roots[path]
            if listing and held is not None and held.root.resources is not None and not held.expired:
                return held  # a lookup over every group read the whole document meanwhile: keep it
            # An invalidation that raced with this fetch wins: use the answer, but revalidate on next use.
            slot = RootSlot(root, now, expired=epoch != self._invalidations, listing=listing)
            if epoch == self._invalidations:
                self._root_read_locked(doc)
            self.lookup.mark(slot)
            self._roots[path] = slot
            if not root.not_modified:
                self.generation += 1
            if root.resources is not None:
                self._install_aggregated_locked(root, now, doc)
            else:
                self._forget_unlisted_locked(root, doc)
        return slot

    # --- group loading -------------------------------------------------------------------------------------------

    def _load(self, groups: list[APIGroup], versions: Sequence[str] | None = None) -> None:
        """Bring the entries of ``groups`` up to date (aggregated: re-read the root; legacy: their versions)."""
        with self._lock:
            aggregated = {doc for doc in ROOTS
                          if (slot := self._roots[doc.path]) is not None and slot.root.resources is not None}
        legacy: list[APIGroup] = []
        reload: dict[RootDoc, None] = {}
        for g in groups:
            doc = root_of(g.name)
            if doc in aggregated:
                reload[doc] = None  # one document holds every group: read it once, not once per group
            else:
                legacy.append(g)
        for doc in reload:
            self._reload_aggregated_root(doc)
        if legacy:
            self._load_legacy(legacy, versions)

    def _reload_aggregated_root(self, doc: RootDoc) -> None:
        """Re-read an aggregated root document unless it is fresh and none of its groups is due for a retry."""
        now = self.clock()
        with self._lock:
            slot = self._roots[doc.path]
            fresh = slot is not None and (
                self._decide_locked(doc.path, slot, now) is Action.FRESH
                and not any(self._retry_due_locked(g.name, now) for g in slot.root.groups))
        if not fresh:
            self._ensure_root(doc, force=True)

    def _load_legacy(self, groups: list[APIGroup], versions: Sequence[str] | None = None) -> None:
        """Fetch the needed versions of legacy ``groups`` and install them (the lock only around the installs).

        A version the listing still names may answer 404: the listing is stale (a CRD version stopped being
        served). Its group is evicted, its root document re-read, and the group loaded once more from the new
        listing in this same call; a second 404 is installed as "not served".
        """
        for retried in (False, True):
            epoch = self._invalidations
            now = self.clock()
            with self._lock:
                have = self._kept_locked(groups, versions, now)
            gvs = [gv for g in groups for gv in needed_versions(g, versions)
                   if g.name not in have or gv in have[g.name].unread]
            with self._lock:
                known = self._known_absent_locked(gvs, now)  # 404'd within the interval: not asked again
            ok, failed, fetch = self._fetch_group_versions([gv for gv in gvs if gv not in known])
            gone = {gv.group for gv, e in failed.items() if isinstance(e, APIStatusError) and e.not_found}
            failed.update(known)
            if not gone or retried:
                self._install_legacy(groups, ok, failed, epoch, have, fetch)
                return
            relisted = self._evict_and_relist(gone)
            self._install_legacy([g for g in groups if g.name not in gone], ok, failed, epoch, have, fetch)
            groups = relisted
            if not groups:
                return

    def _kept_locked(self, groups: list[APIGroup], versions: Sequence[str] | None,
                     now: float) -> dict[str, GroupEntry]:
        """The entries of ``groups`` a legacy load keeps (lock held). Loading some ``versions``: a fresh entry
        keeps what it read (only needed unread versions are fetched). Loading every version (None): only what this
        very lookup read, all of it answering, is kept."""
        return {g.name: e for g in groups if (e := self._entries.get(g.name)) is not None and (
            (self.lookup.fetched(e) and not (e.failed or e.stale)) if versions is None
            else self._decide_locked(e.name, e, now) is Action.FRESH)}

    def _evict_and_relist(self, gone: set[str]) -> list[APIGroup]:
        """Evict the groups ``gone`` (a listed version answered 404: the listing is stale) and re-read their root
        documents; return the groups the new listings still name."""
        with self._lock:
            self._stats.evictions += len(gone)
            for name in gone:
                self._entries.drop(name)
                self._evict_gone_locked(name)
        relisted: list[APIGroup] = []
        for doc in {root_of(name) for name in gone}:
            relisted.extend(g for g in self._ensure_root(doc, force=True).root.groups if g.name in gone)
        return relisted

    def _fetch_group_versions(
        self, gvs: list[GroupVersion]
    ) -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError], object]:
        """Fetch legacy group versions (without the lock); one flight per batch: threads asking for the same
        groups share it, distinct batches run in parallel. The third item is a token naming the fetch (the same
        for every caller of one flight): its failures are counted once."""

        def fetch_all() -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError], object,
                                 int]:
            started = self._invalidations
            res, errs = self.discovery.fetch_group_versions(gvs)
            with self._lock:
                for gv in gvs:
                    self._stats.fetches[gv.path] += 1
                self._stats.errors += len(errs)
            # object(): names this fetch (its failures count once, however many callers share it); started: the
            # invalidations it began after.
            return res, errs, object(), started

        epoch = self._invalidations
        for _attempt in range(2):
            res, errs, fetch, started = self._flight.do(("gvs", tuple(gvs)), fetch_all)
            if started == epoch:
                break
            # Joined a fetch that began before an invalidation this caller saw: its responses may
            # predate what the caller was told, so ask once more (a new flight); a second race is left to the
            # installer, which stores it as already expired.
        return dict(res), dict(errs), fetch

    def _install_legacy(self, groups: list[APIGroup], ok: dict[GroupVersion, APIResourceList],
                        failed: dict[GroupVersion, RestMapperError], epoch: int,
                        have: dict[str, GroupEntry], fetch: object) -> None:
        """Install the entries of ``groups`` from a legacy load (takes the lock); ``fetch`` names the fetch they
        came from (a group's failures in it count once, however many callers install it)."""
        now = self.clock()
        with self._lock:
            # Raced with an invalidation: install the answer for this lookup, but as already expired.
            stamp = now if epoch == self._invalidations else -_INF
            for g in groups:
                kept = have.get(g.name)
                known_since = self._note_absent_locked(g, ok, failed, now)
                parts = legacy_parts(g, ok, failed, kept, self._entries.get(g.name), now, self.timing)
                # Listed versions that answered 404 (left out as not served): a relisting naming them again does
                # not make them new (see _forget_unlisted_locked).
                self._unserved[g.name] = frozenset(g.versions) - frozenset(parts.group.versions)
                outdated = self._listing_outdated_locked(g.name)
                if outdated is not None:
                    self._install_relisted_locked(g, parts, outdated, now)
                    continue
                for gv, err in parts.stale.items():
                    self._serve_stale_locked(g.name, gv, err)
                    self._schedule_retry_locked(g.name, err, now, fetch)
                if kept is not None and stamp != -_INF:
                    stamp = min(stamp, kept.fetched_at)  # kept versions expire when the entry they came from does
                if parts.stale and (old := self._entries.get(g.name)) is not None:
                    # An earlier answer is as old as the entry it came from: max_stale counts from there, not
                    # from each failed retry (else a failing version would be served stale forever).
                    stamp = min(stamp, old.fetched_at)
                # A version taken as still 404 (not asked again) is as old as its 404: so is the entry.
                self._put_locked(parts, stamp if known_since is None else min(stamp, known_since),
                                 read=known_since is None)
                if parts.failed:
                    self._schedule_retry_locked(g.name, next(iter(parts.failed.values())), now, fetch)
                    self._stamp_failures_locked(g.name, parts.failed.values(), now)
                elif not parts.stale:
                    self._succeeded_locked(g.name)

    # --- miss revalidation ---------------------------------------------------------------------------------------

    def _revalidate(self, names: Collection[str] | None) -> bool:
        """Re-read the root documents of ``names`` (never served stale) and the legacy groups loaded among them."""
        before = self.generation
        with self._lock:
            self._forget_absent_locked(names)  # listed versions that answered 404 earlier are asked again
        self._ensure_roots(roots_for(names), force=True, stale_ok=False)
        with self._lock:
            listed: dict[str, APIGroup] = {}
            for slot in self._roots.values():
                if slot is not None:
                    listed.update((g.name, g) for g in slot.root.groups)
            # Not those this very lookup read: it has the server's word on them, an answer or a failure. Read again,
            # a failing version cost two requests per lookup and doubled its backoff twice (2 s, 8 s, 32 s).
            legacy_loaded = [
                listed[e.name] for e in self._entries.values()
                if (names is None or e.name in names) and e.name in listed and not self.lookup.fetched(e)
                and (slot := self._roots[root_of(e.name).path]) is not None and slot.root.resources is None
            ]
        if legacy_loaded:
            self._load_legacy(legacy_loaded)
        return self.generation != before
