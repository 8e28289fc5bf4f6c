"""The read-only part of upstream's discoverer surface that :class:`~restmapper.dynamic.discoverer.
SelfHealingDiscoverer` keeps: ``version``, ``api_groups``, ``parse_api_groups()`` and iteration, with upstream's
return types, over the discoverer's cache and Resource objects."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, KeysView
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper import wire
from restmapper._redact import scrubbing
from restmapper.cache import GroupEntry
from restmapper.dynamic._index import Flavour, GroupResources
from restmapper.mapper import LazyRESTMapper
from restmapper.transport import scrub_with, status_error
from restmapper.transport.base import Transport

__all__ = ["UpstreamSurface"]


class UpstreamSurface:
    """``version``, ``api_groups``, ``parse_api_groups`` and ``__iter__`` of the drop-in discoverer."""

    cache: Any  # the discoverer's DiscoveryCache (``group_names``)
    mapper: LazyRESTMapper
    _lock: threading.Lock  # guards ``_version``
    _transport: Transport
    _version: dict[str, Any] | None
    _file: Any  # the cache file (a ``CacheFile``), or None
    _flavour: Flavour
    _generic_list: Resource
    _write_file: Callable[[], None]  # writes the cache file when it is due
    _entries: Callable[[Collection[str] | None], list[tuple[GroupEntry, GroupResources]]]  # every group read

    @property
    def version(self) -> dict[str, Any]:
        """The server version as upstream returns it: ``{"kubernetes": <the /version document>}``.

        Raises:
            APIStatusError: ``/version`` answered an error status.
            MalformedDiscoveryError: the answer is not a JSON object.
            TransportError: no answer.
        """
        with self._lock:
            if self._version is not None:
                return {"kubernetes": dict(self._version)}
        resp = self._transport.get("/version", {"Accept": "application/json"})
        if resp.status != 200:
            raise status_error(self._transport, "/version", resp.status, resp.body, resp.headers)
        # The wire decoder bounds nesting and rejects NaN/Infinity; a raw json.loads would not.
        with scrubbing(lambda text: scrub_with(self._transport, text)):
            doc = wire.decode_json(resp.body, document="/version")
        with self._lock:
            self._version = doc
        if self._file is not None:
            self._file.write_again()  # the snapshot lacks the version: write it
            self._write_file()
        return {"kubernetes": dict(doc)}

    @property
    def api_groups(self) -> KeysView[str]:
        """The names of the groups under ``/apis``, ``""`` first, as upstream's ``api_groups`` keys.

        Raises:
            DiscoveryError: ``/api`` or ``/apis`` could not be read.
        """
        return dict.fromkeys(["", *(n for n in self.cache.group_names() if n)]).keys()

    def parse_api_groups(self, request_resources: bool = False, update: bool = False) -> dict[str, Any]:
        """Return upstream's nested ``{prefix: {group: {version: ResourceGroup}}}`` view of every group.

        Args:
            request_resources: ignored: resources are always included (they come with the group listing on
                aggregated servers; legacy servers are read one request per group version).
            update: revalidate the listing first (the cache's TTL already bounds staleness).

        Returns:
            ``{"api": {"": {"v1": ResourceGroup}}, "apis": {group: {version: ResourceGroup}}}`` as
            ``kubernetes.dynamic``'s ``Discoverer.parse_api_groups``: each ``ResourceGroup`` has ``preferred`` (a
            bool) and ``resources`` (kind -> list of :class:`Resource`); ``apis[""]["v1"]`` holds the generic
            ``List``.

        Raises:
            DiscoveryError: the root documents could not be read.
        """
        del request_resources
        if update:
            self.mapper.invalidate_all()
        group_class = self._flavour.resource_group
        generic = group_class(True, resources={"List": [self._generic_list]})
        out: dict[str, Any] = {"api": {}, "apis": {"": {"v1": generic}}}
        for entry, group in self._entries(None):
            prefix = "api" if not entry.name else "apis"
            out[prefix][entry.name] = {
                v.group_version.version: group_class(v.preferred, resources=dict(v.by_kind))
                for v in group.versions}
        return out

    def __iter__(self) -> Iterator[list[Resource]]:
        """Yield, per group version (core first), one list per kind (upstream's iteration shape).

        Raises:
            DiscoveryError: the root documents could not be read.
        """
        for entry, group in self._entries(None):
            for version in group.versions:
                yield from (list(objs) for objs in version.by_kind.values())
            if not entry.name:
                yield [self._generic_list]
