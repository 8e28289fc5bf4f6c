"""asyncio front end: :class:`AsyncRESTMapper` never blocks the event loop.

Warm lookups (a fresh memoized answer) are answered inline in about a microsecond; anything that may do network
I/O or wait for another thread's fetch runs in a worker thread through :func:`asyncio.to_thread`. The mapper
underneath is the same thread-safe :class:`~restmapper.mapper.LazyRESTMapper`, so sync and async code can share
one cache.

Example (kopf, or any asyncio controller)::

    mapper = AsyncRESTMapper(LazyRESTMapper.from_kubeconfig())
    mapping = await mapper.resolve("certificates.cert-manager.io")
"""

from __future__ import annotations

import asyncio

from restmapper.errors import InvalidArgumentError, RestMapperError, WaitTimeoutError
from restmapper.mapper import LazyRESTMapper
from restmapper.mapper.wait import CRD_KIND, ChangeNotifier, is_retryable_wait_error
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource, RESTMapping
from restmapper.store._aio import AsyncObjectCache

__all__ = ["AsyncObjectCache", "AsyncRESTMapper"]


class AsyncRESTMapper:
    """Awaitable versions of :class:`~restmapper.mapper.LazyRESTMapper`'s lookups.

    Attributes:
        mapper: the synchronous mapper doing the work (share it with sync code freely).
    """

    def __init__(self, mapper: LazyRESTMapper) -> None:
        """Wrap ``mapper``."""
        self.mapper = mapper

    async def rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping:
        """Await :meth:`LazyRESTMapper.rest_mapping` (same arguments, result and exceptions)."""
        cached = self.mapper.cached_rest_mapping(group_kind, *versions)
        if cached is not None:
            return cached
        return await asyncio.to_thread(self.mapper.rest_mapping, group_kind, *versions)

    async def resolve(self, arg: str) -> RESTMapping:
        """Await :meth:`LazyRESTMapper.resolve` (same arguments, result, warnings and exceptions)."""
        cached = self.mapper.cached_resolve(arg)
        if cached is not None:
            return cached
        return await asyncio.to_thread(self.mapper.resolve, arg)

    async def resolve_all(self, args: str) -> list[RESTMapping]:
        """Await :meth:`LazyRESTMapper.resolve_all`."""
        return await asyncio.to_thread(self.mapper.resolve_all, args)

    async def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """Await :meth:`LazyRESTMapper.kind_for`."""
        return await asyncio.to_thread(self.mapper.kind_for, resource)

    async def resource_for(self, resource: GroupVersionResource) -> GroupVersionResource:
        """Await :meth:`LazyRESTMapper.resource_for`."""
        return await asyncio.to_thread(self.mapper.resource_for, resource)

    async def wait_for(self, group_kind_or_arg: GroupKind | str, timeout: float, *,
                       watcher: ChangeNotifier | None = None, poll_interval: float = 1.0) -> RESTMapping:
        """Await the mapping of a kind as soon as it is served (:meth:`LazyRESTMapper.wait_for`, as a coroutine).

        The waiting happens on the event loop (``asyncio.sleep``), not in a worker thread, so many waiters cost no
        threads and cancelling the coroutine ends the wait; each attempt is one lookup. With a running ``watcher``
        an invalidation it makes ends the sleep early (checked every 50 ms).

        Raises:
            WaitTimeoutError: not served by the deadline (chains the last lookup error).
            AmbiguousKindError, AmbiguousResourceError, DiscoveryError, TransportError: as the sync method.
            InvalidArgumentError: a negative timeout or a non-positive poll interval.
        """
        if timeout < 0 or poll_interval <= 0:
            raise InvalidArgumentError(f"need timeout >= 0 and poll_interval > 0, got {timeout}, {poll_interval}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: RestMapperError | None = None
        while True:
            seen = watcher.change_count if watcher is not None else 0
            try:
                if isinstance(group_kind_or_arg, GroupKind):
                    return await self.rest_mapping(group_kind_or_arg)
                return await self.resolve(group_kind_or_arg)
            except RestMapperError as exc:
                if not is_retryable_wait_error(exc):
                    raise
                last = exc
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise WaitTimeoutError(group_kind_or_arg, timeout, last) from last
            wake_at = loop.time() + min(remaining, poll_interval)
            event_driven = watcher is not None and watcher.watching(CRD_KIND)
            while (now := loop.time()) < wake_at:
                if event_driven and watcher is not None and watcher.change_count != seen:
                    break
                await asyncio.sleep(min(0.05, wake_at - now) if event_driven else wake_at - now)
