"""What the asyncio drop-ins share: a discoverer shell over :class:`SelfHealingDiscoverer` and the heal-once call.

The asyncio dynamic clients (``kubernetes.aio.dynamic``, ``kubernetes_asyncio.dynamic``) await their
discoverer's ``get``/``search``/``api_groups``; the work underneath is the thread-safe synchronous discoverer,
run off the event loop (warm answers are memoized, so the thread hop is the only cost). Credentials stay the
client's: its ``refresh_api_key_hook`` (exec plugins, rotating service-account tokens) runs on the loop before each
discovery call, as the client's own ``ApiClient`` runs it before each request, and the transport sends what it left.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from typing import Any, ClassVar

from restmapper.aio import run_blocking
from restmapper.dynamic._index import Flavour
from restmapper.dynamic._notfound import group_version_of_path, is_resource_type_not_found
from restmapper.dynamic._partial import deferring_warnings, emit_deferred
from restmapper.dynamic._resend import (
    HEALED_VERBS,
    answered_mapping,
    healed_doc,
    healing_questions,
    refuse_if_moved,
    report_gone,
    resend_after_mismatch,
    resend_target,
    resolved_parent,
)
from restmapper.dynamic.discoverer import SelfHealingDiscoverer
from restmapper.transport import RequestsTransport, Transport
from restmapper.transport.kubeconfig import api_key_of, configuration_options

__all__ = ["AsyncHealingClientMixin", "AsyncSelfHealingDiscovererBase", "call_healed", "library_flavour"]

log = logging.getLogger("restmapper.dynamic")


def library_flavour(package: str) -> tuple[Flavour, Any]:
    """The :class:`Flavour` and ``Subresource`` class of an asyncio dynamic client library.

    Args:
        package: ``kubernetes.aio.dynamic`` or ``kubernetes_asyncio.dynamic`` (the same modules under two names).

    Raises:
        ImportError: the library is not installed.
    """
    discovery = importlib.import_module(f"{package}.discovery")
    exceptions = importlib.import_module(f"{package}.exceptions")
    resource = importlib.import_module(f"{package}.resource")
    flavour = Flavour(resource.Resource, resource.ResourceList, discovery.ResourceGroup,
                      exceptions.ResourceNotFoundError, exceptions.ResourceNotUniqueError, snake_case=True)
    return flavour, resource.Subresource


def _status_code(result: Any) -> Any:
    """The ``code`` of a returned ``Status`` (``kubernetes_asyncio.dynamic`` returns error statuses), else None."""
    return getattr(result, "code", None) if getattr(result, "kind", None) == "Status" else None


def _type_not_found_status(result: Any) -> bool:
    """True for a returned (not raised) 404 ``Status`` naming no object: ``kubernetes_asyncio.dynamic`` returns
    error statuses instead of raising them."""
    if getattr(result, "kind", None) != "Status" or getattr(result, "code", None) != 404:
        return False
    details = getattr(result, "details", None)
    return not (details is not None and getattr(details, "name", None))


class _WithoutHook:
    """A view of a Configuration without its refresh hook: the hook runs on the loop, never in a worker thread."""

    def __init__(self, cfg: Any) -> None:
        self._cfg = cfg

    def __getattr__(self, name: str) -> Any:
        return None if name == "refresh_api_key_hook" else getattr(self._cfg, name)


def transport_for_configuration(cfg: Any) -> RequestsTransport:
    """A transport speaking as an asyncio client's ``Configuration`` (host, TLS, proxy, bearer token or basic auth).

    The bearer token is read from ``cfg.api_key`` at each request, so a refresh made on the loop is followed.
    """
    view = _WithoutHook(cfg)
    options = configuration_options(view)
    if "username" not in options:
        options["auth_provider"] = lambda: {"Authorization": v} if (v := api_key_of(view)) else {}
    return RequestsTransport(**options)


async def refresh_credentials(cfg: Any) -> None:
    """Run the Configuration's ``refresh_api_key_hook`` (sync or async), as the asyncio ApiClients do per request."""
    hook = getattr(cfg, "refresh_api_key_hook", None)
    if hook is not None:
        result = hook(cfg)
        if asyncio.iscoroutine(result):
            await result


