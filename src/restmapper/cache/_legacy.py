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
    served: list[str] = []
    resources: dict[GroupVersion, APIResourceList] = {}
    failed: dict[GroupVersion, RestMapperError] = {}
    stale: dict[GroupVersion, RestMapperError] = {}
    unread: list[GroupVersion] = []
    for gv in g.group_versions:
        err = errors.get(gv)
        if gv in ok:
            resources[gv] = ok[gv]
        elif err is None:
            # Not fetched by this load: what a fresh entry read stays, the rest is unread.
            if kept is not None and gv in kept.resources:
                resources[gv] = kept.resources[gv]
            elif kept is not None and gv in kept.failed:
                failed[gv] = kept.failed[gv]
            else:
                unread.append(gv)
        elif isinstance(err, APIStatusError) and err.not_found and g.name != "":
            log.info("%s is listed by the server but answers 404; treating it as not served", gv)
            continue
        elif old is not None and gv in old.resources and decide(
                SlotState(old.fetched_at), now, timing, failure=err) is Action.SERVE_STALE:
            resources[gv] = old.resources[gv]
            stale[gv] = err
        else:
            failed[gv] = err
        served.append(gv.version)
    preferred = g.preferred_version if g.preferred_version in served else (served[0] if served else None)
    return EntryParts(APIGroup(g.name, tuple(served), preferred), resources, failed, stale, tuple(unread))


def needed_versions(group: APIGroup, versions: Sequence[str] | None) -> tuple[GroupVersion, ...]:
    """The versions of ``group`` a lookup needs: all (None), the preferred one (``()``), or those listed."""
    if versions is None:
        return group.group_versions
    if not versions:
        preferred = group.preferred
        return (preferred,) if preferred is not None else group.group_versions
    return tuple(gv for gv in group.group_versions if gv.version in versions)
