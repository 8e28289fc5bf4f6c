"""Drop-in self-healing discovery for ``kubernetes_asyncio.dynamic`` (the ``kubernetes_asyncio`` package).

``await DynamicClient(api_client, discoverer=SelfHealingAsyncioDiscoverer)`` keeps asyncio code working and
answers with that library's own ``Resource`` objects and errors, adding what :class:`SelfHealingDiscoverer` adds
to the synchronous client (TTL, 404 eviction, no temp-dir cache file, preferred versions, thread safety).
:class:`SelfHealingAsyncioDynamicClient` also re-resolves a resource whose type vanished under a request and
retries once. Discovery work runs off the event loop.
"""

from __future__ import annotations

from typing import Any

from kubernetes_asyncio.dynamic import DynamicClient
from kubernetes_asyncio.dynamic.discovery import ResourceGroup
from kubernetes_asyncio.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
from kubernetes_asyncio.dynamic.resource import Resource, ResourceList, Subresource

from restmapper.dynamic._async import AsyncHealingClientMixin, AsyncSelfHealingDiscovererBase
from restmapper.dynamic._index import Flavour

__all__ = ["SelfHealingAsyncioDiscoverer", "SelfHealingAsyncioDynamicClient"]

_FLAVOUR = Flavour(Resource, ResourceList, ResourceGroup, ResourceNotFoundError, ResourceNotUniqueError,
                   snake_case=True)


class SelfHealingAsyncioDiscoverer(AsyncSelfHealingDiscovererBase):
    """A discoverer for ``kubernetes_asyncio.dynamic.DynamicClient`` (see the module doc and the base class)."""

    _flavour = _FLAVOUR


class SelfHealingAsyncioDynamicClient(AsyncHealingClientMixin, DynamicClient):
    """``kubernetes_asyncio.dynamic.DynamicClient`` with :class:`SelfHealingAsyncioDiscoverer`; requests heal once when
    the resource type vanished (as :class:`~restmapper.dynamic.SelfHealingDynamicClient`)."""

    _flavour = _FLAVOUR
    _subresource_class = Subresource

    def __init__(self, client: Any, cache_file: str | None = None, discoverer: Any = None) -> None:
        """Wrap an asyncio ``ApiClient``; ``await`` the client (or ``async with`` it) before use."""
        super().__init__(client, cache_file=cache_file,
                         discoverer=discoverer or SelfHealingAsyncioDiscoverer)  # type: ignore[arg-type]
