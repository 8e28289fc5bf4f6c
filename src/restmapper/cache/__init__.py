"""The discovery cache layer: when to ask the server, and what to keep when it fails.

See :class:`DiscoveryCache`.
"""

from __future__ import annotations

from restmapper.cache._cache import DiscoveryCache
from restmapper.cache._types import CacheStats, GroupEntry, GroupView, StaleGroupVersionError

__all__ = ["CacheStats", "DiscoveryCache", "GroupEntry", "GroupView", "StaleGroupVersionError"]
