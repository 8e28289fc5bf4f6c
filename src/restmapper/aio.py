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

from restmapper.mapper import LazyRESTMapper
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource, RESTMapping

__all__ = ["AsyncRESTMapper"]


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
                       poll_interval: float = 1.0) -> RESTMapping:
        """Await :meth:`LazyRESTMapper.wait_for` (polling; the wait runs in a worker thread).

        Raises:
            WaitTimeoutError: not served by the deadline.
        """
        return await asyncio.to_thread(self.mapper.wait_for, group_kind_or_arg, timeout,
                                       poll_interval=poll_interval)
