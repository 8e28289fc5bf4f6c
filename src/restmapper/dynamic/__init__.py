"""Drop-in self-healing discovery for ``kubernetes.dynamic`` (docs/design.md §8).

``DynamicClient(api_client, discoverer=SelfHealingDiscoverer)`` keeps existing code working while fixing what
upstream's ``LazyDiscoverer`` gets wrong; :class:`SelfHealingDynamicClient` also re-resolves a resource whose
type vanished under a request and resends it once only where it means the same (same version and scope, a read
or a delete); otherwise :class:`~restmapper.errors.MappingChangedError` says so and nothing is resent.
"""

from __future__ import annotations

from restmapper.dynamic._partial import SearchResults
from restmapper.dynamic.client import SelfHealingDynamicClient, is_resource_type_not_found
from restmapper.dynamic.discoverer import FILTER_KEYWORDS, SelfHealingDiscoverer

__all__ = ["FILTER_KEYWORDS", "SearchResults", "SelfHealingDiscoverer", "SelfHealingDynamicClient",
           "is_resource_type_not_found"]
