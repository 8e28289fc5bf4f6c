"""Failures answered again from the retry backoff: stamped when the cache records them, told apart when raised.

A failed fetch is backed off from (1 s, then 2 s, ... up to ``retry_max``): until then, lookups that need what
failed get the recorded failure again, without a request. Such a replay must say so, as a remembered no-match
does (``... (failed 0.3 s ago, not asked again yet: the retry backoff allows the next request in 0.7 s)``), while
a failure the lookup received from the server is told exactly as it came.

The cache stamps each failure it records with when it failed, when the backoff allows the next request, and a
number from one process-wide sequence. A caller (the mapper's and the drop-in's public methods) takes a number
from the same sequence when it starts (:class:`Replays`): a failure stamped before that is a replay; one stamped
after (its own request, or one it shared through single-flight) is first-hand. The cache itself, replaying a
root document's failure without a fetch, judges by its lookup scope (:func:`scope_note`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from restmapper.cache._scope import LookupScope
from restmapper.errors import GroupDiscoveryError, RestMapperError

__all__ = ["ReplayNote", "Replays", "error_with_replays", "gate_failures", "replay_mark", "scope_note", "stamp_failure",
           "with_replays"]

ReplayNote = Callable[[BaseException], "tuple[float, float] | None"]
"""Whether a failure is a replay: ``(age, retry_in)`` seconds for one answered again without a request, else None."""

_SEQUENCE = itertools.count(1)  # next() on a count is atomic: threads never get the same number
_ATTR = "_restmapper_backoff"
_GATE = "_restmapper_miss_gate"  # clock reading from which a miss revalidation re-reads the failed group version


@dataclass(frozen=True)
class _Stamp:
    failed_at: float  # clock reading (s) of the failure
    retry_at: float  # clock reading (s) from which the backoff allows the next request
    number: int  # from _SEQUENCE: orders the failure against the start of a call


def stamp_failure(error: BaseException, failed_at: float, retry_at: float) -> None:
    """Record on ``error`` (a failure the cache keeps for its backoff) when it failed and when the next request is
    allowed; an error stamped already keeps its first stamp (the same failure read again is not new)."""
    if isinstance(error, RestMapperError) and error.replayed_age is None and _ATTR not in error.__dict__:
        error.__dict__[_ATTR] = _Stamp(failed_at, retry_at, next(_SEQUENCE))


def gate_failures(exc: GroupDiscoveryError, retry_at: float) -> None:
    """Record that a request for the group versions ``exc`` names may be sent from ``retry_at`` (a clock reading,
    s) whatever their own backoff says: the next miss revalidation, which re-reads them, is allowed then. Only
    when ``exc`` names no root document (a root document that failed is backed off from by the revalidation too).
    A replay then promises the earlier of the two gates (:func:`_note`), the time of the next request."""
    if exc.documents:
        return
    for err in exc.failed.values():
        original = err.original() if isinstance(err, RestMapperError) else err
        if isinstance(original.__dict__.get(_ATTR), _Stamp):
            original.__dict__[_GATE] = retry_at


def _note(error: BaseException, now: float, first_hand: Callable[[_Stamp], bool]) -> tuple[float, float] | None:
    stamp: Any = error.__dict__.get(_ATTR) if isinstance(error, RestMapperError) else None
    if not isinstance(stamp, _Stamp) or first_hand(stamp):
        return None
    gate = error.__dict__.get(_GATE)
    retry_at = stamp.retry_at if not isinstance(gate, float) else min(stamp.retry_at, gate)
    return max(0.0, now - stamp.failed_at), max(0.0, retry_at - now)


def _replay(err: BaseException, note: ReplayNote) -> BaseException:
    """``err`` told as ``note`` judges it now. A replay is always made afresh from the original failure's stamp
    (its age and retry time as of now, one suffix): a copy told as a replay earlier is never repeated as it was
    (frozen) nor replayed again (stacked). A copy the judge would call first-hand is kept (an earlier judge, one
    that knew the call better, made it)."""
    if not isinstance(err, RestMapperError):
        return err
    original = err.original()
    found = note(original)
    return err if found is None else original.replayed(*found)


def with_replays(failed: Mapping[Any, BaseException], note: ReplayNote,
                 copies: dict[int, BaseException] | None = None) -> dict[Any, BaseException]:
    """``failed`` with each failure ``note`` calls a replay replaced by its
    :meth:`~restmapper.errors.RestMapperError.replayed` copy, made now from the original failure (a new dict, same
    keys and order; ``copies``, by ``id`` of what ``failed`` names: one failure named twice gets one copy)."""
    made = {} if copies is None else copies
    out: dict[Any, BaseException] = {}
    for key, err in failed.items():
        copy = made.get(id(err))
        if copy is None:
            copy = made[id(err)] = _replay(err, note)
        out[key] = copy
    return out


def error_with_replays(exc: GroupDiscoveryError, note: ReplayNote) -> GroupDiscoveryError:
    """``exc`` with every failure ``note`` calls a replay saying so in its message and fields, as of now; ``exc``
    itself when nothing changes (else a copy of the same type, whose ``replayed_age``/``retry_in`` are the
    oldest/soonest)."""
    copies: dict[int, BaseException] = {}
    failed = with_replays(exc.failed, note, copies)
    documents = with_replays(exc.documents, note, copies)
    if all(copies[id(e)] is e for e in (*exc.failed.values(), *exc.documents.values())):
        return exc
    return exc.with_failures(failed, documents)


def scope_note(lookup: LookupScope, now: float) -> ReplayNote:
    """The judge of the cache's own replays: a stamped failure the current lookup did not fetch is a replay."""
    return lambda error: None if lookup.fetched(error) else _note(error, now, lambda _s: False)


def replay_mark() -> int:
    """A number to take when a call starts (cheap: one ``next()``); failures stamped before it are replays, see
    :class:`Replays`."""
    return next(_SEQUENCE)


class Replays:
    """The judge for one call: failures stamped before the call started are replays.

    Args:
        clock: the cache's clock (seconds), read when a judgement is made.
        since: the :func:`replay_mark` taken when the call started (None: now).
    """

    __slots__ = ("_clock", "_since")

    def __init__(self, clock: Callable[[], float], since: int | None = None) -> None:
        self._clock = clock
        self._since = next(_SEQUENCE) if since is None else since

    def note(self) -> ReplayNote:
        """The judge as :data:`~restmapper.errors.ReplayNote` (the clock read once, now)."""
        now, since = self._clock(), self._since
        return lambda error: _note(error, now, lambda s: s.number > since)

    def error(self, exc: GroupDiscoveryError) -> GroupDiscoveryError:
        """``exc`` with its replayed failures saying so (``exc`` itself when there is none)."""
        return error_with_replays(exc, self.note())

    def failures(self, failed: Mapping[Any, BaseException]) -> dict[Any, BaseException]:
        """``failed`` (a partial answer's failures) with its replayed failures saying so."""
        return with_replays(failed, self.note())
