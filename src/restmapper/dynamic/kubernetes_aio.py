"""Drop-in self-healing discovery for ``kubernetes.aio.dynamic`` (the asyncio client shipped in ``kubernetes``).

``await DynamicClient(api_client, discoverer=SelfHealingAioDiscoverer)`` keeps asyncio code working and
answers with that library's own ``Resource`` objects and errors, adding what :class:`SelfHealingDiscoverer` adds
to the synchronous client (TTL, 404 eviction, no temp-dir cache file, preferred versions, thread safety).
:class:`SelfHealingAioDynamicClient` also re-resolves a resource whose type vanished under a request and
resends it once where that means the same (see :mod:`restmapper.dynamic._resend`). Discovery work runs off
the event loop.
"""

from __future__ import annotations

from restmapper._optional import missing
from restmapper._public import own_methods

try:
    from kubernetes.aio.dynamic import DynamicClient
except ModuleNotFoundError as exc:  # an optional extra
    raise missing("restmapper.dynamic.kubernetes_aio", "kubernetes.aio", "aio", exc) from exc

from restmapper.dynamic._async import AsyncHealingClientMixin, AsyncSelfHealingDiscovererBase, library_flavour

__all__ = ["SelfHealingAioDiscoverer", "SelfHealingAioDynamicClient"]

_FLAVOUR, _SUBRESOURCE = library_flavour("kubernetes.aio.dynamic")


@own_methods
class SelfHealingAioDiscoverer(AsyncSelfHealingDiscovererBase):
    """A discoverer for ``kubernetes.aio.dynamic.DynamicClient`` (see the module doc and the base class)."""

    _flavour = _FLAVOUR


@own_methods
class SelfHealingAioDynamicClient(AsyncHealingClientMixin, DynamicClient):
    """``kubernetes.aio.dynamic.DynamicClient`` with :class:`SelfHealingAioDiscoverer`; requests heal once when
    the resource type vanished (as :class:`~restmapper.dynamic.SelfHealingDynamicClient`)."""

    _flavour = _FLAVOUR
    _subresource_class = _SUBRESOURCE
    _discoverer_class = SelfHealingAioDiscoverer
