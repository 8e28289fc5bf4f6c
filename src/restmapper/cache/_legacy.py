"""What goes into a group's entry: from legacy group-version answers, or from an aggregated root document.

Pure functions over what was fetched and what was cached; :class:`~restmapper.cache.DiscoveryCache` installs the
result under its lock.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from restmapper.cache._freshness import Action, SlotState, Timing, decide
from restmapper.cache._table import GroupLists
from restmapper.cache._types import GroupEntry, StaleGroupVersionError
from restmapper.discovery import RootDiscovery
from restmapper.errors import APIStatusError, RestMapperError
from restmapper.model import APIGroup, APIResourceList, GroupVersion

__all__ = ["EntryParts", "aggregated_parts", "legacy_parts", "needed_versions"]

log = logging.getLogger("restmapper.cache")


@dataclass
class EntryParts:
    """The content of one group entry, before it is installed.

    Attributes:
        group: the group with its served versions and preferred version.
        resources: the resource lists that are known.
        failed: versions that could not be discovered, with the cause.
        stale: versions answered from an earlier entry after a transient failure, with that failure.
        unread: listed versions not fetched yet.
    """

    group: APIGroup
    resources: Mapping[GroupVersion, APIResourceList]
    failed: dict[GroupVersion, RestMapperError]
    stale: dict[GroupVersion, RestMapperError] = field(default_factory=dict)
    unread: tuple[GroupVersion, ...] = ()


def aggregated_parts(root: RootDiscovery, g: APIGroup, stale: Collection[GroupVersion]) -> EntryParts:
    """The entry of group ``g`` from an aggregated document; versions in ``stale`` (the document's ``Stale``
    group versions, their API service down) fail with :class:`StaleGroupVersionError`."""
    assert root.resources is not None
    resources = GroupLists(root.resources, g.group_versions)  # converted when a lookup reads them
    failed: dict[GroupVersion, RestMapperError] = {gv: StaleGroupVersionError(gv) for gv in stale
                                                   if gv.group == g.name}
    return EntryParts(APIGroup(g.name, g.versions, g.preferred_version), resources, failed)


def legacy_parts(g: APIGroup, ok: Mapping[GroupVersion, APIResourceList],
                 errors: Mapping[GroupVersion, RestMapperError], kept: GroupEntry | None, old: GroupEntry | None,
                 now: float, timing: Timing) -> EntryParts:
    """The entry of listed group ``g`` after a legacy load.

    Args:
        g: the group as the root document lists it.
        ok: the resource lists fetched by this load.
        errors: the versions this load failed to fetch, with the cause.
        kept: a fresh entry whose versions this load did not fetch (they stay as they were), or None.
        old: the entry cached before this load (its lists may mask a transient failure), or None.
        now: clock reading (seconds).
        timing: the cache's time rules (``max_stale``).

    A version that answers 404 is left out of the served versions (the listing was stale), except in core:
    core always exists, so a core 404 is a failure, never "core serves nothing" (which would let another group
    answer core names).
    """
    load = _LegacyLoad(ok, errors, kept, old, now, timing)
    served = [gv.version for gv in g.group_versions if load.place(gv)]
    preferred = g.preferred_version if g.preferred_version in served else (served[0] if served else None)
    return EntryParts(APIGroup(g.name, tuple(served), preferred), load.resources, load.failed, load.stale,
                      tuple(load.unread))


class _LegacyLoad:
    """The parts of one group entry built version by version (see :func:`legacy_parts`, whose arguments the
    first six attributes are)."""

    def __init__(self, ok: Mapping[GroupVersion, APIResourceList], errors: Mapping[GroupVersion, RestMapperError],
                 kept: GroupEntry | None, old: GroupEntry | None, now: float, timing: Timing) -> None:
        self.ok, self.errors, self.kept, self.old, self.now, self.timing = ok, errors, kept, old, now, timing
        self.resources: dict[GroupVersion, APIResourceList] = {}
        self.failed: dict[GroupVersion, RestMapperError] = {}
        self.stale: dict[GroupVersion, RestMapperError] = {}
        self.unread: list[GroupVersion] = []

    def place(self, gv: GroupVersion) -> bool:
        """Put listed version ``gv`` where this load leaves it; False when it is not served (a 404 outside
        core: the listing was stale)."""
        err = self.errors.get(gv)
        if gv in self.ok:
            self.resources[gv] = self.ok[gv]
        elif err is None:
            self._not_fetched(gv)
        elif isinstance(err, APIStatusError) and err.not_found and gv.group != "":
            log.info("%s is listed by the server but answers 404; treating it as not served", gv)
            return False
        elif (earlier := self._masking(gv, err)) is not None:
            self.resources[gv] = earlier
            self.stale[gv] = err
        else:
            self.failed[gv] = err
        return True

    def _not_fetched(self, gv: GroupVersion) -> None:
        # Not fetched by this load: what a fresh entry read stays, the rest is unread.
        kept = self.kept
        if kept is not None and gv in kept.resources:
            self.resources[gv] = kept.resources[gv]
        elif kept is not None and gv in kept.failed:
            self.failed[gv] = kept.failed[gv]
        else:
            self.unread.append(gv)

    def _masking(self, gv: GroupVersion, err: RestMapperError) -> APIResourceList | None:
        """The earlier entry's list of ``gv`` when it may be served instead of failing with ``err``, else None."""
        old = self.old
        if old is None or gv not in old.resources or decide(
                SlotState(old.fetched_at), self.now, self.timing, failure=err) is not Action.SERVE_STALE:
            return None
        return old.resources[gv]


def needed_versions(group: APIGroup, versions: Sequence[str] | None) -> tuple[GroupVersion, ...]:
    """The versions of ``group`` a lookup needs: all (None), the preferred one (``()``), or those listed."""
    if versions is None:
        return group.group_versions
    if not versions:
        preferred = group.preferred
        return (preferred,) if preferred is not None else group.group_versions
    return tuple(gv for gv in group.group_versions if gv.version in versions)
