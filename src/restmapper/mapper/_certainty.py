"""What a lookup may claim when some discovery failed (DESIGN 5.10), as plain functions over cache entries.

The rules, applied by :class:`~restmapper.mapper.lazy.LazyRESTMapper` to every answer:

1. A no-match is given only when every group version that could hold the answer was read: a failed or
   stale-served group version in scope, or an unreadable root document, turns it into a
   :class:`~restmapper.errors.GroupDiscoveryError` naming them and the question.
2. A match is given only when no failed group version in scope ranks above it in discovery priority (core ``v1``
   first, then groups in server order, preferred version first): otherwise the failed one might have won, as a
   lower-priority group answering for an unreadable core group would. An *outdated* group (invalidated, then
   brought back from earlier content during an outage) counts as failed for every answer but its own.
3. A list answer (``kinds_for``, ``rest_mappings``, ...) with a failed (or outdated) group version in scope may be
   incomplete: an error carrying the list as ``partial``, or, where the method documents it (categories), the
   list with the failures attached.
4. Only a reading of every group in scope counts: when an invalidation lands while a lookup reads the groups (a
   watcher's ``invalidate_group``), a group dropped meanwhile may not have been read, so a no-match (or any
   answer over groups chosen from the merged index) is computed again, at most :data:`RACE_ATTEMPTS` times, then
   a :class:`~restmapper.errors.GroupDiscoveryError` is raised (:func:`raced`). Named groups are read as
   snapshots, so a match among them stands.
5. A weaker reading loses to a stronger one of any group, whatever its rank: in kubectl's resolution a category
   (``resolve_all``) comes first, then each resource reading (a real name of any group in scope before a short
   name; for a group that only prefixes listed ones, a prefixed group's short name before a real name), then the
   kinds. An answer by a later step claims the earlier ones found nothing: a no-match over their scope, which
   rule 1 lets stand only when that scope was read whole. Otherwise the answer is given as kubectl gives it, with
   the unread versions attached and a :class:`~restmapper.errors.PartialDiscoveryWarning` (when rule 2 has nothing
   against it), else it is a :class:`~restmapper.errors.GroupDiscoveryError`
   (:func:`restmapper.mapper.resolve.preempted` gives the scope).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from restmapper.cache import GroupEntry
from restmapper.errors import DiscoveryError, GroupDiscoveryError
from restmapper.model import GroupKind, GroupVersion, GroupVersionResource

__all__ = ["RACE_ATTEMPTS", "asked_kind", "asked_resource", "in_scope", "outranking", "raced", "unsure",
           "with_question"]

CORE_V1 = GroupVersion("", "v1")

RACE_ATTEMPTS = 4
"""Times a lookup reads its groups again when an invalidation raced it, before it gives up (rule 4)."""


def raced(asked: str, attempts: int) -> GroupDiscoveryError:
    """The error of a lookup that invalidations raced ``attempts`` times in a row: it cannot tell (rule 4)."""
    cause = DiscoveryError(f"the discovery cache was invalidated while the lookup read it ({attempts} times "
                           "in a row); ask again")
    return GroupDiscoveryError("", {}, asked=asked, documents={"/apis": cause})


def asked_resource(resource: GroupVersionResource) -> str:
    """``resource "nodes"``, ``resource "deployments" in group "apps"``, ``... in version "apps/v1"``."""
    text = f'resource "{resource.resource}"'
    if resource.version:
        gv = f"{resource.group}/{resource.version}" if resource.group else resource.version
        return f'{text} in version "{gv}"'
    if resource.group:
        return f'{text} in group "{resource.group}"'
    return text


def asked_kind(group_kind: GroupKind, versions: Sequence[str] = ()) -> str:
    """``kind "Certificate" in group "cert-manager.io"`` (or ``in versions [...]``), as ``NoKindMatchError``."""
    gvs = [f"{group_kind.group}/{v}" if group_kind.group else v for v in versions if v]
    if not gvs:
        return f'kind "{group_kind.kind}" in group "{group_kind.group}"'
    if len(gvs) == 1:
        return f'kind "{group_kind.kind}" in version "{gvs[0]}"'
    return f'kind "{group_kind.kind}" in versions [' + " ".join(f'"{g}"' for g in gvs) + "]"


def in_scope(failed: Mapping[GroupVersion, BaseException],
             versions: Sequence[str]) -> dict[GroupVersion, BaseException]:
    """The failures that could hold an answer restricted to ``versions`` (all of them when none is given)."""
    wanted = {v for v in versions if v}
    return {gv: err for gv, err in failed.items() if not wanted or gv.version in wanted}


def _ranks(entries: Iterable[GroupEntry]) -> tuple[dict[GroupVersion, float], dict[str, float]]:
    """Discovery priority of every group version (lower wins), and of each group's first version."""
    ranks: dict[GroupVersion, float] = {CORE_V1: 0.0}
    group_first: dict[str, float] = {"": 0.0}
    n = 1.0
    for entry in entries:
        g = entry.group
        order = [g.preferred_version] if g.preferred_version else []
        order.extend(v for v in g.versions if v != g.preferred_version)
        group_first.setdefault(g.name, n)
        for v in order:
            ranks.setdefault(GroupVersion(g.name, v), n)
            n += 1
    return ranks, group_first


