"""The lazy, self-healing REST mapper: :class:`LazyRESTMapper`.

State: a :class:`~restmapper.cache.DiscoveryCache` (what the server said, with TTLs and eviction), one
:class:`~restmapper.mapper.index.GroupIndex` per cached group entry (rebuilt only when the entry's generation
changes), merged into :class:`~restmapper.mapper.merged.MergedIndex`, and a memo of answers valid while none of
the cells they read moved. This module is the public ``meta.RESTMapper`` front end: it checks arguments, turns
each call into a :class:`~restmapper.mapper._engine.Question` and returns what
:class:`~restmapper.mapper._engine.AnswerEngine` answers.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from restmapper._public import own_methods
from restmapper.cache import CacheStats, DiscoveryCache, DiscoverySource, GroupEntry
from restmapper.discovery import DiscoveryClient
from restmapper.mapper._args import (
    SERVABLE_GROUPS,
    SERVABLE_VERSIONS,
    check_options,
    group_kind_and_versions,
    gvr_key,
    require_group_name,
    require_gv,
    require_question_shape,
    require_str,
)
from restmapper.mapper._certainty import asked_kind, asked_resource
from restmapper.mapper._engine import Question, load_for, required_versions
from restmapper.mapper._groups import IndexedGroups, by_name
from restmapper.mapper._kubectl import KubectlResolution
from restmapper.mapper._memo import Memo
from restmapper.mapper._source import CacheSource
from restmapper.mapper.merged import Cell, MergedIndex
from restmapper.mapper.wait import ChangeNotifier, wait_for_mapping
from restmapper.model import (
    GroupKind,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
)
from restmapper.transport import ClientConfig, Transport
from restmapper.transport.config import ConfigConstructors

__all__ = ["LazyRESTMapper"]

_MEMO_LIMIT = 1 << 15
"""Answers per memo generation: a working set of this many distinct questions always hits."""
_MAPPER_OPTIONS = ("ttl", "miss_refresh_interval", "max_stale", "clock")


def _gvk(mapping: RESTMapping) -> GroupVersionKind:
    return mapping.group_version_kind


def _gvr(mapping: RESTMapping) -> GroupVersionResource:
    return mapping.resource


def _refuse_options_of(**given: Any) -> None:
    """TypeError when a cache option differs from its default while a ready cache is passed (it would be ignored)."""
    defaults = {"ttl": 300.0, "miss_refresh_interval": 1.0, "max_stale": 600.0, "clock": time.monotonic}
    changed = [name for name, value in given.items()
               if value is not defaults[name] and value != defaults[name]]
    if changed:
        raise TypeError(f"LazyRESTMapper() was given a ready cache, which has its own {', '.join(changed)}: set "
                        f"{'them' if len(changed) > 1 else 'it'} on the cache instead, "
                        f"DiscoveryCache(client, {', '.join(f'{name}=...' for name in changed)})")


@own_methods
class LazyRESTMapper(KubectlResolution, ConfigConstructors):
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
                (the options are then the cache's: set them on the ``DiscoveryCache``; giving one here is a
                TypeError): a :class:`~restmapper.discovery.DiscoveryClient` or a
                :class:`~restmapper.cache.DiscoveryCache`, or anything with the interface the mapper uses of one
                (:class:`~restmapper.cache._source.DiscoverySource`, :class:`~restmapper.mapper._source.CacheSource`).
            ttl: seconds a group stays fresh; 0 revalidates on every lookup; None never expires.
            miss_refresh_interval: at most one revalidation per this many seconds is caused by misses; a no-match
                is never older than this from the request that confirmed it, and one this lookup did not confirm
                says how old it is (``remembered_age``).
            max_stale: seconds a group may be served after a transient refresh failure.
            clock: a monotonic clock in seconds.

        Raises:
            ValueError: a negative ttl, interval or max_stale.
            InvalidArgumentError: a ttl, interval or max_stale that is NaN or infinite (a ``ValueError``).
            TypeError: ``discovery`` is neither (a URL or a transport must be wrapped in a DiscoveryClient); or it
                is a ready cache and an option differs from its default (it would be ignored); or ``clock`` is
                not callable.
        """
        self.cache: CacheSource
        if isinstance(discovery, DiscoverySource):
            self.cache = DiscoveryCache(discovery, ttl=ttl, miss_refresh_interval=miss_refresh_interval,
                                        max_stale=max_stale, clock=clock)
        elif isinstance(discovery, CacheSource):
            if not callable(clock):
                raise TypeError(f"clock must be a callable returning seconds (such as time.monotonic), "
                                f"not {type(clock).__name__}")
            _refuse_options_of(ttl=ttl, miss_refresh_interval=miss_refresh_interval, max_stale=max_stale,
                               clock=clock)
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

        Args:
            group: the API group name, e.g. ``"example.com"`` (a CRD's ``spec.group``; not the CRD's name
                ``gadgets.example.com``, which is also a valid group name, only another one), ``""`` for core.
                For one group version use :meth:`invalidate_group_version`.

        Raises:
            TypeError: ``group`` is not a str.
            InvalidArgumentError: ``group`` cannot be an API group name (a DNS-1123 subdomain): it contains
                ``/`` (an apiVersion), upper-case letters or spaces.
        """
        require_group_name("invalidate_group", group)
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
            InvalidArgumentError: a group or version no server can serve (an apiVersion where a version or group
                belongs, upper case): a mistake in the call, never a no-match.

        Mirrors client-go ``restmapper.NewDiscoveryRESTMapper(...).KindFor``.
        """
        key = gvr_key("kind_for", resource)
        return self._answer(key, lambda: Question(
            lambda: asked_resource(resource), lambda io: self._groups_for(resource.group, io),
            lambda m: m.kind_for(resource),
            self._core_first(resource, lambda m: m.kind_for(resource)), required_versions(resource.version),
            answered_at=lambda gvk: gvk.group_version, pick=by_name(resource.resource),
            load=load_for(resource)), lambda: self._direct_resource(key, resource, _gvk), resource_key=True)

    def kinds_for(self, resource: GroupVersionResource) -> list[GroupVersionKind]:
        """Return every kind a partial resource matches, in priority order.

        Raises:
            NoResourceMatchError, GroupDiscoveryError, DiscoveryError, InvalidArgumentError: as :meth:`kind_for`.

        Mirrors ``PriorityRESTMapper.KindsFor``.
        """
        return list(self._answer(gvr_key("kinds_for", resource), lambda: Question(
            lambda: asked_resource(resource), lambda io: self._groups_for(resource.group, io),
            lambda m: tuple(m.kinds_for(resource)), versions=required_versions(resource.version),
            pick=by_name(resource.resource),
            load=load_for(resource)), resource_key=True))

    def resource_for(self, resource: GroupVersionResource) -> GroupVersionResource:
        """Return the one fully specified (plural) resource a partial resource maps to.

        Raises:
            NoResourceMatchError, AmbiguousResourceError, GroupDiscoveryError, DiscoveryError, InvalidArgumentError:
                as :meth:`kind_for`.

        Mirrors ``PriorityRESTMapper.ResourceFor``.
        """
        key = gvr_key("resource_for", resource)
        return self._answer(key, lambda: Question(
            lambda: asked_resource(resource), lambda io: self._groups_for(resource.group, io),
            lambda m: m.resource_for(resource),
            self._core_first(resource, lambda m: m.resource_for(resource)), required_versions(resource.version),
            answered_at=lambda gvr: gvr.group_version, pick=by_name(resource.resource),
            load=load_for(resource)), lambda: self._direct_resource(key, resource, _gvr), resource_key=True)

    def resources_for(self, resource: GroupVersionResource) -> list[GroupVersionResource]:
        """Return every fully specified resource a partial resource matches, in priority order.

        Raises:
            NoResourceMatchError, GroupDiscoveryError, DiscoveryError, InvalidArgumentError: as :meth:`kind_for`.

        Mirrors ``PriorityRESTMapper.ResourcesFor``.
        """
        return list(self._answer(gvr_key("resources_for", resource), lambda: Question(
            lambda: asked_resource(resource), lambda io: self._groups_for(resource.group, io),
            lambda m: tuple(m.resources_for(resource)), versions=required_versions(resource.version),
            pick=by_name(resource.resource),
            load=load_for(resource)), resource_key=True))

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
            InvalidArgumentError: a group or version no server can serve (an apiVersion where a version or group
                belongs, upper case): a mistake in the call, never a no-match.

        Mirrors ``PriorityRESTMapper.RESTMapping``; a kind served by several versions of one group resolves to
        the preferred version.
        """
        if group_kind.__class__ is not GroupKind:
            group_kind, versions = group_kind_and_versions("rest_mapping", group_kind, versions)
        key = ("rest_mapping", group_kind.group, group_kind.kind, *versions)  # flat: one tuple to compare
        # Versions are checked after the memo: only checked questions are memoized, so an unchecked one cannot hit.
        try:
            memo = self._fresh_memo(key)
        except TypeError:  # an unhashable version: worded below
            memo = None
        if memo is not None and memo.error is None:
            return memo.value  # type: ignore[no-any-return]
        if versions:
            group_kind, versions = group_kind_and_versions("rest_mapping", group_kind, versions)
            if len(versions) != 1 or group_kind.group not in SERVABLE_GROUPS or versions[0] not in SERVABLE_VERSIONS:
                require_question_shape("rest_mapping", group_kind.group, versions)
        elif group_kind.group not in SERVABLE_GROUPS:  # a name checked before: one dictionary read
            require_question_shape("rest_mapping", group_kind.group)
        found = self._direct_mapping(key, group_kind, versions)
        if found is not None:
            return found
        return self._answer(key, lambda: Question(
            lambda: asked_kind(group_kind, versions), lambda io: {group_kind.group},
            lambda m: m.rest_mapping(group_kind, *versions), versions=versions, load=required_versions(*versions),
            answered_at=lambda mapping: mapping.group_version_kind.group_version))

    def cached_rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping | None:
        """Return :meth:`rest_mapping`'s answer if a fresh one is memoized, else None; never does I/O or waits.

        For event loops: answer warm lookups inline and send only the rest to a thread (see :mod:`restmapper.aio`).
        """
        group_kind, versions = group_kind_and_versions("cached_rest_mapping", group_kind, versions)
        memo = self._fresh_memo(("rest_mapping", group_kind.group, group_kind.kind, *versions), io=False)
        if memo is None or memo.error is not None:
            return None
        mapping: RESTMapping = memo.value
        return mapping

    def cached_resolve(self, arg: str) -> RESTMapping | None:
        """Return :meth:`resolve`'s answer if a fresh one is memoized (and has no warning to emit: no short-name
        conflict, no unreadable group version that could beat it), else None.

        Never does I/O or waits.
        """
        memo = self._fresh_memo(("resolve", arg, False), io=False)
        if memo is None or memo.error is not None or memo.value.warnings or memo.value.failed:
            return None
        mapping: RESTMapping = memo.value.mapping
        return mapping

    def cached_groups(self, names: Collection[str], deps: list[tuple[Cell, int]] | None = None
                      ) -> tuple[list[GroupEntry], float] | None:
        """The cache entries of ``names`` in server priority order, and until when (clock seconds) they hold, when
        every listed one is loaded, complete (no version unread), healthy (none failed or stale) and fresh; else
        None (ask the cache). Never does I/O: for layers that answer from entries (the dynamic drop-in).
        Names the server does not list are left out, as :meth:`DiscoveryCache.groups` leaves them. The cells of
        ``names`` are recorded in ``deps`` when given.
        """
        if self.cache.generation != self._groups.generation:
            self._groups.catch_up()
        return self._groups.ready_entries(names, self._clock(), deps)

    def read_groups(self, names: Collection[str] | None, versions: Sequence[str] | None = None
                    ) -> tuple[list[GroupEntry], float]:
        """The cache entries of the groups ``names`` (None: every listed group) in server priority order, and
        until when (clock seconds) they hold: without asking the cache when :meth:`cached_groups` has them, else
        read through the cache (loading what is missing or not fresh, single-flight) and held so that the next
        call about them finds them ready. For layers that answer from entries (the dynamic drop-in).

        Args:
            names: the groups (names the server does not list are left out, as ``DiscoveryCache.groups`` does).
            versions: the only versions needed (None: all; legacy discovery then leaves the others unread, as
                upstream: an entry's ``unread`` versions are not in the question's scope).

        Returns:
            The entries (a group version that failed is in its entry's ``failed``, an outdated group is marked
            ``outdated``: what they lack proves nothing, see :func:`~restmapper.mapper.outranking`) and the clock
            reading until which all of them are fresh.

        Raises:
            DiscoveryError: the root documents could not be read (a :class:`~restmapper.errors.GroupDiscoveryError`
                naming them).
        """
        if names is not None:
            ready = self.cached_groups(names)
            if ready is not None:
                return ready
        view = self.cache.groups(names, versions)
        if names is not None:
            self._groups.note_read(view.entries, view.valid_until)
        return list(view.entries), view.valid_until

    def rest_mappings(self, group_kind: GroupKind, *versions: str) -> list[RESTMapping]:
        """Return every RESTMapping of a kind, in priority order (``PriorityRESTMapper.RESTMappings``).

        Raises:
            NoKindMatchError, GroupDiscoveryError, DiscoveryError: as :meth:`rest_mapping`.
            InvalidArgumentError: a group or version no server can serve (an apiVersion, upper case).
        """
        group_kind, versions = group_kind_and_versions("rest_mappings", group_kind, versions)

        def question() -> Question[Iterable[RESTMapping]]:  # built only when not memoized: checked then
            require_question_shape("rest_mappings", group_kind.group, versions)
            return Question(lambda: asked_kind(group_kind, versions), lambda io: {group_kind.group},
                            lambda m: tuple(m.rest_mappings(group_kind, *versions)), versions=versions,
                            load=required_versions(*versions) or None)

        return list(self._answer(("rest_mappings", group_kind.group, group_kind.kind, versions), question))

    def resource_singularizer(self, resource: str) -> str:
        """Return the singular name of a plural resource (``DefaultRESTMapper.ResourceSingularizer``).

        Raises:
            NoResourceMatchError: no resource has that name.
            AmbiguousResourceError: resources of several groups have that name with different singulars.
        """
        require_str("resource_singularizer", resource, "a resource name")
        return self._answer(("resource_singularizer", resource), lambda: Question(
            lambda: f'resource "{resource}"', lambda io: None, lambda m: m.resource_singularizer(resource),
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
                       category: str | None = None, deps: list[tuple[Cell, int]] | None = None) -> set[str]:
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
            deps: when given, the cells read are recorded in it (the answer may come from any group).

        Raises:
            GroupDiscoveryError: the root documents could not be read.
        """

        def pick(index: MergedIndex, deps: list[tuple[Cell, int]]) -> Collection[str]:
            if kind:
                found = index.with_kind(kind, deps)
                return {*found, *index.with_kind(kind[:-4], deps)} if kind.lower().endswith("list") else found
            if name:
                return index.with_name(name, deps)
            if short_name:
                return index.with_short_name(short_name.lower(), deps)
            if category:
                return index.with_category(category.lower(), deps)
            return index.names

        return self._groups.candidates(pick, [] if deps is None else deps)[0]

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
                                clock=time.monotonic, caller="wait_for")
