"""``SelfHealingDiscoverer``: a drop-in discoverer for ``kubernetes.dynamic.DynamicClient`` (docs/design.md §8).

``DynamicClient(api_client, discoverer=SelfHealingDiscoverer)`` keeps ``resources.get/search``, ``api_groups``,
``version``, ``invalidate_cache()`` and iteration with upstream's keywords and return types, but reads discovery
through our :class:`~restmapper.mapper.LazyRESTMapper` cache (TTL, 404 eviction, rate-limited miss revalidation,
failure isolation, thread safety) over the DynamicClient's own ``ApiClient``. Answers are memoized per cache
generation, so warm lookups are one dict hit.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, KeysView
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper import wire
from restmapper._redact import scrubbing
from restmapper.cache import GroupEntry
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import _cachefile
from restmapper.dynamic._certainty import check_get
from restmapper.dynamic._index import (
    KUBERNETES_DYNAMIC,
    Flavour,
    GroupResources,
    VersionResources,
    build_group,
    generic_list,
)
from restmapper.dynamic._notfound import group_version_of_path, is_resource_type_not_found
from restmapper.dynamic._partial import SearchResults, search_answer
from restmapper.errors import DiscoveryError, GroupDiscoveryError
from restmapper.mapper import LazyRESTMapper, unsafe_guess_kind_to_resource
from restmapper.mapper._certainty import RACE_ATTEMPTS, in_scope, outranking, raced, with_question
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion
from restmapper.transport import ApiClientTransport, scrub_with, status_error
from restmapper.transport.base import Transport

__all__ = ["FILTER_KEYWORDS", "SelfHealingDiscoverer"]

log = logging.getLogger("restmapper.dynamic")

FILTER_KEYWORDS = frozenset({"name", "singular_name", "short_names", "categories", "namespaced", "verbs",
                             "preferred", "group_version"})
"""Resource attributes ``search``/``get`` accept as keyword filters, besides prefix, group, api_version, kind."""

_CASELESS = frozenset({"name", "singular_name"})
_LISTS = frozenset({"short_names", "categories", "verbs"})
_MEMO_LIMIT = 4096
_MISSING = object()
_LIST = object()  # tags a list value in a memo key (a tuple value with the same items is another question)


def _wild(value: Any) -> Any:
    # Upstream turns every falsy value and "*" into its wildcard.
    return None if not value or value == "*" else value


def _matches(obj: Resource, filters: tuple[tuple[str, Any], ...]) -> bool:
    for term, wanted in filters:
        actual = getattr(obj, term, _MISSING)
        if term in _CASELESS and isinstance(actual, str) and isinstance(wanted, str):
            if actual.lower() != wanted.lower():
                return False
        elif term in _LISTS and isinstance(wanted, str):
            # A single string matches membership (``short_names="deploy"``); a list compares whole, as upstream.
            if not isinstance(actual, list) or wanted.lower() not in (a.lower() for a in actual):
                return False
        elif term in _LISTS and isinstance(wanted, (list, tuple)):
            if not isinstance(actual, list) or [a.lower() for a in actual] != [str(w).lower() for w in wanted]:
                return False
        elif actual != wanted:
            return False
    return True


def _memo_key(kwargs: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable key of the keywords: lists become tagged tuples (``short_names=["deploy"]`` is memoized too)."""
    return tuple((k, (_LIST, *v) if type(v) is list else v) for k, v in kwargs.items())


