"""The discovery client: aggregated discovery first, legacy fallback, ETag revalidation, partial results.

It answers the questions client-go's ``discovery.DiscoveryClient`` answers (``ServerVersion``,
``ServerGroups``, ``ServerResourcesForGroupVersion``, ``ServerGroupsAndResources``) and one more that the cache
layer needs: :meth:`DiscoveryClient.fetch_root`, which says whether ``/api`` and ``/apis`` changed since the
last call (``If-None-Match`` with the last ETag; 304 reuses the previous document). It keeps no policy: no TTL,
no eviction; that is :mod:`restmapper.cache`'s job.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import threading
import time
from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, ParamSpec, TypeVar, cast

from restmapper import wire
from restmapper._redact import scrubbing
from restmapper.errors import (
    DiscoveryError,
    MalformedDiscoveryError,
    RestMapperError,
    release_frames,
)
from restmapper.model import APIGroup, APIResourceList, GroupVersion, VersionInfo
from restmapper.transport import (
    ClientConfig,
    Response,
    Transport,
    scrub_with,
    status_error,
)
from restmapper.transport.config import incluster_config, resolve_config

__all__ = ["DEFAULT_MAX_WORKERS", "DiscoveryClient", "RootDiscovery"]

log = logging.getLogger("restmapper.discovery")

DEFAULT_MAX_WORKERS = 8
"""Default bound on concurrent legacy group-version fetches."""

_REPROBE_AGGREGATED_AFTER = 300.0
"""Seconds after a 406 before aggregated discovery is asked for again (a proxy may have been at fault)."""


def _check_root_groups(path: str, doc: wire.AggregatedDiscovery) -> None:
    """``/api`` holds only the core group and ``/apis`` only named groups; anything else could overwrite them."""
    for i, group in enumerate(doc.groups):
        if (group.name == "") != (path == "/api"):
            want = 'only the core group ("")' if path == "/api" else "only named groups"
            raise MalformedDiscoveryError(path, f"items[{i}].metadata.name",
                                          f"{path} must list {want}, got {group.name!r}")
    for gv in doc.stale:
        if (gv.group == "") != (path == "/api"):
            raise MalformedDiscoveryError(path, "items", f"unexpected group version {str(gv)!r} in {path}")


_CORE_V1 = GroupVersion("", "v1")


def _legacy_groups(doc: _CachedDocument) -> tuple[APIGroup, ...]:
    """The groups a legacy root document lists: ``/api``'s versions as the core group, or ``/apis``'s groups."""
    if doc.path != "/api":
        named: tuple[APIGroup, ...] = doc.parsed
        return named
    versions: tuple[str, ...] = doc.parsed
    return (APIGroup("", versions, versions[0] if versions else None),)


def _check_core(parsed: tuple[str, ...] | wire.AggregatedDiscovery) -> None:
    """Core always exists and serves resources: an ``/api`` without ``v1`` is a broken answer, not "no core".

    Read as "core serves nothing", it would let another group answer core names (metrics.k8s.io ``pods``) and
    make every core lookup a confident no-match. A 404 on ``/api`` is another matter (see
    :meth:`DiscoveryClient.fetch_root`).
    """
    if isinstance(parsed, tuple):
        if _CORE_V1.version not in parsed:
            raise MalformedDiscoveryError("/api", "versions", "does not list v1: the core group always serves v1")
        return
    if _CORE_V1 not in parsed.listed_group_versions(""):
        raise MalformedDiscoveryError("/api", "items", "lists no core group version v1: the core group always "
                                                       "serves v1")
    if _CORE_V1 in parsed.resources:
        _check_core_resources("/api", parsed.resources[_CORE_V1])


def _check_core_resources(path: str, resources: APIResourceList) -> None:
    if resources.group_version == _CORE_V1 and not resources.resources:
        raise MalformedDiscoveryError(path, "resources", "core v1 lists no resources: the core group always "
                                                         "serves resources")


_P = ParamSpec("_P")
_R = TypeVar("_R")
_C = TypeVar("_C", bound="DiscoveryClient")  # the class a constructor is called on (a subclass builds itself)


def _releasing(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Errors leaving ``method`` let go of the locals of the frames they passed (response bodies among them).

    Callers keep errors (a cache's failure backoff): without this, an error about a 64 MiB body kept it alive.
    """

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except RestMapperError as exc:
            release_frames(exc)
            raise

    return wrapper


