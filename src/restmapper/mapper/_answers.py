"""Precomputed answers of the questions that name no group: :class:`AnswerTable`.

For every name a no-group question may use (a plural, singular or short name, a kind or its lower-case form, a
category), the table holds the answer the direct paths (:mod:`restmapper.mapper._direct_paths`) give for
``resolve(name)``, ``resource_for``/``kind_for`` of ``GroupVersionResource("", "", name)`` and
``expand_category(name)`` over the ready groups, so a first-time question about it is one dictionary read.

It is kept by :class:`~restmapper.mapper._groups.IndexedGroups` under its lock once every group is indexed
(``_complete``): built whole when first read (never by a process that asks one question), then recomputed only
for the names of a group that changed: when a group's index or readiness
changes (add, refresh, evict), the names it had and has are recomputed, with every spelling of them another group
uses (``Certificate`` reads ``certificate``), over the candidates the merged index gives for each. Each answer
is a :class:`~restmapper.mapper.merged.Cell` that moves when it changes: an answer memoized from it depends on
it alone (and on the troubled cell), so refreshing group A moves only the answers of names A has or had.

What it holds are existing objects (the :class:`~restmapper.mapper.index.ResourceEntry` whose mapping answers,
its shared ``resolved_memo``); a name the direct paths cannot answer (a miss, an ambiguity, a short-name warning,
a group not ready) has no entry: the question goes the usual way. Readiness of the whole (every group loaded,
fresh, none troubled, core ready) is checked when it is read (:meth:`IndexedGroups.answer_of
<restmapper.mapper._groups.IndexedGroups.answer_of>`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from restmapper.mapper._direct import plain_mapping, resource_hit
from restmapper.mapper.index import GroupIndex, ResourceEntry
from restmapper.mapper.merged import Cell, MergedIndex
from restmapper.mapper.shortcut import expand_category
from restmapper.model import GroupResource

__all__ = ["Answer", "AnswerTable", "Ready"]

Ready = dict[str, tuple[GroupIndex, float, Any, Cell]]
""":attr:`IndexedGroups._ready <restmapper.mapper._groups.IndexedGroups>`: group -> (index, until, entry, cell)."""

_INF = float("inf")


class Answer(Cell):
    """The precomputed answers about one name, and until when (clock seconds) the groups they came from (core
    aside: checked when read) are fresh; a cell that moves when an answer changes.

    Attributes:
        resolved: the resource ``resolve(name)`` maps to (no warnings), or None (the usual path answers).
        hit: the resource ``resource_for(GroupVersionResource("", "", name))`` selects, or None.
        members: ``expand_category(name)`` when not empty, or None.
        until: the earliest ``until`` of the groups read, core aside.
    """

    __slots__ = ("hit", "members", "resolved", "until")

    def __init__(self) -> None:
        super().__init__()
        self.resolved: ResourceEntry | None = None
        self.hit: ResourceEntry | None = None
        self.members: tuple[GroupResource, ...] | None = None
        self.until = _INF


def _chosen(picked: Collection[str], core: GroupIndex, ready: Ready, merged: MergedIndex
            ) -> tuple[list[GroupIndex], float] | None:
    """Core and the ready indexes of ``picked`` in priority order, and their earliest ``until`` (core aside);
    None when one is not ready. As :meth:`IndexedGroups.ready_anywhere` chooses them."""
    chosen = [core]
    until = _INF
    for name in picked:
        if not name:
            continue
        found = ready.get(name)
        if found is None:
            return None
        until = min(until, found[1])
        chosen.append(found[0])
    if len(chosen) > 2:
        ranks = merged.ranks
        last = len(ranks)
        tagged = sorted((ranks.get(chosen[i].name, last), i, chosen[i]) for i in range(1, len(chosen)))
        chosen[1:] = [t[2] for t in tagged]
    return chosen, until


class AnswerTable:
    """Name -> :class:`Answer` (see the module docstring). Not thread-safe: the owner's lock guards it."""

    __slots__ = ("answers", "built", "categories")

    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.categories: dict[str, Answer] = {}
        # False until :meth:`rebuild` computed every answer (the owner builds it when first read, not when every
        # group was indexed: a one-shot lookup, as the command line's, never pays for answers it does not read).
        self.built = False

    def clear(self) -> None:
        """Forget every answer (each moves: what was memoized from it is computed again)."""
        for table in (self.answers, self.categories):
            for answer in table.values():
                answer.bump()
            table.clear()

    def discard(self) -> None:
        """Forget every answer until the next :meth:`rebuild` (each moves; :meth:`touch` does nothing meanwhile)."""
        self.clear()
        self.built = False

    def rebuild(self, merged: MergedIndex, ready: Ready) -> None:
        """Compute every answer afresh from the indexed groups."""
        self.clear()
        self.built = True
        names: set[str] = set()
        categories: set[str] = set()
        for group in merged.names:
            index = merged.index(group)
            if index is not None:
                names.update(_keys(index))
                names.update(k.lower() for k in _keys(index))
                categories.update(index.categories)
        for name in names:
            self._compute(name, merged, ready, True)  # every name is an indexed group's
        for name in categories:
            self._compute_category(name, merged, ready)

    def touch(self, indexes: Iterable[GroupIndex | None], merged: MergedIndex, ready: Ready) -> None:
        """Recompute the answers about the names of ``indexes`` (a group's index before and after a change), in
        every spelling an indexed group uses (nothing while not :attr:`built`: the build reads them as they are)."""
        if not self.built:
            return
        own: set[str] = set()
        categories: set[str] = set()
        for index in indexes:
            if index is not None:
                own.update(_keys(index))
                categories.update(index.categories)
        if not own and not categories:
            return
        lowered = {k.lower() for k in own}
        names = own | lowered
        others: set[str] = set()
        for low in lowered:
            others.update(merged.holders(low))
        for group in others:
            index = merged.index(group)
            if index is not None:
                for key in _keys(index):
                    if key.lower() in lowered:
                        names.add(key)
        for name in names:
            self._compute(name, merged, ready)
        for name in categories:
            self._compute_category(name, merged, ready)

    def _compute(self, name: str, merged: MergedIndex, ready: Ready, claimed: bool = False) -> None:
        resolved = hit = None
        until = _INF
        core = ready.get("")
        if core is not None and (claimed or _claimed(name, merged)):
            resolved, until = _resolved(name, core[0], ready, merged)
            hit, hit_until = _hit(name, core[0], ready, merged)
            until = min(until, hit_until)
        _store(self.answers, name, resolved, hit, None, until)

    def _compute_category(self, name: str, merged: MergedIndex, ready: Ready) -> None:
        members = None
        until = _INF
        core = ready.get("")
        if core is not None:
            found = _chosen(merged.with_category(name, []), core[0], ready, merged)
            if found is not None:
                members = tuple(expand_category(name, found[0])) or None
                until = found[1]
        _store(self.categories, name, None, None, members, until)


