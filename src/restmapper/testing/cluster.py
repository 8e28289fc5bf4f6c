"""An in-memory Kubernetes API server that serves discovery exactly as kube-apiserver does.

:class:`FakeCluster` holds the served API (the built-in profile, CRDs, aggregated APIs), failure modes, injected
faults and a request log. :meth:`FakeCluster.handle` is the single HTTP entry point; the front ends in
:mod:`restmapper.testing.server` (``responses`` mock and loopback server) only translate to and from it.

Ordering mirrors kube-apiserver's aggregator: core first at ``/api``; ``/apis`` groups by group priority, highest
first (built-in groups keep the profile's order above everything else, CRD groups have priority 1000, aggregated
APIs added with :meth:`FakeCluster.add_api_resources` 100 by default); a group's priority is the highest of its
versions'. Ties are broken by group name in aggregated discovery, and by APIService name (``<version>.<group>``)
in the legacy ``APIGroupList`` (see :meth:`FakeCluster._legacy_view`). Versions within a group by version priority,
ties by Kubernetes version order (``version.CompareKubeAwareVersionStrings``); the first is the preferred version.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from restmapper.errors import InvalidArgumentError
from restmapper.model import APIResource, GroupVersion
from restmapper.testing import _documents as docs
from restmapper.testing import _served as served
from restmapper.testing._apiservices import APIServicesMixin
from restmapper.testing._faults import Fault, FaultsMixin, RecordedRequest
from restmapper.testing._leases import LeasesMixin
from restmapper.testing._lifecycle import CRDLifecycleMixin
from restmapper.testing._list import WatchListSupport, watch_list_by_default, watch_list_support
from restmapper.testing._objects import ObjectsMixin
from restmapper.testing._rbac import Denial
from restmapper.testing._router import Request, Router, StreamBody
from restmapper.testing._served import ServedGroup
from restmapper.testing._served import StaticVersion as _StaticVersion
from restmapper.testing._store import CRD_KEY, ObjectStore
from restmapper.testing._trickle import Trickle
from restmapper.testing.crd import CRD_VERSION_PRIORITY
from restmapper.testing.profile import (
    DEFAULT_RELEASE,
    APIProfile,
    ResourceSpec,
    embedded_crd_manifests,
    least_core,
    load_builtin_profile,
    specs_from_api_resources,
)

if TYPE_CHECKING:
    import os

    from restmapper.testing.server import ServedCluster

__all__ = ["MODES", "FakeCluster", "Fault", "RecordedRequest"]

MODES = ("aggregated", "aggregated-v2beta1", "legacy")
_BUILTIN_GROUP_PRIORITY = 20000  # above CRDs (1000) and aggregated APIs (100), as kube-apiserver's own groups


T = TypeVar("T")


def _major_minor(git_version: str) -> tuple[str, str]:
    """The major and minor numbers of ``git_version`` (``v1.35.0``), as ``/version`` reports them.

    Raises:
        InvalidArgumentError: when it does not start with two numbers.
    """
    major, _, rest = git_version.lstrip("v").partition(".")
    minor = rest.partition(".")[0]
    if not (major.isdigit() and minor.isdigit()):
        raise InvalidArgumentError(f"git_version must look like v1.35.0, got {git_version!r}")
    return major, minor


def _builtin_versions(profile: APIProfile | None, release: str | None) -> dict[str, dict[str, _StaticVersion]]:
    """The built-in group versions served, by group and version: the profile's, in its order (the first group
    and version the highest priority), or without one core ``v1`` with the least a server serves."""
    if profile is None:
        return {"": {"v1": _StaticVersion(least_core(release), _BUILTIN_GROUP_PRIORITY, 10000)}}
    versions: dict[str, dict[str, _StaticVersion]] = {}
    for gi, group in enumerate(profile.groups):
        for vi, gv in enumerate(group.versions):
            versions.setdefault(group.name, {})[gv.version] = _StaticVersion(
                gv.resources, _BUILTIN_GROUP_PRIORITY - gi, 10000 - vi)
    return versions


class ClusterInternals:
    """The small internal API of a :class:`FakeCluster` that the kit's own layers use (handlers, REST, watch,
    server); not a public API. Every method is called with :attr:`lock` held unless it says otherwise."""

    def __init__(self, cluster: FakeCluster) -> None:
        self._cluster = cluster
        self._cache: dict[tuple[str, ...], tuple[int, Any]] = {}

    @property
    def lock(self) -> threading.RLock:
        """The cluster's lock (re-entrant; also the lock of the store's condition)."""
        return self._cluster._lock

    @property
    def store(self) -> ObjectStore:
        """The object store (objects, resourceVersions, watch history)."""
        return self._cluster._store

    def version_info(self) -> tuple[str, str, str]:
        """``(major, minor, gitVersion)`` for ``/version``."""
        c = self._cluster
        return c._major, c._minor, c.git_version

    def core_versions(self) -> list[tuple[str, tuple[ResourceSpec, ...]]]:
        """The core group's versions, preferred first, with their resources."""
        return self._cluster._core_versions()

    def served_groups(self, *, legacy: bool = False) -> tuple[ServedGroup, ...]:
        """The named groups in aggregated discovery order, or in legacy ``/apis`` order."""
        return self._cluster._legacy_view() if legacy else self._cluster._view()

    def crds(self) -> Mapping[str, dict[str, Any]]:
        """The stored CRD objects by name (live objects: never mutate them)."""
        return self._cluster._crds

    def is_stale(self, gv: GroupVersion) -> bool:
        """True when ``gv``'s APIService is unavailable (see :meth:`FakeCluster.set_stale`)."""
        return gv in self._cluster._stale

    def watch_list(self) -> WatchListSupport:
        """What watches do with ``sendInitialEvents`` (see :attr:`FakeCluster.watch_list`)."""
        c = self._cluster
        return watch_list_support(c._release, c.watch_list)

    def is_gone(self, gv: GroupVersion) -> bool:
        """True when ``gv`` is listed but its own path answers 404 (:meth:`FakeCluster.set_listed_but_gone`)."""
        return gv in self._cluster._gone

    def cached(self, key: tuple[str, ...], build: Callable[[], T]) -> T:
        """Return ``build()``, memoized until what is served changes (documents derived from the served API)."""
        revision = self._cluster._revision
        hit = self._cache.get(key)
        if hit is not None and hit[0] == revision:
            return hit[1]  # type: ignore[no-any-return]
        if hit is not None or len(self._cache) > 64:
            self._cache = {k: v for k, v in self._cache.items() if v[0] == revision}
        value = build()
        self._cache[key] = (revision, value)
        return value

    def sync_apiservices(self) -> None:
        """Bring the APIService objects in line with what is served (cheap when nothing changed)."""
        self._cluster._sync_apiservices()

    def wake_watchers(self) -> None:
        """Wake every waiting watch stream (takes the lock itself)."""
        self._cluster._wake_watchers()


