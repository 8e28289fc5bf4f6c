"""asyncio front end: :class:`AsyncRESTMapper` never blocks the event loop.

Warm lookups (a fresh memoized answer) are answered inline in about a microsecond; anything that may do network
I/O or wait for another thread's fetch runs in a worker thread through :func:`asyncio.to_thread`. The mapper
underneath is the same thread-safe :class:`~restmapper.mapper.LazyRESTMapper`, so sync and async code can share
one cache.

Pass an ``executor`` to run that work on a pool of your own (bounded threads), as ``loop.run_in_executor`` does;
the default is :func:`asyncio.to_thread` (the loop's default executor). Context variables are carried over.

Example (kopf, or any asyncio controller)::

    mapper = await AsyncRESTMapper.from_kubeconfig()      # $KUBECONFIG, in-cluster, ~/.kube/config
    mapping = await mapper.resolve("certificates.cert-manager.io")
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Executor
from typing import Any, TypeVar

from restmapper.cache import CacheStats, GroupEntry
from restmapper.errors import RestMapperError, WaitTimeoutError
from restmapper.mapper import LazyRESTMapper
from restmapper.mapper.wait import CRD_KIND, ChangeNotifier, is_retryable_wait_error
from restmapper.model import (
    GroupKind,
    GroupResource,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
)
from restmapper.store import AsyncObjectCache
from restmapper.transport import ClientConfig, Transport, check_seconds

__all__ = ["AsyncObjectCache", "AsyncRESTMapper", "run_blocking"]

T = TypeVar("T")


class AsyncRESTMapper:
    """Awaitable versions of :class:`~restmapper.mapper.LazyRESTMapper`'s lookups.

    Attributes:
        mapper: the synchronous mapper doing the work (share it with sync code freely).
    """

    def __init__(self, mapper: LazyRESTMapper, *, executor: Executor | None = None) -> None:
        """Wrap ``mapper``.

        Args:
            mapper: the synchronous mapper doing the work.
            executor: where blocking work runs; None uses :func:`asyncio.to_thread`.

        Raises:
            TypeError: ``mapper`` is not a LazyRESTMapper or ``executor`` not an Executor.
        """
        if not isinstance(mapper, LazyRESTMapper):
            raise TypeError(f"AsyncRESTMapper wraps a LazyRESTMapper, not {type(mapper).__name__}")
        if executor is not None and not isinstance(executor, Executor):
            raise TypeError(f"executor must be a concurrent.futures.Executor, not {type(executor).__name__}")
        self.mapper = mapper
        self.executor = executor

    # --- constructors (async: reading a kubeconfig may run an exec plugin) -------------------------------------

    @classmethod
    async def from_kubeconfig(cls, path: str | None = None, context: str | None = None, *,
                              executor: Executor | None = None, **options: Any) -> AsyncRESTMapper:
        """Await a mapper built as :meth:`LazyRESTMapper.from_kubeconfig` (``$KUBECONFIG``, in-cluster,
        ``~/.kube/config``), reading files and running exec plugins off the loop.

        Raises:
            ConfigError: as :meth:`LazyRESTMapper.from_kubeconfig`.
        """
        mapper = await run_blocking(executor, functools.partial(LazyRESTMapper.from_kubeconfig, path, context,
                                                             **options))
        return cls(mapper, executor=executor)

    @classmethod
    async def from_incluster(cls, service_account_dir: str | None = None, *, executor: Executor | None = None,
                             **options: Any) -> AsyncRESTMapper:
        """Await a mapper built from the pod's service account (:meth:`LazyRESTMapper.from_incluster`).

        Raises:
            ConfigError: not in a pod, or the token file is missing or empty.
        """
        mapper = await run_blocking(executor, functools.partial(LazyRESTMapper.from_incluster, service_account_dir,
                                                             **options))
        return cls(mapper, executor=executor)

    @classmethod
    async def from_config(cls, config: ClientConfig, *, executor: Executor | None = None,
                          **options: Any) -> AsyncRESTMapper:
        """Await a mapper built from resolved settings (:meth:`LazyRESTMapper.from_config`).

        Raises:
            ConfigError: the settings are unusable.
        """
        mapper = await run_blocking(executor, functools.partial(LazyRESTMapper.from_config, config, **options))
        return cls(mapper, executor=executor)

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await run_blocking(self.executor, functools.partial(fn, *args))

    # --- cache state (no I/O: answered inline) --------------------------------------------------------------

    @property
    def stats(self) -> CacheStats:
        """The cache's counters (:attr:`LazyRESTMapper.stats`)."""
        return self.mapper.stats

    @property
    def transport(self) -> Transport:
        """The transport discovery reads over (:attr:`LazyRESTMapper.transport`)."""
        return self.mapper.transport

    def invalidate_group(self, group: str) -> None:
        """Drop one group from the cache (no I/O; :meth:`LazyRESTMapper.invalidate_group`)."""
        self.mapper.invalidate_group(group)

    def invalidate_group_version(self, gv: GroupVersion) -> None:
        """Drop the group of ``gv`` from the cache (no I/O)."""
        self.mapper.invalidate_group_version(gv)

    def invalidate_all(self) -> None:
        """Drop everything from the cache (no I/O)."""
        self.mapper.invalidate_all()

    def report_not_found(self, gv: GroupVersion) -> None:
        """Report a resource-type 404 under ``gv``: evicts the group (no I/O)."""
        self.mapper.report_not_found(gv)

    def cached_rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping | None:
        """The memoized answer of :meth:`rest_mapping` if fresh, else None (never does I/O)."""
        return self.mapper.cached_rest_mapping(group_kind, *versions)

    def cached_resolve(self, arg: str) -> RESTMapping | None:
        """The memoized answer of :meth:`resolve` if fresh and warning-free, else None (never does I/O)."""
        return self.mapper.cached_resolve(arg)

    def cached_groups(self, names: Collection[str]) -> tuple[list[GroupEntry], float] | None:
        """:meth:`LazyRESTMapper.cached_groups`: the ready cache entries of ``names``, or None (never does I/O)."""
        return self.mapper.cached_groups(names)

    # --- meta.RESTMapper --------------------------------------------------------------------------------------

    async def rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping:
        """Await :meth:`LazyRESTMapper.rest_mapping` (same arguments, result and exceptions)."""
        cached = self.mapper.cached_rest_mapping(group_kind, *versions)
        if cached is not None:
            return cached
        return await self._run(self.mapper.rest_mapping, group_kind, *versions)

    async def rest_mappings(self, group_kind: GroupKind, *versions: str) -> list[RESTMapping]:
        """Await :meth:`LazyRESTMapper.rest_mappings`."""
        return await self._run(self.mapper.rest_mappings, group_kind, *versions)

    async def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """Await :meth:`LazyRESTMapper.kind_for`."""
        return await self._run(self.mapper.kind_for, resource)

    async def kinds_for(self, resource: GroupVersionResource) -> list[GroupVersionKind]:
        """Await :meth:`LazyRESTMapper.kinds_for`."""
        return await self._run(self.mapper.kinds_for, resource)

    async def resource_for(self, resource: GroupVersionResource) -> GroupVersionResource:
        """Await :meth:`LazyRESTMapper.resource_for`."""
        return await self._run(self.mapper.resource_for, resource)

    async def resources_for(self, resource: GroupVersionResource) -> list[GroupVersionResource]:
        """Await :meth:`LazyRESTMapper.resources_for`."""
        return await self._run(self.mapper.resources_for, resource)

    async def resource_singularizer(self, resource: str) -> str:
        """Await :meth:`LazyRESTMapper.resource_singularizer`."""
        return await self._run(self.mapper.resource_singularizer, resource)

    async def is_namespaced(self, kind: GroupVersionKind) -> bool:
        """Await :meth:`LazyRESTMapper.is_namespaced` (``TypeError`` for a non-GVK is raised at once)."""
        if not isinstance(kind, GroupVersionKind):
            return self.mapper.is_namespaced(kind)  # raises the TypeError without a thread hop
        cached = self.mapper.cached_rest_mapping(kind.group_kind, kind.version)
        if cached is not None:
            return cached.namespaced
        return await self._run(self.mapper.is_namespaced, kind)

    # --- kubectl resolution -----------------------------------------------------------------------------------

    async def resolve(self, arg: str) -> RESTMapping:
        """Await :meth:`LazyRESTMapper.resolve` (same arguments, result, warnings and exceptions)."""
        cached = self.mapper.cached_resolve(arg)
        if cached is not None:
            return cached
        return await self._run(self.mapper.resolve, arg)

    async def resolve_all(self, args: str) -> list[RESTMapping]:
        """Await :meth:`LazyRESTMapper.resolve_all`."""
        return await self._run(self.mapper.resolve_all, args)

    async def expand_category(self, name: str) -> list[GroupResource]:
        """Await :meth:`LazyRESTMapper.expand_category`."""
        return await self._run(self.mapper.expand_category, name)

    async def groups_serving(self, *, kind: str | None = None, name: str | None = None,
                             short_name: str | None = None, category: str | None = None) -> set[str]:
        """Await :meth:`LazyRESTMapper.groups_serving` (same keywords, result and exceptions)."""
        return await self._run(functools.partial(self.mapper.groups_serving, kind=kind, name=name,
                                                 short_name=short_name, category=category))

    async def read_groups(self, names: Collection[str] | None, versions: Sequence[str] | None = None
                          ) -> tuple[list[GroupEntry], float]:
        """Await :meth:`LazyRESTMapper.read_groups` (same arguments, result and exceptions)."""
        return await self._run(self.mapper.read_groups, names, versions)

    async def wait_for(self, group_kind_or_arg: GroupKind | str, timeout: float, *,
                       watcher: ChangeNotifier | None = None, poll_interval: float = 1.0) -> RESTMapping:
        """Await the mapping of a kind as soon as it is served (:meth:`LazyRESTMapper.wait_for`, as a coroutine).

        The waiting happens on the event loop (``asyncio.sleep``), not in a worker thread, so many waiters cost no
        threads and cancelling the coroutine ends the wait; each attempt is one lookup. With a running ``watcher``
        an invalidation it makes ends the sleep early (checked every 50 ms).

        Raises:
            WaitTimeoutError: not served by the deadline (chains the last lookup error).
            AmbiguousKindError, AmbiguousResourceError, DiscoveryError, TransportError: as the sync method.
            InvalidArgumentError: a negative timeout or a non-positive poll interval, or either NaN or infinite.
            TypeError: either is not a number.
        """
        check_seconds("AsyncRESTMapper.wait_for", "timeout", timeout, positive=False)
        check_seconds("AsyncRESTMapper.wait_for", "poll_interval", poll_interval)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: RestMapperError | None = None
        while True:
            seen = watcher.change_count if watcher is not None else 0
            try:
                return await self._mapping_of(group_kind_or_arg)
            except RestMapperError as exc:
                if not is_retryable_wait_error(exc):
                    raise
                last = exc
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise WaitTimeoutError(group_kind_or_arg, timeout, last) from last
            await _sleep_until(loop.time() + min(remaining, poll_interval), watcher, seen)

    async def _mapping_of(self, group_kind_or_arg: GroupKind | str) -> RESTMapping:
        """One lookup of :meth:`wait_for`: :meth:`rest_mapping` of a GroupKind, else :meth:`resolve` of the text."""
        if isinstance(group_kind_or_arg, GroupKind):
            return await self.rest_mapping(group_kind_or_arg)
        return await self.resolve(group_kind_or_arg)


async def _sleep_until(wake_at: float, watcher: ChangeNotifier | None, seen: int) -> None:
    """Sleep until ``wake_at`` (the running loop's clock, seconds), or, with a ``watcher`` watching CRDs, until it
    makes an invalidation (its ``change_count`` moves from ``seen``; checked every 50 ms)."""
    loop = asyncio.get_running_loop()
    event_driven = watcher is not None and watcher.watching(CRD_KIND)
    while (now := loop.time()) < wake_at:
        if event_driven and watcher is not None and watcher.change_count != seen:
            return
        await asyncio.sleep(min(0.05, wake_at - now) if event_driven else wake_at - now)


async def run_blocking(executor: Executor | None, call: Callable[[], T]) -> T:
    """Await ``call()`` run in ``executor`` (None: :func:`asyncio.to_thread`), carrying the caller's context variables.

    Args:
        executor: a ``concurrent.futures.Executor``, or None for the loop's default executor.
        call: a function of no arguments (use ``functools.partial``).

    Returns:
        What ``call`` returns; what it raises is raised here.
    """
    if executor is None:
        return await asyncio.to_thread(call)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, contextvars.copy_context().run, call)
