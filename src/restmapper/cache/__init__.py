"""The discovery cache layer: when to ask the server, and what to keep when it fails.

See :class:`DiscoveryCache`. Also published for the layers above (the mapper builds on them):

* :class:`DiscoverySource`: the interface the cache reads discovery through (a
  :class:`~restmapper.discovery.DiscoveryClient`, or any object with its methods).
* :class:`LookupScope`: per thread, what the current lookup fetched (fresh for the rest of that lookup).
* :func:`replay_mark` and :class:`Replays`: take a mark when a call starts; a failure the cache recorded before
  the mark is a replay of an earlier fetch, and the error raised says so (with when it is retried).
"""

from __future__ import annotations

from restmapper.cache._cache import DiscoveryCache
from restmapper.cache._replay import Replays, replay_mark
from restmapper.cache._scope import LookupScope
from restmapper.cache._source import DiscoverySource
from restmapper.cache._types import CacheStats, GroupEntry, GroupView, StaleGroupVersionError

__all__ = [
    "CacheStats",
    "DiscoveryCache",
    "DiscoverySource",
    "GroupEntry",
    "GroupView",
    "LookupScope",
    "Replays",
    "StaleGroupVersionError",
    "replay_mark",
]
