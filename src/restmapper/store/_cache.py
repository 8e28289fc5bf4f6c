"""The :class:`ObjectCache`: informers over the lazy mapper, one per kind, started on first use."""

from __future__ import annotations

import builtins
import functools
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from restmapper._public import repr_when_unfinished
from restmapper.errors import InformerNotStartedError
from restmapper.generation import GenerationCache
from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource
from restmapper.store._args import check_key, check_options, check_selectors, check_streams, own_names
from restmapper.store._cache_crds import CrdWake
from restmapper.store._cache_handlers import CacheHandlers
from restmapper.store._cache_waits import CacheWaits
from restmapper.store._errors import InformerStoppedError
from restmapper.store._handlers import HandlerHandle, OnAdd, OnDelete, OnUpdate
from restmapper.store._informer import Informer
from restmapper.store._kinds import CacheCall, group_kind_of
from restmapper.store._leading import Leadership
from restmapper.store._reflectors import SyncModes
from restmapper.store._scope import KindScopes, Scope, TransformArg
from restmapper.store._stats import InformerInfo
from restmapper.transport import end_idle_deadline_thread
from restmapper.transport.base import Transport
from restmapper.transport.config import ClientConfig, incluster_config, resolve_config
from restmapper.transport.retry import RetryPolicy
from restmapper.watch.reflector import DEFAULT_IDLE_TIMEOUT

if TYPE_CHECKING:
    from restmapper.watch.watcher import Watcher

_C = TypeVar("_C", bound="ObjectCache")  # the class a constructor is called on (a subclass builds itself)

__all__ = ["InformerInfo", "KindArg", "ObjectCache"]

KindArg = GroupKind | GroupVersionKind | GroupVersionResource | str
"""What names a kind: a GroupKind, a GVK, a GVR, or what a user types (``"deploy"``, ``"Widget.example.com"``)."""

_HOT_LIMIT = 4096


