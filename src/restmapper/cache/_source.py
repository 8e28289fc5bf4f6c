"""What the discovery cache needs from the discovery layer: :class:`DiscoverySource`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from restmapper.discovery import RootDiscovery
from restmapper.errors import RestMapperError
from restmapper.model import APIResourceList, GroupVersion
from restmapper.transport.base import Transport

__all__ = ["DiscoverySource"]


@runtime_checkable
class DiscoverySource(Protocol):
    """The documents a :class:`~restmapper.cache.DiscoveryCache` reads (:class:`~restmapper.discovery.DiscoveryClient`
    provides them): the two root documents, the legacy group-version documents, and the transport they come over
    (handed up unchanged, so that list/watch layers reuse its connection and credentials)."""

    @property
    def transport(self) -> Transport:
        """The transport the documents are read over."""
        ...

    def fetch_core(self) -> RootDiscovery:
        """``/api`` (conditionally); raises a :class:`~restmapper.errors.RestMapperError` when unreadable."""
        ...

    def fetch_named(self, *, listing: bool = False) -> RootDiscovery:
        """``/apis`` (conditionally); raises a :class:`~restmapper.errors.RestMapperError` when unreadable.

        ``listing``: the group listing alone (legacy ``APIGroupList``, ``resources`` None) is enough.
        """
        ...

    def fetch_group_versions(
        self, gvs: Iterable[GroupVersion]
    ) -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError]]:
        """The legacy documents of ``gvs``: ``(resources, failed)``, each failure with its typed cause."""
        ...
