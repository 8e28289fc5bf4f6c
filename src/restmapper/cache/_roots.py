"""The two root documents, ``/api`` (the core group) and ``/apis`` (the named groups), and what tells them apart.

The cache keeps one slot per :class:`RootDoc` (its last answer, a :class:`~restmapper.cache._types.RootSlot`)
and handles both documents alike; the only places they differ are the methods of :class:`RootDoc`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from restmapper.cache._source import DiscoverySource
from restmapper.discovery import RootDiscovery
from restmapper.errors import GroupDiscoveryError
from restmapper.model import GroupVersion

__all__ = ["CORE", "CORE_V1", "NAMED", "ROOTS", "RootDoc", "root_of", "roots_for"]

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

    def fetch(self, source: DiscoverySource) -> RootDiscovery:
        """Read this document through ``source`` (conditionally).

        Raises:
            RestMapperError: as :meth:`~restmapper.discovery.DiscoveryClient.fetch_core` or ``fetch_named``.
        """
        return source.fetch_core() if self.core else source.fetch_named()

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


def root_of(group: str) -> RootDoc:
    """The document that lists ``group``: ``/api`` for core (``""``), ``/apis`` for named groups."""
    return CORE if group == "" else NAMED


def roots_for(names: Collection[str] | None) -> tuple[RootDoc, ...]:
    """The documents a lookup of ``names`` (None: every group) reads, in priority order."""
    if names is None:
        return ROOTS
    return _READ_BY[("" in names, any(names))]  # any(): a named group is a non-empty name


_READ_BY = {(True, True): ROOTS, (True, False): (CORE,), (False, True): (NAMED,), (False, False): ()}
