"""Drop-in self-healing discovery for ``kubernetes.aio.dynamic`` (the asyncio client shipped in ``kubernetes``).

``await DynamicClient(api_client, discoverer=SelfHealingAioDiscoverer)`` keeps asyncio code working, answers with
``kubernetes.aio.dynamic``'s own ``Resource`` objects and errors, and adds what :class:`SelfHealingDiscoverer`
adds to the synchronous client (TTL, 404 eviction, no temp-dir cache file, preferred versions, thread safety);
:class:`SelfHealingAioDynamicClient` also re-resolves a resource whose type vanished under a request and retries
once. Discovery work runs off the event loop.
"""

from __future__ import annotations

from typing import Any

from kubernetes.aio.dynamic import DynamicClient
from kubernetes.aio.dynamic.discovery import ResourceGroup
from kubernetes.aio.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
from kubernetes.aio.dynamic.resource import Resource, ResourceList, Subresource

from restmapper.dynamic._async import AsyncSelfHealingDiscovererBase, call_healed
from restmapper.dynamic._index import Flavour

__all__ = ["SelfHealingAioDiscoverer", "SelfHealingAioDynamicClient"]

_FLAVOUR = Flavour(Resource, ResourceList, ResourceGroup, ResourceNotFoundError, ResourceNotUniqueError,
                   snake_case=True)


class SelfHealingAioDiscoverer(AsyncSelfHealingDiscovererBase):
    """A discoverer for ``kubernetes.aio.dynamic.DynamicClient`` (see the module doc and the base class)."""

    _flavour = _FLAVOUR


class SelfHealingAioDynamicClient(DynamicClient):
    """A ``kubernetes.aio.dynamic.DynamicClient`` using :class:`SelfHealingAioDiscoverer` whose requests heal once
    when the resource type vanished (as :class:`~restmapper.dynamic.SelfHealingDynamicClient`)."""

    def __init__(self, client: Any, cache_file: str | None = None, discoverer: Any = None) -> None:
        """Wrap an asyncio ``ApiClient``; ``await`` the client (or ``async with`` it) before use."""
        super().__init__(client, cache_file=cache_file,  # type: ignore[no-untyped-call]
                         discoverer=discoverer or SelfHealingAioDiscoverer)

    async def get(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        """``DynamicClient.get``, healed once on a resource-type 404."""
        return await call_healed(self, DynamicClient.get, resource, _FLAVOUR, Subresource, args, kwargs)

    async def create(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        """``DynamicClient.create``, healed once on a resource-type 404."""
        return await call_healed(self, DynamicClient.create, resource, _FLAVOUR, Subresource, args, kwargs)

    async def delete(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        """``DynamicClient.delete``, healed once on a resource-type 404."""
        return await call_healed(self, DynamicClient.delete, resource, _FLAVOUR, Subresource, args, kwargs)

    async def replace(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        """``DynamicClient.replace``, healed once on a resource-type 404."""
        return await call_healed(self, DynamicClient.replace, resource, _FLAVOUR, Subresource, args, kwargs)

    async def patch(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        """``DynamicClient.patch``, healed once on a resource-type 404."""
        return await call_healed(self, DynamicClient.patch, resource, _FLAVOUR, Subresource, args, kwargs)

    async def server_side_apply(self, resource: Any, *args: Any, **kwargs: Any) -> Any:
        """``DynamicClient.server_side_apply``, healed once on a resource-type 404."""
        return await call_healed(self, DynamicClient.server_side_apply, resource, _FLAVOUR, Subresource, args,
                                 kwargs)
