"""The two root documents, ``/api`` (the core group) and ``/apis`` (the named groups), and what tells them apart.

The cache keeps one slot per :class:`RootDoc` (its last answer, a :class:`~restmapper.cache._types.RootSlot`)
and handles both documents alike; the only places they differ are the methods of :class:`RootDoc`.
"""

from __future__ import annotations

import enum
from collections.abc import Collection
from dataclasses import dataclass

from restmapper.cache._source import DiscoverySource
from restmapper.cache._types import RootSlot
from restmapper.discovery import RootDiscovery
from restmapper.errors import GroupDiscoveryError
from restmapper.model import GroupVersion

__all__ = ["CORE", "CORE_V1", "LISTED_GROUPS_MAX", "NAMED", "ROOTS", "RootDoc", "Want", "root_of", "roots_for",
           "want_for"]

CORE_V1 = GroupVersion("", "v1")
"""Core always exists and always serves ``v1``: an unreadable ``/api`` is reported as this version."""


@dataclass(frozen=True, eq=False)
class RootDoc:
    """One root document (two instances exist, :data:`CORE` and :data:`NAMED`; compared by identity).

    Attributes:
        path: ``/api`` or ``/apis``.
        core: True for ``/api``, which lists the core group (``""``) alone; ``/apis`` lists every named group.
    """

    path: str
    core: bool

    def lists(self, group: str) -> bool:
        """True when ``group`` (``""`` is core) is listed by this document, not by the other one."""
        return (group == "") == self.core

    def fetch(self, source: DiscoverySource, *, listing: bool = False) -> RootDiscovery:
        """Read this document through ``source`` (conditionally); ``listing``: ``/apis`` as a group listing only.

        Raises:
            RestMapperError: as :meth:`~restmapper.discovery.DiscoveryClient.fetch_core` or ``fetch_named``.
        """
        if self.core:
            return source.fetch_core()
        return source.fetch_named(listing=True) if listing else source.fetch_named()

    def listing_fetch(self, want: Want, slot: RootSlot | None, loaded: int) -> bool:
        """Whether a fetch of this document for a lookup wanting ``want`` asks for the group listing only.

        A first fetch for a lookup of one named group asks for the listing (then that group's versions are read
        one by one: a few kilobytes instead of every resource of every group); a refetch asks for what the slot
        holds, except for a lookup that needs every group, or once more than :data:`LISTED_GROUPS_MAX` groups
        are ``loaded`` (lookups that range over many groups): those ask for the whole document.
        """
        if self.core or want is Want.RESOURCES or loaded > LISTED_GROUPS_MAX:
            return False
        if slot is None:
            return want is Want.LISTING
        return slot.listing

    def failed_versions(self, exc: BaseException) -> dict[GroupVersion, BaseException]:
        """The group versions an unreadable copy of this document fails: core ``v1`` for ``/api``, else none."""
        return {CORE_V1: exc} if self.core else {}

    def error(self, exc: BaseException) -> GroupDiscoveryError:
        """The error for this document being unreadable (``documents`` names it; the cause is ``exc``)."""
        return GroupDiscoveryError("", self.failed_versions(exc), documents={self.path: exc})


CORE = RootDoc("/api", core=True)
NAMED = RootDoc("/apis", core=False)
ROOTS = (CORE, NAMED)
"""Both documents, in priority order (core first)."""


LISTED_GROUPS_MAX = 8
"""Groups loaded one by one from a group listing before ``/apis`` is read whole (one request instead of many)."""


class Want(enum.Enum):
    """What a lookup needs from ``/apis``."""

    RESOURCES = "resources"
    """Every group's resources (a lookup that may match any group): the aggregated document when served."""
    ANY = "any"
    """Whatever the cache holds (group names, a relisting, a revalidation)."""
    LISTING = "listing"
    """One named group's resources: the group listing, then that group's own versions, suffice."""


def want_for(names: Collection[str] | None) -> Want:
    """What a lookup of ``names`` (None: every group) needs from ``/apis``: the listing alone for one named group."""
    if names is None:
        return Want.RESOURCES
    named = 0
    for name in names:
        if name:
            named += 1
            if named > 1:
                return Want.RESOURCES
    return Want.LISTING


def root_of(group: str) -> RootDoc:
    """The document that lists ``group``: ``/api`` for core (``""``), ``/apis`` for named groups."""
    return CORE if group == "" else NAMED


def roots_for(names: Collection[str] | None) -> tuple[RootDoc, ...]:
    """The documents a lookup of ``names`` (None: every group) reads, in priority order."""
    if names is None:
        return ROOTS
    return _READ_BY[("" in names, any(names))]  # any(): a named group is a non-empty name


_READ_BY = {(True, True): ROOTS, (True, False): (CORE,), (False, True): (NAMED,), (False, False): ()}
