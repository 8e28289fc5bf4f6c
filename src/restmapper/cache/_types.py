"""Value types of the discovery cache: what a lookup gets back, and the counters."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from restmapper.discovery import RootDiscovery
from restmapper.errors import (
    APIStatusError,
    DiscoveryError,
    GroupDiscoveryError,
    RestMapperError,
    StaleGroupVersionError,
    TransportError,
)
from restmapper.model import APIGroup, APIResourceList, GroupVersion

__all__ = [
    "Backoff",
    "CacheStats",
    "GroupEntry",
    "GroupView",
    "RootSlot",
    "StaleGroupVersionError",
    "is_transient",
]


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
        stale: versions whose resources are an earlier answer kept after a transient failure (stale-on-error),
            with that failure. Good enough for a positive answer within ``max_stale``; never for a no-match.
        unread: listed versions not fetched yet (legacy discovery fetches only the versions a lookup names, or
            the preferred one): in ``group.versions`` but neither in ``resources`` nor in ``failed``.
        outdated: the group was invalidated (its content is known to have changed) and could not be read again
            with a current version list: this is an earlier answer, or current resources under the earlier
            version list, brought back for an outage. It vouches for what it holds (served stale), never for what
            it lacks: another group's answer it could outrank is not given (see :meth:`unsure`).
    """

    group: APIGroup
    resources: Mapping[GroupVersion, APIResourceList]
    failed: Mapping[GroupVersion, RestMapperError]
    fetched_at: float
    generation: int
    stale: Mapping[GroupVersion, RestMapperError] = field(default_factory=dict)
    unread: tuple[GroupVersion, ...] = ()
    outdated: bool = False

    @property
    def name(self) -> str:
        """The group name (``""`` for core)."""
        return self.group.name

    def unsure(self, version: str | None = None) -> Mapping[GroupVersion, RestMapperError]:
        """The versions whose lack of a name proves nothing, with why: the failed ones and, when the entry is
        :attr:`outdated`, every stale one (and ``version``, when given and not listed: it may have been added).

        Args:
            version: only this version (None: every version).

        Returns:
            group version -> the error that made it unsure; empty for a healthy entry.
        """
        unsure = {**self.stale, **self.failed} if self.outdated else self.failed
        if version is None or not unsure:
            return unsure
        of_version = {gv: e for gv, e in unsure.items() if gv.version == version}
        if not of_version and self.outdated and version not in self.group.versions:
            return {GroupVersion(self.name, version): next(iter(unsure.values()))}
        return of_version

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
        """A snapshot of the counters (``fetches`` copied too)."""
        return copy.deepcopy(self)

    @property
    def requests(self) -> int:
        """Total requests sent."""
        return sum(self.fetches.values())


@dataclass
class RootSlot:
    """The last answer for ``/api`` or ``/apis`` (guarded by the cache's lock)."""

    root: RootDiscovery
    fetched_at: float
    expired: bool = False  # set by invalidation: revalidate on next use, but still usable as a stale answer
    listing: bool = False  # a group listing asked for by choice: the server may serve every resource in one document
    _by_name: dict[str, int] | None = field(default=None, repr=False, compare=False)

    def group_index(self) -> dict[str, int]:
        """Group name -> its position in ``root.groups`` (built on first use; the document never changes)."""
        index = self._by_name
        if index is None:
            index = self._by_name = {g.name: i for i, g in enumerate(self.root.groups)}
        return index


@dataclass
class Backoff:
    """When a failed group or root document may be fetched again, and why it failed."""

    attempts: int = 0
    retry_at: float = 0.0
    error: BaseException | None = None
    fetch: object | None = None  # the fetch whose failure was counted last (one fetch counts once)


def is_transient(exc: BaseException) -> bool:
    """True for failures a retry may cure: timeouts, connection errors, 5xx, 429."""
    if isinstance(exc, APIStatusError):
        return exc.status == 429 or exc.status >= 500
    return isinstance(exc, TransportError) and exc.transient