class ObjectCache:
    """Read objects of any kind through self-healing informers (controller-runtime's ``cache.Cache`` over our mapper).

    ``get``/``list`` of a kind start its informer on first use and wait for its first list (bounded by
    ``sync_timeout``). Informers are keyed by GroupKind and watch the kind's preferred version (a version in a
    GVK/GVR argument only names the kind); they follow the kind when it moves to another version, wait while it is
    not served and restart by themselves when it is back. See the ``restmapper.store`` module docstring.

    Thread-safe. Objects returned are the cache's own dicts, shared by every reader: treat them as read-only
    (``copy.deepcopy`` before changing one), as client-go's listers require. They are not copied because a copy
    costs more than the whole lookup (a ConfigMap deep copy is ~20 us; a warm ``get`` is ~1 us).
    """

    def __init__(
        self,
        mapper: LazyRESTMapper,
        *,
        namespace: str | None = None,
        namespaces: Iterable[str] | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        transform: TransformArg | None = None,
        by_kind: Mapping[KindArg, Mapping[str, Any]] | None = None,
        lazy: bool = True,
        resync: float | None = None,
        sync_timeout: float = 30.0,
        watcher: Watcher | None = None,
        transport: Transport | None = None,
        watch_timeout: float = 300.0,
        watch_idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        relist_period: float | None = None,
        page_size: int = 500,
        watch_list: bool = True,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        probe_initial: float = 1.0,
        probe_max: float = 30.0,
        sleep: Callable[[threading.Event, float], None] | None = None,
        daemon: bool = True,
    ) -> None:
        """Create a cache (no thread runs until the first use or :meth:`start`).

        The scope options (``namespace(s)``, selectors, ``metadata_only``, ``transform``) are asked of the
        **server**, as controller-runtime's ``cache.Options``: a controller holds only what it reads. Reads asking
        for more than an informer holds raise :class:`~restmapper.errors.OutsideScopeError`; reads asking for less
        are filtered locally.

        Args:
            mapper: resolves kinds; its transport lists and watches (unless ``transport`` is given).
            namespace: the one-namespace form of ``namespaces``.
            namespaces: the namespaces of namespaced kinds to hold, each listed and watched by a reflector of its
                own that fails on its own; None: all. Cluster-scoped kinds ignore it.
            label_selector, field_selector: sent as ``labelSelector``/``fieldSelector`` on the list and the watch;
                objects changing out of (into) them reach handlers as ``on_delete`` (``on_add``).
            metadata_only: hold ``PartialObjectMetadata`` (reads and handlers get those; full objects after a 406).
            transform: a callable or a list applied in order (``[strip_managed_fields, strip_last_applied]``) to
                every object, page by page, before it is stored; it must return the object keeping ``metadata``
                name/namespace/uid/resourceVersion, else the list or event fails with
                :class:`~restmapper.errors.TransformError` (the informer is ``failing``, reads raise it).
            by_kind: per-kind overrides of the options above (``{"pods": {"metadata_only": True}}``; a key given
                overrides, even with None); a string or GVR kind is resolved when its informer starts.
            lazy: start an informer on the first read of its kind (logged at INFO with its scope, once per kind);
                False: reads of a kind not started by :meth:`start` or :meth:`informer` raise
                :class:`~restmapper.errors.InformerNotStartedError` (controller-runtime's
                ``ReaderFailOnMissingInformer``). See :class:`~restmapper.store.Scope` for the scope's rules.
            resync: every this many seconds, call every ``on_update(obj, obj)`` for every object (client-go's
                resync period); None never.
            sync_timeout: seconds a read waits for an informer's first list before
                :class:`CacheSyncTimeoutError`.
            watcher: a running CRD :class:`~restmapper.watch.Watcher` over the same mapper: informers of a kind
                that is not served restart on its CRD events instead of re-probing, and move at once when a CRD
                changes. None: a bounded re-probe with backoff.
            transport: list/watch transport; None uses the mapper's discovery transport.
            watch_timeout: ``timeoutSeconds`` of each watch request, seconds.
            watch_idle_timeout: seconds a watch may stay silent (no event, no bookmark) before it is reopened at
                once from where it was (not a failure: a quiet watch on a server without periodic bookmarks looks
                the same as a dead connection; a reconnect that fails is one); kube-apiserver sends a bookmark
                about every minute to the watches we open.
            relist_period: list again (the list is the truth: handlers hear of every difference) when a watch
                ends this many seconds or more after the last list, seconds; bounds how long an event the server
                dropped without a 410 (a lost ``DELETED``) stays wrong in the cache. None (the default, as
                client-go): relist only when the protocol needs it.
            page_size: list page size (``limit``); 0 lists in one request.
            watch_list: sync (the first list and every relist) by WatchList (KEP-3157, client-go's
                ``WatchListClient``, on by default from 1.35): one watch streams the objects, each stored as it
                arrives, then their changes; a server that refuses it (its ``WatchList`` feature gate off: the
                default before 1.32 and in 1.33) or ignores it is detected once per API group version and listed
                in pages from then on; a watch-list that fails otherwise (a 403 where RBAC allows only list, a 5xx,
                a stream ending early) is completed by a paginated list that once (client-go's fallback).
                ``informer.stats.sync_mode`` says which. False: paginated lists only.
            backoff_initial: first wait after a list/watch failure, seconds (doubling, 10 % jitter).
            backoff_max: cap of one wait, seconds.
            probe_initial: first wait before asking again whether a not-served kind is back, seconds.
            probe_max: cap of that wait (also the safety-net period when a watcher drives restarts), seconds.
            sleep: ``sleep(stop_event, seconds)`` for backoff waits (tests inject one).
            daemon: run informer threads as daemon threads.

        Raises:
            TypeError: ``mapper`` is not a LazyRESTMapper (a kubeconfig path: use :meth:`from_kubeconfig`), or an
                option of the wrong type (``transform`` or ``sleep`` not callable, seconds that are not numbers).
            InvalidArgumentError: a non-positive ``sync_timeout``/``watch_timeout``/``watch_idle_timeout``/``resync``/
                ``relist_period``, any seconds option NaN or infinite, bad backoff bounds, an empty ``namespace``,
                or a transport that cannot stream watches (such as the testing kit's ``InProcessTransport`` behind
                the pytest plugin's ``mapper`` fixture; the message says how to get one that can); a malformed
                selector, an empty ``namespaces``, both ``namespace`` and ``namespaces``, an unknown ``by_kind``
                option.
        """
        check_options("ObjectCache", mapper, dict(
            namespace=namespace, resync=resync, transform=transform, sync_timeout=sync_timeout, watcher=watcher,
            transport=transport, watch_timeout=watch_timeout, watch_idle_timeout=watch_idle_timeout,
            relist_period=relist_period, page_size=page_size, backoff_initial=backoff_initial,
            backoff_max=backoff_max, probe_initial=probe_initial, probe_max=probe_max, sleep=sleep, daemon=daemon,
            lazy=lazy, watch_list=watch_list))
        self.transport: Transport = transport if transport is not None else mapper.transport
        check_streams(self.transport)
        self._scopes = KindScopes(dict(namespace=namespace, namespaces=namespaces, label_selector=label_selector,
                                       field_selector=field_selector, metadata_only=metadata_only,
                                       transform=transform), by_kind)
        self._lazy = lazy
        self._announced: set[GroupKind] = set()  # kinds whose informer start was logged (once per kind)
        self.mapper = mapper
        self.namespace = namespace
        self.watcher = watcher
        self._discovery_cache = mapper.cache
        self._crds = CrdWake(watcher, self._informers_of_group)
        self._watched = self._crds.watched
        self._options: dict[str, Any] = dict(
            resync=resync, sync_timeout=sync_timeout,
            watch_timeout=watch_timeout, idle_timeout=watch_idle_timeout, relist_period=relist_period,
            page_size=page_size, sleep=sleep, daemon=daemon, sync_modes=SyncModes(watch_list),
            backoff=RetryPolicy(initial_backoff=backoff_initial, max_backoff=backoff_max),
            probe=RetryPolicy(initial_backoff=probe_initial, max_backoff=probe_max))
        # _lock guards _informers and _stopped; never held across I/O or while joining threads.
        self._lock = threading.Lock()
        self._informers: dict[GroupKind, Informer] = {}
        self._stopped = False  # stop() was called and start() not since: no informer may start
        # The warm path: kind string or id(kind object) -> (kind, mapper cache generation or None, informer).
        self._hot: dict[Hashable, tuple[KindArg, int | None, Informer]] = {}
        self._waits = CacheWaits(self._informer)
        self._handlers = CacheHandlers(self._informer, self._running_informers)

    @classmethod
    def from_config(cls: type[_C], config: ClientConfig, **options: Any) -> _C:
        """Build a cache (and its mapper) from resolved settings (:func:`~restmapper.transport.resolve_config`);
        :meth:`from_kubeconfig` and :meth:`from_incluster` take the same options.

        Args:
            config: the settings.
            **options: cache options (see the constructor); any other keyword goes to
                :meth:`LazyRESTMapper.from_config` (mapper and transport options).

        Raises:
            ConfigError: the settings are unusable.
            TypeError: an unknown option (the message names the method called).
        """
        mine = cls._own_options(options)
        return cls(LazyRESTMapper.from_config(config, **options), **mine)

    @classmethod
    def from_kubeconfig(cls: type[_C], path: str | None = None, context: str | None = None, **options: Any) -> _C:
        """Build a cache (and its mapper) from a kubeconfig, or the pod's service account when there is none.

        Args:
            path: the kubeconfig file, or None to resolve as :func:`~restmapper.transport.resolve_config`
                (``$KUBECONFIG``, in-cluster, ``~/.kube/config``: controller-runtime's ``GetConfig`` order).
            context: the context, or None for the current one.
            **options: as :meth:`from_config`.

        Raises:
            ConfigError: no usable source (the message lists those tried), or the kubeconfig is invalid.
            TypeError: an unknown option (the message names this method).
        """
        cls._check_config_options(f"{cls.__name__}.from_kubeconfig", options)
        return cls.from_config(resolve_config(path, context), **options)

    @classmethod
    def from_incluster(cls: type[_C], service_account_dir: str | None = None, **options: Any) -> _C:
        """Build a cache (and its mapper) from the pod's service account (client-go ``rest.InClusterConfig``).

        Args:
            service_account_dir: the service-account folder (default
                :data:`~restmapper.transport.config.SERVICE_ACCOUNT_DIR`).
            **options: as :meth:`from_config`.

        Raises:
            ConfigError: not in a pod, or the token file is missing or empty.
            TypeError: an unknown option (the message names this method).
        """
        cls._check_config_options(f"{cls.__name__}.from_incluster", options)
        return cls.from_config(incluster_config(service_account_dir), **options)

    @classmethod
    def _check_config_options(cls, method: str, options: Mapping[str, Any]) -> None:
        """TypeError naming ``method`` for a keyword that is neither a cache, mapper nor transport option."""
        names = own_names(cls)
        LazyRESTMapper._check_config_options(method, {k: v for k, v in options.items() if k not in names})

    @classmethod
    def _own_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """Pop the constructor's keywords out of ``options`` (the rest go to the mapper and transport)."""
        names = own_names(cls)
        return {k: options.pop(k) for k in list(options) if k in names}

    # --- lifecycle ----------------------------------------------------------------------------------------------

    def start(self, kinds: Iterable[KindArg] = ()) -> ObjectCache:
        """Make the cache usable and start the informers of ``kinds``; returns self (without ``kinds``, informers
        start on first use; implicit for a new cache; after :meth:`stop`, reads raise :class:`InformerStoppedError`
        until this is called again). Does not wait for them to sync (:meth:`wait_for_sync`).

        Args:
            kinds: kinds to start now (see :data:`KindArg`); with ``lazy=False`` the only kinds reads may name
                (with :meth:`informer`'s).

        Returns:
            This cache (for ``cache = ObjectCache(mapper).start([...])``).

        Raises:
            TypeError: ``kinds`` is a str or not iterable (pass a list). As :meth:`informer` otherwise.
        """
        if isinstance(kinds, (str, bytes)) or not isinstance(kinds, Iterable):
            raise TypeError(f"start() takes kinds as a list of kinds (start(kinds=[{kinds!r}])), not "
                            f"{type(kinds).__name__}")
        with self._lock:
            self._stopped = False
        for kind in kinds:
            self._informer(kind, CacheCall("start"))
        return self

    def stop(self, timeout: float | None = 10.0) -> bool:
        """Stop every informer and drop them with their handlers and indexers; end every thread the cache started.

        The informer and handler threads end, and so does the transports' shared request-deadline thread
        (``restmapper-deadlines``) unless a request of someone else (a mapper lookup, a watcher) is in flight.
        Afterwards reads, waits and handler registrations raise :class:`InformerStoppedError` (nothing restarts
        threads nobody would stop) until :meth:`start` is called again; a stopped informer is never handed out.

        Every informer is told to stop before any is waited for; ``timeout`` bounds the whole wait. An informer thread
        waiting for discovery (the mapper's shared request, never cut) is not waited for: it ends after it, idle.

        Args:
            timeout: seconds to wait for all the threads together, or None without bound.

        Returns:
            True when every informer and handler thread ended in time (or was left waiting for discovery).
        """
        with self._lock:
            informers = list(self._informers.values())
            self._informers.clear()
            self._hot = {}
            self._stopped = True
        self._crds.stop()
        for informer in informers:  # every informer told first: they all end meanwhile, not one after the other
            informer._signal_stop()
        deadline = None if timeout is None else time.monotonic() + timeout
        ended = True
        for informer in informers:
            ended = informer._join(deadline) and ended
        if ended:
            end_idle_deadline_thread(timeout)  # shared: only when no one else's request is in flight
        return ended

    def _check_not_stopped_locked(self) -> None:
        """Raise InformerStoppedError after :meth:`stop` (until :meth:`start`): no informer starts then (lock held)."""
        if self._stopped:
            raise InformerStoppedError("the object cache was stopped (stop(), or its with block ended): it starts no "
                                       "informer; call start() to use it again")

    def __enter__(self) -> ObjectCache:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def informers(self) -> builtins.list[InformerInfo]:
        """Describe the informers running now, ordered by kind: what each holds, its state and object count.

        Returns:
            One :class:`InformerInfo` per informer.
        """
        with self._lock:
            informers = sorted(self._informers.values(), key=lambda i: str(i.group_kind))
        infos = []
        for informer in informers:
            mapping = informer.mapping
            infos.append(InformerInfo(
                kind=informer.group_kind, scope=informer.scope.describe(mapping.namespaced if mapping else True),
                state=informer.state, objects=informer.stats.objects,
                namespaces_state=informer.namespaces_state, informer=informer))
        return infos

    def has_informer(self, kind: GroupKind) -> bool:
        """True when an informer of ``kind`` runs now (no I/O, no lock held beyond a dict lookup).

        Args:
            kind: a GroupKind (not resolved: a str or GVR is never found).

        Returns:
            True for a started informer that is not ``"stopped"``; False otherwise. Never raises.
        """
        with self._lock:
            informer = self._informers.get(kind)
        return informer is not None and informer.state != "stopped"

    def _running_informers(self) -> builtins.list[Informer]:
        with self._lock:
            return builtins.list(self._informers.values())

    def _cache_generation(self) -> int:
        return self._discovery_cache.generation

    # --- kinds -> informers --------------------------------------------------------------------------------------

    def group_kind(self, kind: KindArg) -> GroupKind:
        """Return the GroupKind ``kind`` names (asks the mapper for strings and GVRs).

        Args:
            kind: a GroupKind, GroupVersionKind, GroupVersionResource, or a str as kubectl takes it (``"deploy"``,
                ``"Deployment.apps"``).

        Returns:
            The :class:`GroupKind`.

        Raises:
            NoKindMatchError, NoResourceMatchError: the mapper found no such kind (it is not served).
            AmbiguousResourceError, AmbiguousKindError, DiscoveryError: as the mapper.
            TypeError: ``kind`` is not one of the accepted types.
            InvalidArgumentError: a string that names no one resource type (a category, a comma list,
                ``TYPE/NAME``); the message names the cache call to make instead.
        """
        return self._group_kind(kind, CacheCall("group_kind"))

    def _group_kind(self, kind: KindArg, call: CacheCall) -> GroupKind:
        return group_kind_of(self.mapper, kind, call)

    def _by_kind_key(self, key: KindArg) -> GroupKind:
        return self._group_kind(key, CacheCall("by_kind"))

    def _warm_informer(self, kind: KindArg) -> Informer | None:
        """The memoized informer for ``kind`` when it is still valid (no lock, no hashing of dataclasses)."""
        hot = self._hot.get(kind if kind.__class__ is str else id(kind))
        if hot is not None and (hot[0] is kind or hot[0] == kind) and hot[2]._state != "stopped" and (
                hot[1] is None or hot[1] == self._cache_generation()):
            return hot[2]
        return None

    def informer(self, kind: KindArg) -> Informer:
        """Return the running informer for ``kind``, starting it if needed (it may still be syncing).

        A GroupKind or GVK gets an informer even when the kind is not served yet (state ``not_served``; it starts
        listing when the kind appears); a string or GVR must resolve now.

        Args:
            kind: as :meth:`group_kind`.

        Returns:
            The kind's :class:`Informer` (one per kind and cache).

        Raises:
            As :meth:`group_kind`.
            InformerStoppedError: the cache was stopped (see :meth:`stop`).
        """
        return self._informer(kind, CacheCall("informer"))

    def _informer(self, kind: KindArg, call: CacheCall) -> Informer:
        """:meth:`informer`, for the cache's ``call`` (named in an argument error)."""
        warm = self._warm_informer(kind)
        if warm is not None:
            return warm
        generation = None if isinstance(kind, (GroupKind, GroupVersionKind)) else self._cache_generation()
        gk = self._group_kind(kind, call)
        while True:
            with self._lock:
                self._check_not_stopped_locked()
                informer = self._informers.get(gk)
                fresh = informer is None or informer._state == "stopped"
            if fresh and not self._lazy and call.method not in ("informer", "start"):
                raise InformerNotStartedError(str(gk), f"{call.name}()")
            # A new informer's scope is read without the lock (by_kind keys may ask the mapper).
            scope = self._scopes.for_kind(gk, self._by_kind_key) if fresh else None
            with self._lock:
                informer, fresh = self._held_or_new(gk, scope)
                if informer is not None:
                    self._remember(kind, generation, informer)
                    break
        if fresh:
            informer._start()
        return informer

    def _held_or_new(self, gk: GroupKind, scope: Scope | None) -> tuple[Informer | None, bool]:
        """The running informer of ``gk``, or a new one (not started) of ``scope``, and whether it is new; None
        when a new one is needed and ``scope`` is None (it stopped since it was looked up: read it again). Lock
        held."""
        self._check_not_stopped_locked()
        informer = self._informers.get(gk)
        if informer is not None and informer._state != "stopped":
            return informer, False
        if scope is None:
            return None, True
        rescope = functools.partial(self._scopes.for_kind, gk, self._by_kind_key) if self._scopes.pending() else None
        # Listen before the informer first resolves its kind: a CRD created once it found the kind not served must
        # wake it (the event would be lost if the handler were added only after that).
        self._watched()
        announce = gk not in self._announced
        self._announced.add(gk)
        informer = Informer(gk, self.mapper, self.transport, watched=self._watched, scope=scope, announce=announce,
                            rescope=rescope, **self._options)
        self._informers[gk] = informer
        return informer, True

    def _remember(self, kind: KindArg, generation: int | None, informer: Informer) -> None:
        """Memoize ``informer`` for the warm path of ``kind`` (lock held)."""
        if len(self._hot) >= _HOT_LIMIT:
            self._hot = {}
        # Strings hash fast (cached); a frozen dataclass hashes in ~0.5 us, so other kinds are keyed by id() and the
        # entry keeps the object itself (checked with `is`, and alive while memoized). A string resolved with
        # something to warn (a short name an unreadable group may beat) is resolved again on each call, as the
        # mapper warns each time: only a quiet resolution is held.
        if not isinstance(kind, str) or self.mapper.cached_resolve(kind) is not None:
            self._hot[kind if isinstance(kind, str) else id(kind)] = (kind, generation, informer)

    # --- reads ------------------------------------------------------------------------------------------------

    def get(self, kind: KindArg, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Return one object from the cache (the first read of a kind waits for its informer to sync).

        Args:
            kind: the kind (see :data:`KindArg`).
            name: ``metadata.name``.
            namespace: the namespace, for namespaced kinds (defaults to the cache's ``namespace``; ignored for
                cluster-scoped kinds, as client-go's ``NamespaceIfScoped``).

        Returns:
            The object in wire form, in the informer's (preferred) version, after ``transform``. Shared and
            read-only by contract (see the class docstring).

        Raises:
            ObjectNotFoundError: the cache has no such object (``is_not_found(exc)``).
            NoKindMatchError, NoResourceMatchError: the kind is not served (the mapper's no-match).
            ForbiddenError: the list, or the watch of a synced informer, is forbidden (RBAC 403; ``server_status``
                is the server's Status), raised as soon as the server answered (never an answer from a store the
                refused watch froze); the informer keeps relisting with backoff, so a grant heals it. Other
                permanent list/watch failures (401, a body over the size cap) raise their ``TransportError`` alike.
            TransformError: the cache's ``transform`` refused an object (see the constructor).
            DiscoveryError, TransportError: the informer could not look its kind up (server down), raised at once
                whatever names the kind, as a string kind's resolution raises it.
            CacheSyncTimeoutError: no first list within ``sync_timeout`` for another reason (a slow server, 5xx
                answers; chains the last error).
            InvalidArgumentError: a namespaced kind without namespace (with several ``namespaces`` in scope).
            OutsideScopeError: (an InvalidArgumentError) a namespace outside the informer's ``namespaces``.
            APIStatusError: the namespace is refused to the client (403), also when access was revoked after it
                synced (its objects may be stale), until it lists again: the informer serves the others.
            InformerNotStartedError: ``lazy=False`` and the kind's informer was not started.
            TypeError: ``name`` or ``namespace`` is not a str.
            AmbiguousResourceError, AmbiguousKindError, DiscoveryError, TypeError: resolving ``kind``.
            InformerStoppedError: the cache was stopped (:meth:`stop`, or its ``with`` block ended) and not
                started again; so for every read, wait and handler registration.
        """
        hot = self._hot.get(kind if kind.__class__ is str else id(kind))
        if hot is not None and (hot[0] is kind or hot[0] == kind) and hot[2]._readable and (
                hot[1] is None or hot[1] == self._discovery_cache.generation):
            return hot[2].get(name, namespace)
        check_key("ObjectCache.get", name, namespace)
        return self._informer(kind, CacheCall("get", f', "{name}", ...')).get(name, namespace)

    def list(self, kind: KindArg, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None, index: str | None = None,
             value: str | None = None) -> list[dict[str, Any]]:
        """Return the cached objects of ``kind`` that match, ordered by namespace then name.

        Args:
            kind: the kind.
            namespace: only this namespace (None: every namespace the cache holds).
            label_selector: as ``kubectl get -l`` (``app=web,tier!=db,env in (a,b),!legacy,replicas>2``; parsed as
                apimachinery's ``labels.Parse``). With an informer scoped by a label selector, every object it
                selects must be selected by that selector (``env in (a)`` within ``env in (a,b)``; None reads the
                scope).
            field_selector: ``path=value``/``path!=value`` terms over dotted paths (``metadata.name=x``,
                ``status.phase=Running``; values as ``fields.ParseSelector``: ``\\,`` ``\\=`` escapes); it must
                contain the informer's field selector's terms; other terms are evaluated locally only on fields the
                held objects carry (``metadata.*`` with ``metadata_only``). ``metadata.namespace=x`` is checked
                like ``namespace="x"``.
            index: an indexer name (:meth:`Informer.add_indexer`) and ``value``: only objects indexed there.
            value: the index value (give both or neither).

        Returns:
            The shared, read-only objects.

        Raises:
            TypeError: a filter that is not a str (a dict of labels: the message gives the selector string).
            InvalidArgumentError: a malformed selector, an unknown index, ``index`` without ``value``.
            OutsideScopeError: a namespace or selector broader than what the informer holds, or a field term on a
                field the held objects lack (metadata-only objects, a transform that removed it).
            ForbiddenError: a namespace read is refused (its 403); reading every namespace raises the first refused
                namespace's error (a partial answer would be wrong about it): read the others one at a time.
            As :meth:`get` otherwise (never ObjectNotFoundError).
        """
        check_selectors("ObjectCache.list", namespace, label_selector, field_selector, index, value)
        return self._informer(kind, CacheCall("list")).list(namespace, label_selector, field_selector, index, value)

    # --- waits and handlers (held objects; their docstrings are these methods') -------------------------------

    def wait_for_sync(self, kind: KindArg, timeout: float | None) -> bool:
        return self._waits.wait_for_sync(kind, timeout)

    wait_for_sync.__doc__ = CacheWaits.wait_for_sync.__doc__

    def wait_for(self, kind: KindArg, name: str, namespace: str | None = None, *,
                 resource_version: str | None = None, generation: int | None = None,
                 timeout: float) -> dict[str, Any]:
        return self._waits.wait_for(kind, name, namespace, resource_version=resource_version,
                                    generation=generation, timeout=timeout)

    wait_for.__doc__ = CacheWaits.wait_for.__doc__

    def wait_for_deleted(self, kind: KindArg, name: str, namespace: str | None = None, *, uid: str | None,
                         resource_version: str | None = None, timeout: float) -> None:
        self._waits.wait_for_deleted(kind, name, namespace, uid=uid, resource_version=resource_version,
                                     timeout=timeout)

    wait_for_deleted.__doc__ = CacheWaits.wait_for_deleted.__doc__

    def add_handler(self, kind: KindArg, on_add: OnAdd | None = None, on_update: OnUpdate | None = None,
                    on_delete: OnDelete | None = None, *, while_leading: Leadership | None = None) -> HandlerHandle:
        return self._handlers.add_handler(kind, on_add, on_update, on_delete, while_leading=while_leading)

    add_handler.__doc__ = CacheHandlers.add_handler.__doc__

    def remove_handler(self, handle: HandlerHandle, *, wait: float | None = None) -> bool:
        return self._handlers.remove_handler(handle, wait=wait)

    remove_handler.__doc__ = CacheHandlers.remove_handler.__doc__

    def derived(self, kind: KindArg, build: Callable[[Any], Any], *,
                fingerprint: Callable[[Any], Hashable] | None = None,
                dispose: Callable[[Any], None] | None = None) -> GenerationCache[Any, Any]:
        return self._handlers.derived(kind, build, fingerprint=fingerprint, dispose=dispose)

    derived.__doc__ = CacheHandlers.derived.__doc__

    # --- healing driven by a CRD watcher -----------------------------------------------------------------------

    def _informers_of_group(self, group: object) -> builtins.list[Informer]:
        with self._lock:
            return [i for gk, i in self._informers.items() if gk.group == group]

    @repr_when_unfinished
    def __repr__(self) -> str:
        with self._lock:
            return f"ObjectCache(informers={len(self._informers)}, scope={self._scopes.base.describe()!r})"
