"""``SelfHealingDiscoverer``: a drop-in discoverer for ``kubernetes.dynamic.DynamicClient`` (docs/design.md §8).

``DynamicClient(api_client, discoverer=SelfHealingDiscoverer)`` keeps ``resources.get/search``, ``api_groups``,
``version``, ``invalidate_cache()`` and iteration with upstream's keywords and return types, but reads discovery
through our :class:`~restmapper.mapper.LazyRESTMapper` cache (TTL, 404 eviction, rate-limited miss revalidation,
failure isolation, thread safety) over the DynamicClient's own ``ApiClient``.

One path answers a call (controller-runtime's miss -> reload -> retry): take the groups in its scope as the mapper
holds them (:meth:`LazyRESTMapper.cached_groups <restmapper.mapper.LazyRESTMapper.cached_groups>`: no I/O), else
read them through the cache (``read_groups``) and match again; match the call against their Resource objects
(:mod:`restmapper.dynamic._query`, over the per-group tables of :mod:`restmapper.dynamic._index`, rebuilt only
when a group's cache entry changes), and apply the mapper's certainty rules (:func:`~restmapper.mapper.outranking`)
when a group read is failing or outdated. Answers are memoized by the call's keywords (the *memo*: one dictionary
per cache generation, so any change to what is cached starts a new one) until the groups they read expire; a warm
call is one dictionary read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper._public import own_methods
from restmapper.cache import GroupEntry, Replays, replay_mark
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import _cachefile
from restmapper.dynamic._index import KUBERNETES_DYNAMIC, Flavour, GroupResources, build_group, generic_list
from restmapper.dynamic._notfound import observe_requests_of
from restmapper.dynamic._partial import SearchResults, judge_partial, search_answer
from restmapper.dynamic._query import FILTER_KEYWORDS, Query, choose, collect, parse
from restmapper.dynamic._surface import UpstreamSurface
from restmapper.errors import DiscoveryError, GroupDiscoveryError, InvalidArgumentError, remembered_suffix
from restmapper.mapper import RACE_ATTEMPTS, LazyRESTMapper, in_scope, outranking, raced, with_question
from restmapper.model import GroupVersion
from restmapper.transport import ApiClientTransport
from restmapper.transport.base import Transport

__all__ = ["FILTER_KEYWORDS", "SelfHealingDiscoverer"]

log = logging.getLogger("restmapper.dynamic")

_new_list = list.__new__

_Read = list[tuple[GroupEntry, GroupResources]]
"""Groups read, each with its Resource objects."""

_Found = tuple[list[Resource], float, dict[GroupVersion, BaseException], _Read, float | None]
"""What a lookup found: the matches, until when (clock seconds), the unreadable group versions in scope, the
groups read, and, for no match, when the server confirmed that (clock seconds; None when this lookup did)."""

MEMO_LIMIT = 1 << 14
"""Answers a memo holds; past it, it starts again empty (each answer is computed again once)."""

_LIST = object()
"""Tags a list value in a memo key (a tuple value with the same items is another question)."""


def _key_of_one(kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The memo key of one keyword: its name and value, a list value tagged (as :func:`_listed_key`)."""
    ((name, value),) = kwargs.items()
    return (name, _LIST, *value) if value.__class__ is list else (name, value)


