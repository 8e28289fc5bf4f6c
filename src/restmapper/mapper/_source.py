"""What the mapper needs from the cache below it: :class:`CacheSource` (:class:`~restmapper.cache.DiscoveryCache`
provides it). The mapper depends on this interface, not on the cache class."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Protocol, runtime_checkable

from restmapper.cache import CacheStats, LookupScope
from restmapper.errors import GroupDiscoveryError
from restmapper.mapper._groups import GroupSource
from restmapper.model import GroupVersion
from restmapper.transport.base import Transport

__all__ = ["CacheSource", "Healing"]


class Healing(Protocol):
    """How a mapper tells the cache that an answer may be out of date (misses, 404s, invalidation)."""

    @property
    def miss_refresh_interval(self) -> float:
        """Seconds between two revalidations caused by misses (the negative-cache lifetime)."""
        ...

    @property
    def invalidations(self) -> int:
        """How many invalidations ran so far (a lookup that saw it move may have missed a dropped group)."""
        ...

    def revalidate_on_miss(self, names: Collection[str] | None = None) -> bool:
        """Ask the server again (rate-limited) because a lookup over ``names`` found nothing; True if changed."""
        ...

    def documents_failing(self) -> bool:
        """Whether a root document's last refresh failed, so what it lists may be out of date (no I/O)."""
        ...

    def miss_confirmed_at(self, names: Collection[str] | None = None) -> float | None:
        """When the server last confirmed what a no-match over ``names`` read (clock seconds); None when the
        current lookup asked it (no I/O)."""
        ...

    def unconfirmed(self, names: Collection[str] | None = None) -> GroupDiscoveryError | None:
        """Why a no-match over ``names`` would not be confirmed by the server, or None (no I/O)."""
        ...

    def report_not_found(self, gv: GroupVersion) -> None:
        """A request under ``gv`` answered 404: evict its group."""
        ...

    def report_not_found_limited(self, gv: GroupVersion) -> bool:
        """:meth:`report_not_found`, rate-limited per group; True when the group was evicted."""
        ...

    def invalidate_group(self, group: str) -> None:
        """Drop one group; the next lookup that needs it refetches."""
        ...

    def invalidate_group_version(self, gv: GroupVersion) -> None:
        """Drop the group of ``gv``."""
        ...

    def invalidate_all(self) -> None:
        """Drop everything."""
        ...


@runtime_checkable
class CacheSource(GroupSource, Healing, Protocol):
    """Everything a :class:`~restmapper.mapper.LazyRESTMapper` (and the layers above, through ``mapper.cache``)
    use of a discovery cache: the groups (:class:`GroupSource`), healing (:class:`Healing`), its clock (seconds),
    lookup scopes, counters and the transport below it."""

    clock: Callable[[], float]
    lookup: LookupScope

    @property
    def stats(self) -> CacheStats:
        """A snapshot of the counters."""
        ...

    @property
    def transport(self) -> Transport:
        """The transport discovery reads over (list/watch layers reuse it)."""
        ...

    def group_names(self, *, core: bool = True) -> tuple[str, ...]:
        """Every listed group name, core first (``core=False``: only ``/apis``)."""
        ...

    def served_versions(self, group: str) -> tuple[str, ...]:
        """The versions the server lists for ``group`` (``()``: no such group)."""
        ...

    def read_ahead(self, names: Collection[str] | None) -> None:
        """On a cold start, read at once the root documents a lookup of ``names`` may need (never raises)."""
        ...
