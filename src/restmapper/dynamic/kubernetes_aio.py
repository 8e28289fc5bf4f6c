"""Drop-in self-healing discovery for ``kubernetes.aio.dynamic`` (the asyncio client shipped in ``kubernetes``).

``await DynamicClient(api_client, discoverer=SelfHealingAioDiscoverer)`` keeps asyncio code working and
answers with that library's own ``Resource`` objects and errors, adding what :class:`SelfHealingDiscoverer` adds
to the synchronous client (TTL, 404 eviction, no temp-dir cache file, preferred versions, thread safety).
:class:`SelfHealingAioDynamicClient` also re-resolves a resource whose type vanished under a request and
retries once. Discovery work runs off the event loop.
"""

from __future__ import annotations

from typing import Any

from kubernetes.aio.dynamic import DynamicClient
from kubernetes.aio.dynamic.discovery import ResourceGroup
from kubernetes.aio.dynamic.exceptions import ResourceNotFoundError, ResourceNotUniqueError
from kubernetes.aio.dynamic.resource import Resource, ResourceList, Subresource

from restmapper.dynamic._async import AsyncHealingClientMixin, AsyncSelfHealingDiscovererBase
from restmapper.dynamic._index import Flavour

__all__ = ["SelfHealingAioDiscoverer", "SelfHealingAioDynamicClient"]

_FLAVOUR = Flavour(Resource, ResourceList, ResourceGroup, ResourceNotFoundError, ResourceNotUniqueError,
                   snake_case=True)


class SelfHealingAioDiscoverer(AsyncSelfHealingDiscovererBase):
    """A discoverer for ``kubernetes.aio.dynamic.DynamicClient`` (see the module doc and the base class)."""

    _flavour = _FLAVOUR


class SelfHealingAioDynamicClient(AsyncHealingClientMixin, DynamicClient):
    """``kubernetes.aio.dynamic.DynamicClient`` with :class:`SelfHealingAioDiscoverer`; requests heal once when
    the resource type vanished (as :class:`~restmapper.dynamic.SelfHealingDynamicClient`)."""

    _flavour = _FLAVOUR
    _subresource_class = Subresource

    def __init__(self, client: Any, cache_file: str | None = None, discoverer: Any = None) -> None:
        """Wrap an asyncio ``ApiClient``; ``await`` the client (or ``async with`` it) before use."""
        super().__init__(client, cache_file=cache_file,  # type: ignore[no-untyped-call]
                         discoverer=discoverer or SelfHealingAioDiscoverer)