def _listed_key(kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
    """The memo key of keywords holding a list value: the names, then the values, a list as a tagged tuple (a
    tuple value with the same items is another question); None for an unhashable value (answered without the
    memo)."""
    key = (*kwargs, *[(_LIST, *v) if v.__class__ is list else v for v in kwargs.values()])
    try:
        hash(key)
    except TypeError:
        return None
    return key


class _Memo:
    """The answers of one cache generation: ``get`` and ``search`` keys -> ``(value, error, until)``, where
    ``until`` is the clock reading (seconds) up to which the answer holds."""

    __slots__ = ("generation", "gets", "searches")

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.gets: dict[Any, tuple[Any, BaseException | None, float]] = {}
        self.searches: dict[Any, tuple[tuple[Resource, ...], None, float]] = {}


def _keep(table: dict[Any, Any], key: Any, answer: Any) -> None:
    """Memoize ``answer`` under ``key`` (not when it is None or holds an unhashable value), emptying a full
    table first."""
    if key is None:
        return
    if len(table) >= MEMO_LIMIT:
        table.clear()
    try:  # noqa: SIM105 (contextlib.suppress costs ~0.3 µs more, paid by every first-time question)
        table[key] = answer
    except TypeError:  # an unhashable value: never memoized
        pass


def _unsure(read: _Read) -> bool:
    """Whether a group read has failed versions or is outdated (its lack of a match proves nothing)."""
    for entry, _ in read:  # noqa: SIM110 (a loop: any() over a generator costs a frame per item)
        if entry.failed or entry.outdated:
            return True
    return False


class _Miss(Exception):
    """A not-found answer of :meth:`SelfHealingDiscoverer.get`, with the clock reading until it may be reused and
    the one at which the server confirmed it (None: the lookup that raised it did)."""
    def __init__(self, error: Exception, until: float, confirmed_at: float | None) -> None:
        super().__init__(error)
        self.error, self.until, self.confirmed_at = error, until, confirmed_at


@own_methods
class SelfHealingDiscoverer(UpstreamSurface):
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
        self._clock = self.cache.clock
        self._lock = threading.Lock()  # guards _groups, _seen, _version
        self._groups: dict[str, GroupResources] = {}
        self._seen: dict[str, GroupEntry] = {}
        self._memo = _Memo(-1)
        self._generic_list = generic_list(client, self._flavour)
        server = str(getattr(self._transport, "identity", "")) or str(client.configuration.host)
        self._file = (None if cache_file is None
                      else _cachefile.CacheFile(cache_file, server, cache_file_lock_timeout))
        self._version: dict[str, Any] | None = None if self._file is None else self._file.version
        if observe_requests and callable(getattr(client, "request", None)):
            observe_requests_of(client, self.mapper)

    # --- upstream surface (version, api_groups, parse_api_groups, iteration: restmapper.dynamic._surface) ------

    def invalidate_cache(self) -> None:
        """Forget everything discovered (the next lookup refetches, conditionally where the server allows)."""
        self.mapper.invalidate_all()
        with self._lock:
            self._groups.clear()
            self._version = None
        self._memo = _Memo(-1)

    def _current_memo(self) -> _Memo:
        """The memo of the cache generation now (a new one when it moved). Read before an answer reads any group:
        an answer computed while the cache changed goes to a memo no later call uses."""
        memo, generation = self._memo, self.cache.generation
        if memo.generation != generation:
            memo = self._memo = _Memo(generation)
        return memo

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
        memo = self._memo
        try:
            key: Any = _key_of_one(kwargs) if len(kwargs) == 1 else (*kwargs, *kwargs.values())
            held = memo.searches.get(key) if memo.generation == self.cache.generation else None
        except TypeError:  # a list value (or an unhashable one: never memoized)
            key = _listed_key(kwargs)
            held = memo.searches.get(key) if key is not None and memo.generation == self.cache.generation else None
        if held is not None and self._clock() < held[2]:
            answer = _new_list(SearchResults)  # without PartialList.__init__: ``failed`` reads empty
            answer.extend(held[0])  # each call gets a new list (the caller may change it)
            return answer
        memo = self._current_memo()
        since = replay_mark()  # failures recorded before this point are replays (they say so)
        q = parse(kwargs)
        try:
            results, until, failures, read, _ = self._lookup(q)
            if failures:  # never memoized: each call re-checks, and warns
                return search_answer(results, Replays(self._clock, since).failures(failures), q.asked("search"),
                                     lambda r: self._check_rank(r, q, read))
        except GroupDiscoveryError as exc:
            raise Replays(self._clock, since).error(with_question(exc, q.asked("search"))) from exc
        _keep(memo.searches, key, (tuple(results), None, until))
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
        memo = self._memo
        try:
            key: Any = _key_of_one(kwargs) if len(kwargs) == 1 else (*kwargs, *kwargs.values())
            held = memo.gets.get(key) if memo.generation == self.cache.generation else None
        except TypeError:  # a list value (or an unhashable one: never memoized)
            key = _listed_key(kwargs)
            held = memo.gets.get(key) if key is not None and memo.generation == self.cache.generation else None
        if held is not None and self._clock() < held[2]:
            if held[1] is None:
                return held[0]  # type: ignore[no-any-return]
            error = held[1]
            raise (self._remembered_miss(error, held[2]) if isinstance(error, _Miss) else error.with_traceback(None))
        return self._get_answer(kwargs, key)

    def _get_answer(self, kwargs: dict[str, Any], key: Any) -> Resource:
        """``get``'s answer computed (and memoized under ``key`` unless partial)."""
        memo = self._current_memo()
        since = replay_mark()  # failures recorded before this point are replays (they say so)
        q = parse(kwargs)
        try:
            value, until, partial = self._get(q, since)
        except _Miss as miss:  # remembered until the server's confirmation is an interval old
            _keep(memo.gets, key, (None, miss, miss.until))
            if miss.confirmed_at is not None:  # the revalidation was rate-limited: say how old the answer is
                raise self._remembered_miss(miss, miss.until) from None
            raise miss.error.with_traceback(None) from None
        except (self._flavour.not_found, self._flavour.not_unique) as exc:
            _keep(memo.gets, key, (None, exc, self._clock() + self.cache.miss_refresh_interval))
            raise exc.with_traceback(None) from None
        except GroupDiscoveryError as exc:
            asked = exc if exc.asked else with_question(exc, q.asked())
            raise Replays(self._clock, since).error(asked) from (exc.__cause__ if exc.asked else exc)
        if not partial:  # a partial answer is never memoized: each call re-checks, and warns
            _keep(memo.gets, key, (value, None, until))
        return value

    # --- the one lookup path -------------------------------------------------------------------------------------

    def _get(self, q: Query, since: int) -> tuple[Resource, float, bool]:
        """The one match of ``q``, until when it holds, and whether it is partial (:meth:`_partial`).
        ``since``: the call's :func:`~restmapper.cache.replay_mark`."""
        found, until, failures, read, confirmed = self._lookup(q)
        if not found and failures:
            # Not "not found": a group version that could hold it could not be read (DESIGN 5.10).
            raise GroupDiscoveryError(next(iter(failures)).group, failures, asked=q.asked())
        results = choose(found, q, self._flavour, self._version_rank) if len(found) > 1 else found
        if not results:
            raise _Miss(self._flavour.not_found(f"No matches found for {dict(q.kwargs)}"), until, confirmed)
        if len(results) > 1:
            raise self._flavour.not_unique(f"Multiple matches found for {q.kwargs}: {results}")
        result = results[0]
        partial = (failures or _unsure(read)) and self._partial(result, q, read, failures, since)
        return result, until, bool(partial)

    def _partial(self, result: Resource, q: Query, read: _Read, failures: dict[GroupVersion, BaseException],
                 since: int) -> bool:
        """Whether ``result``, found while group versions in scope could not be read (``failures``) or were
        outdated, is partial: another group's failure below it could serve a second match (then a warning is
        emitted: :mod:`restmapper.dynamic._partial`). One of its own group below it cannot change it (the
        preferred version wins), so only the rank counts there.

        Raises:
            GroupDiscoveryError: an unreadable group version ranks above ``result`` (:meth:`_check_rank`).
        """
        if result is self._generic_list:
            return False
        group = result.group or ""
        others = {gv: err for gv, err in failures.items() if gv.group != group}
        if not others:
            self._check_rank(result, q, read)
            return False
        judge_partial([result], Replays(self._clock, since).failures(others), q.asked(),
                      lambda r: self._check_rank(r, q, read), one=True)
        return True

    def _remembered_miss(self, miss: _Miss, until: float) -> Exception:
        """The not-found error of ``miss`` answered without asking the server, saying how old it is as the mapper's
        remembered no-matches do (``... (as of 0.4 s ago; misses are cached for up to 1 s)``)."""
        interval = self.cache.miss_refresh_interval
        confirmed = miss.confirmed_at if miss.confirmed_at is not None else until - interval
        age = max(0.0, self._clock() - confirmed)
        error: Exception = self._flavour.not_found(f"{miss.error}{remembered_suffix(age, interval)}")
        return error

    def _check_rank(self, result: Resource, q: Query, read: _Read) -> None:
        """Refuse ``result`` (a List as its resource) when an unreadable group version of the groups ``read`` (the
        groups that may serve it, and every group that failed) ranks above it."""
        if result is self._generic_list:
            return
        versions = (q.version,) if q.version is not None else ()
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

    def _lookup(self, q: Query) -> _Found:
        """Every match of ``q``, as controller-runtime's lazy mapper finds one: from the groups in scope as the
        mapper holds them (:meth:`~restmapper.mapper.LazyRESTMapper.cached_groups`: loaded, healthy, fresh; no
        I/O), else read through the cache (loading what is missing, single-flight) and matched again; read again
        when an invalidation lands meanwhile (a group dropped meanwhile was not read; groups chosen from the
        merged index, no group named, may lack it even for a match)."""
        if q.version is not None and "/" in q.version:  # no server serves it: a mistake, not "not found"
            raise InvalidArgumentError(f"api_version must be 'version' or 'group/version', not "
                                       f"{q.kwargs.get('api_version')!r} (in {q.asked()})")
        names = self._names(q)
        held = self._held(names, q) if self.cache.ttl != 0 else None  # (ttl 0: every read in a lookup scope)
        if held is not None:
            return held
        for _attempt in range(RACE_ATTEMPTS):
            epoch = self.cache.invalidations
            with self.cache.lookup():  # one lookup, as the mapper's: what it fetched is not fetched again by it
                found = self._read(names, q)
            if self.cache.invalidations == epoch or (names is not None and found[0]):
                if self._file is not None:
                    self._write_file()
                return found
        raise raced(q.asked(), RACE_ATTEMPTS)

    def _held(self, names: set[str] | None, q: Query) -> _Found | None:
        """:meth:`_lookup` from the groups in scope as the mapper holds them, when they are all held and match."""
        scope = self._narrow(q) if names is None else names
        held = self.mapper.cached_groups(scope) if scope is not None else None
        if held is None:
            return None
        read = [(e, self._group(e)) for e in held[0]]
        results, failures = collect(read, q, self._generic_list)
        if not results:
            return None
        if self._file is not None:
            self._write_file()
        return results, held[1], failures, read, None

    def _read(self, names: set[str] | None, q: Query) -> _Found:
        """:meth:`_lookup` through the cache, in one lookup scope; a no-match is confirmed (:meth:`_no_match`)."""
        # A question naming its group and version needs only that version (legacy discovery then reads just it,
        # as upstream: a no-match in it is still the server's word, and other versions are not in its scope).
        versions = (q.version,) if q.group is not None and q.version is not None else None
        read, until = self._view(self._narrow(q) if names is None else names, versions)
        results, failures = collect(read, q, self._generic_list)
        if results:
            return results, until, failures, read, None
        # A failure propagates even when answering from the cache file: a miss there is not the server's word.
        if self.cache.revalidate_on_miss(names):
            read, until = self._view(self._narrow(q) if names is None else names, versions)
            results, failures = collect(read, q, self._generic_list)
            if results:
                return results, until, failures, read, None
        return self._no_match(names, q, read, until, failures)

    def _no_match(self, names: set[str] | None, q: Query, read: _Read, until: float,
                  failures: dict[GroupVersion, BaseException]) -> _Found:
        """:meth:`_read`'s no-match, kept until the server's confirmation of it is an interval old; the group
        versions the cache could not confirm it for are added to ``failures``.

        Raises:
            GroupDiscoveryError: a root document could not be read and nothing else is in doubt.
        """
        confirmed = self.cache.miss_confirmed_at(names)
        until = min(until, (self._clock() if confirmed is None else confirmed) + self.cache.miss_refresh_interval)
        doubt = self.cache.unconfirmed(names)
        if doubt is not None:
            failures.update(in_scope(doubt.failed, () if q.version is None else (q.version,)))
            if doubt.documents and not failures:
                raise with_question(doubt, q.asked())
        return [], until, failures, read, confirmed

    def _narrow(self, q: Query) -> set[str] | None:
        """The groups that may hold a match, from the mapper's merged index; None when no trait narrows."""
        if not q.trait:
            return None
        trait: dict[str, Any] = q.trait  # one of the keywords kind, name, short_name, category
        try:
            return self.mapper.groups_serving(**trait)
        except DiscoveryError:
            return None  # answered below from whatever can be read (or the cache file)

    def _names(self, q: Query) -> set[str] | None:
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
                for e, g in self._view({""})[0]):
            return {""}
        return None

    def _view(self, names: Collection[str] | None, versions: tuple[str, ...] | None = None) -> tuple[_Read, float]:
        """The groups ``names`` (None: all) with their Resource objects, and until when they hold, read through the
        mapper (:meth:`~restmapper.mapper.LazyRESTMapper.read_groups`); the cache file's when discovery fails.
        ``versions``: the only versions needed (None: all; legacy discovery leaves the others unread)."""
        try:
            entries, until = self.mapper.read_groups(names, versions)
        except DiscoveryError:
            fallback = None if self._file is None else self._file.entries(names)
            if fallback is None:
                raise
            log.warning("discovery failed; answering from the cache file %s", self._file.path)
            entries, until = fallback, self._clock()
        return [(e, self._group(e)) for e in entries], until

    def _entries(self, names: Collection[str] | None) -> _Read:
        return self._view(names)[0]

    def _group(self, entry: GroupEntry) -> GroupResources:
        cached = self._groups.get(entry.name)  # a dict read is atomic: no lock
        if cached is not None and cached.generation == entry.generation:
            return cached
        built = build_group(self.client, entry, self._flavour)
        with self._lock:
            self._groups[entry.name] = built
            self._seen[entry.name] = entry
        return built

    def flush_cache_file(self, timeout: float | None = 10.0) -> bool:
        """Wait until what was discovered so far has been written to the cache file (or skipped, and logged).

        Args:
            timeout: seconds to wait at most; None waits as long as the write takes (bounded by the lock wait).

        Returns:
            True when no write is pending (also without a cache file); False when ``timeout`` passed first.
        """
        return True if self._file is None else self._file.flush(timeout)

    def _write_file(self) -> None:
        """Hand what was discovered over to the cache file, when the cache changed since it last was."""
        file = self._file
        if file is not None:
            with self._lock:
                file.write(self.cache.generation, self._version, self._seen.values())