class AsyncSelfHealingDiscovererBase:
    """An awaitable discoverer for an asyncio ``DynamicClient``; subclasses name the library (:attr:`_flavour`).

    Args:
        client: the asyncio ``DynamicClient``.
        cache_file: a private snapshot file, as :class:`SelfHealingDiscoverer` (None: no file).
        ttl, miss_refresh_interval, max_stale, clock: as :class:`SelfHealingDiscoverer`.
        transport: how to reach the server; default a ``requests`` transport built from ``client.configuration``.
        executor: where blocking discovery runs (None: :func:`asyncio.to_thread`).
        observe_requests: wrap ``client.request`` (on this instance) so a resource-type 404 evicts its group.

    Attributes:
        client: the ``DynamicClient``.
        mapper: the :class:`~restmapper.mapper.LazyRESTMapper` underneath (shared with sync code if you like).
        sync: the synchronous :class:`SelfHealingDiscoverer` doing the work.

    Construction sends no request; awaiting the discoverer (the ``DynamicClient`` does) reads ``/version``, as
    upstream's discoverers do, so that ``client.version`` answers without I/O.
    """

    _flavour: ClassVar[Flavour]
    _core_class: ClassVar[type[SelfHealingDiscoverer]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_flavour" in cls.__dict__:
            cls._core_class = type(f"_{cls.__name__}Core", (SelfHealingDiscoverer,), {"_flavour": cls._flavour})

    def __init__(self, client: Any, cache_file: str | None = None, *, ttl: float | None = 300.0,
                 miss_refresh_interval: float = 1.0, max_stale: float = 600.0,
                 clock: Callable[[], float] = time.monotonic, transport: Transport | None = None,
                 executor: Executor | None = None, observe_requests: bool = True) -> None:
        self.client = client
        self._executor = executor
        self._configuration = client.configuration
        self.sync = self._core_class(
            client, cache_file, ttl=ttl, miss_refresh_interval=miss_refresh_interval, max_stale=max_stale,
            clock=clock, transport=transport if transport is not None else transport_for_configuration(
                client.configuration), observe_requests=False)
        self.mapper = self.sync.mapper
        self.cache = self.sync.cache
        if observe_requests and callable(getattr(client, "request", None)):
            self._observe(client)

    def _observe(self, client: Any) -> None:
        original = client.request
        mapper = self.mapper

        def evict(method: str, path: str) -> None:
            gv = group_version_of_path(path)
            if gv is not None:
                log.info("%s %s: resource type not found; evicting group %r", method.upper(), path, gv.group)
                mapper.report_not_found(gv)

        async def request(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
            try:
                result = await original(method, path, *args, **kwargs)
            except Exception as exc:
                if is_resource_type_not_found(exc):
                    evict(method, path)
                raise
            if _type_not_found_status(result):
                evict(method, path)
            return result

        client.request = request

    async def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        await refresh_credentials(self._configuration)
        return await run_blocking(self._executor, functools.partial(fn, *args, **kwargs))

    async def _start(self) -> AsyncSelfHealingDiscovererBase:
        await self._run(lambda: self.sync.version)
        return self

    def __await__(self) -> Any:
        return self._start().__await__()

    async def __aenter__(self) -> AsyncSelfHealingDiscovererBase:
        return await self._start()

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    # --- upstream's asyncio surface ------------------------------------------------------------------------------

    @property
    def version(self) -> dict[str, Any]:
        """``{"kubernetes": <the /version document>}``, read when the discoverer was awaited.

        Raises:
            APIStatusError, MalformedDiscoveryError, TransportError: when read here for the first time and failing.
        """
        return self.sync.version

    @property
    def api_groups(self) -> Any:
        """An awaitable of the group names, ``""`` first (upstream: ``await client.resources.api_groups``).

        Raises:
            DiscoveryError: ``/api`` or ``/apis`` could not be read (when awaited).
        """
        return self._run(lambda: self.sync.api_groups)

    async def invalidate_cache(self) -> None:
        """Forget everything discovered (no request: the next lookup refetches)."""
        self.sync.invalidate_cache()

    async def parse_api_groups(self, request_resources: bool = False, update: bool = False) -> dict[str, Any]:
        """Await :meth:`SelfHealingDiscoverer.parse_api_groups` (this library's ``ResourceGroup`` values)."""
        return await self._run(self.sync.parse_api_groups, request_resources, update)  # type: ignore[no-any-return]

    async def search(self, **kwargs: Any) -> list[Any]:
        """Await :meth:`SelfHealingDiscoverer.search`: this library's ``Resource``/``ResourceList`` objects.

        Returns:
            A :class:`~restmapper.dynamic.SearchResults` list (``partial``/``failed`` when lower-ranked group
            versions could not be read; a :class:`~restmapper.errors.PartialDiscoveryWarning` is emitted then).

        Raises:
            TypeError: an unknown keyword.
            GroupDiscoveryError: as :meth:`SelfHealingDiscoverer.search`: never an empty or core-less answer while
                a group version that could hold a match is unreadable. Also when the root documents fail.
        """
        results, made = await self._run(deferring_warnings, self.sync.search, **kwargs)
        emit_deferred(made)
        return results  # type: ignore[no-any-return]

    async def get(self, **kwargs: Any) -> Any:
        """Await :meth:`SelfHealingDiscoverer.get`: one of this library's ``Resource`` objects.

        A :class:`~restmapper.errors.PartialDiscoveryWarning` (with ``failed``) is emitted, at the caller's line,
        for an answer found while lower-ranked group versions could not be read.

        Raises:
            ResourceNotFoundError, ResourceNotUniqueError: this library's, as :meth:`SelfHealingDiscoverer.get`.
            TypeError: an unknown keyword.
            GroupDiscoveryError: as :meth:`SelfHealingDiscoverer.get` (a group version that could hold the answer
                and ranks above it could not be read), or the root documents could not be read.
        """
        resource, made = await self._run(deferring_warnings, self.sync.get, **kwargs)
        emit_deferred(made)
        return resource

    async def __aiter__(self) -> AsyncIterator[list[Any]]:
        """Yield, per group version (core first), one list per kind, as the synchronous discoverer iterates."""
        for item in await self._run(lambda: list(self.sync)):
            yield item


class AsyncHealingClientMixin:
    """Request methods of an asyncio ``DynamicClient`` that heal once on a resource-type 404 (see :func:`call_healed`).

    Mix in before the library's ``DynamicClient``; set :attr:`_flavour`, :attr:`_subresource_class` and
    :attr:`_discoverer_class` (the default discoverer).
    """

    _flavour: ClassVar[Flavour]
    _subresource_class: ClassVar[Any]
    _discoverer_class: ClassVar[Any]

    def __init__(self, client: Any, cache_file: str | None = None, discoverer: Any = None) -> None:
        """Wrap an asyncio ``ApiClient``; ``await`` the client (or ``async with`` it) before use."""
        super().__init__(client, cache_file=cache_file,  # type: ignore[call-arg]
                         discoverer=discoverer or self._discoverer_class)


def _healed(verb: str) -> Any:
    async def method(self: AsyncHealingClientMixin, resource: Any, *args: Any, **kwargs: Any) -> Any:
        library_method = getattr(super(AsyncHealingClientMixin, self), verb)
        return await call_healed(self, verb, library_method, resource, self._flavour, self._subresource_class,
                                 args, kwargs)

    method.__name__, method.__qualname__, method.__doc__ = verb, f"AsyncHealingClientMixin.{verb}", healed_doc(verb)
    return method


for _verb in HEALED_VERBS:
    setattr(AsyncHealingClientMixin, _verb, _healed(_verb))


async def call_healed(client: Any, verb: str, method: Callable[..., Any], resource: Any, flavour: Flavour,
                      subresource_class: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Await ``method(resource, ...)`` (the bound client method ``verb``), healed as
    :class:`~restmapper.dynamic.SelfHealingDynamicClient` heals (:mod:`restmapper.dynamic._resend`): on a
    resource-type 404 (raised, or returned as a ``Status`` or an unread response by ``kubernetes_asyncio``) the
    group is reported to the mapper, the kind resolved again and the request resent once where
    :func:`restmapper.mapper.may_resend` allows; after a 405 a kind that moved raises; a read's answer showing
    another kind or scope (:func:`~restmapper.dynamic._resend.answered_mapping`) is resent once where a read may
    follow. A missing object is never retried.

    Raises:
        MappingChangedError: the kind moved where the request may not follow, or a read answered for another
            mapping (nothing was resent).
    """
    result = await _sent(client, verb, method, resource, flavour, subresource_class, args, kwargs)
    if verb != "get" or type(resource) is not flavour.resource or not resource.kind:
        return result
    answered = answered_mapping(resource, result)
    if answered is None:
        return result
    fresh = resend_after_mismatch(verb, resource, await _resolve_again(client, resource, flavour), answered)
    return await method(fresh, *args, **kwargs)


async def _sent(client: Any, verb: str, method: Callable[..., Any], resource: Any, flavour: Flavour,
                subresource_class: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """:func:`call_healed` but for the check of a read's answer."""
    try:
        result = await method(resource, *args, **kwargs)
    except Exception as exc:
        if getattr(exc, "status", None) == 405:
            await _refuse_if_moved(client, verb, resource, flavour, exc)
            raise
        if getattr(exc, "status", None) != 404 or not is_resource_type_not_found(exc):
            raise
        fresh = await _heal(client, verb, resource, flavour, subresource_class, exc)
        if fresh is None:
            raise
        return await method(fresh, *args, **kwargs)
    fresh = await _healed_from_returned(client, verb, resource, flavour, subresource_class, result)
    return result if fresh is None else await method(fresh, *args, **kwargs)


async def _healed_from_returned(client: Any, verb: str, resource: Any, flavour: Flavour, subresource_class: Any,
                                result: Any) -> Any | None:
    """Where to resend a request whose error ``kubernetes_asyncio`` returned instead of raising (a 404 ``Status``,
    a watch's unread 404 response), or None (also for any other result).

    Raises:
        MappingChangedError: a returned 405, or the 404's kind moved, where the request may not follow.
        ApiException: a watch's unread 404 that stands (as the library's ``Watch`` would raise it).
    """
    if _status_code(result) == 405:
        await _refuse_if_moved(client, verb, resource, flavour, _ReturnedStatus(result))
    elif _type_not_found_status(result):
        return await _heal(client, verb, resource, flavour, subresource_class, _ReturnedStatus(result))
    elif _unread_not_found(result):
        error = await _read_error(result, flavour)
        fresh = None
        if is_resource_type_not_found(error):
            fresh = await _heal(client, verb, resource, flavour, subresource_class, error)
        if fresh is None:
            raise error
        return fresh
    return None


def _unread_not_found(result: Any) -> bool:
    """True for an HTTP response returned unread with status 404: ``kubernetes_asyncio`` returns a watch's
    response (``_preload_content=False``) without checking its status, and its ``Watch`` raises the error only
    when reading the first line, past any healing."""
    return getattr(result, "status", None) == 404 and callable(getattr(result, "read", None))


async def _read_error(response: Any, flavour: Flavour) -> BaseException:
    """The library's ``ApiException`` for an unread error ``response`` (read and released here), as its ``Watch``
    would raise it, with the body kept (``body``) so the 404 can be told a type's or an object's."""
    body = await response.read()
    response.release()
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        doc = None
    reason = (f"{doc.get('reason')}: {doc.get('message')}" if isinstance(doc, dict)
              else getattr(response, "reason", None))
    api_exception = sys.modules[flavour.not_found.__module__].ApiException
    error: BaseException = api_exception(status=response.status, reason=reason)
    error.body = body  # type: ignore[attr-defined]
    return error


class _ReturnedStatus(Exception):
    """An error ``Status`` (404, 405) a client returned instead of raising, as the cause of the error raised for it.

    Attributes:
        status: its ``code``, as the libraries' ``ApiException``.
        returned: the ``Status`` the client returned.
    """

    def __init__(self, returned: Any) -> None:
        status = _status_code(returned)
        message = getattr(returned, "message", None) or "the server could not find the requested resource"
        super().__init__(f"{status}: {message}")
        self.status = status
        self.returned = returned


async def _refuse_if_moved(client: Any, verb: str, resource: Any, flavour: Flavour, cause: BaseException) -> None:
    """After a 405 (a write to the cluster-wide path of a kind recreated namespaced): resolve the kind again and
    raise :class:`~restmapper.errors.MappingChangedError` when it moved (:func:`refuse_if_moved`); nothing is resent.
    """
    if type(resource) is flavour.resource and resource.kind:  # not a ResourceList or a Subresource
        refuse_if_moved(verb, resource, await _resolve_again(client, resource, flavour), 405, cause)


async def _heal(client: Any, verb: str, resource: Any, flavour: Flavour, subresource_class: Any,
                cause: BaseException) -> Any | None:
    parent = resolved_parent(resource, flavour.resource, flavour.resource_list, subresource_class)
    if parent is None:
        return None
    return resend_target(verb, resource, await _resolve_again(client, parent, flavour), subresource_class, cause)


async def _resolve_again(client: Any, parent: Any, flavour: Flavour) -> Any | None:
    """Report the group of ``parent`` to the mapper (:func:`report_gone`) and look its kind up again; None when
    it is no longer served."""
    discoverer = client.resources
    if not report_gone(discoverer, parent):
        await discoverer.invalidate_cache()
    for question in healing_questions(parent):
        try:
            return await discoverer.get(**question)
        except (flavour.not_found, flavour.not_unique):
            continue
    return None
