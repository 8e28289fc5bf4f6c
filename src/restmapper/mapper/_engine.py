"""The answering engine of :class:`~restmapper.mapper.lazy.LazyRESTMapper`: memo, scope, certainty.

One path computes an answer (:meth:`AnswerEngine._answer`): reuse a memoized answer while none of the cells it
read moved (the warm path); else load only the groups the question needs, ask a
:class:`~restmapper.mapper.static.StaticRESTMapper` over them, apply the certainty rules of
:mod:`restmapper.mapper._certainty`, and on a no-match ask the cache to revalidate (rate-limited) and try once
more. :class:`~restmapper.mapper.lazy.LazyRESTMapper` is the public ``meta.RESTMapper`` front end over it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, TypeVar

from restmapper.cache import GroupEntry, Replays, replay_mark
from restmapper.errors import GroupDiscoveryError, MappingError, RestMapperError, is_no_match
from restmapper.mapper._args import SERVABLE_GROUPS, SERVABLE_VERSIONS, require_question_shape
from restmapper.mapper._certainty import RACE_ATTEMPTS, in_scope, outranking, raced, unsure, with_question
from restmapper.mapper._direct_paths import DirectPaths
from restmapper.mapper._groups import ANYWHERE, OUTDATED, IndexedGroups, Picker, Prefixed, picked_by
from restmapper.mapper._memo import Memo, Remembered
from restmapper.mapper._source import CacheSource
from restmapper.mapper.merged import Cell
from restmapper.mapper.static import StaticRESTMapper
from restmapper.model import GroupVersion, GroupVersionResource, parse_resource_arg

__all__ = ["AnswerEngine", "Question", "load_for", "required_versions"]

T = TypeVar("T")

_recall = dict.get

@dataclass(slots=True)  # never changed once built; not frozen: a frozen __init__ costs 2x
class Question(Generic[T]):
    """One lookup, as :meth:`AnswerEngine._compute` needs it.

    Attributes:
        asked: the question in words, for errors (``resource type "xyzzy"``); called only when one is raised.
        names: the groups the question may be answered by (None: all), read lazily: ``names(True)`` may fetch
            ``/apis``; ``names(False)`` reads the listing last applied (no I/O).
        compute: the answer over a snapshot of those groups.
        core_first: an answer from core alone when that is final (core ``v1`` matches first), else None.
        versions: versions the caller required: failures of other versions cannot change the answer.
        answered_at: the group version a single answer came from; None for list answers.
        weaker: for a single answer, the groups a stronger reading searched before the one that gave it (kubectl
            tries a real name before a short name, a resource before a kind: rule 5 of
            :mod:`~restmapper.mapper._certainty`): None for every group, empty when none was stronger. Called with
            the answer, the snapshot and the entries it was computed from, only when something may be unsure.
            Those groups must have been read whole (as for a no-match); if not, the answer is given through
            ``partial`` (the failures attached) when nothing ranking above it failed, else it is an error.
        partial: for list answers that may be partial, attach the failures to the value instead of raising.
        pick: when ``names`` gives None, chooses from the merged index the groups that could answer.
        load: the versions the answer can come from (legacy discovery fetches only those): None for all, ``()``
            to try the preferred version first (a kind found there is the answer), else the versions asked for.
    """

    asked: Callable[[], str]
    names: Callable[[bool], Collection[str] | None]
    compute: Callable[[StaticRESTMapper], T]
    core_first: Callable[[StaticRESTMapper], T | None] | None = None
    versions: tuple[str, ...] = ()
    answered_at: Callable[[T], GroupVersion | None] | None = None
    weaker: Callable[[T, StaticRESTMapper, tuple[GroupEntry, ...]], Collection[str] | None] | None = None
    partial: Callable[[T, dict[GroupVersion, BaseException]], T] | None = None
    pick: Picker | None = None
    load: tuple[str, ...] | None = None


class _Unconfirmed(Exception):
    """A no-match no request of this lookup confirmed: the server confirmed it at ``confirmed_at`` (clock s)."""

    def __init__(self, error: MappingError, confirmed_at: float) -> None:
        super().__init__(error)
        self.error = error
        self.confirmed_at = confirmed_at


class AnswerEngine(DirectPaths):
    """Answers questions over a discovery cache through a memo (the state :class:`LazyRESTMapper` builds).

    Attributes:
        cache: the discovery cache.
    """

    cache: CacheSource
    _clock: Callable[[], float]
    _memo: Memo
    _groups: IndexedGroups

    def _static(self, names: Collection[str] | None, pick: Picker | None, deps: list[tuple[Cell, int]],
                versions: tuple[str, ...] | None = None) -> tuple[StaticRESTMapper, tuple[GroupEntry, ...], float]:
        if names is None:
            if pick is None:
                raise AssertionError("a question that may match any group needs a pick")
            return self._groups.anywhere(pick, deps)
        if isinstance(names, Prefixed):
            listing = self._groups.index.listing_cell
            deps.append((listing, listing.version))  # a group listed later may match the prefix too
        return self._groups.scoped(names, deps, versions)

    def _fresh_memo(self, key: Any, *, io: bool = True, store: Memo | None = None) -> Remembered | None:
        """The memoized answer for ``key`` if none of the groups or names it read changed (the warm path).

        An answer that may come from any group, after a group was invalidated, is checked only once every group
        is loaded again (``io``: may fetch; without it such an answer is not offered). Costs one dictionary hit,
        a clock reading and a comparison per cell read (a handful). ``store``: another memo than the mapper's
        whose answers recorded their cells the same way (the dynamic drop-in's).
        """
        held = self._memo if store is None else store
        memo = _recall(held, key)  # the young generation, in C: nearly every hit
        if memo is None:
            memo = held.recall(key)
            if memo is None:
                return None
        groups = self._groups
        if self.cache.generation != groups.generation:
            groups.catch_up()  # the cells the answer read are brought up to date before they are compared
        if memo.anywhere and groups.reload_pending:
            if not io:
                return None
            groups.reload()
        epoch = groups.index.epoch  # read before any cell (see :meth:`Remembered.current`)
        if self._clock() < memo.valid_until and (memo.checked == epoch or memo.current(epoch)):
            return memo
        return None

    def _answer(self, key: tuple[Any, ...], question: Callable[[], Question[T]],
                direct: Callable[[], T | None] | None = None, resource_key: bool = False) -> T:
        """The answer to the question ``key`` names: memoized while fresh, else computed from ``question()``.

        ``key`` is a tuple of strings (hashing model objects costs a Python call each); ``question`` builds the
        question only when it has to be computed; ``direct``, when given, is tried first: a match straight from
        the indexes of ready groups (memoized by it), or None. ``resource_key``: ``key`` is a resource question's
        ``(method, group, version, resource)``, whose shape is checked before either (only checked questions are
        memoized, so a memoized one needs no check): a malformed one raises InvalidArgumentError.
        """
        memo = self._fresh_memo(key)
        if memo is not None:
            if memo.error is not None:
                if isinstance(memo.error, MappingError) and is_no_match(memo.error):
                    raise self._remembered(memo, memo.error).with_traceback(None)
                raise memo.error.with_traceback(None)
            return memo.value  # type: ignore[no-any-return]
        if resource_key and (key[1] not in SERVABLE_GROUPS or key[2] not in SERVABLE_VERSIONS):
            require_question_shape(key[0], key[1], (key[2],), gvr=True)  # a name not checked before
        if direct is not None:
            found = direct()
            if found is not None:
                return found
        since = replay_mark()  # failures recorded before this point are replays (they say so)
        q = question()
        epoch = self._groups.index.epoch  # before any cell is read: a move while computing makes the first hit check
        deps: list[tuple[Cell, int]] = []
        value: Any = None
        error: BaseException | None = None
        until = float("inf")
        unconfirmed = False
        try:
            value, until = self._compute(q, deps)
            if q.partial is not None and getattr(value, "failed", None):
                # Given with failures: remembered as a miss is (one miss interval), so that a lookup soon asks
                # the cache again and a version that recovered is read once its retry backoff allows; not for no
                # time (every call would recompute over every group while an API stays down: ~0.7 ms).
                until = min(until, self._clock() + self.cache.miss_refresh_interval)
        except MappingError as exc:
            error, until = exc, self._clock() + self.cache.miss_refresh_interval
        except _Unconfirmed as exc:  # a no-match as of the last revalidation: kept only until its interval ends
            error, until, unconfirmed = exc.error, exc.confirmed_at + self.cache.miss_refresh_interval, True
        except GroupDiscoveryError as exc:
            error, until = Replays(self._clock, since).error(exc), self._clock()
        read = dict.fromkeys(deps)
        anywhere = read.pop((ANYWHERE, 0), False) is None  # the marker is always recorded at version 0
        if (OUTDATED, -1) in read:
            epoch = -1  # read an entry already replaced, maybe without any cell moving: the first hit checks (fails)
        memo = Remembered(value, error, until, tuple(read), anywhere, epoch)
        self._memo.put(key, memo)
        if unconfirmed:
            raise self._remembered(memo, memo.error)  # type: ignore[arg-type]
        return self._replay(memo)  # type: ignore[no-any-return]

    def _remembered(self, memo: Remembered, error: MappingError) -> MappingError:
        """A no-match this lookup did not confirm with a request says how old it is (age 0 included)."""
        interval = self.cache.miss_refresh_interval
        age = max(0.0, self._clock() - (memo.valid_until - interval))  # anchored to the server's confirmation
        return error.remembered(age, interval)

    @staticmethod
    def _replay(memo: Remembered) -> Any:
        if memo.error is not None:
            raise memo.error.with_traceback(None)
        return memo.value

    def _compute(self, q: Question[T], deps: list[tuple[Cell, int]]) -> tuple[T, float]:
        """Answer ``q`` under the rules of :mod:`restmapper.mapper._certainty` (never confidently wrong)."""
        names = q.names(False)  # no I/O: the listing last applied
        direct = self._direct(q, names, deps)
        if direct is not None:
            return direct
        cache = self.cache
        mark = len(deps)
        # Chosen from the merged index (any group, or by prefix): a group dropped while the lookup ran may be
        # missing from the choice, so even a match may be outranked by it. Named groups are read as snapshots:
        # there only a no-match needs every group read in this lookup.
        chosen = names is None or isinstance(names, Prefixed)
        for _attempt in range(RACE_ATTEMPTS):
            epoch = cache.invalidations
            try:
                with cache.lookup():
                    found = self._compute_in_scope(q, deps)
            except (MappingError, _Unconfirmed) as exc:
                error = exc.error if isinstance(exc, _Unconfirmed) else exc
                if cache.invalidations == epoch or not (chosen or is_no_match(error)):
                    raise
            else:
                if cache.invalidations == epoch or not chosen:
                    return found
            # An invalidation landed while this lookup read the groups (DESIGN 5.10, rule 4 of _certainty): a
            # group dropped meanwhile was not read, so read them again.
            del deps[mark:]
        raise raced(q.asked(), RACE_ATTEMPTS)

    def _direct(self, q: Question[T], names: Collection[str] | None, deps: list[tuple[Cell, int]]
                ) -> tuple[T, float] | None:
        """The answer straight from the group indexes, when every group in scope (``names``, as ``q.names(False)``
        gives them) is ready (loaded, complete, nothing failed, fresh) and the answer is a match: then no
        certainty rule can object and the cache has nothing to add. None otherwise (misses, failures, anything to
        load: :meth:`_compute_in_scope`)."""
        groups = self._groups
        now = self._clock()
        mine: list[tuple[Cell, int]] = []
        try:
            if q.core_first is not None:
                core = groups.ready(("",), mine, now)
                if core is None:
                    return None
                found = q.core_first(StaticRESTMapper(core[0]))
                if found is not None:
                    deps.extend(mine)
                    return found, core[1]
            if names is None:
                if q.pick is None:
                    return None
                mine.append((ANYWHERE, 0))
                ready = groups.ready_anywhere(picked_by, q.pick, mine, now)
            else:
                ready = groups.ready(names, mine, now, prefixed=isinstance(names, Prefixed))
            if ready is None:
                return None
            value = q.compute(StaticRESTMapper(ready[0]))
        except RestMapperError:
            return None  # a miss or an ambiguity: the full path revalidates, words the error, memoizes it
        deps.extend(mine)
        return value, ready[1]

    def _compute_in_scope(self, q: Question[T], deps: list[tuple[Cell, int]]) -> tuple[T, float]:
        try:
            if q.core_first is not None:
                after_core = q.names(False)  # no I/O: what a cold lookup reads next, unless core answers
                if not isinstance(after_core, Prefixed):  # by prefix: the listing decides what to read
                    self.cache.read_ahead(after_core)
                static, entries, until = self._groups.scoped({""}, deps)
                found = q.core_first(static)
                if found is not None:
                    return self._certain(q, found, static, entries), until
            wanted = q.names(True)
            if q.load == () and wanted is not None:
                answered = self._preferred_first(q, wanted, deps)
                if answered is not None:
                    return answered
            first: MappingError | None = None
            for revalidated in (False, True):  # a miss is asked again once, after revalidating what it read
                if revalidated:
                    if not self.cache.revalidate_on_miss(wanted):
                        break
                    wanted = q.names(True)
                static, entries, until = self._static(wanted, q.pick, deps, q.load or None)
                try:
                    return self._certain(q, q.compute(static), static, entries), until
                except MappingError as exc:
                    if not is_no_match(exc):
                        raise
                    first = exc
            assert first is not None  # the first pass always runs
            self._no_match(q, wanted, first)
        except GroupDiscoveryError as exc:
            if exc.asked:
                raise
            partial = self._without_core(q, exc, deps)
            if partial is not None:
                return partial
            raise with_question(exc, q.asked()) from exc

    def _no_match(self, q: Question[T], wanted: Collection[str] | None, first: MappingError) -> NoReturn:
        """Raise for a question that matched nothing over the groups ``wanted``, even after revalidating them
        (``first``: the no-match of the first pass): a no-match only when the server said so, every group version
        in scope read just now or fresh.

        Raises:
            GroupDiscoveryError: a group version in scope could not be read (``first`` as its cause).
            _Unconfirmed: the revalidation was rate-limited; the server said so earlier, at the time it carries.
            MappingError: ``first``, confirmed.
        """
        doubt = self.cache.unconfirmed(wanted)
        if doubt is not None and (in_scope(doubt.failed, q.versions) or doubt.documents):
            raise with_question(doubt, q.asked(), failed=in_scope(doubt.failed, q.versions)) from first
        confirmed_at = self.cache.miss_confirmed_at(wanted)
        if confirmed_at is not None:  # the revalidation was rate-limited: the server said so, earlier
            raise _Unconfirmed(first, confirmed_at)
        raise first

    def _without_core(self, q: Question[T], exc: GroupDiscoveryError, deps: list[tuple[Cell, int]]
                      ) -> tuple[T, float] | None:
        """A category's members in the named groups when only ``/api`` is unreadable, with core as failed.

        The same answer as when core's ``v1`` document fails (kubectl warns and lists the rest); any other question
        (a single name core could win by priority) keeps the error. Remembered for no time: core is asked again.
        Only questions that may expand a category carry ``partial``.
        """
        if q.partial is None or q.answered_at is None or set(exc.documents) != {"/api"}:
            return None
        try:
            static, _entries, _until = self._groups.scoped(self.cache.group_names(core=False), deps)
            value = q.compute(static)
        except (MappingError, GroupDiscoveryError):
            return None
        if q.answered_at(value) is not None:
            return None  # not a category: core could have answered it
        return q.partial(value, dict(exc.failed)), self._clock()

    def _preferred_first(self, q: Question[T], names: Collection[str], deps: list[tuple[Cell, int]]
                         ) -> tuple[T, float] | None:
        """The answer from the groups' preferred versions alone, when it is there (client-go ranks it first)."""
        static, entries, until = self._groups.scoped(names, deps, ())
        try:
            return self._certain(q, q.compute(static), static, entries), until
        except (MappingError, GroupDiscoveryError) as exc:
            if isinstance(exc, MappingError) and not is_no_match(exc):
                raise
            return None  # not in the preferred version (or it could not be read): read the whole group

    def _certain(self, q: Question[T], value: T, static: StaticRESTMapper, entries: tuple[GroupEntry, ...]) -> T:
        """``value`` if no failed group version in scope could have changed it, else a GroupDiscoveryError (or,
        for an answer a stronger reading could have pre-empted, ``q.partial`` of it with those failures).

        The one place the certainty rules of :mod:`restmapper.mapper._certainty` (DESIGN 5.10) run; they have
        something to say only when a group version in scope failed, is served stale or is outdated, or (for an
        answer by a weaker reading) a root document failed: otherwise ``value`` is returned at once.
        """
        troubled = any(e.failed or e.stale or e.outdated for e in entries)
        if not troubled and (q.weaker is None or not self.cache.documents_failing()):
            return value
        answer = q.answered_at(value) if q.answered_at is not None else None
        if answer is None:
            doubt = unsure(entries, q.versions)
            if doubt and q.partial is not None:
                return q.partial(value, doubt)
        else:
            doubt = outranking(entries, answer, q.versions)
            if q.weaker is not None:
                pre_empted = self._pre_empted(q, value, static, entries, doubt)
                if pre_empted is not None:
                    return pre_empted
        if doubt:
            raise GroupDiscoveryError(next(iter(doubt)).group, doubt, asked=q.asked(),
                                      partial=None if answer is not None else value)
        return value

    def _pre_empted(self, q: Question[T], value: T, static: StaticRESTMapper, entries: tuple[GroupEntry, ...],
                    doubt: dict[GroupVersion, BaseException]) -> T | None:
        """Rule 5: an answer by a weaker reading claims the stronger ones found nothing, a no-match over their
        scope, which only a whole reading confirms (as rule 1: failed, stale or unread root). None when they were
        read whole; ``q.partial`` of ``value`` with their failures when nothing ranking above it failed (``doubt``
        empty); else a GroupDiscoveryError naming both."""
        assert q.weaker is not None
        scope = q.weaker(value, static, entries)
        pre = self.cache.unconfirmed(scope) if scope is None or scope else None
        if pre is None:
            return None
        failed = in_scope(pre.failed, q.versions)
        if failed and not pre.documents and not doubt and q.partial is not None:
            return q.partial(value, failed)  # answered with the failures attached (and warned)
        if failed or pre.documents:
            raise with_question(pre, q.asked(), failed={**doubt, **failed})
        return None

    def _groups_for(self, group: str, io: bool = True, *, several: bool = False) -> Collection[str] | None:
        """The groups a lookup with ``group`` may match: exact, else by prefix (apimachinery); "" means all.

        Without ``io`` the listing last applied is used (a named group read from it is checked fresh later).
        ``several``: the lookup reads other groups too (then a cold ``/apis`` is read whole, not as a listing).
        """
        if not group:
            return None
        # A non-empty group never matches core, even as a prefix.
        index = self._groups.listed(whole=several) if io else self._groups.index
        # A listed group comes with the groups that extend it (``apps.openshift.io`` for ``apps``): where the group
        # itself has no match they take part (the shortcut expander's prefix step, ResourcesFor's prefix
        # fallback; an exact hit still wins, :class:`~restmapper.mapper.static.StaticRESTMapper`). By prefix even
        # when none does yet: an answer the group does not settle (a miss, a guessed singular) depends on the
        # listing. (The direct paths answer a real name of a ready group without this.)
        return Prefixed(index.with_prefix(group) or (group,))

    def _groups_for_arg(self, arg: str, io: bool = True) -> Collection[str] | None:
        if "." not in arg:
            return None
        gvr, gr = parse_resource_arg(arg)
        names: set[str] = set()
        prefixed = False
        for group in {gr.group} | ({gvr.group} if gvr is not None else set()):
            found = self._groups_for(group, io, several=gvr is not None)
            if found is None:
                return None
            prefixed = prefixed or isinstance(found, Prefixed)
            names.update(found)
        # Any reading chosen by prefix makes the answer depend on the listing (a group listed later may match).
        return Prefixed(names) if prefixed else names

    @staticmethod
    def _core_first(resource: GroupVersionResource,
                    compute: Callable[[StaticRESTMapper], T]) -> Callable[[StaticRESTMapper], T | None] | None:
        if resource.group or resource.version not in ("", "v1"):
            return None

        def attempt(m: StaticRESTMapper) -> T | None:
            core = m.group("")
            v1 = core.version("v1") if core is not None else None
            if v1 is None or not v1.match_resource(resource.resource.lower()):
                return None
            # Core v1 is the first priority pattern: a match there wins over every other group.
            return compute(m)

        return attempt


def load_for(resource: GroupVersionResource) -> tuple[str, ...] | None:
    """A resource in one version of a named group is answered by that version alone."""
    return required_versions(resource.version) or None if resource.group else None


def required_versions(*versions: str) -> tuple[str, ...]:
    """The versions a question requires: those given, less empty ones and ``__internal`` (any version)."""
    return tuple(v for v in versions if v and v != "__internal")