def _store(table: dict[str, Answer], name: str, resolved: ResourceEntry | None, hit: ResourceEntry | None,
           members: tuple[GroupResource, ...] | None, until: float) -> None:
    """Keep the answers about ``name``; the cell moves when one of them changes (or the entry goes)."""
    old = table.get(name)
    if resolved is None and hit is None and members is None:
        if old is not None:
            del table[name]
            old.bump()
        return
    if old is None:
        old = table[name] = Answer()
    elif old.resolved is resolved and old.hit is hit and old.members == members:
        old.until = until  # the same answers: what was memoized from them stays valid
        return
    else:
        old.bump()
    old.resolved, old.hit, old.members, old.until = resolved, hit, members, until


def _keys(index: GroupIndex) -> Iterable[str]:
    """The names a no-group question about ``index`` may use: plurals and singulars, short names, kinds (as
    given and lower-cased)."""
    yield from index.names
    yield from index.short_names
    yield from index.kind_first


def _claimed(name: str, merged: MergedIndex) -> bool:
    """True when an indexed group uses ``name`` (or a spelling of it, for a lower-case one) as one of its
    :func:`_keys`: only those are kept (a change to such a group recomputes them)."""
    lowered = name.lower()
    for group in merged.holders(lowered):
        index = merged.index(group)
        if index is not None and (name == lowered or name in index.name_first or name in index.short_names
                                  or name in index.kind_first):
            return True
    return False


def _resolved(name: str, core: GroupIndex, ready: Ready, merged: MergedIndex) -> tuple[ResourceEntry | None, float]:
    """As :meth:`DirectPaths._direct_resolve <restmapper.mapper._direct_paths.DirectPaths._direct_resolve>` for
    an argument without dots (None: the usual path answers)."""
    if "." in name:
        return None, _INF
    if (low := name.lower()) in core.name_first and not (core.guessed and low in core.guessed):  # core wins
        indexes, until = [core], _INF
    else:
        found = _chosen(merged.with_name_or_short_name(name, []), core, ready, merged)
        if found is None:
            return None, _INF
        indexes, until = found
    hit = plain_mapping(name, indexes)
    if hit is None or hit[1]:
        return None, until  # no match, or short-name warnings to emit: the usual path
    return hit[0], until


def _hit(name: str, core: GroupIndex, ready: Ready, merged: MergedIndex) -> tuple[ResourceEntry | None, float]:
    """As :meth:`DirectPaths._direct_resource <restmapper.mapper._direct_paths.DirectPaths._direct_resource>` for
    ``GroupVersionResource("", "", name)``."""
    lowered = name.lower()
    v1 = core.version("v1")
    if v1 is not None and v1.match_resource(lowered):
        indexes, until = [core], _INF
    else:
        found = _chosen(merged.with_name(name, []), core, ready, merged)
        if found is None:
            return None, _INF
        indexes, until = found
    return resource_hit(lowered, "", indexes), until
