"""The lazy, self-healing REST mapper: :class:`LazyRESTMapper`.

State: a :class:`~restmapper.cache.DiscoveryCache` (what the server said, with TTLs and eviction), one
:class:`~restmapper.mapper.index.GroupIndex` per cached group entry (rebuilt only when the entry's generation
changes), and a memo of answers keyed by the question, valid while the cache generation is unchanged and the
entries it was computed from are fresh. One path computes an answer (:meth:`LazyRESTMapper._answer`): load only
the groups the question needs, ask a :class:`~restmapper.mapper.static.StaticRESTMapper` over them, and on a
no-match ask the cache to revalidate (rate-limited) and try once more.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from restmapper.cache import CacheStats, DiscoveryCache, GroupEntry
from restmapper.cache._source import DiscoverySource
from restmapper.discovery import DiscoveryClient
from restmapper.errors import GroupDiscoveryError, MappingError, is_no_match
from restmapper.mapper._args import (
    check_options,
    group_kind_and_versions,
    require_gv,
    require_gvr,
    require_str,
)
from restmapper.mapper._certainty import asked_kind, asked_resource, in_scope, outranking, with_question
from restmapper.mapper._groups import ANYWHERE, IndexedGroups, Memo, Picker, Prefixed, Remembered, by_arg, by_name
from restmapper.mapper._source import CacheSource
from restmapper.mapper.merged import Cell, MergedIndex, still_valid
from restmapper.mapper.resolve import (
    PartialDiscoveryWarning,
    ResolvedMappings,
    ResolveResult,
    partial_message,
    resolve,
)
from restmapper.mapper.shortcut import ShortNameConflictWarning, expand_category
from restmapper.mapper.static import StaticRESTMapper
from restmapper.mapper.wait import ChangeNotifier, wait_for_mapping
from restmapper.model import (
    GroupKind,
    GroupResource,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
    parse_resource_arg,
)
from restmapper.transport import ClientConfig, Transport
from restmapper.transport.config import ConfigConstructors

__all__ = ["LazyRESTMapper"]

T = TypeVar("T")

_MEMO_LIMIT = 1 << 15
"""Answers per memo generation: a working set of this many distinct questions always hits."""
_MAPPER_OPTIONS = ("ttl", "miss_refresh_interval", "max_stale", "clock")


@dataclass(frozen=True, slots=True)
class _Question(Generic[T]):
    """One lookup, as :meth:`LazyRESTMapper._compute` needs it.

    Attributes:
        asked: the question in words, for errors (``resource type "xyzzy"``).
        names: the groups the question may be answered by (None: all), read lazily (may need ``/apis``).
        compute: the answer over a snapshot of those groups.
        core_first: an answer from core alone when that is final (core ``v1`` matches first), else None.
        versions: versions the caller required: failures of other versions cannot change the answer.
        answered_at: the group version a single answer came from; None for list answers.
        partial: for list answers that may be partial, attach the failures to the value instead of raising.
        pick: when ``names`` gives None, chooses from the merged index the groups that could answer.
        load: the versions the answer can come from (legacy discovery fetches only those): None for all, ``()``
            to try the preferred version first (a kind found there is the answer), else the versions asked for.
    """

    asked: str
    names: Callable[[], Collection[str] | None]
    compute: Callable[[StaticRESTMapper], T]
    core_first: Callable[[StaticRESTMapper], T | None] | None = None
    versions: tuple[str, ...] = ()
    answered_at: Callable[[T], GroupVersion | None] | None = None
    partial: Callable[[T, dict[GroupVersion, BaseException]], T] | None = None
    pick: Picker | None = None
    load: tuple[str, ...] | None = None


class LazyRESTMapper(ConfigConstructors):
    """A REST mapper that loads only the API groups a lookup needs and heals itself when the cluster changes.

    The ``meta.RESTMapper`` contract in Python names (``kind_for``, ``kinds_for``, ``resource_for``,
    ``resources_for``, ``rest_mapping``, ``rest_mappings``, ``resource_singularizer``, plus ``is_namespaced``),
    with the priority and matching rules of client-go ``restmapper.NewDiscoveryRESTMapper`` over apimachinery's
    ``DefaultRESTMapper``/``PriorityRESTMapper``, and kubectl's resolution of what a user types
    (:meth:`resolve`, :meth:`expand_category`). Thread-safe; answers are memoized per cache generation.

    Healing: each group is cached with a TTL; a 404 on a cached group version evicts the group and the lookup
    retries once after refetching; a lookup that finds nothing revalidates (at most once per
    ``miss_refresh_interval``) before raising, so new CRDs, versions and kinds are found without waiting for the
    TTL; a failing group fails only the lookups that need it.
    """

    def __init__(
        self,
        discovery: DiscoverySource | CacheSource,
        *,
        ttl: float | None = 300.0,
        miss_refresh_interval: float = 1.0,
        max_stale: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Create a mapper.

        Args:
            discovery: a discovery client (a cache is built over it with the options below) or a ready cache
                (the options are then ignored): a :class:`~restmapper.discovery.DiscoveryClient` or a
                :class:`~restmapper.cache.DiscoveryCache`, or anything with the interface the mapper uses of one
                (:class:`~restmapper.cache._source.DiscoverySource`, :class:`~restmapper.mapper._source.CacheSource`).
            ttl: seconds a group stays fresh; 0 revalidates on every lookup; None never expires.
            miss_refresh_interval: at most one revalidation per this many seconds is caused by misses.
            max_stale: seconds a group may be served after a transient refresh failure.
            clock: a monotonic clock in seconds.

        Raises:
            ValueError: a negative ttl, interval or max_stale.
            TypeError: ``discovery`` is neither (a URL or a transport must be wrapped in a DiscoveryClient).
        """
        self.cache: CacheSource
        if isinstance(discovery, DiscoverySource):
            self.cache = DiscoveryCache(discovery, ttl=ttl, miss_refresh_interval=miss_refresh_interval,
                                        max_stale=max_stale, clock=clock)
        elif isinstance(discovery, CacheSource):
            self.cache = discovery
        else:
            hint = ("; for a URL use LazyRESTMapper(DiscoveryClient(RequestsTransport(url))), for a kubeconfig "
                    "LazyRESTMapper.from_kubeconfig()") if isinstance(discovery, str) else (
                "; wrap a transport: LazyRESTMapper(DiscoveryClient(transport))")
            raise TypeError(f"LazyRESTMapper() takes a DiscoveryClient or a DiscoveryCache, "
                            f"not {type(discovery).__name__}{hint}")
        self._clock = self.cache.clock
        self._memo = Memo(_MEMO_LIMIT)
        self._groups = IndexedGroups(self.cache)

    @classmethod
    def _check_config_options(cls, method: str, options: Mapping[str, Any]) -> None:
        """TypeError naming ``method`` for a keyword that is neither a mapper option nor a transport option."""
        from restmapper.transport import RequestsTransport

        check_options(method, options, _MAPPER_OPTIONS + tuple(inspect.signature(RequestsTransport).parameters))

    @classmethod
    def from_config(cls, config: ClientConfig, **options: Any) -> LazyRESTMapper:
        """Build a mapper from resolved settings (:func:`~restmapper.transport.resolve_config`); ``from_kubeconfig``
        and ``from_incluster`` (:class:`~restmapper.transport.config.ConfigConstructors`) take the same options.

        Args:
            config: the settings.
            **options: mapper options (``ttl``, ``miss_refresh_interval``, ``max_stale``, ``clock``); any other
                keyword goes to the transport (timeouts, retry, ``max_body_bytes``).

        Raises:
            ConfigError: the settings are unusable.
            TypeError: an unknown option (the message names the method called and the closest known option).
        """
        cls._check_config_options(f"{cls.__name__}.from_config", options)
        mine = {k: options.pop(k) for k in _MAPPER_OPTIONS if k in options}
        return cls(DiscoveryClient.from_config(config, **options), **mine)

    @property
    def transport(self) -> Transport:
        """The transport discovery reads over (the watcher and the object cache list and watch with it)."""
        return self.cache.transport

    @property
    def stats(self) -> CacheStats:
        """The cache's counters (hits, misses, fetches by endpoint, not-modified, evictions, errors)."""
        return self.cache.stats

    # --- invalidation -----------------------------------------------------------------------------------

    def invalidate_group(self, group: str) -> None:
        """Drop one group from the cache; the next lookup that needs it refetches.

        Raises:
            TypeError: ``group`` is not a str.
        """
        require_str("invalidate_group", group, "a group name")
        self.cache.invalidate_group(group)

    def invalidate_group_version(self, gv: GroupVersion) -> None:
        """Drop the group of ``gv`` from the cache.

        Raises:
            TypeError: ``gv`` is not a GroupVersion.
        """
        require_gv("invalidate_group_version", gv)
        self.cache.invalidate_group_version(gv)

    def invalidate_all(self) -> None:
        """Drop everything from the cache."""
        self.cache.invalidate_all()

    def report_not_found(self, gv: GroupVersion) -> None:
        """Tell the mapper a request under ``gv`` answered 404 for the resource type: evicts the group.

        Raises:
            TypeError: ``gv`` is not a GroupVersion.
        """
        require_gv("report_not_found", gv)
        self.cache.report_not_found(gv)

    # --- the one answering path ---------------------------------------------------------------------------

    def _static(self, names: Collection[str] | None, pick: Picker | None, deps: list[tuple[Cell, int]],
                versions: tuple[str, ...] | None = None) -> tuple[StaticRESTMapper, tuple[GroupEntry, ...], float]:
        if names is None:
            if pick is None:
                raise AssertionError("a question that may match any group needs a pick")
            return self._groups.anywhere(pick, deps)
        if isinstance(names, Prefixed):
            listing = self._groups.index.listing_cell
            deps.append((listing, listing.version))  # a group listed later may match the prefix too
        return self._groups.scoped(names, deps, versions)

    def _fresh_memo(self, key: tuple[Any, ...], *, io: bool = True) -> Remembered | None:
        """The memoized answer for ``key`` if none of the groups or names it read changed (the warm path).

        An answer that may come from any group, after a group was invalidated, is checked only once every group
        is loaded again (``io``: may fetch; without it such an answer is not offered).
        """
        if self.cache.generation != self._groups.generation:
            self._groups.catch_up()
        memo = self._memo.get(key)
        if memo is None:
            return None
        if memo.anywhere and self._groups.reload_pending:
            if not io:
                return None
            self._groups.reload()
        if self._clock() < memo.valid_until and still_valid(memo.deps):
            return memo
        return None

    def _answer(self, key: tuple[Any, ...], q: _Question[T]) -> T:
        memo = self._fresh_memo(key)
        if memo is not None:
            if isinstance(memo.error, MappingError) and is_no_match(memo.error):
                # A remembered miss: the message says how old it is (a fresh one keeps upstream's exact message).
                interval = self.cache.miss_refresh_interval
                age = max(0.0, self._clock() - (memo.valid_until - interval))
                if age > 0:
                    raise memo.error.remembered(age, interval).with_traceback(None)
            return self._replay(memo)  # type: ignore[no-any-return]
        deps: list[tuple[Cell, int]] = []
        value: Any = None
        error: BaseException | None = None
        until = float("inf")
        try:
            value, until = self._compute(q, deps)
        except MappingError as exc:
            error, until = exc, self._clock() + self.cache.miss_refresh_interval
        except GroupDiscoveryError as exc:
            error, until = exc, self._clock()
        anywhere = any(cell is ANYWHERE for cell, _ in deps)
        memo = Remembered(value, error, until, tuple(d for d in dict.fromkeys(deps) if d[0] is not ANYWHERE), anywhere)
        self._memo.put(key, memo)
        return self._replay(memo)  # type: ignore[no-any-return]

    @staticmethod
    def _replay(memo: Remembered) -> Any:
        if memo.error is not None:
            raise memo.error.with_traceback(None)
        return memo.value

    def _compute(self, q: _Question[T], deps: list[tuple[Cell, int]]) -> tuple[T, float]:
        """Answer ``q`` under the rules of :mod:`restmapper.mapper._certainty` (never confidently wrong)."""
        with self.cache.lookup():
            return self._compute_in_scope(q, deps)

    def _compute_in_scope(self, q: _Question[T], deps: list[tuple[Cell, int]]) -> tuple[T, float]:
        try:
            if q.core_first is not None:
                static, entries, until = self._groups.scoped({""}, deps)
                found = q.core_first(static)
                if found is not None:
                    return self._certain(q, found, entries), until
            wanted = q.names()
            if q.load == () and wanted is not None:
                answered = self._preferred_first(q, wanted, deps)
                if answered is not None:
                    return answered
            static, entries, until = self._static(wanted, q.pick, deps, q.load or None)
            try:
                return self._certain(q, q.compute(static), entries), until
            except MappingError as exc:
                if not is_no_match(exc):
                    raise
                first = exc
            if self.cache.revalidate_on_miss(wanted):
                wanted = q.names()
                static, entries, until = self._static(wanted, q.pick, deps, q.load or None)
                try:
                    return self._certain(q, q.compute(static), entries), until
                except MappingError as exc:
                    if not is_no_match(exc):
                        raise
                    first = exc
            # A no-match only when the server said so: every group version in scope was read, just now or fresh.
            doubt = self.cache.unconfirmed(wanted)
            if doubt is not None and (in_scope(doubt.failed, q.versions) or doubt.documents):
                raise with_question(doubt, q.asked, failed=in_scope(doubt.failed, q.versions)) from first
            raise first
        except GroupDiscoveryError as exc:
            if exc.asked:
                raise
            partial = self._without_core(q, exc, deps)
            if partial is not None:
                return partial
            raise with_question(exc, q.asked) from exc

    def _without_core(self, q: _Question[T], exc: GroupDiscoveryError, deps: list[tuple[Cell, int]]
                      ) -> tuple[T, float] | None:
        """A category's members in the named groups when only ``/api`` is unreadable, with core as failed.

        The same answer as when core's ``v1`` document fails (kubectl warns and lists the rest); any other question
        (a single name core could win by priority) keeps the error. Remembered for no time: core is asked again.
        """
        if q.partial is None or q.answered_at is None or set(exc.documents) != {"/api"}:
            return None
        try:
            static, _entries, _until = self._groups.scoped(self.cache.group_names(core=False), deps)
            value = q.compute(static)
        except (MappingError, GroupDiscoveryError):
            return None
        if q.answered_at(value) is not None:
            return None  # not a category: core could have answered it
        return q.partial(value, dict(exc.failed)), self._clock()

    def _preferred_first(self, q: _Question[T], names: Collection[str], deps: list[tuple[Cell, int]]
                         ) -> tuple[T, float] | None:
        """The answer from the groups' preferred versions alone, when it is there (client-go ranks it first)."""
        static, entries, until = self._groups.scoped(names, deps, ())
        try:
            return self._certain(q, q.compute(static), entries), until
        except (MappingError, GroupDiscoveryError) as exc:
            if isinstance(exc, MappingError) and not is_no_match(exc):
                raise
            return None  # not in the preferred version (or it could not be read): read the whole group

    def _certain(self, q: _Question[T], value: T, entries: tuple[GroupEntry, ...]) -> T:
        """``value`` if no failed group version in scope could have changed it, else a GroupDiscoveryError."""
        answer = q.answered_at(value) if q.answered_at is not None else None
        if answer is not None:
            doubt = outranking(entries, answer, q.versions)
        else:
            doubt = in_scope({gv: err for e in entries for gv, err in e.failed.items()}, q.versions)
            if doubt and q.partial is not None:
                return q.partial(value, doubt)
        if doubt:
            raise GroupDiscoveryError(next(iter(doubt)).group, doubt, asked=q.asked,
                                      partial=None if answer is not None else value)
        return value

    def _groups_for(self, group: str) -> Collection[str] | None:
        """The groups a lookup with ``group`` may match: exact, else by prefix (apimachinery); "" means all."""
        if not group:
            return None
        index = self._groups.listed()  # a non-empty group never matches core, even as a prefix
        if index.listed(group):
            return {group}
        return Prefixed(index.with_prefix(group) or (group,))

    # --- meta.RESTMapper -------------------------------------------------------------------------------------

    def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """Return the one kind a partial resource maps to.

        Args:
            resource: a partial GVR; empty parts match anything; the resource name is matched lowercased
                against plural and singular names; a group matches exactly, else by prefix.

        Returns:
            The GroupVersionKind chosen by priority (core ``v1`` first, then groups in server order, preferred
            version first).

        Raises:
            NoResourceMatchError: nothing matches, also after revalidating.
            AmbiguousResourceError: several groups match at the same priority.
            GroupDiscoveryError: a group the lookup needs could not be discovered and nothing matched.
            DiscoveryError: the server's group list could not be read.

        Mirrors client-go ``restmapper.NewDiscoveryRESTMapper(...).KindFor``.
        """
        memo = self._fresh_memo(("kind_for", resource))
        if memo is not None and memo.error is None:
            return memo.value  # type: ignore[no-any-return]
        require_gvr("kind_for", resource)
        return self._answer(("kind_for", resource), _Question(
            asked_resource(resource), lambda: self._groups_for(resource.group), lambda m: m.kind_for(resource),
            self._core_first(resource, lambda m: m.kind_for(resource)), _versions(resource.version),
            answered_at=lambda gvk: gvk.group_version, pick=by_name(resource.resource),
            load=_load_for(resource)))

    def kinds_for(self, resource: GroupVersionResource) -> list[GroupVersionKind]:
        """Return every kind a partial resource matches, in priority order.

        Raises:
            NoResourceMatchError, GroupDiscoveryError, DiscoveryError: as :meth:`kind_for`.

        Mirrors ``PriorityRESTMapper.KindsFor``.
        """
        require_gvr("kinds_for", resource)
        return list(self._answer(("kinds_for", resource), _Question(
            asked_resource(resource), lambda: self._groups_for(resource.group),
            lambda m: tuple(m.kinds_for(resource)), versions=_versions(resource.version),
            pick=by_name(resource.resource),
            load=_load_for(resource))))

    def resource_for(self, resource: GroupVersionResource) -> GroupVersionResource:
        """Return the one fully specified (plural) resource a partial resource maps to.

        Raises:
            NoResourceMatchError, AmbiguousResourceError, GroupDiscoveryError, DiscoveryError: as :meth:`kind_for`.

        Mirrors ``PriorityRESTMapper.ResourceFor``.
        """
        require_gvr("resource_for", resource)
        return self._answer(("resource_for", resource), _Question(
            asked_resource(resource), lambda: self._groups_for(resource.group), lambda m: m.resource_for(resource),
            self._core_first(resource, lambda m: m.resource_for(resource)), _versions(resource.version),
            answered_at=lambda gvr: gvr.group_version, pick=by_name(resource.resource),
            load=_load_for(resource)))

    def resources_for(self, resource: GroupVersionResource) -> list[GroupVersionResource]:
        """Return every fully specified resource a partial resource matches, in priority order.

        Raises:
            NoResourceMatchError, GroupDiscoveryError, DiscoveryError: as :meth:`kind_for`.

        Mirrors ``PriorityRESTMapper.ResourcesFor``.
        """
        require_gvr("resources_for", resource)
        return list(self._answer(("resources_for", resource), _Question(
            asked_resource(resource), lambda: self._groups_for(resource.group),
            lambda m: tuple(m.resources_for(resource)), versions=_versions(resource.version),
            pick=by_name(resource.resource),
            load=_load_for(resource))))

    def rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping:
        """Return the RESTMapping of a kind, at the first of ``versions`` the group serves, else by priority.

        Args:
            group_kind: the group (exact; ``""`` is core only) and kind (exact or lowercase spelling).
            *versions: versions to try in order; none means the group's preferred version first.

        Returns:
            The RESTMapping (GVR, GVK, scope).

        Raises:
            NoKindMatchError: the kind is not served (in those versions), also after revalidating.
            AmbiguousKindError: several resources match at the same priority.
            GroupDiscoveryError: the group could not be discovered and nothing matched.
            DiscoveryError: the server's group list could not be read.

        Mirrors ``PriorityRESTMapper.RESTMapping``; a kind served by several versions of one group resolves to
        the preferred version.
        """
        if group_kind.__class__ is not GroupKind or versions:
            group_kind, versions = group_kind_and_versions("rest_mapping", group_kind, versions)
        # Warm path inlined: this is the hottest call of a controller.
        memo = self._fresh_memo(("rest_mapping", group_kind.group, group_kind.kind, versions))
        if memo is not None and memo.error is None:
            return memo.value  # type: ignore[no-any-return]
        return self._answer(("rest_mapping", group_kind.group, group_kind.kind, versions), _Question(
            asked_kind(group_kind, versions), lambda: {group_kind.group},
            lambda m: m.rest_mapping(group_kind, *versions), versions=versions, load=_versions(*versions),
            answered_at=lambda mapping: mapping.group_version_kind.group_version))

    def cached_rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping | None:
        """Return :meth:`rest_mapping`'s answer if a fresh one is memoized, else None; never does I/O or waits.

        For event loops: answer warm lookups inline and send only the rest to a thread (see :mod:`restmapper.aio`).
        """
        group_kind, versions = group_kind_and_versions("cached_rest_mapping", group_kind, versions)
        memo = self._fresh_memo(("rest_mapping", group_kind.group, group_kind.kind, versions), io=False)
        if memo is None or memo.error is not None:
            return None
        mapping: RESTMapping = memo.value
        return mapping

    def cached_resolve(self, arg: str) -> RESTMapping | None:
        """Return :meth:`resolve`'s answer if a fresh one is memoized (and has no warning to emit), else None.

        Never does I/O or waits.
        """
        memo = self._fresh_memo(("resolve", arg, False), io=False)
        if memo is None or memo.error is not None or memo.value.warnings:
            return None
        mapping: RESTMapping = memo.value.mapping
        return mapping

    def rest_mappings(self, group_kind: GroupKind, *versions: str) -> list[RESTMapping]:
        """Return every RESTMapping of a kind, in priority order (``PriorityRESTMapper.RESTMappings``).

        Raises:
            NoKindMatchError, GroupDiscoveryError, DiscoveryError: as :meth:`rest_mapping`.
        """
        group_kind, versions = group_kind_and_versions("rest_mappings", group_kind, versions)
        return list(self._answer(("rest_mappings", group_kind, versions), _Question(
            asked_kind(group_kind, versions), lambda: {group_kind.group},
            lambda m: tuple(m.rest_mappings(group_kind, *versions)), versions=versions,
            load=_versions(*versions) or None)))

    def resource_singularizer(self, resource: str) -> str:
        """Return the singular name of a plural resource (``DefaultRESTMapper.ResourceSingularizer``).

        Raises:
            NoResourceMatchError: no resource has that name.
            AmbiguousResourceError: resources of several groups have that name with different singulars.
        """
        require_str("resource_singularizer", resource, "a resource name")
        return self._answer(("resource_singularizer", resource), _Question(
            f'resource "{resource}"', lambda: None, lambda m: m.resource_singularizer(resource),
            pick=by_name(resource)))

    def is_namespaced(self, kind: GroupVersionKind) -> bool:
        """Return True when the kind's resource is namespaced.

        Raises:
            NoKindMatchError, AmbiguousKindError, GroupDiscoveryError, DiscoveryError: as :meth:`rest_mapping`.
            TypeError: ``kind`` is not a GroupVersionKind (a GroupKind has no version: use :meth:`rest_mapping`).
        """
        if not isinstance(kind, GroupVersionKind):
            raise TypeError(f"is_namespaced takes a GroupVersionKind, not {type(kind).__name__}; "
                            "for a GroupKind use rest_mapping(group_kind).namespaced")
        return self.rest_mapping(kind.group_kind, kind.version).namespaced

    def groups_serving(self, *, kind: str | None = None, name: str | None = None, short_name: str | None = None,
                       category: str | None = None) -> set[str]:
        """Return the names of the groups that may serve a resource with these traits (any case).

        A superset: every group serving a match is in it, plus core and any group with versions that could not
        be discovered; a caller still checks each group. Costs time proportional to the matches once every group
        is loaded (which this call makes sure of, as a lookup that may match any group does).

        Args:
            kind: a kind (``Deployment``; a ``...List`` kind also names its base kind).
            name: a plural or singular resource name.
            short_name: a short name.
            category: a category.
            The first trait given narrows; with none, every loaded group is returned.

        Raises:
            GroupDiscoveryError: the root documents could not be read.
        """

        def pick(index: MergedIndex, deps: list[tuple[Cell, int]]) -> Collection[str]:
            if kind:
                found = index.with_kind(kind, deps)
                return found | index.with_kind(kind[:-4], deps) if kind.lower().endswith("list") else found
            if name:
                return index.with_name(name, deps)
            if short_name:
                return index.with_short_name(short_name.lower(), deps)
            if category:
                return index.with_category(category.lower(), deps)
            return index.names

        return self._groups.candidates(pick, [])[0]

    # --- kubectl resolution -----------------------------------------------------------------------------------

    def resolve(self, arg: str) -> RESTMapping:
        """Return the RESTMapping ``kubectl get ARG`` would use for one resource type.

        Args:
            arg: a plural, singular, kind (any case), short name, ``resource.group``, ``resource.version.group``
                or a group prefix form (``hpa.autoscal``); no subresources, no commas, no categories (see
                :meth:`resolve_all`).

        Returns:
            The RESTMapping. A short name claimed by several groups resolves as kubectl does and emits a
            :class:`~restmapper.mapper.ShortNameConflictWarning` naming the other candidates.

        Raises:
            NoResourceMatchError: nothing matches any reading, also after revalidating (the subclass
                ``ResourceTypeNotFoundError`` carries kubectl's message).
            AmbiguousResourceError, AmbiguousKindError: several groups match at the same priority.
            GroupDiscoveryError, DiscoveryError: as :meth:`kind_for`.
            InvalidArgumentError: ``arg`` is empty.

        Every reading of a dotted argument is tried against the cache before a miss triggers revalidation.
        Mirrors kubectl's ``mappingFor`` over client-go's shortcut-expanding discovery REST mapper.
        """
        result = self._resolve(arg, expand_categories=False)
        return result.mapping

    def resolve_all(self, args: str) -> ResolvedMappings:
        """Resolve what ``kubectl get ARGS`` names: comma lists and categories (``all,deploy``) included.

        Returns:
            The mappings in kubectl's order, de-duplicated by GroupVersionKind, as a list. When a group that may
            hold members of a category could not be read, the list holds what could be found, its ``failed``
            maps each unreadable group version to its cause (``partial`` is True), and a
            :class:`~restmapper.mapper.PartialDiscoveryWarning` naming them is emitted (kubectl prints the same
            as a warning and goes on).

        Raises:
            As :meth:`resolve`, for the first argument that fails.
        """
        require_str("resolve_all", args, "resource type arguments")
        out: dict[GroupVersionKind, RESTMapping] = {}
        failed: dict[GroupVersion, BaseException] = {}
        for arg in args.split(","):
            result = self._resolve(arg.strip(), expand_categories=True)
            failed.update(result.failed)
            for mapping in result.mappings:
                out.setdefault(mapping.group_version_kind, mapping)
        return ResolvedMappings(out.values(), failed)

    def _resolve(self, arg: str, *, expand_categories: bool) -> ResolveResult:
        memo = self._fresh_memo(("resolve", arg, expand_categories))
        if memo is not None and memo.error is None and not memo.value.warnings:
            return memo.value  # type: ignore[no-any-return]
        require_str("resolve", arg, "a resource type argument")
        lowered = arg.lower()

        def compute(m: StaticRESTMapper) -> ResolveResult:
            return resolve(arg, m, expand_categories=expand_categories)

        def core_first(m: StaticRESTMapper) -> ResolveResult | None:
            core = m.group("")
            # A real core name wins by priority; a core *short* name may lose to another group's real name,
            # and a category may span groups.
            if expand_categories or "." in arg or core is None or lowered not in core.names:
                return None
            return compute(m)

        result = self._answer(("resolve", arg, expand_categories), _Question(
            f'resource type "{arg}"', lambda: self._groups_for_arg(arg), compute, core_first,
            answered_at=lambda r: None if r.category is not None else r.mapping.group_version_kind.group_version,
            partial=lambda r, failed: dataclasses.replace(r, failed=failed),
            pick=by_arg(arg, expand_categories=expand_categories)))
        for text in result.warnings:
            warnings.warn(text, ShortNameConflictWarning, stacklevel=3)
        if result.failed:
            warnings.warn(partial_message(f'category "{arg}"', result.failed), PartialDiscoveryWarning,
                          stacklevel=3)
        return result

    def expand_category(self, name: str) -> list[GroupResource]:
        """Return the resources in a category (``all``), deduplicated, in priority order (kubectl's expander).

        Raises:
            GroupDiscoveryError: discovery failed, or a group that may hold members could not be read (its
                ``partial`` holds the members found; :meth:`resolve_all` returns them with a warning instead).
        """
        require_str("expand_category", name, "a category name")
        return list(self._answer(("expand_category", name), _Question(
            f'category "{name}"', lambda: None, lambda m: tuple(expand_category(name, m)),
            pick=lambda index, deps: index.with_category(name, deps))))

    def wait_for(self, group_kind_or_arg: GroupKind | str, timeout: float, *,
                 watcher: ChangeNotifier | None = None, poll_interval: float = 1.0) -> RESTMapping:
        """Return the mapping of a kind (or of what ``kubectl get ARG`` names) as soon as it is served.

        Event-driven when ``watcher`` (a running :class:`restmapper.watch.Watcher`) watches CRDs: each group it
        invalidates wakes the wait at once; otherwise bounded polling every ``poll_interval`` seconds, each poll
        going through this mapper, whose miss revalidation is rate-limited.

        Args:
            group_kind_or_arg: a GroupKind (looked up with :meth:`rest_mapping`) or a user string (:meth:`resolve`).
            timeout: seconds to wait in total (0 tries once).
            watcher: a running watcher to be woken by, or None.
            poll_interval: seconds between polls.

        Returns:
            The RESTMapping.

        Raises:
            WaitTimeoutError: not served by the deadline (a ``TimeoutError``; chains the last lookup error).
            AmbiguousKindError, AmbiguousResourceError: the lookup is ambiguous (waiting will not fix it).
            DiscoveryError, TransportError: a permanent discovery failure (403, malformed document).
            InvalidArgumentError: a negative timeout or a non-positive poll interval.
        """
        if not isinstance(group_kind_or_arg, str):
            group_kind_or_arg, versions = group_kind_and_versions("wait_for", group_kind_or_arg, ())
            if versions:
                raise TypeError("wait_for() takes a GroupKind or a user string; a GroupVersionKind's version "
                                "cannot be waited for separately: pass gvk.group_kind")
        # The deadline is real time even with an injected cache clock: the wait itself blocks in real time.
        return wait_for_mapping(self, group_kind_or_arg, timeout, watcher=watcher, poll_interval=poll_interval,
                                clock=time.monotonic)

    def _groups_for_arg(self, arg: str) -> Collection[str] | None:
        if "." not in arg:
            return None
        gvr, gr = parse_resource_arg(arg)
        names: set[str] = set()
        for group in {gr.group} | ({gvr.group} if gvr is not None else set()):
            found = self._groups_for(group)
            if found is None:
                return None
            names.update(found)
        return names

    @staticmethod
    def _core_first(resource: GroupVersionResource,
                    compute: Callable[[StaticRESTMapper], T]) -> Callable[[StaticRESTMapper], T | None] | None:
        if resource.group or resource.version not in ("", "v1"):
            return None

        def attempt(m: StaticRESTMapper) -> T | None:
            core = m.group("")
            v1 = core.version("v1") if core is not None else None
            if v1 is None or not v1.match_resource(resource.resource.lower()):
                return None
            # Core v1 is the first priority pattern: a match there wins over every other group.
            return compute(m)

        return attempt


def _load_for(resource: GroupVersionResource) -> tuple[str, ...] | None:
    """A resource in one version of a named group is answered by that version alone."""
    return _versions(resource.version) or None if resource.group else None


def _versions(*versions: str) -> tuple[str, ...]:
    """The versions a question requires: those given, less empty ones and ``__internal`` (any version)."""
    return tuple(v for v in versions if v and v != "__internal")
