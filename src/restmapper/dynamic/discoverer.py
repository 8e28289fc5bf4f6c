"""``SelfHealingDiscoverer``: a drop-in discoverer for ``kubernetes.dynamic.DynamicClient`` (docs/design.md §8).

``DynamicClient(api_client, discoverer=SelfHealingDiscoverer)`` keeps ``resources.get/search``, ``api_groups``,
``version``, ``invalidate_cache()`` and iteration with upstream's keywords and return types, but reads discovery
through our :class:`~restmapper.mapper.LazyRESTMapper` cache (TTL, 404 eviction, rate-limited miss revalidation,
failure isolation, thread safety) over the DynamicClient's own ``ApiClient``. Answers are memoized while none
of the groups (and merged-index names) they read changed (:mod:`restmapper.dynamic._memo`), so warm lookups are
one dict hit and refreshing one group recomputes only the answers that read it. Matching a call against the
groups' Resource objects is :mod:`restmapper.dynamic._query`; a first-time call of a common shape over groups the
mapper holds ready is answered straight from them by :mod:`restmapper.dynamic._direct` (the same answer, memoized
the same way).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper._public import own_methods
from restmapper.cache import GroupEntry
from restmapper.cache._replay import Replays, replay_mark
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import _cachefile
from restmapper.dynamic._direct import DirectAnswers
from restmapper.dynamic._index import KUBERNETES_DYNAMIC, Flavour, GroupResources, build_group, generic_list
from restmapper.dynamic._memo import LIST_TAG, LISTED, MEMO_LIMIT, Deps, depend_on_read, memo_key, recall, remember
from restmapper.dynamic._notfound import observe_requests_of
from restmapper.dynamic._partial import SearchResults, judge_partial, search_answer
from restmapper.dynamic._query import FILTER_KEYWORDS, Query, choose, collect, parse
from restmapper.dynamic._ready import any_unsure, ready_found
from restmapper.dynamic._surface import UpstreamSurface
from restmapper.errors import DiscoveryError, GroupDiscoveryError, InvalidArgumentError, remembered_suffix
from restmapper.mapper import LazyRESTMapper, outranking
from restmapper.mapper._certainty import RACE_ATTEMPTS, in_scope, raced, with_question
from restmapper.mapper._hot import HotAnswers
from restmapper.mapper._memo import Memo
from restmapper.mapper.merged import Cell
from restmapper.model import GroupVersion
from restmapper.transport import ApiClientTransport
from restmapper.transport.base import Transport

__all__ = ["FILTER_KEYWORDS", "SelfHealingDiscoverer"]

log = logging.getLogger("restmapper.dynamic")

_new_list = list.__new__

_Found = tuple[list[Resource], float, dict[GroupVersion, BaseException], list[tuple[GroupEntry, GroupResources]],
               float | None]
"""What a lookup found: the matches, until when (clock seconds), the unreadable group versions in scope, the
groups read (with their Resource objects), and, for no match, when the server confirmed that (clock seconds; None
when this lookup did)."""


_MANY = object()
"""Not one short name (see :meth:`SelfHealingDiscoverer.get`)."""


class _Miss(Exception):
    """A not-found answer of :meth:`SelfHealingDiscoverer.get`, with the clock reading until it may be reused and
    the one at which the server confirmed it (None: the lookup that raised it did)."""
    def __init__(self, error: Exception, until: float, confirmed_at: float | None) -> None:
        super().__init__(error)
        self.error, self.until, self.confirmed_at = error, until, confirmed_at


@own_methods
class SelfHealingDiscoverer(UpstreamSurface, DirectAnswers, _cachefile.CacheFileUser):
    """A ``kubernetes.dynamic`` discoverer backed by the self-healing lazy REST mapper.

    Construct it the way ``DynamicClient`` does (``discoverer(dynamic_client, cache_file)``). Differences from
    upstream ``LazyDiscoverer``, each fixing a reported bug: no cache file unless ``cache_file`` is given (then
    private and atomic); TTL, 404 eviction and rate-limited miss revalidation instead of a full wipe per miss;
    thread-safe; a group-less ``api_version`` names the core group when the core group serves it (``v1`` never
    matches ``apps/v1``); a kind served by several versions of one group resolves to the preferred version; kinds
    and names match case-insensitively; a failing group version fails only lookups whose answer it could
    outrank (one ranking below the answer makes it partial: a warning, as kubectl); two resources of one version
    sharing a kind resolve to the one named after the kind; several keyword filters must all match (upstream
    returned the first resource matching any one); unknown keywords raise ``TypeError``.

    Attributes:
        client: the ``DynamicClient``.
        mapper: the :class:`~restmapper.mapper.LazyRESTMapper` (its ``cache`` has the counters).
    """

    _flavour: Flavour = KUBERNETES_DYNAMIC  # whose Resource classes and errors to hand out

    def __init__(self, client: Any, cache_file: str | None = None, *, ttl: float | None = 300.0,
                 miss_refresh_interval: float = 1.0, max_stale: float = 600.0,
                 clock: Callable[[], float] = time.monotonic, transport: Transport | None = None,
                 observe_requests: bool = True,
                 cache_file_lock_timeout: float = _cachefile.DEFAULT_LOCK_TIMEOUT) -> None:
        """Create a discoverer for a ``DynamicClient``.

        Args:
            client: the ``kubernetes.dynamic.DynamicClient`` (its ``client`` ApiClient carries auth and TLS).
            cache_file: a file to keep a private snapshot in (mode 0600, atomic, never through a symlink); None
                (the default) writes nothing anywhere. Lookups never wait on it: it is read once here and written
                in the background, best effort (see ``cache_file_lock_timeout`` and :meth:`flush_cache_file`).
            ttl: seconds a discovered group stays fresh (None: forever, 0: revalidate every lookup).
            miss_refresh_interval: at most one revalidation per this many seconds is caused by lookups that miss.
            max_stale: seconds a group may be served after a transient refresh failure.
            clock: a monotonic clock in seconds (tests inject one).
            transport: how to reach the server; default an ``ApiClientTransport`` over ``client.client``.
            observe_requests: wrap ``client.request`` (on this instance only) so that a request answering 404
                for its resource *type* evicts that group: the next ``resources.get`` sees the new mapping
                (a CRD version removed, a CRD recreated) instead of the cached one.
            cache_file_lock_timeout: seconds a background write waits for the cache file's lock (held by another
                process sharing the file, or a lock file created by another user) before it is skipped and logged.

        Raises:
            InvalidArgumentError: the ApiClient's Configuration has no host.
            ValueError: a negative ttl, interval or max_stale.

        Unlike upstream (which reads ``/version`` and ``/apis`` here), construction sends no request.
        """
        self.client = client
        self._transport: Transport = transport if transport is not None else ApiClientTransport(client.client)
        self.mapper = LazyRESTMapper(DiscoveryClient(self._transport), ttl=ttl,
                                     miss_refresh_interval=miss_refresh_interval, max_stale=max_stale, clock=clock)
        self.cache = self.mapper.cache
        self._remembered = self.mapper._fresh_in
        self._indexed = self.mapper._groups  # its generation and reload flag: the memo's warm path reads them
        self._clock = self.cache.clock
        self._lock = threading.Lock()  # guards _groups, _seen, _version, _written_generation
        self._groups: dict[str, GroupResources] = {}
        self._seen: dict[str, GroupEntry] = {}
        self._get_memo = Memo(MEMO_LIMIT)
        self._search_memo = Memo(MEMO_LIMIT)
        self._get_hot = HotAnswers(MEMO_LIMIT)
        self._search_hot = HotAnswers(MEMO_LIMIT)
        self._reset_table()
        self._generic_list = generic_list(client, self._flavour)
        self._version: dict[str, Any] | None = None
        self._cache_file = cache_file
        self._server = str(getattr(self._transport, "identity", "")) or str(client.configuration.host)
        self._snapshot: dict[str, Any] | None = None
        self._written_generation = -1
        self._persister = (_cachefile.Persister(cache_file, self._server, cache_file_lock_timeout,
                                                on_skip=self._write_again) if cache_file is not None else None)
        if observe_requests and callable(getattr(client, "request", None)):
            observe_requests_of(client, self.mapper)
        if cache_file is not None:
            self._snapshot = _cachefile.read_snapshot(cache_file, self._server)
            if self._snapshot is not None and isinstance(self._snapshot.get("version"), dict):
                self._version = self._snapshot["version"]

    # --- upstream surface (version, api_groups, parse_api_groups, iteration: restmapper.dynamic._surface) ------

    def invalidate_cache(self) -> None:
        """Forget everything discovered (the next lookup refetches, conditionally where the server allows)."""
        self.mapper.invalidate_all()
        with self._lock:
            self._groups.clear()
            self._version = None
        self._get_memo = Memo(MEMO_LIMIT)
        self._search_memo = Memo(MEMO_LIMIT)
        self._get_hot = HotAnswers(MEMO_LIMIT)
        self._search_hot = HotAnswers(MEMO_LIMIT)
        self._reset_table()

    def search(self, **kwargs: Any) -> list[Resource]:
        """Return every Resource matching the keywords (upstream's ``search``, with the fixes in the class doc).

        Args:
            **kwargs: ``prefix`` (``api``/``apis``), ``group``, ``api_version`` (``v1``, ``apps/v1``; its group
                part is used only when ``group`` is not given, as upstream), ``kind`` (any case), and filters on
                Resource attributes (:data:`FILTER_KEYWORDS`; names compare
                case-insensitively, ``short_names``/``categories`` take one string or the whole list). A falsy
                value or ``"*"`` is a wildcard.

        Returns:
            Matching ``Resource`` and ``ResourceList`` objects, a new :class:`SearchResults` list. When a group
            version that could hold more matches could not be read, but the answer is not empty and none of
            them ranks above its first item, the list carries them in ``failed`` (``partial`` is True) and a
            :class:`~restmapper.errors.PartialDiscoveryWarning` is emitted (as ``resolve_all`` and kubectl).

        Raises:
            TypeError: an unknown keyword.
            GroupDiscoveryError: naming the question and the unreadable group versions, instead of an answer
                code written against upstream would misread: an empty list while a group version that could
                hold a match could not be read (upstream's callers read ``[]`` as "not installed"); the core
                group in scope and unreadable (another group never answers for it: ``api_version="v1"`` is
                core only, read or not); or an unreadable group version ranking above the first result
                (upstream's callers take ``results[0]``). Also when the root documents could not be read.
        """
        # The answers held while nothing changed (``restmapper.mapper._hot``), then the warm path of
        # ``LazyRESTMapper._fresh_in``, inlined (the slow path below checks again, fully). Each call gets a new
        # list (the caller may change it).
        groups = self._indexed
        generation = self.cache.generation
        hot = self._search_hot.stretch
        missing = False
        try:
            if len(kwargs) == 1:  # memo_key's key, built inline (as in get)
                (key,) = kwargs.items()
                if key[1].__class__ is list:
                    key = (key[0], LIST_TAG, *key[1])
            else:
                key = (*kwargs, *kwargs.values()) if LISTED.isdisjoint(kwargs) else memo_key(kwargs)
            if hot.epoch == Cell.epoch and hot.generation == generation and self._clock() < hot.until:
                held = hot.answers.get(key)
                if held is not None:
                    answer = _new_list(SearchResults)  # without PartialList.__init__: ``failed`` reads empty
                    answer.extend(held)
                    return answer
            if generation == groups.generation:
                found = self._search_memo.get(key)
                missing = found is None
            else:
                found = None
        except TypeError:  # an unhashable value: never memoized
            found = None
        if found is not None and found.checked == Cell.epoch:
            now = self._clock()
            if now < found.valid_until and not (found.anywhere and groups.reload_pending):
                # Held as a tuple: a hit copies it without reading a list object first.
                self._search_hot.promote("answers", key, tuple(found.value), found.checked, found.valid_until,
                                         self._clock, self.cache.generation, groups.generation)
                answer = _new_list(SearchResults)
                answer.extend(found.value)
                return answer
        if missing:  # nothing memoized (as recall would find): the ready answer (_direct), as a memo hit checks it
            found = self._search_table.get(key)
            if found is not None and (found.checked == Cell.epoch or found.current()) and (
                    self._clock() < found.valid_until and not (found.anywhere and groups.reload_pending)):
                self._search_memo.put(key, found)
                if self._persister is not None:
                    self._maybe_write()
                answer = _new_list(SearchResults)
                answer.extend(found.value)
                return answer
            return self._search(kwargs, key)
        return self._search(kwargs)

    def _search(self, kwargs: dict[str, Any], unmemoized: Any = None) -> list[Resource]:
        """``search``'s answer past its warm path; ``unmemoized``: the memo key, when the memo was just found to
        hold nothing for it (no need to ask it again)."""
        if unmemoized is None:
            key, memo = recall(self._remembered, self._search_memo, kwargs)
            if memo is not None:
                return SearchResults(memo.value)
        else:
            key = unmemoized
        if key is not None:  # straight from ready groups when a direct path settles it (_direct)
            direct = self._direct_search(kwargs, key)
            if direct is not None:
                answer = _new_list(SearchResults)  # as a memo hit makes it: complete, ``failed`` reads empty
                answer.extend(direct)
                return answer
        epoch = Cell.epoch  # before any cell is read (see _memo.remember)
        since = replay_mark()  # failures recorded before this point are replays (they say so)
        q = parse(kwargs)
        deps: Deps = []
        try:
            results, until, failures, entries, _ = self._lookup(q, deps)
            if failures:  # never memoized: each call re-checks, and warns
                return search_answer(results, Replays(self._clock, since).failures(failures), q.asked("search"),
                                     lambda r: self._check_rank(r, q, entries))
        except GroupDiscoveryError as exc:
            raise Replays(self._clock, since).error(with_question(exc, q.asked("search"))) from exc
        if key is not None:
            remember(self._search_memo, key, results, None, until, deps, epoch)
        return SearchResults(results)

    def get(self, **kwargs: Any) -> Resource:
        """Return the one Resource the keywords name (upstream's ``get``).

        When several match: an exact ``api_version`` match wins, then non-List kinds, then (all in one group) the
        most preferred version, then (one version) the resource whose plural or singular is the kind's.

        Args:
            **kwargs: as :meth:`search`.

        Returns:
            The ``Resource`` (or ``ResourceList`` for ``...List`` kinds). When group versions of other groups,
            which could hold another match, could not be read but all rank below the answer in discovery priority
            (client-go's: core first, then groups in server order, preferred version first), the answer is given
            with a :class:`~restmapper.errors.PartialDiscoveryWarning` whose ``failed`` names them, as
            ``LazyRESTMapper.resolve`` and kubectl answer (``get(kind="Deployment")`` while ``cert-manager.io/v1``
            is down: ``apps/v1``, warned). A failed version of the answer's own group ranked below it cannot change
            it (the preferred version wins): no warning.

        Raises:
            ResourceNotFoundError: nothing matches, also after a (rate-limited) revalidation, and every group
                version that could hold it was read (the server said so).
            ResourceNotUniqueError: several groups match.
            TypeError: an unknown keyword.
            GroupDiscoveryError: a group version that could hold the answer and ranks above the one found (the
                mapper's :func:`~restmapper.mapper.outranking`), or the core group in scope, could not be read; or
                nothing was found while one could not; or the root documents could not be read. Never a
                ``ResourceNotFoundError``: code that skips "not installed" kinds must not skip these.
        """
        # The answers held while nothing changed (``restmapper.mapper._hot``), then the warm path of
        # ``LazyRESTMapper._fresh_in``, inlined (the slow path below checks again, fully).
        groups = self._indexed
        generation = self.cache.generation
        hot = self._get_hot.stretch
        missing = False
        one: Any = _MANY  # the one short name of ``get(short_names=[name])``: held by the name alone
        pair: tuple[str, str] | None = None  # ``get(api_version=..., kind=...)``: held by the two strings
        try:
            live = hot.epoch == Cell.epoch and hot.generation == generation and self._clock() < hot.until
            # memo_key's key, built inline the cheapest way for the usual calls: one keyword (the (name, value)
            # pair the dictionary hands out, or a list tagged), else the names then the values.
            names = kwargs.get("short_names")
            if names.__class__ is list and len(kwargs) == 1:
                if len(names) == 1:
                    # The commonest form, held in its own table by the name itself: a hit builds and compares
                    # no key tuple (on a large working set, each object a hit touches costs a cache miss).
                    one = names[0]
                    if live and (held := hot.short.get(one)) is not None:
                        return held  # type: ignore[no-any-return]
                key = ("short_names", LIST_TAG, *names)
                if live and one is _MANY and (held := hot.answers.get(key)) is not None:
                    return held  # type: ignore[no-any-return]
            elif len(kwargs) == 2 and (kind := kwargs.get("kind")).__class__ is str and (
                    version := kwargs.get("api_version")).__class__ is str:
                # The commonest call of all (a manifest's apiVersion and kind), in either order: held by the pair
                # of strings in its own table (no key of four items to build, hash and compare).
                pair = (version, kind)
                if live and (held := hot.gvk.get(pair)) is not None:
                    return held  # type: ignore[no-any-return]
                key = (*kwargs, *kwargs.values())
            else:
                if len(kwargs) == 1:
                    (key,) = kwargs.items()
                    if key[1].__class__ is list:
                        key = (key[0], LIST_TAG, *key[1])
                else:
                    key = (*kwargs, *kwargs.values()) if LISTED.isdisjoint(kwargs) else memo_key(kwargs)
                if live and (held := hot.answers.get(key)) is not None:
                    return held  # type: ignore[no-any-return]
            if generation == groups.generation:
                found = self._get_memo.get(key)
                missing = found is None
            else:
                found = None
        except TypeError:  # an unhashable value: never memoized
            found = None
        if found is not None and found.error is None and found.checked == Cell.epoch:
            now = self._clock()
            if now < found.valid_until and not (found.anywhere and groups.reload_pending):
                table, held_key = ("short", one) if one is not _MANY else ("gvk", pair) if pair else ("answers", key)
                self._get_hot.promote(table, held_key, found.value, found.checked, found.valid_until,
                                      self._clock, self.cache.generation, groups.generation)
                return found.value  # type: ignore[no-any-return]
        if missing:  # nothing memoized (as recall would find): the ready answer (_direct), as a memo hit checks it
            found = self._get_table.get(key)
            if found is not None and (found.checked == Cell.epoch or found.current()) and (
                    self._clock() < found.valid_until and not (found.anywhere and groups.reload_pending)):
                self._get_memo.put(key, found)
                if self._persister is not None:
                    self._maybe_write()
                return found.value  # type: ignore[no-any-return]
            return self._get_answer(kwargs, key)
        return self._get_answer(kwargs)

    def _get_answer(self, kwargs: dict[str, Any], unmemoized: Any = None) -> Resource:
        """``get``'s answer past its warm path; ``unmemoized``: the memo key, when the memo was just found to hold
        nothing for it (no need to ask it again)."""
        if unmemoized is None:
            key, memo = recall(self._remembered, self._get_memo, kwargs)
            if memo is not None:
                if isinstance(memo.error, _Miss):
                    raise self._remembered_miss(memo.error, memo.valid_until)
                if memo.error is not None:
                    raise memo.error.with_traceback(None)
                return memo.value  # type: ignore[no-any-return]
        else:
            key = unmemoized
        if key is not None:  # straight from ready groups when a direct path settles it (_direct)
            direct = self._direct_get(kwargs, key)
            if direct is not None:
                return direct
        epoch = Cell.epoch  # before any cell is read (see _memo.remember)
        since = replay_mark()  # failures recorded before this point are replays (they say so)
        q = parse(kwargs)
        deps: Deps = []
        value: Any = None
        error: BaseException | None = None
        try:
            value, until, partial = self._get(q, deps, since)
            if partial:  # never memoized: each call re-checks, and warns
                return value  # type: ignore[no-any-return]
        except _Miss as miss:  # remembered until the server's confirmation is an interval old
            if key is not None:
                remember(self._get_memo, key, None, miss, miss.until, deps, epoch)
            if miss.confirmed_at is not None:  # the revalidation was rate-limited: say how old the answer is
                raise self._remembered_miss(miss, miss.until) from None
            raise miss.error.with_traceback(None) from None
        except (self._flavour.not_found, self._flavour.not_unique) as exc:
            error, until = exc, self._clock() + self.cache.miss_refresh_interval
        except GroupDiscoveryError as exc:
            if exc.asked:
                raise Replays(self._clock, since).error(exc) from exc.__cause__
            raise Replays(self._clock, since).error(with_question(exc, q.asked())) from exc
        if key is not None:
            remember(self._get_memo, key, value, error, until, deps, epoch)
        if error is not None:
            raise error.with_traceback(None)
        return value  # type: ignore[no-any-return]

    # --- the one lookup path -------------------------------------------------------------------------------------

    def _get(self, q: Query, deps: Deps, since: int) -> tuple[Resource, float, bool]:
        """The one match of ``q``, until when it holds, and whether it is partial: found while group versions in
        scope ranking below it could not be read (then a warning was emitted: :mod:`restmapper.dynamic._partial`).
        ``since``: the call's :func:`replay_mark`."""
        found, until, failures, entries, confirmed = self._lookup(q, deps)
        if not found and failures:
            # Not "not found": a group version that could hold it could not be read (DESIGN 5.10).
            raise GroupDiscoveryError(next(iter(failures)).group, failures, asked=q.asked())
        results = choose(found, q, self._flavour, self._version_rank)
        if len(results) == 1:
            result = results[0]
            if result is self._generic_list:
                return result, until, False
            # Another group's failure below the answer could serve a second match (partial); one of its own group
            # below it cannot change it (the preferred version wins), so only the rank counts there.
            group = result.group or ""
            others = {gv: err for gv, err in failures.items() if gv.group != group}
            if others:
                judge_partial([result], Replays(self._clock, since).failures(others), q.asked(),
                              lambda r: self._check_rank(r, q, entries), one=True)
            elif failures or any_unsure(entries):
                self._check_rank(result, q, entries)
            return result, until, bool(others)
        if not results:
            raise _Miss(self._flavour.not_found(f"No matches found for {dict(q.kwargs)}"), until, confirmed)
        raise self._flavour.not_unique(f"Multiple matches found for {q.kwargs}: {results}")

    def _remembered_miss(self, miss: _Miss, until: float) -> Exception:
        """The not-found error of ``miss`` answered without asking the server, saying how old it is as the mapper's
        remembered no-matches do (``... (as of 0.4 s ago; misses are cached for up to 1 s)``)."""
        interval = self.cache.miss_refresh_interval
        confirmed = miss.confirmed_at if miss.confirmed_at is not None else until - interval
        age = max(0.0, self._clock() - confirmed)
        error: Exception = self._flavour.not_found(f"{miss.error}{remembered_suffix(age, interval)}")
        return error

    def _check_rank(self, result: Resource, q: Query, read: list[tuple[GroupEntry, GroupResources]]) -> None:
        """Refuse ``result`` (a List as its resource) when an unreadable group version of the groups ``read`` (the
        groups that may serve it, and every group that failed) ranks above it."""
        if result is self._generic_list:
            return
        versions = (q.version,) if isinstance(q.version, str) else ()
        group = result.group or ""
        doubt = outranking([e for e, _ in read], GroupVersion(group, result.api_version), versions)
        if doubt:
            hint = ""
            if all(gv.group != group for gv in doubt):  # pinned to the group found, the question is unaffected
                found = str(GroupVersion(group, result.api_version))
                hint = (f"to ask one group, which these failures do not affect, pass api_version= or group= "
                        f"(e.g. api_version={found!r} or group={group!r}, where it was found)")
            raise GroupDiscoveryError(next(iter(doubt)).group, doubt, asked=q.asked(), hint=hint)

    def _version_rank(self, group: str) -> dict[str, int]:
        g = self._groups.get(group)
        return {} if g is None else {v.group_version.version: i for i, v in enumerate(g.versions)}

    def _lookup(self, q: Query, deps: Deps) -> _Found:
        """Every match of ``q``; the cells of what it read go to ``deps``."""
        if isinstance(q.version, str) and "/" in q.version:  # no server serves it: a mistake, not "not found"
            raise InvalidArgumentError(f"api_version must be 'version' or 'group/version', not "
                                       f"{q.kwargs.get('api_version')!r} (in {q.asked()})")
        ready = ready_found(self.mapper, q, deps, self._group, self._generic_list)
        if ready is not None:  # every group it may come from is ready: nothing to ask the cache
            if self._persister is not None:
                self._maybe_write()
            self._fill_table()  # the ready answers due (_direct), now that groups were read
            return ready[0], ready[1], {}, ready[2], None
        # As the mapper's rule: when an invalidation lands during the lookup, a group dropped meanwhile was not
        # read; groups chosen from the merged index (no group named) may lack it even for a match.
        names = self._names(q, deps)
        mark = len(deps)
        for _attempt in range(RACE_ATTEMPTS):
            epoch = self.cache.invalidations
            found = self._lookup_once(names, q, deps)
            if self.cache.invalidations == epoch or not (names is None or not found[0]):
                self._fill_table()
                return found
            del deps[mark:]
        raise raced(q.asked(), RACE_ATTEMPTS)

    def _lookup_once(self, names: Collection[str] | None, q: Query, deps: Deps) -> _Found:
        with self.cache.lookup():  # one lookup, as the mapper's: what it fetched is not fetched again by it
            return self._lookup_scoped(names, q, deps)

    def _lookup_scoped(self, names: Collection[str] | None, q: Query, deps: Deps) -> _Found:
        mark = len(deps)
        # A question naming its group and version needs only that version (legacy discovery then reads just it,
        # as upstream: a no-match in it is still the server's word, and other versions are not in its scope).
        versions = (q.version,) if q.group is not None and q.version is not None else None
        entries, until = self._view(self._narrow(q, deps) if names is None else names, deps, versions)
        results, failures = collect(entries, q, self._generic_list)
        # A failure propagates even when answering from the cache file: a miss there is not the server's word.
        if not results and self.cache.revalidate_on_miss(names):
            del deps[mark:]  # read again below
            entries, until = self._view(self._narrow(q, deps) if names is None else names, deps, versions)
            results, failures = collect(entries, q, self._generic_list)
        confirmed: float | None = None
        if not results:  # a no-match is kept until the server's confirmation of it is an interval old
            confirmed = self.cache.miss_confirmed_at(names)
            until = min(until, (self._clock() if confirmed is None else confirmed) + self.cache.miss_refresh_interval)
            doubt = self.cache.unconfirmed(names)
            if doubt is not None:
                failures.update(in_scope(doubt.failed, () if q.version is None else (q.version,)))
                if doubt.documents and not failures:
                    raise with_question(doubt, q.asked())
        if self._persister is not None:
            self._maybe_write()
        return results, until, failures, entries, confirmed

    def _narrow(self, q: Query, deps: Deps) -> set[str] | None:
        """The groups that may hold a match, from the mapper's merged index; None when no trait narrows."""
        if not q.trait:
            return None
        try:
            return self.mapper.groups_serving(**q.trait, deps=deps)
        except DiscoveryError:
            return None  # answered below from whatever can be read (or the cache file)

    def _names(self, q: Query, deps: Deps) -> set[str] | None:
        """The groups a question names (its group; core for ``prefix="api"`` or a core version), else None."""
        if q.group is not None:
            return {q.group}
        if q.prefix == "api":
            return {""}
        # "v1" (no group) is the core group when core lists it, read or not: it must not also match apps/v1,
        # batch/v1, ..., and no other group answers for an unreadable core.
        version = q.version
        if version is not None and q.prefix != "apis" and any(
                version in g.by_version or version in e.group.versions or any(gv.version == version for gv in e.failed)
                for e, g in self._view({""}, deps)[0]):
            return {""}
        return None

    def _view(self, names: Collection[str] | None, deps: Deps, versions: tuple[str, ...] | None = None
              ) -> tuple[list[tuple[GroupEntry, GroupResources]], float]:
        """The groups ``names`` (None: all) with their Resource objects, and until when they hold; their cells go to
        ``deps``. ``versions``: the only versions needed (None: all; legacy discovery leaves the others unread)."""
        if names is not None:
            ready = self.mapper.cached_groups(names, deps)
            if ready is not None:  # every group loaded and fresh: no need to ask the cache
                return [(e, self._group(e)) for e in ready[0]], ready[1]
        try:
            view = self.cache.groups(names, versions)
        except DiscoveryError:
            fallback = self._snapshot_entries(names)
            if fallback is None:
                raise
            log.warning("discovery failed; answering from the cache file %s", self._cache_file)
            return [(e, self._group(e)) for e in fallback], self._clock()
        depend_on_read(self.mapper, names, view.entries, deps)
        if names is not None:
            self.mapper._note_read(view.entries, view.valid_until)  # the next question finds them ready
        return [(e, self._group(e)) for e in view.entries], view.valid_until

    def _entries(self, names: Collection[str] | None) -> list[tuple[GroupEntry, GroupResources]]:
        return self._view(names, [])[0]

    def _group(self, entry: GroupEntry) -> GroupResources:
        cached = self._groups.get(entry.name)  # a dict read is atomic: no lock
        if cached is not None and cached.generation == entry.generation:
            return cached
        built = build_group(self.client, entry, self._flavour)
        with self._lock:
            self._groups[entry.name] = built
            self._seen[entry.name] = entry
        if not self._table_due:
            self._table_pending.add(entry.name)  # its ready answers are worked out after this lookup
        return built

    def flush_cache_file(self, timeout: float | None = 10.0) -> bool:
        """Wait until what was discovered so far has been written to the cache file (or skipped, and logged).

        Args:
            timeout: seconds to wait at most; None waits as long as the write takes (bounded by the lock wait).

        Returns:
            True when no write is pending (also without a cache file); False when ``timeout`` passed first.
        """
        return True if self._persister is None else self._persister.flush(timeout)