class FakeCluster(CRDLifecycleMixin, APIServicesMixin, ObjectsMixin, LeasesMixin, FaultsMixin):
    """An in-memory kube-apiserver serving discovery (legacy and aggregated), thread-safe.

    Example:
        >>> cluster = FakeCluster.embedded()
        >>> status, headers, body = cluster.handle("GET", "/apis/apps", {}, {})
        >>> status
        200

    Serves what kube-apiserver 1.30+ serves (``mode="aggregated"``), a 1.27 server (``"aggregated-v2beta1"``)
    or a pre-1.26 server (``"legacy"``); ``mode`` may be changed at any time.

    Beyond discovery it stores objects and serves them at every resource path (create, get, list, update,
    patch (JSON, merge, strategic-merge and server-side apply), delete, deletecollection, watch), with one
    cluster-wide resourceVersion counter as etcd. Lists page with ``limit``/``continue`` and honour label and
    field selectors and ``resourceVersion``/``resourceVersionMatch`` as the API concepts say; a watch streams
    ``ADDED`` events for the current state (or every event after its ``resourceVersion``, or a 410 once that
    history is compacted), then changes, bookmarks when allowed, and WatchList's ``sendInitialEvents`` when
    :attr:`watch_list` is on. Through the ``responses`` mock a watch answers what is available now and ends (the
    client re-watches, as after a server timeout); the loopback server (:meth:`serve`) streams in real time. CRDs
    follow
    apiextensions' lifecycle (:meth:`add_crd`, :meth:`update_crd`, :meth:`delete_crd`, :meth:`establish`,
    :meth:`set_accepted_names`, :meth:`set_served`, :meth:`set_storage`) and every served group version has an
    APIService (:meth:`apiservices`, :meth:`set_available`). Watches are controlled with :meth:`compact`,
    :meth:`drop_watches`, :meth:`restart`, :meth:`restore`, :meth:`end_watches_at_once`, :meth:`wait_for_watchers`.
    Leader-election tests use :meth:`steal_lease`, :meth:`expire_lease` and :meth:`partition_lease`.

    Every cluster serving the built-in profile starts with the namespaces kube-apiserver creates at start-up:
    ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease``.

    Attributes:
        internals: the kit's internal API of this cluster (:class:`ClusterInternals`), for the kit's own layers.
        bookmark_interval: seconds between periodic watch bookmarks (see the constructor); may be changed.
        watch_list: True when watches serve ``sendInitialEvents`` (WatchList), False when they refuse it as an
            older kube-apiserver (see the constructor); may be changed (checked as the constructor's argument).
        mock_watch_wait: seconds a watch answered through the ``responses`` mock waits for a first event when
            none is available (0: answer at once; None: until ``timeoutSeconds``). The loopback server streams.
    """

    def __init__(
        self,
        *,
        builtin: bool = True,
        crds: Iterable[Mapping[str, Any] | str] = (),
        mode: str | None = None,
        base_url: str = "https://kube.restmapper.test",
        git_version: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        history_limit: int = 1000,
        bookmark_interval: float | None = 60.0,
        release: str | None = None,
        watch_list: bool | None = None,
    ) -> None:
        """Create a cluster.

        Args:
            builtin: serve the built-in API profile of ``release`` (core v1 and its named groups). Without it,
                the cluster serves the least a kube-apiserver does: core ``v1`` with ``namespaces`` alone (as the
                release serves it) and the namespaces it creates at start-up; add more with
                :meth:`add_api_resources` (``add_api_resources("v1", ...)`` replaces that core version).
            crds: CRD manifests (dicts or YAML text, several documents allowed) installed at once.
            mode: ``"aggregated"``, ``"aggregated-v2beta1"`` or ``"legacy"`` (see the class docstring); None: the
                release's default (``1.35``: aggregated, ``1.27``: aggregated-v2beta1, ``1.20``: legacy).
            base_url: the URL the ``responses`` front end intercepts (no trailing slash needed).
            git_version: what ``/version`` reports, e.g. ``v1.35.0``; None: the release's.
            sleep: called with seconds for injected latency (inject a fake to keep tests fast).
            history_limit: how many watch events are kept; a watch from before the oldest gets 410 Gone.
            bookmark_interval: seconds between the ``BOOKMARK`` events a watch that allows them receives (the
                API server's cacher sends one about every minute); None: only at ``timeoutSeconds`` and on
                :meth:`send_bookmarks`.
            release: the Kubernetes release served: ``"1.35"`` (None), ``"1.27"`` or ``"1.20"``.
            watch_list: serve WatchList (a watch with ``sendInitialEvents=true``, KEP-3157). False: refuse it as an
                older kube-apiserver, so a client falls back to a list: on 1.27+ as a server whose ``WatchList``
                feature gate is off (1.27-1.31, 1.33), 422 Invalid ``sendInitialEvents: Forbidden:
                sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled``; on
                ``"1.20"`` as a server before 1.27, which ignores ``sendInitialEvents`` and refuses the
                ``resourceVersionMatch`` of every WatchList request (422 ``resourceVersionMatch: Forbidden:
                resourceVersionMatch is forbidden for watch``). None: the release's default (served by 1.35 only).

        Raises:
            InvalidArgumentError: for an unknown mode, a malformed ``git_version``, an invalid CRD, a
                ``history_limit`` below 1, or ``watch_list=True`` on a release before 1.27.
            TypeError: ``watch_list`` neither None nor a bool.
        """
        if history_limit < 1:
            raise InvalidArgumentError("history_limit must be at least 1")
        self._lock = threading.RLock()  # guards everything below; never held while sleeping
        self._profile = load_builtin_profile(release) if builtin else None
        self._modes = self._profile.modes if self._profile is not None else MODES
        self._mode = ""
        self.mode = mode if mode is not None else self._modes[0]
        self.base_url = base_url.rstrip("/")
        if git_version is None:
            git_version = self._profile.git_version if self._profile is not None else "v1.35.0"
        self.git_version = git_version
        self._major, self._minor = _major_minor(git_version)
        self._sleep = sleep
        self._static = _builtin_versions(self._profile, release)
        self._store = ObjectStore(self._lock, history_limit)
        self._crds: dict[str, dict[str, Any]] = self._store.bucket(CRD_KEY)  # by name; the store owns them
        self._pending: dict[str, int | Callable[[], bool]] = {}  # CRDs waiting for Established
        self._aggregated: set[GroupVersion] = set()  # group versions added with add_api_resources
        self._unavailable: dict[GroupVersion, tuple[str, str]] = {}  # APIService reason/message when down
        self._apiservices_dirty = True
        self._store.hooks.append(self._sync_apiservices)
        self.mock_watch_wait: float | None = 0.0
        self.bookmark_interval = bookmark_interval
        self._stale: set[GroupVersion] = set()
        self._gone: set[GroupVersion] = set()
        self._faults: list[Fault] = []
        self._denials: dict[str, Denial] = {}  # forbidden namespaces (see forbid_namespace)
        self.requests: list[RecordedRequest] = []
        self._revision = 0
        self._view_cache: tuple[int, tuple[ServedGroup, ...]] | None = None
        self._release = release or DEFAULT_RELEASE  # a known release: the profile or least_core checked it
        self.watch_list = watch_list_by_default(self._release) if watch_list is None else watch_list
        self._create_system_namespaces()
        for manifest in crds:
            self.add_crd(manifest)
        self.internals = ClusterInternals(self)
        self._router = Router(lambda _r: docs.page_not_found(), lambda _r: docs.method_not_allowed())
        self._add_routes(self._router)

    # --- construction helpers ----------------------------------------------------------------------------

    @classmethod
    def embedded(cls, **kwargs: Any) -> FakeCluster:
        """Return a cluster with the built-in profile and the embedded CRDs (cert-manager, cluster-api, argo-cd,
        gateway-api, external-snapshotter).

        Args:
            kwargs: as the constructor (``mode``, ``release``, ``watch_list``, ...), e.g. ``release="1.27"``.

        Returns:
            A new :class:`FakeCluster`.

        Raises:
            InvalidArgumentError, TypeError: as the constructor (e.g. ``watch_list=True`` on a release before 1.27).
        """
        return cls(builtin=True, crds=embedded_crd_manifests(), **kwargs)

    @classmethod
    def empty(cls, **kwargs: Any) -> FakeCluster:
        """Return a cluster serving the least a kube-apiserver serves: core ``v1`` with ``namespaces`` alone (and
        the namespaces created at start-up), no named group (see ``builtin``).

        Args:
            kwargs: as the constructor (``mode``, ``release``, ``crds``, ...).

        Returns:
            A new :class:`FakeCluster`.

        Raises:
            InvalidArgumentError, TypeError: as the constructor.
        """
        return cls(builtin=False, **kwargs)

    @property
    def release(self) -> str | None:
        """The Kubernetes release whose built-in API is served (``"1.35"``...), None without the built-in profile."""
        return self._profile.release if self._profile is not None else None

    @property
    def mode(self) -> str:
        """The discovery flavour served: ``aggregated``, ``aggregated-v2beta1`` or ``legacy``."""
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise InvalidArgumentError(f"mode must be one of {', '.join(MODES)}, got {value!r}")
        if value not in self._modes:
            raise InvalidArgumentError(f"release {self.release} serves {', '.join(self._modes)} discovery, not "
                                       f"{value!r}")
        self._mode = value

    @property
    def watch_list(self) -> bool:
        """True when watches serve ``sendInitialEvents`` (WatchList), False when they refuse it (see the constructor).

        Raises (on assignment):
            TypeError: a value that is not a bool.
            InvalidArgumentError: True on a release before 1.27.
        """
        return self._watch_list

    @watch_list.setter
    def watch_list(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"watch_list must be True or False, not {type(value).__name__}")
        if value and watch_list_support(self._release, False) == "unknown":
            raise InvalidArgumentError(f"release {self._release} predates WatchList (sendInitialEvents, 1.27+): "
                                       "pass watch_list=False or leave it unset (the release's default), "
                                       "or choose a release >= 1.27")
        self._watch_list = value

    def _changed(self) -> None:
        self._revision += 1
        self._view_cache = None
        self._apiservices_dirty = True
        self._store.cond.notify_all()  # watch streams sync APIServices when they wake

    # --- aggregated APIs and built-in groups --------------------------------------------------------------

    def add_api_resources(self, group_version: str, resources: Sequence[APIResource], *, preferred: bool = False,
                          priority: int = 100) -> None:
        """Serve ``resources`` at ``group_version`` (an aggregated API such as ``metrics.k8s.io/v1beta1``).

        Subresources are given as ``parent/sub`` entries (as in a legacy resource list) and attached to their
        parent; a subresource whose ``group``/``version`` is set answers with that group version's kind.

        Args:
            group_version: ``group/version`` (``v1`` for core).
            resources: the resource list entries.
            preferred: make this the group's preferred version (highest version priority).
            priority: the group priority (``APIService.spec.groupPriorityMinimum``; 100 sorts after CRDs).

        Raises:
            InvalidArgumentError: for a malformed group version or a subresource without its parent.
        """
        gv = GroupVersion.parse(group_version)
        if not gv.version:
            raise InvalidArgumentError(f"group version {group_version!r} has no version")
        specs = specs_from_api_resources(resources)
        with self._lock:
            versions = self._static.setdefault(gv.group, {})
            if preferred:
                top = max((v.version_priority for v in versions.values()), default=CRD_VERSION_PRIORITY)
                version_priority = top + 1
            else:
                version_priority = versions[gv.version].version_priority if gv.version in versions \
                    else CRD_VERSION_PRIORITY
            versions[gv.version] = _StaticVersion(specs, priority, version_priority)
            self._aggregated.add(gv)
            self._changed()

    def remove_group_version(self, gv: str) -> None:
        """Stop serving a built-in or added group version (CRD versions go with their CRD).

        Raises:
            KeyError: when the group version is not served by the built-in profile or ``add_api_resources``.
        """
        parsed = GroupVersion.parse(gv)
        with self._lock:
            versions = self._static.get(parsed.group, {})
            if parsed.version not in versions:
                raise KeyError(gv)
            del versions[parsed.version]
            self._aggregated.discard(parsed)
            if not versions:
                self._static.pop(parsed.group, None)
            self._changed()

    def remove_group(self, group: str) -> None:
        """Stop serving every built-in or added version of ``group`` (``""`` is core).

        Raises:
            KeyError: when the group is not served by the built-in profile or ``add_api_resources``.
        """
        with self._lock:
            if group not in self._static:
                raise KeyError(group)
            del self._static[group]
            self._aggregated = {gv for gv in self._aggregated if gv.group != group}
            self._changed()

    # --- front ends --------------------------------------------------------------------------------------------

    def mock(self, *, assert_all_requests_are_fired: bool = False) -> contextlib.AbstractContextManager[Any]:
        """Return a context manager in which every ``requests`` call to ``base_url`` is answered by this cluster
        (through ``responses``; a watch answers what is available now and ends).

        Args:
            assert_all_requests_are_fired: passed to ``responses`` (False: routes left unused are fine).

        Returns:
            A context manager; its value is the ``responses.RequestsMock`` in use.

        Raises:
            ModuleNotFoundError: ``responses`` is not installed (the ``testing`` extra).
        """
        from restmapper.testing.server import mock_cluster

        return mock_cluster(self, assert_all_requests_are_fired=assert_all_requests_are_fired)

    def serve(
        self, *, host: str = "127.0.0.1", port: int = 0, kubeconfig_path: str | os.PathLike[str] | None = None,
        tls: bool = False, authorize: Callable[[Mapping[str, str]], bool] | None = None,
    ) -> contextlib.AbstractContextManager[ServedCluster]:
        """Return a context manager serving this cluster on a loopback HTTP(S) server (for kubectl, urllib3).

        Args:
            host: the address to bind (loopback by default).
            port: the port; 0 picks a free one.
            kubeconfig_path: where to write a kubeconfig for the server; None: in a private temporary directory.
            tls: HTTPS with a generated CA (written into the kubeconfig).
            authorize: a bearer-token check on the request headers (e.g.
                :meth:`restmapper.testing.ServiceAccount.authorize`); None accepts every request.

        Returns:
            A context manager whose value is a :class:`ServedCluster` (``url``, ``kubeconfig_path``); leaving it
            stops the server.

        Raises:
            OSError: the address cannot be bound or the kubeconfig cannot be written.
            ModuleNotFoundError: ``tls`` without the ``cryptography`` package.
        """
        from restmapper.testing.server import serve_cluster

        return serve_cluster(self, host=host, port=port, kubeconfig_path=kubeconfig_path, tls=tls,
                             authorize=authorize)

    # --- HTTP ------------------------------------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: Mapping[str, str], headers: Mapping[str, str],
               body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        """Answer one HTTP request as kube-apiserver would: the entry point of the ``responses`` front end.

        A watch is answered with the events available now, then ends (as a server-side timeout);
        :meth:`handle_stream` streams instead.

        Args:
            method: the HTTP method.
            path: the URL path, without query string.
            query: the query parameters.
            headers: the request headers (any case).
            body: the request body, bytes.

        Returns:
            ``(status, headers, body)``.

        Raises:
            ConnectionResetError: when an injected fault asks for a connection reset (front ends turn it into
                ``requests.ConnectionError`` or a closed socket).
        """
        status, reply_headers, data = self.handle_stream(method, path, query, headers, body)
        if not isinstance(data, bytes):
            data = data.collect()
        return status, reply_headers, data

    def handle_stream(self, method: str, path: str, query: Mapping[str, str], headers: Mapping[str, str],
                      body: bytes = b"") -> tuple[int, dict[str, str], bytes | StreamBody]:
        """Answer one request like :meth:`handle`, but return a watch's body as a stream (the loopback front end).

        Returns:
            ``(status, headers, body)``; ``body`` is bytes, or for a watch an object whose
            ``stream(should_stop)`` yields newline-terminated JSON events as they happen and whose ``collect()``
            returns what is available now.

        Raises:
            ConnectionResetError: as :meth:`handle`.
        """
        request = Request(method.upper(), path or "/", dict(query), dict(headers), body)
        fault = self._record_and_find_fault(request)
        self._tick_establishment()
        faulted = self._fault_reply(fault, request) if fault is not None else None
        if faulted is not None:
            return faulted
        with self._lock:
            self._sync_apiservices()
        status, reply_headers, data = self._router.dispatch(request)
        return status, reply_headers, Trickle(data, fault.trickle) if fault is not None and fault.trickle else data

    def _add_routes(self, router: Router) -> None:
        from restmapper.testing import _handlers

        _handlers.install(self, router)

    # --- the served view -----------------------------------------------------------------------------------------

    def _view(self) -> tuple[ServedGroup, ...]:
        """The named groups in aggregated discovery order (lock held by caller; cached per revision)."""
        if self._view_cache is not None and self._view_cache[0] == self._revision:
            return self._view_cache[1]
        view = served.named_groups(self._static, self._crds.values())
        self._view_cache = (self._revision, view)
        return view

    def _legacy_view(self) -> tuple[ServedGroup, ...]:
        """The named groups in legacy ``/apis`` order (lock held by caller); see :func:`served.legacy_order`."""
        return served.legacy_order(self._view())

    def _core_versions(self) -> list[tuple[str, tuple[ResourceSpec, ...]]]:
        return served.core_versions(self._static)