@dataclass(frozen=True)
class RootDiscovery:
    """What ``/api`` and ``/apis`` said.

    Attributes:
        groups: every API group in server priority order, core (``""``) first when ``/api`` answered.
        resources: resources of every non-stale group version when *both* documents were aggregated, else
            None (the caller then fetches ``/api/v1`` and ``/apis/<g>/<v>`` itself).
        stale: group versions the aggregator marked ``Stale`` (partial failures, not absences).
        aggregated: True when both documents were aggregated.
        not_modified: True when neither document changed since the previous ``fetch_root`` of this client
            (both answered 304 Not Modified, or legacy documents with the same content).
        listed: every group version listed by the server (stale ones included), in priority order.
    """

    groups: tuple[APIGroup, ...]
    resources: Mapping[GroupVersion, APIResourceList] | None
    stale: tuple[GroupVersion, ...] = ()
    aggregated: bool = False
    not_modified: bool = False
    listed: tuple[GroupVersion, ...] = field(default=())

    def group(self, name: str) -> APIGroup | None:
        """The group called ``name``, or None when the server does not list it."""
        for g in self.groups:
            if g.name == name:
                return g
        return None


def _chain(maps: list[Mapping[GroupVersion, APIResourceList]]) -> Mapping[GroupVersion, APIResourceList]:
    """One read-only view over the resource lists of ``/api`` and ``/apis`` (no conversion happens here)."""
    if len(maps) == 1:
        return maps[0]
    # ChainMap writes only to its first map (a fresh dict) and only reads the others.
    return ChainMap({}, *cast("list[MutableMapping[GroupVersion, APIResourceList]]", maps))


@dataclass
class _CachedDocument:
    """The last good answer for one root path (guarded by ``DiscoveryClient._lock``)."""

    path: str
    etag: str | None
    accept: str  # the Accept it was asked with: its ETag is sent again only with the same Accept
    digest: bytes  # SHA-256 of the body: enough to tell "unchanged" without keeping megabytes around
    format: wire.DocumentFormat
    parsed: Any
    # RootDiscovery built with this document last, by (number of documents, not_modified): see _root_of.
    built: dict[tuple[int, bool], tuple[tuple[_CachedDocument | None, ...], RootDiscovery]] = field(
        default_factory=dict)


def _etag_for(previous: _CachedDocument | None, accept: str) -> str | None:
    """The ETag to send with a GET asked with ``accept``: ``previous``'s when it was asked with the same Accept
    (an ETag names one representation: never ask "still this?" of a document fetched as the other one)."""
    return previous.etag if previous is not None and previous.accept == accept else None