def unsure(entries: Iterable[GroupEntry], versions: Sequence[str] = ()) -> dict[GroupVersion, BaseException]:
    """The group versions of ``entries`` (in scope of ``versions``) whose lack of an answer proves nothing: the
    failed ones, and every version of an :attr:`~restmapper.cache.GroupEntry.outdated` group (rules 1 and 3)."""
    wanted = [v for v in versions if v]
    doubt: dict[GroupVersion, BaseException] = {}
    for e in entries:
        if not (e.failed or e.outdated):
            continue
        if not wanted:
            doubt.update(e.unsure())
        for v in wanted:
            doubt.update(e.unsure(v))
    return doubt


_OUTDATED_RANK = 0.5
"""Where an outdated group's versions rank: below core ``v1`` (0), above every named group (1 and up)."""


def outranking(entries: Sequence[GroupEntry], answer: GroupVersion, versions: Sequence[str] = ()
               ) -> dict[GroupVersion, BaseException]:
    """The unsure group versions of ``entries`` (in scope of ``versions``) that rank above ``answer`` (rule 2).

    An answer found while some group versions in scope could not be read may be given only when this is empty
    (then with those failures attached, as a :class:`~restmapper.errors.PartialDiscoveryWarning`); otherwise it is
    a :class:`~restmapper.errors.GroupDiscoveryError` naming the returned ones. Published as
    :func:`restmapper.mapper.outranking` for the integrations that answer from the cache's entries themselves
    (the ``kubernetes.dynamic`` drop-ins).

    Ranks follow client-go ``NewDiscoveryRESTMapper``; versions the caller asked for come first, in the caller's
    order. A failed version the group does not list as served (aggregated ``Stale``) may be the real preferred
    version, so it ranks just above the group's first version. Every version of an outdated group other than the
    answer's ranks above every named group (it changed since it was read: any of its versions may now hold the
    answer, and its own earlier answers are served stale; its place is unknown too, since the legacy ``/apis``
    orders groups by their best ``<version>.<group>``, so a group that gained a version may have moved up).

    Args:
        entries: the cache entries of the groups read (``GroupEntry``), in discovery order (as the cache lists
            them: a group's rank is its place here).
        answer: the group version that holds the answer.
        versions: the versions the question was restricted to (empty: all).

    Returns:
        Each outranking unsure group version with its failure; empty when none.
    """
    failed: dict[GroupVersion, BaseException] = {}
    outdated: dict[GroupVersion, BaseException] = {}
    for e in entries:
        if e.failed:
            failed.update(in_scope(e.failed, versions))
        if e.outdated and e.name != answer.group:
            outdated.update(unsure((e,), versions))
    if not failed and not outdated:
        return {}
    ranks, group_first = _ranks(entries)
    order = [v for v in versions if v]

    def key(gv: GroupVersion, *, is_failure: bool) -> tuple[int, float]:
        base = _OUTDATED_RANK if gv in outdated else ranks.get(gv)
        if base is None:
            base = group_first.get(gv.group, 0.0) - 0.5 if is_failure else float("inf")
        return (order.index(gv.version) if gv.version in order else len(order), base)

    mine = key(answer, is_failure=False)
    return {gv: err for gv, err in {**outdated, **failed}.items() if key(gv, is_failure=True) < mine}


def with_question(exc: GroupDiscoveryError, asked: str, *, partial: object = None,
                  failed: Mapping[GroupVersion, BaseException] | None = None) -> GroupDiscoveryError:
    """A copy of ``exc`` naming the question ``asked`` (and the failures in scope, when given)."""
    failures = dict(exc.failed if failed is None else failed)
    group = next(iter(failures)).group if failures else exc.group
    return GroupDiscoveryError(group, failures, asked=asked, documents=exc.documents,
                               partial=exc.partial if partial is None else partial, hint=exc.hint)
