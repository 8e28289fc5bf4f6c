"""When to ask the server again: the one decision the cache makes about a cached answer (pure: clock injected).

Every cached answer (a root document, a group entry, one group version's list) is described to :func:`decide`
as a :class:`SlotState`: when it was fetched, whether an invalidation expired it, whether the current lookup
fetched it, and the failure it is backing off from. Given the clock reading and the cache's :class:`Timing` (TTL,
``max_stale``, miss interval, retry backoff), :func:`decide` answers with one :class:`Action`. The TTL, stale and
backoff arithmetic exists only here.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from restmapper.cache._types import is_transient
from restmapper.transport.retry import RetryPolicy

__all__ = ["Action", "SlotState", "Timing", "decide"]


class Action(enum.Enum):
    """What to do with a cached answer."""

    FRESH = "fresh"
    """Serve it as it is: no I/O."""
    REVALIDATE = "revalidate"
    """Ask again (conditionally where the server supports it): the answer expired, was invalidated or is due for
    a retry; on failure, decide again with the failure."""
    REFETCH = "refetch"
    """Nothing is cached: fetch."""
    SERVE_STALE = "serve_stale"
    """Serve the earlier answer: the last fetch failed transiently (timeout, 5xx, 429) within ``max_stale``."""
    FAIL = "fail"
    """Raise the failure: it is permanent (403, 404, malformed), too old to mask, or not allowed to be masked."""


@dataclass(frozen=True)
class Timing:
    """The cache's time rules, in seconds.

    Attributes:
        ttl: how long an answer stays fresh; 0 revalidates on every lookup; None never expires.
        max_stale: how long past its TTL an answer may still be served after a transient failure.
        miss_interval: at most one miss revalidation (or rate-limited 404 eviction) per this many seconds.
        retry: the backoff before a failed fetch is tried again (exponential, capped, no jitter).
    """

    ttl: float | None = 300.0
    max_stale: float = 600.0
    miss_interval: float = 1.0
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy(initial_backoff=1.0, max_backoff=60.0,
                                                                     jitter=0.0))

    def fresh(self, fetched_at: float, now: float) -> bool:
        """True while an answer fetched at ``fetched_at`` is within its TTL."""
        return self.ttl is None or now - fetched_at < self.ttl

    def expires_at(self, fetched_at: float) -> float:
        """Clock reading at which an answer fetched at ``fetched_at`` stops being fresh (inf: never)."""
        return math.inf if self.ttl is None else fetched_at + self.ttl

    def within_stale(self, fetched_at: float, now: float) -> bool:
        """True while an answer fetched at ``fetched_at`` may still mask a transient failure."""
        return now - fetched_at <= self.max_stale + (self.ttl or 0)

    def rate_limited(self, last: float | None, now: float) -> bool:
        """True when something rate-limited per ``miss_interval`` last ran at ``last`` and may not run again yet."""
        return last is not None and now - last < self.miss_interval

    def retry_at(self, failures: int, now: float) -> float:
        """Clock reading after which a fetch that failed ``failures`` times in a row (>= 1) may be tried again."""
        return now + self.retry.backoff(failures)


@dataclass(slots=True)
class SlotState:
    """What :func:`decide` needs to know about one cached answer (a value: built per decision, never changed).

    Attributes:
        fetched_at: clock reading when the held answer was fetched; None when nothing is held.
        expired: an invalidation expired it: revalidate before serving, but it may still be served stale.
        scoped: the current lookup fetched it: fresh whatever the TTL (``ttl=0`` means once per lookup).
        retry_at: when the failure it is backing off from may be retried; None when the last fetch succeeded.
        error: that failure (None when the last fetch succeeded).
    """

    fetched_at: float | None = None
    expired: bool = False
    scoped: bool = False
    retry_at: float | None = None
    error: BaseException | None = None


def decide(state: SlotState, now: float, timing: Timing, *, force: bool = False, stale_ok: bool = True,
           failure: BaseException | None = None) -> Action:
    """Decide what to do with a cached answer: fresh, revalidate, refetch, serve stale or fail.

    Args:
        state: the answer's state.
        now: the clock reading (seconds).
        timing: TTL, ``max_stale`` and backoff.
        force: the caller wants the server's current answer (an invalidation, a miss): never FRESH.
        stale_ok: a transient failure may be masked by the earlier answer (False for miss revalidation, which
            must be confirmed by the server).
        failure: the fetch the caller just made failed with this: the answer is SERVE_STALE or FAIL.

    Returns:
        FRESH when held, not expired and fresh (TTL, or fetched by this lookup) and not due for a retry;
        otherwise, while backing off from a failure (or with ``failure``), SERVE_STALE when that failure is
        transient, an answer is held, ``stale_ok`` and it is within ``max_stale``, else FAIL; otherwise
        REVALIDATE when an answer is held, REFETCH when none is.

    Mirrors and extends controller-runtime's lazy mapper, which refetches only on a miss or a 404 and has no
    TTL, backoff or stale-on-error.
    """
    error = failure
    if failure is None:
        action = _without_failure(state, now, timing, force)
        if action is not None:
            return action
        error = state.error  # backing off: the last failure stands until retry_at
    return _stale_or_fail(state.fetched_at, error, now, timing, stale_ok)


def _without_failure(state: SlotState, now: float, timing: Timing, force: bool) -> Action | None:
    """:func:`decide` when no fetch just failed: FRESH, REFETCH or REVALIDATE; None while backing off."""
    due = state.retry_at is not None and now >= state.retry_at
    if not (force or due) and _fresh(state, now, timing):
        return Action.FRESH
    if state.retry_at is None or due:
        return Action.REFETCH if state.fetched_at is None else Action.REVALIDATE
    return None


def _fresh(state: SlotState, now: float, timing: Timing) -> bool:
    """True when the held answer is neither expired nor past its TTL (or was fetched by the current lookup)."""
    fetched = state.fetched_at
    return fetched is not None and not state.expired and (state.scoped or timing.fresh(fetched, now))


def _stale_or_fail(fetched: float | None, error: BaseException | None, now: float, timing: Timing,
                   stale_ok: bool) -> Action:
    """:func:`decide` after a failure (``error``): SERVE_STALE when the held answer may mask it, else FAIL."""
    if (stale_ok and fetched is not None and error is not None and is_transient(error)
            and timing.within_stale(fetched, now)):
        return Action.SERVE_STALE
    return Action.FAIL
