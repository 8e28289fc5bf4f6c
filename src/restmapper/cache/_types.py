"""Value types of the discovery cache: what a lookup gets back, and the counters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from restmapper.errors import DiscoveryError, GroupDiscoveryError, RestMapperError
from restmapper.model import APIGroup, APIResourceList, GroupVersion

__all__ = ["CacheStats", "GroupEntry", "GroupView", "StaleGroupVersionError"]


class StaleGroupVersionError(DiscoveryError):
    """Aggregated discovery marked a group version ``Stale``: its backing API service is down."""

    def __init__(self, gv: GroupVersion) -> None:
        super().__init__(f"stale GroupVersion discovery: {gv}")
        self.group_version = gv


@dataclass(frozen=True)
class GroupEntry:
    """One API group as cached.

    Attributes:
        group: the group with its *served* versions (listed versions that answered 404 are left out), in
            server order, and its preferred version.
        resources: the resource list of every version that could be discovered.
        failed: versions that could not be discovered, with the typed cause (never cached as empty).
        fetched_at: clock reading (seconds) when the entry was built.
        generation: a number unique to this entry's content, for memoizing derived indexes.
    """

    group: APIGroup
    resources: Mapping[GroupVersion, APIResourceList]
    failed: Mapping[GroupVersion, RestMapperError]
    fetched_at: float
    generation: int

    @property
    def name(self) -> str:
        """The group name (``""`` for core)."""
        return self.group.name

    def failure(self) -> DiscoveryError | None:
        """A :class:`~restmapper.errors.GroupDiscoveryError` naming the failed versions, or None."""
        if not self.failed:
            return None
        return GroupDiscoveryError(self.name, self.failed)


@dataclass(frozen=True)
class GroupView:
    """Groups returned by :meth:`DiscoveryCache.groups`, in priority order (core first).

    Attributes:
        entries: the group entries.
        valid_until: clock reading (seconds) until which answers derived from these entries may be reused.
        generation: the cache generation the view was taken at.
    """

    entries: tuple[GroupEntry, ...]
    valid_until: float
    generation: int


@dataclass
class CacheStats:
    """Counters of a :class:`DiscoveryCache` (read them through ``cache.stats``; they only grow).

    Attributes:
        hits: lookups answered from fresh entries without I/O.
        misses: revalidations asked for by lookups that found nothing.
        negative_hits: misses answered "still no" from the rate-limited negative cache, without I/O.
        fetches: requests by endpoint (``/api``, ``/apis``, ``/apis/<g>/<v>``).
        not_modified: root revalidations that found nothing changed (304 or identical document).
        evictions: groups dropped (404 on a version, invalidation).
        errors: failed fetches.
        stale_served: lookups served from an entry kept after a transient refresh failure.
    """

    hits: int = 0
    misses: int = 0
    negative_hits: int = 0
    fetches: Counter[str] = field(default_factory=Counter)
    not_modified: int = 0
    evictions: int = 0
    errors: int = 0
    stale_served: int = 0

    def copy(self) -> CacheStats:
        """A snapshot of the counters."""
        return CacheStats(self.hits, self.misses, self.negative_hits, Counter(self.fetches), self.not_modified,
                          self.evictions, self.errors, self.stale_served)

    @property
    def requests(self) -> int:
        """Total requests sent."""
        return sum(self.fetches.values())