def _memo_get(memo: dict[Any, Any], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """``(key, memoized value or None)`` for the keywords; the key is None for an unhashable filter value (no memo).

    Keywords without a list are their own key (no per-call rebuilding); lists are tagged by :func:`_memo_key`.
    """
    key: Any
    for value in kwargs.values():
        if type(value) is list:
            key = _memo_key(kwargs)
            break
    else:
        key = tuple(kwargs.items())
    try:
        return key, memo.get(key)
    except TypeError:  # an unhashable filter value: no memo
        return None, None


def _by_plural(results: list[Resource], kind: str, flavour: Flavour) -> list[Resource]:
    """Of resources sharing a kind, the one whose names are the kind's (``templates`` over ``processedtemplates``)."""
    if all(isinstance(r, flavour.resource_list) for r in results) and kind.lower().endswith("list"):
        # Pre-resolved when built (``base_resource()`` is a coroutine in the asyncio libraries).
        bases = [r.__dict__["_ResourceList__base_resource"] for r in results]
        chosen = _by_plural(bases, kind[:-4], flavour)
        return [r for r, b in zip(results, bases, strict=True) if b in chosen]
    plural, singular = unsafe_guess_kind_to_resource(kind)
    wanted = kind.lower()
    exact = [r for r in results if (r.__dict__.get("singular_name") or "").lower() == wanted]
    if len(exact) == 1:
        return exact
    guessed = [r for r in results if (r.__dict__.get("name") or "").lower() in (plural, singular)]
    return guessed if len(guessed) == 1 else results


def _asked(kwargs: dict[str, Any], method: str = "get") -> str:
    """The question of a ``resources.get(...)`` call, e.g. ``the resource type of resources.get(kind='Node')``."""
    return f"the resource type of resources.{method}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"


def _api_resource_doc(r: APIResource) -> dict[str, Any]:
    return {"name": r.name, "singularName": r.singular_name, "namespaced": r.namespaced, "kind": r.kind,
            "verbs": list(r.verbs), "shortNames": list(r.short_names), "categories": list(r.categories),
            "group": r.group, "version": r.version, "storageVersionHash": r.storage_version_hash}


def _api_resource(d: dict[str, Any]) -> APIResource:
    return APIResource(str(d["name"]), str(d.get("singularName") or ""), bool(d["namespaced"]), str(d["kind"]),
                       tuple(map(str, d.get("verbs") or ())), tuple(map(str, d.get("shortNames") or ())),
                       tuple(map(str, d.get("categories") or ())), d.get("group"), d.get("version"),
                       d.get("storageVersionHash"))


class _Miss(Exception):
    """A not-found answer of :meth:`SelfHealingDiscoverer.get`, with the clock reading until it may be reused."""
    def __init__(self, error: Exception, until: float) -> None:
        super().__init__(error)
        self.error, self.until = error, until


class SelfHealingDiscoverer:
    """A ``kubernetes.dynamic`` discoverer backed by the self-healing lazy REST mapper.

    Construct it the way ``DynamicClient`` does (``discoverer(dynamic_client, cache_file)``). Differences from
    upstream ``LazyDiscoverer``, each fixing a reported bug: no cache file unless ``cache_file`` is given (then
    private and atomic); TTL, 404 eviction and rate-limited miss revalidation instead of a full wipe per miss;
    thread-safe; a group-less ``api_version`` names the core group when the core group serves it (``v1`` never
    matches ``apps/v1``); a kind served by several versions of one group resolves to the preferred version; kinds
    and names match case-insensitively; a failing group version fails only lookups that need it (a ``get`` not
    pinned to one group needs every group: another could make the answer not unique); two resources
    of one version sharing a kind resolve to the one named after the kind; several keyword filters must all
    match (upstream returned the first resource matching any one); unknown keywords raise ``TypeError``.

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
        self._lock = threading.Lock()  # guards _groups, _seen, _version, _written_generation
        self._groups: dict[str, GroupResources] = {}
        self._seen: dict[str, GroupEntry] = {}
        self._get_memo: dict[Any, tuple[int, float, Any, BaseException | None]] = {}
        self._search_memo: dict[Any, tuple[int, float, list[Resource]]] = {}
        self._generic_list = generic_list(client, self._flavour)
        self._version: dict[str, Any] | None = None
        self._cache_file = cache_file
        self._server = str(getattr(self._transport, "identity", "")) or str(client.configuration.host)
        self._snapshot: dict[str, Any] | None = None
        self._written_generation = -1
        self._persister = (_cachefile.Persister(cache_file, self._server, cache_file_lock_timeout,
                                                on_skip=self._write_again) if cache_file is not None else None)
        if observe_requests and callable(getattr(client, "request", None)):
            self._observe(client)
        if cache_file is not None:
            self._snapshot = _cachefile.read_snapshot(cache_file, self._server)
            if self._snapshot is not None and isinstance(self._snapshot.get("version"), dict):
                self._version = self._snapshot["version"]

    def _observe(self, client: Any) -> None:
        original = client.request
        mapper = self.mapper

        def request(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(method, path, *args, **kwargs)
            except Exception as exc:
                if is_resource_type_not_found(exc, path):
                    gv = group_version_of_path(path)
                    if gv is not None:
                        log.info("%s %s: resource type not found; evicting group %r", method.upper(), path, gv.group)
                        mapper.cache.report_not_found_limited(gv)
                raise

        client.request = request

    # --- upstream surface ------------------------------------------------------------------------------------

    @property
    def version(self) -> dict[str, Any]:
        """The server version as upstream returns it: ``{"kubernetes": <the /version document>}``.

        Raises:
            APIStatusError: ``/version`` answered an error status.
            MalformedDiscoveryError: the answer is not a JSON object.
            TransportError: no answer.
        """
        with self._lock:
            if self._version is not None:
                return {"kubernetes": dict(self._version)}
        resp = self._transport.get("/version", {"Accept": "application/json"})
        if resp.status != 200:
            raise status_error(self._transport, "/version", resp.status, resp.body, resp.headers)
        # The wire decoder bounds nesting and rejects NaN/Infinity; a raw json.loads would not.
        with scrubbing(lambda text: scrub_with(self._transport, text)):
            doc = wire.decode_json(resp.body, document="/version")
        with self._lock:
            self._version = doc
            self._written_generation = -1  # the snapshot lacks the version: write it
        self._maybe_write()
        return {"kubernetes": dict(doc)}

    @property
    def api_groups(self) -> KeysView[str]:
        """The names of the groups under ``/apis``, ``""`` first, as upstream's ``api_groups`` keys.

        Raises:
            DiscoveryError: ``/api`` or ``/apis`` could not be read.
        """
        return dict.fromkeys(["", *(n for n in self.cache.group_names() if n)]).keys()

    def invalidate_cache(self) -> None:
        """Forget everything discovered (the next lookup refetches, conditionally where the server allows)."""
        self.mapper.invalidate_all()
        with self._lock:
            self._groups.clear()
            self._version = None
        self._get_memo.clear()
        self._search_memo.clear()

    def parse_api_groups(self, request_resources: bool = False, update: bool = False) -> dict[str, Any]:
        """Return upstream's nested ``{prefix: {group: {version: ResourceGroup}}}`` view of every group.

        Args:
            request_resources: ignored: resources are always included (they come with the group listing on
                aggregated servers; legacy servers are read one request per group version).
            update: revalidate the listing first (the cache's TTL already bounds staleness).

        Raises:
            DiscoveryError: the root documents could not be read.
        """
        del request_resources
        if update:
            self.mapper.invalidate_all()
        group_class = self._flavour.resource_group
        generic = group_class(True, resources={"List": [self._generic_list]})
        out: dict[str, Any] = {"api": {}, "apis": {"": {"v1": generic}}}
        for entry, group in self._entries(None):
            prefix = "api" if not entry.name else "apis"
            out[prefix][entry.name] = {
                v.group_version.version: group_class(v.preferred, resources=dict(v.by_kind))
                for v in group.versions}
        return out

    def __iter__(self) -> Iterator[list[Resource]]:
        """Yield, per group version (core first), one list per kind (upstream's iteration shape).

        Raises:
            DiscoveryError: the root documents could not be read.
        """
        for entry, group in self._entries(None):
            for version in group.versions:
                yield from (list(objs) for objs in version.by_kind.values())
            if not entry.name:
                yield [self._generic_list]

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
        key, memo = _memo_get(self._search_memo, kwargs)
        if memo is not None and memo[0] == self.cache.generation and self._clock() < memo[1]:
            return SearchResults(memo[2])
        generation = self.cache.generation
        try:
            results, until, failures = self._lookup(kwargs)
            if failures:  # never memoized: each call re-checks, and warns
                return search_answer(results, failures, _asked(kwargs, "search"),
                                     lambda r: self._check_rank(r, kwargs))
        except GroupDiscoveryError as exc:
            raise with_question(exc, _asked(kwargs, "search")) from exc
        if key is not None:
            self._remember(self._search_memo, key, (generation, until, results))
        return SearchResults(results)

    def get(self, **kwargs: Any) -> Resource:
        """Return the one Resource the keywords name (upstream's ``get``).

        When several match: an exact ``api_version`` match wins, then non-List kinds, then (all in one group) the
        most preferred version, then (one version) the resource whose plural or singular is the kind's.

        Args:
            **kwargs: as :meth:`search`.

        Returns:
            The ``Resource`` (or ``ResourceList`` for ``...List`` kinds).

        Raises:
            ResourceNotFoundError: nothing matches, also after a (rate-limited) revalidation, and every group
                version that could hold it was read (the server said so).
            ResourceNotUniqueError: several groups match.
            TypeError: an unknown keyword.
            GroupDiscoveryError: a group version that could hold the answer, of another group than the one found
                (it could make the answer not unique, as upstream), or of its group ranking above it, could not
                be read; or the root documents could not be read. Never a ``ResourceNotFoundError``: code that
                skips "not installed" kinds must not skip these.
        """
        key, memo = _memo_get(self._get_memo, kwargs)
        if memo is not None and memo[0] == self.cache.generation and self._clock() < memo[1]:
            if memo[3] is not None:
                raise memo[3].with_traceback(None)
            return memo[2]  # type: ignore[no-any-return]
        generation = self.cache.generation
        value: Any = None
        error: BaseException | None = None
        try:
            value, until = self._get(kwargs)
        except _Miss as miss:  # remembered until the server's confirmation is an interval old
            error, until = miss.error, miss.until
        except (self._flavour.not_found, self._flavour.not_unique) as exc:
            error, until = exc, self._clock() + self.cache.miss_refresh_interval
        except GroupDiscoveryError as exc:
            if exc.asked:
                raise
            raise with_question(exc, _asked(kwargs)) from exc
        if key is not None:
            self._remember(self._get_memo, key, (generation, until, value, error))
        if error is not None:
            raise error.with_traceback(None)
        return value  # type: ignore[no-any-return]

    # --- the one lookup path -------------------------------------------------------------------------------------

    @staticmethod
    def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[key] = value

    def _get(self, kwargs: dict[str, Any]) -> tuple[Resource, float]:
        results, until, failures = self._lookup(kwargs)
        if not results and failures:
            # Not "not found": a group version that could hold it could not be read (DESIGN 5.10).
            raise GroupDiscoveryError(next(iter(failures)).group, failures, asked=_asked(kwargs))
        api_version = kwargs.get("api_version")
        if len(results) > 1 and api_version:
            exact = [r for r in results if r.group_version == api_version]
            results = exact or results
        listing = self._flavour.resource_list
        if len(results) > 1 and not all(isinstance(r, listing) for r in results):
            results = [r for r in results if not isinstance(r, listing)]
        if len(results) > 1 and len({r.group for r in results}) == 1:
            rank = self._version_rank(results[0].group)
            best = min(rank.get(r.api_version, len(rank)) for r in results)
            results = [r for r in results if rank.get(r.api_version, len(rank)) == best]
        kind = _wild(kwargs.get("kind"))
        if len(results) > 1 and isinstance(kind, str) and len({r.group_version for r in results}) == 1:
            results = _by_plural(results, kind, self._flavour)
        if len(results) == 1:
            if results[0] is not self._generic_list:
                check_get(results[0], failures, _asked(kwargs), lambda r: self._check_rank(r, kwargs))
            return results[0], until
        if not results:
            raise _Miss(self._flavour.not_found(f"No matches found for {dict(kwargs)}"), until)
        raise self._flavour.not_unique(f"Multiple matches found for {kwargs}: {results}")

    def _check_rank(self, result: Resource, kwargs: dict[str, Any]) -> None:
        """Refuse ``result`` (a List as its resource) when an unreadable group version ranks above it."""
        if result is self._generic_list:
            return
        prefix, group = _wild(kwargs.get("prefix")), _wild(kwargs.get("group"))
        version = _wild(kwargs.get("api_version"))
        if group is None and isinstance(version, str) and "/" in version:
            group, _, version = version.partition("/")
        names = self._names(prefix, group, version)
        if names is None:  # the groups that may serve it (and every group that failed), not all of them
            filters = tuple((k, v) for k, v in kwargs.items() if k in FILTER_KEYWORDS and v is not None)
            names = self._narrow(_wild(kwargs.get("kind")), filters)
        entries = [e for e, _ in self._entries(names)]
        versions = (version,) if isinstance(version, str) else ()
        doubt = outranking(entries, GroupVersion(result.group or "", result.api_version), versions)
        if doubt:
            raise GroupDiscoveryError(next(iter(doubt)).group, doubt, asked=_asked(kwargs))

    def _version_rank(self, group: str) -> dict[str, int]:
        with self._lock:
            g = self._groups.get(group)
        return {} if g is None else {v.group_version.version: i for i, v in enumerate(g.versions)}

    def _lookup(self, kwargs: dict[str, Any]) -> tuple[list[Resource], float, dict[GroupVersion, BaseException]]:
        unknown = sorted(set(kwargs) - FILTER_KEYWORDS - {"prefix", "group", "api_version", "kind"})
        if unknown:
            raise TypeError(f"resources.search()/get() got unexpected keyword argument(s) {', '.join(unknown)}; "
                            f"accepted: prefix, group, api_version, kind, {', '.join(sorted(FILTER_KEYWORDS))}")
        prefix, group = _wild(kwargs.get("prefix")), _wild(kwargs.get("group"))
        version, kind = _wild(kwargs.get("api_version")), _wild(kwargs.get("kind"))
        filters = tuple((k, v) for k, v in kwargs.items() if k in FILTER_KEYWORDS and v is not None)
        if group is None and isinstance(version, str) and "/" in version:
            group, _, version = version.partition("/")
        if isinstance(version, str) and "/" in version:
            return [], self._clock() + self.cache.miss_refresh_interval, {}
        # As the mapper's rule: when an invalidation lands during the lookup, a group dropped meanwhile was not
        # read; groups chosen from the merged index (no group named) may lack it even for a match.
        names = self._names(prefix, group, version)
        for _attempt in range(RACE_ATTEMPTS):
            epoch = self.cache.invalidations
            found = self._lookup_once(names, prefix, group, version, kind, filters, kwargs)
            if self.cache.invalidations == epoch or not (names is None or not found[0]):
                return found
        raise raced(_asked(kwargs), RACE_ATTEMPTS)

    def _lookup_once(self, names: set[str] | None, prefix: str | None, group: str | None, version: str | None,
                     kind: Any, filters: tuple[tuple[str, Any], ...], kwargs: dict[str, Any]
                     ) -> tuple[list[Resource], float, dict[GroupVersion, BaseException]]:
        narrowed = self._narrow(kind, filters) if names is None else names
        results, until, failures = self._collect(narrowed, prefix, group, version, kind, filters)
        if not results and self._revalidate(names):
            narrowed = self._narrow(kind, filters) if names is None else names
            results, until, failures = self._collect(narrowed, prefix, group, version, kind, filters)
        if not results:  # a no-match is kept until the server's confirmation of it is an interval old
            confirmed = self.cache.miss_confirmed_at(names)
            until = min(until, (self._clock() if confirmed is None else confirmed) + self.cache.miss_refresh_interval)
            doubt = self.cache.unconfirmed(names)
            if doubt is not None:
                failures.update(in_scope(doubt.failed, () if version is None else (version,)))
                if doubt.documents and not failures:
                    raise with_question(doubt, _asked(kwargs))
        self._maybe_write()
        return results, until, failures

    def _revalidate(self, names: set[str] | None) -> bool:
        # A failure propagates even when answering from the cache file: a miss there is not the server's word.
        return self.cache.revalidate_on_miss(names)

    def _narrow(self, kind: Any, filters: tuple[tuple[str, Any], ...]) -> set[str] | None:
        """The groups that may hold a match, from the mapper's merged index; None when no trait narrows."""
        traits = dict(filters)

        def first(value: Any) -> str | None:
            if isinstance(value, (list, tuple)):
                value = value[0] if value else None
            return value if isinstance(value, str) and value else None

        kind = kind if isinstance(kind, str) else None
        name = first(traits.get("name")) or first(traits.get("singular_name"))
        short, category = first(traits.get("short_names")), first(traits.get("categories"))
        if not (kind or name or short or category):
            return None
        try:
            return self.mapper.groups_serving(kind=kind, name=name, short_name=short, category=category)
        except DiscoveryError:
            return None  # answered below from whatever can be read (or the cache file)

    def _names(self, prefix: str | None, group: str | None, version: str | None) -> set[str] | None:
        if group is not None:
            return {group}
        if prefix == "api":
            return {""}
        # "v1" (no group) is the core group when core lists it, read or not: it must not also match apps/v1,
        # batch/v1, ..., and no other group answers for an unreadable core.
        if version is not None and prefix != "apis" and any(
                version in g.by_version or version in e.group.versions or any(gv.version == version for gv in e.failed)
                for e, g in self._entries({""})):
            return {""}
        return None

    def _collect(self, names: set[str] | None, prefix: str | None, group: str | None, version: str | None,
                 kind: str | None, filters: tuple[tuple[str, Any], ...]
                 ) -> tuple[list[Resource], float, dict[GroupVersion, BaseException]]:
        entries, until = self._view(names)
        lowered = kind.lower() if isinstance(kind, str) else None
        results: list[Resource] = []
        failures: dict[GroupVersion, BaseException] = {}
        for entry, res in entries:
            skip = bool((prefix == "api" and entry.name) or (prefix == "apis" and not entry.name)
                        or (group is not None and entry.name != group))
            if not skip:
                failures.update((gv, e) for gv, e in entry.failed.items() if version in (None, gv.version))
                one = None if version is None else res.by_version.get(version)
                versions = res.versions if version is None else ((one,) if one is not None else ())
                for vr in versions:
                    results.extend(self._match(vr, lowered, filters))
            # Upstream serves the generic ``List`` kind under apis//v1.
            if (not entry.name and group is None and version in (None, "v1") and prefix in (None, "apis")
                    and lowered in (None, "list") and _matches(self._generic_list, filters)):
                results.append(self._generic_list)
        return results, until, failures

    @staticmethod
    def _match(vr: VersionResources, kind: str | None, filters: tuple[tuple[str, Any], ...]) -> list[Resource]:
        candidates = vr.all if kind is None else vr.by_kind_lower.get(kind, ())
        if not filters:
            return list(candidates)
        return [o for o in candidates if _matches(o, filters)]

    def _view(self, names: set[str] | None) -> tuple[list[tuple[GroupEntry, GroupResources]], float]:
        ready = self.mapper.cached_groups(names) if names is not None else None
        if ready is not None:  # every group loaded and fresh: no need to ask the cache
            return [(e, self._group(e)) for e in ready[0]], ready[1]
        try:
            view = self.cache.groups(names)
        except DiscoveryError:
            fallback = self._snapshot_entries(names)
            if fallback is None:
                raise
            log.warning("discovery failed; answering from the cache file %s", self._cache_file)
            return [(e, self._group(e)) for e in fallback], self._clock()
        return [(e, self._group(e)) for e in view.entries], view.valid_until

    def _entries(self, names: set[str] | None) -> list[tuple[GroupEntry, GroupResources]]:
        return self._view(names)[0]

    def _group(self, entry: GroupEntry) -> GroupResources:
        with self._lock:
            cached = self._groups.get(entry.name)
        if cached is not None and cached.generation == entry.generation:
            return cached
        built = build_group(self.client, entry, self._flavour)
        with self._lock:
            self._groups[entry.name] = built
            self._seen[entry.name] = entry
        return built

    # --- the optional cache file -----------------------------------------------------------------------------------

    def _snapshot_entries(self, names: set[str] | None) -> list[GroupEntry] | None:
        doc = self._snapshot
        if doc is None:
            return None
        try:
            entries = []
            for i, g in enumerate(doc["groups"]):
                if names is not None and g["name"] not in names:
                    continue
                group = APIGroup(str(g["name"]), tuple(map(str, g["versions"])), g.get("preferred"))
                resources = {GroupVersion(group.name, v): APIResourceList(
                    GroupVersion(group.name, v), tuple(_api_resource(r) for r in rs))
                    for v, rs in g["resources"].items()}
                entries.append(GroupEntry(group, resources, {}, 0.0, -1 - i))
            return entries
        except (KeyError, TypeError, ValueError, AttributeError):
            log.warning("ignoring a cache file of an unexpected shape: %s", self._cache_file)
            self._snapshot = None
            return None

    def flush_cache_file(self, timeout: float | None = 10.0) -> bool:
        """Wait until what was discovered so far has been written to the cache file (or skipped, and logged).

        Args:
            timeout: seconds to wait at most; None waits as long as the write takes (bounded by the lock wait).

        Returns:
            True when no write is pending (also without a cache file); False when ``timeout`` passed first.
        """
        return True if self._persister is None else self._persister.flush(timeout)

    def _write_again(self) -> None:
        with self._lock:
            self._written_generation = -1  # a skipped write is retried by the next lookup

    def _maybe_write(self) -> None:
        if self._persister is None:
            return
        generation = self.cache.generation
        with self._lock:
            if generation == self._written_generation:
                return
            self._written_generation = generation
            groups = [{"name": e.name, "versions": list(e.group.versions), "preferred": e.group.preferred_version,
                       "resources": {gv.version: [_api_resource_doc(r) for r in rl.resources]
                                     for gv, rl in e.resources.items()}}
                      for e in self._seen.values()]
            doc = {"format": _cachefile.FORMAT, "server": self._server, "version": self._version, "groups": groups}
        self._persister.submit(doc)