class DiscoveryClient:
    """Reads a server's discovery documents through a :class:`~restmapper.transport.Transport`.

    Aggregated discovery (``apidiscovery.k8s.io`` v2, then v2beta1) is asked for on ``/api`` and ``/apis``
    with the Accept header of client-go; a 406 or a legacy answer falls back to legacy discovery, whose
    group versions are fetched with at most ``max_workers`` requests in flight. Thread-safe; no lock is held
    across network I/O.

    Mirrors client-go ``discovery.DiscoveryClient`` (``GroupsAndMaybeResources``, ``fetchGroupVersionResources``).
    Built from a kubeconfig or the pod's service account with :meth:`from_kubeconfig`/:meth:`from_incluster`,
    options as :meth:`from_config`.
    """

    def __init__(self, transport: Transport, *, max_workers: int = DEFAULT_MAX_WORKERS,
                 aggregated: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        """Create a client.

        Args:
            transport: how to reach the server.
            max_workers: the bound on concurrent legacy group-version fetches (>= 1).
            aggregated: ask for aggregated discovery (set False to force legacy discovery).
            clock: monotonic clock in seconds; after a 406 legacy discovery is used for 300 s of it, then
                aggregated discovery is asked for again (the 406 may have come from a proxy).

        Raises:
            ValueError: when ``max_workers`` is below 1.
        """
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._transport = transport
        self._max_workers = max_workers
        self._aggregated = aggregated
        self._clock = clock
        # Guards _documents and _legacy_until; never held across a transport call.
        self._lock = threading.Lock()
        self._documents: dict[str, _CachedDocument] = {}
        # After a 406 to the aggregated Accept, ask for legacy documents until this clock reading.
        self._legacy_until = -math.inf

    @classmethod
    def from_config(cls: type[_C], config: ClientConfig, **options: Any) -> _C:
        """Build a client from resolved settings (:func:`~restmapper.transport.resolve_config`).

        Args:
            config: the settings.
            **options: passed to :class:`~restmapper.transport.RequestsTransport` (timeouts, retry, ...),
                overriding them.

        Raises:
            ConfigError: the settings are unusable.
            TypeError: an option the transport does not take.
        """
        from restmapper.transport import RequestsTransport, RetryPolicy

        # A 503 usually means one aggregated API is down: report it at once instead of retrying the whole call.
        options.setdefault("retry", RetryPolicy(max_attempts=3, retry_statuses=frozenset({429, 500, 502, 504})))
        return cls(RequestsTransport.from_config(config, **options))

    @classmethod
    def from_kubeconfig(cls: type[_C], path: str | None = None, context: str | None = None, **options: Any) -> _C:
        """Build a client from a kubeconfig, or the pod's service account when there is none.

        Args:
            path: the kubeconfig file, or None to resolve as :func:`~restmapper.transport.resolve_config`
                (``$KUBECONFIG``, in-cluster, ``~/.kube/config``: controller-runtime's ``GetConfig`` order).
            context: the context, or None for the current one.
            **options: as :meth:`from_config`.

        Raises:
            ConfigError: no usable source (the message lists those tried), or the kubeconfig is invalid.
            TypeError: an option the transport does not take.
        """
        return cls.from_config(resolve_config(path, context), **options)

    @classmethod
    def from_incluster(cls: type[_C], service_account_dir: str | None = None, **options: Any) -> _C:
        """Build a client from the pod's service account (client-go ``rest.InClusterConfig``).

        Args:
            service_account_dir: the service-account folder (default
                :data:`~restmapper.transport.config.SERVICE_ACCOUNT_DIR`).
            **options: as :meth:`from_config`.

        Raises:
            ConfigError: not in a pod, or the token file is missing or empty.
            TypeError: an option the transport does not take.
        """
        return cls.from_config(incluster_config(service_account_dir), **options)

    def _scrub(self, text: str) -> str:
        return scrub_with(self._transport, text)

    def _scrubbed(self) -> contextlib.AbstractContextManager[None]:
        """While parsing, server text quoted in errors is scrubbed of this transport's credentials, then cut."""
        return scrubbing(self._scrub)

    @property
    def transport(self) -> Transport:
        """The transport this client uses."""
        return self._transport

    # --- single documents ------------------------------------------------------------------------------

    def _get(self, path: str, accept: str, etag: str | None = None) -> Response:
        headers = {"Accept": accept}
        if etag:
            headers["If-None-Match"] = etag
        return self._transport.get(path, headers)

    @_releasing
    def server_version(self) -> VersionInfo:
        """Return the server's ``/version``.

        Raises:
            TransportError: no answer, or an error status (as :class:`APIStatusError`).
            MalformedDiscoveryError: the document could not be parsed.
        """
        resp = self._get("/version", wire.ACCEPT_JSON)
        if resp.status != 200:
            raise status_error(self._transport, "/version", resp.status, resp.body, resp.headers)
        with self._scrubbed():
            return wire.parse_version_info(resp.body, document="/version")

    @_releasing
    def server_resources_for_group_version(self, gv: GroupVersion | str) -> APIResourceList:
        """Return the resources of one group version from its legacy document (``/api/v1``, ``/apis/g/v``).

        Args:
            gv: the group version (``GroupVersion`` or ``"apps/v1"``).

        Returns:
            The APIResourceList, subresources included, in server order.

        Raises:
            APIStatusError: the server answered an error status (``.not_found`` for 404: the version is gone).
            TransportError: no answer.
            MalformedDiscoveryError: the document could not be parsed or names another group version, or it is
                core ``v1`` listing no resources (core always serves resources: never read as "serves nothing").
        """
        if isinstance(gv, str):
            gv = GroupVersion.parse(gv)
        path = gv.path
        resp = self._get(path, wire.ACCEPT_JSON)
        if resp.status != 200:
            raise status_error(self._transport, path, resp.status, resp.body, resp.headers)
        with self._scrubbed():
            wire.detect_format(resp.content_type, document=path)
            resources = wire.parse_api_resource_list(resp.body, document=path, expected=gv)
        _check_core_resources(path, resources)
        return resources

    # --- root documents --------------------------------------------------------------------------------

    def _fetch_document(self, path: str, *, allow_404: bool, listing: bool = False
                        ) -> tuple[_CachedDocument | None, bool]:
        """GET a root document, conditionally. Returns (document or None on a tolerated 404, unchanged).

        ``listing`` asks for the legacy document (group names and versions, no resources) even when aggregated
        discovery is available.
        """
        with self._lock:
            previous = self._documents.get(path)
            want_aggregated = not listing and self._aggregated_now()
        accept = wire.ACCEPT_AGGREGATED if want_aggregated else wire.ACCEPT_JSON
        resp = self._get(path, accept, _etag_for(previous, accept))
        if resp.status == 406 and want_aggregated:
            resp, accept = self._get_legacy_root(path)
        if resp.status == 304 and previous is not None:
            # 304 carries no body and possibly no Content-Type: the previous document stays valid.
            return previous, True
        if resp.status == 404 and allow_404:
            with self._lock:
                self._documents.pop(path, None)
            return None, previous is None
        if resp.status != 200:
            raise status_error(self._transport, path, resp.status, resp.body, resp.headers)
        return self._keep_document(path, resp, accept, previous)

    def _aggregated_now(self) -> bool:
        """Whether to ask for aggregated discovery now: it is enabled and the server has not refused it (406)
        within the last :data:`_REPROBE_AGGREGATED_AFTER` seconds. Called with ``_lock`` held."""
        return self._aggregated and self._clock() >= self._legacy_until

    def _get_legacy_root(self, path: str) -> tuple[Response, str]:
        """GET the root document ``path`` in its legacy form after the server answered 406 to the aggregated one
        (e.g. a 1.27 server given a v2-only list, or a proxy), as client-go does on 406; aggregated discovery is
        asked again after :data:`_REPROBE_AGGREGATED_AFTER`. Returns the response and the Accept it answers."""
        log.debug("%s answered 406 to aggregated discovery; falling back to legacy", path)
        with self._lock:
            self._legacy_until = self._clock() + _REPROBE_AGGREGATED_AFTER
        return self._get(path, wire.ACCEPT_JSON), wire.ACCEPT_JSON

    def _keep_document(self, path: str, resp: Response, accept: str, previous: _CachedDocument | None
                       ) -> tuple[_CachedDocument, bool]:
        """Parse the 200 answer ``resp`` (asked with ``accept``) to the root document ``path`` and keep it in
        place of ``previous``: the core versions (legacy ``/api``), the groups (legacy ``/apis``) or an
        :class:`~restmapper.wire.AggregatedDiscovery`. Returns the document and whether its content is
        ``previous``'s (same body, same format).

        Raises:
            MalformedDiscoveryError: the body is not a valid document of its kind (nothing is kept).
        """
        with self._scrubbed():
            fmt = wire.detect_format(resp.content_type, document=path)
            parsed: Any
            if fmt is not wire.DocumentFormat.LEGACY:
                parsed = wire.parse_aggregated(resp.body, document=path, format=fmt)
                _check_root_groups(path, parsed)
            elif path == "/api":
                parsed = wire.parse_api_versions(resp.body, document=path)
            else:
                parsed = wire.parse_api_group_list(resp.body, document=path)
            if path == "/api":
                _check_core(parsed)
        digest = hashlib.sha256(resp.body).digest()
        unchanged = previous is not None and previous.digest == digest and previous.format is fmt
        doc = _CachedDocument(path, resp.header("ETag"), accept, digest, fmt, parsed)
        with self._lock:
            self._documents[path] = doc
        return doc, unchanged

    @_releasing
    def fetch_core(self) -> RootDiscovery:
        """Fetch ``/api`` alone (conditionally): the core group, for lookups that never need ``/apis``.

        Returns:
            A :class:`RootDiscovery` holding the core group; ``resources`` is set when ``/api`` was aggregated.

        Raises:
            APIStatusError: ``/api`` answered an error status, a 404 included: unlike :meth:`fetch_root` (which
                tolerates it, as client-go), a caller asking for core must never read a 404 as "no core group".
            TransportError: no answer.
            MalformedDiscoveryError: the document could not be parsed, or lists no core ``v1`` (or, aggregated, a
                ``v1`` with no resources): core always exists. Nothing is cached from it.
        """
        doc, same = self._fetch_document("/api", allow_404=False)
        return self._root_of((doc,), same)

    @_releasing
    def fetch_named(self, *, listing: bool = False) -> RootDiscovery:
        """Fetch ``/apis`` alone (conditionally): every named group.

        Args:
            listing: ask for the legacy ``APIGroupList`` (group names, versions and preferred versions; a few
                hundred bytes per group) instead of the aggregated document (every resource of every group: megabytes
                on a cluster of a thousand CRD groups), for a caller that needs one group's resources and will read
                them from that group version's own document, as client-go's and kubectl's lazy clients do. The
                result then has ``resources`` None and ``aggregated`` False, whatever the server supports.

        Raises:
            APIStatusError: ``/apis`` answered an error status (a 404 included).
            TransportError: no answer.
            MalformedDiscoveryError: the document could not be parsed (nothing is cached from it).
        """
        doc, same = self._fetch_document("/apis", allow_404=False, listing=listing)
        return self._root_of((doc,), same)

    @_releasing
    def fetch_root(self) -> RootDiscovery:
        """Fetch ``/api`` and ``/apis`` (conditionally, with the ETags of the previous call).

        Returns:
            A :class:`RootDiscovery`; ``resources`` is set only when both documents were aggregated.

        Raises:
            APIStatusError: ``/apis`` (or ``/api`` with anything but 404) answered an error status.
            TransportError: no answer.
            MalformedDiscoveryError: a document could not be parsed, or ``/api`` answered without core ``v1`` (as
                :meth:`fetch_core`). Nothing is cached from it.

        Mirrors client-go ``GroupsAndMaybeResources``: a 404 on ``/api`` is tolerated (a server without the core
        group), one on ``/apis`` is not. Unlike client-go, an ``/api`` that answers but lists no ``v1`` is an
        error rather than "no core group": a real server always serves core v1, so such an answer is broken.
        The two documents are fetched at once (a server that does not answer costs one request deadline, not
        two); when both fail, ``/api``'s error is raised.
        """
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="restmapper-discovery") as pool:
            named = pool.submit(self._fetch_document, "/apis", allow_404=False)
            api_doc, api_same = self._fetch_document("/api", allow_404=True)  # its failure first (the pool waits)
            apis_doc, apis_same = named.result()
        return self._root_of((api_doc, apis_doc), api_same and apis_same)

    def _root_of(self, docs: tuple[_CachedDocument | None, ...], not_modified: bool) -> RootDiscovery:
        """:meth:`_root_from`, reusing the RootDiscovery built from these very documents: a revalidation that
        finds them unchanged (304) builds no new group lists (thousands of GroupVersions on a large cluster), and
        its callers can tell "the same document" by identity."""
        last = docs[-1]
        if last is None:  # never: only ``/api`` may be absent, and it is never last
            return self._root_from(docs, not_modified)
        key = (len(docs), not_modified)
        held = last.built.get(key)  # a dictionary read and write: atomic, and an equal value either way
        if held is not None and all(a is b for a, b in zip(held[0], docs[:-1], strict=True)):  # the others
            return held[1]
        root = self._root_from(docs, not_modified)
        # Kept with the document, so it dies with it (one per key, never more); without ``last`` itself in it: no
        # reference cycle keeps a replaced document's megabytes alive until the collector runs.
        last.built[key] = (docs[:-1], root)
        return root

    @staticmethod
    def _root_from(docs: tuple[_CachedDocument | None, ...], not_modified: bool) -> RootDiscovery:
        groups: list[APIGroup] = []
        listed: list[GroupVersion] = []
        stale: list[GroupVersion] = []
        resources: list[Mapping[GroupVersion, APIResourceList]] = []
        present = [d for d in docs if d is not None]
        aggregated = bool(present) and all(d.format is not wire.DocumentFormat.LEGACY for d in present)
        for doc in present:
            if isinstance(doc.parsed, wire.AggregatedDiscovery):
                agg = doc.parsed
                groups.extend(agg.groups)
                stale.extend(agg.stale)
                resources.append(agg.resources)  # lazily converted: keep it so
                listed.extend(chain.from_iterable(g.group_versions for g in agg.groups))
                listed.extend(agg.stale)
            else:
                legacy = _legacy_groups(doc)
                groups.extend(legacy)
                listed.extend(chain.from_iterable(g.group_versions for g in legacy))
        return RootDiscovery(
            groups=tuple(groups),
            resources=_chain(resources) if aggregated else None,
            stale=tuple(stale),
            aggregated=aggregated,
            not_modified=not_modified,
            listed=tuple(listed),
        )

    def server_groups(self) -> list[APIGroup]:
        """Return every API group, core first, in server priority order.

        Raises:
            TransportError, MalformedDiscoveryError: as :meth:`fetch_root`.
        """
        return list(self.fetch_root().groups)

    # --- group versions --------------------------------------------------------------------------------

    def fetch_group_versions(
        self, gvs: Iterable[GroupVersion]
    ) -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError]]:
        """Fetch the legacy documents of several group versions, at most ``max_workers`` at a time.

        Args:
            gvs: the group versions to fetch.

        Returns:
            ``(resources, failed)``: the lists that came back and, for each failure, its typed cause
            (:class:`APIStatusError`, :class:`TransportError`, :class:`MalformedDiscoveryError`).
        """
        todo = list(dict.fromkeys(gvs))
        ok: dict[GroupVersion, APIResourceList] = {}
        failed: dict[GroupVersion, RestMapperError] = {}
        if not todo:
            return ok, failed

        def one(gv: GroupVersion) -> tuple[GroupVersion, APIResourceList | RestMapperError]:
            try:
                return gv, self.server_resources_for_group_version(gv)
            except RestMapperError as exc:
                return gv, exc

        if len(todo) == 1:
            results = [one(todo[0])]
        else:
            with ThreadPoolExecutor(max_workers=min(self._max_workers, len(todo)),
                                    thread_name_prefix="restmapper-discovery") as pool:
                results = list(pool.map(one, todo))
        for gv, res in results:
            if isinstance(res, APIResourceList):
                ok[gv] = res
            else:
                failed[gv] = res
        return ok, failed

    @_releasing
    def server_groups_and_resources(self) -> tuple[list[APIGroup], dict[GroupVersion, APIResourceList]]:
        """Return every group and the resources of every served group version.

        Returns:
            ``(groups, resources)``; groups in priority order, core first.

        Raises:
            DiscoveryError: some group versions failed (stale in aggregated discovery, or an error status, a
                transport error or a malformed document in legacy discovery). ``failed`` maps each to its cause
                and ``partial`` holds ``(groups, resources)`` of everything else, as client-go's
                ``ErrGroupDiscoveryFailed`` does alongside its partial result.
            TransportError, MalformedDiscoveryError: ``/apis`` itself could not be read.
        """
        root = self.fetch_root()
        groups = list(root.groups)
        failed: dict[GroupVersion, BaseException] = {}
        for gv in root.stale:
            failed[gv] = DiscoveryError(f"stale GroupVersion discovery: {gv}")
        if root.resources is not None:
            resources = dict(root.resources)
        else:
            resources, errors = self.fetch_group_versions(gv for g in groups for gv in g.group_versions)
            failed.update(errors)
        if failed:
            raise DiscoveryError(failed=failed, partial=(groups, resources))
        return groups, resources
