"""The cache's one refresh decision (``restmapper.cache._freshness.decide``), as a table of cases.

Pure: every case gives the answer's state, the clock reading and the time rules, and names the action.
"""

from __future__ import annotations

import pytest

from restmapper.cache._freshness import Action, SlotState, Timing, decide
from restmapper.errors import APIStatusError, MalformedDiscoveryError, TransportError
from restmapper.transport.retry import RetryPolicy

FRESH, REVALIDATE, REFETCH, STALE, FAIL = (Action.FRESH, Action.REVALIDATE, Action.REFETCH, Action.SERVE_STALE,
                                           Action.FAIL)

TIMING = Timing(ttl=10.0, max_stale=100.0, miss_interval=1.0,
                retry=RetryPolicy(initial_backoff=1.0, max_backoff=8.0, jitter=0.0))
NEVER_EXPIRES = Timing(ttl=None, max_stale=100.0)
EVERY_LOOKUP = Timing(ttl=0.0, max_stale=5.0)

DOWN = APIStatusError("/apis", 503, "service unavailable")  # transient
TIMEOUT = TransportError("GET /apis: timed out", path="/apis", transient=True)
FORBIDDEN = APIStatusError("/apis", 403, "forbidden")  # permanent
MALFORMED = MalformedDiscoveryError("/apis", "$", "not JSON")  # permanent

# (name, state, now, timing, options, expected)
CASES: list[tuple[str, SlotState, float, Timing, dict[str, object], Action]] = [
    # nothing held
    ("never fetched", SlotState(), 0.0, TIMING, {}, REFETCH),
    ("never fetched, forced", SlotState(), 0.0, TIMING, {"force": True}, REFETCH),
    ("dropped, retry due", SlotState(retry_at=5.0, error=DOWN), 5.0, TIMING, {}, REFETCH),
    ("dropped, backing off", SlotState(retry_at=5.0, error=DOWN), 4.0, TIMING, {}, FAIL),
    # TTL
    ("within ttl", SlotState(100.0), 109.9, TIMING, {}, FRESH),
    ("ttl reached", SlotState(100.0), 110.0, TIMING, {}, REVALIDATE),
    ("no ttl never expires", SlotState(0.0), 1e9, NEVER_EXPIRES, {}, FRESH),
    ("ttl 0 expires at once", SlotState(100.0), 100.0, EVERY_LOOKUP, {}, REVALIDATE),
    ("ttl 0, fetched by this lookup", SlotState(100.0, scoped=True), 100.0, EVERY_LOOKUP, {}, FRESH),
    ("expired ttl, fetched by this lookup", SlotState(100.0, scoped=True), 500.0, TIMING, {}, FRESH),
    # invalidation and forcing
    ("invalidated", SlotState(100.0, expired=True), 101.0, TIMING, {}, REVALIDATE),
    ("invalidated, fetched by this lookup", SlotState(100.0, expired=True, scoped=True), 101.0, TIMING, {},
     REVALIDATE),
    ("forced", SlotState(100.0), 101.0, TIMING, {"force": True}, REVALIDATE),
    # backoff from an earlier failure
    ("fresh, failure backing off", SlotState(100.0, retry_at=105.0, error=DOWN), 101.0, TIMING, {}, FRESH),
    ("fresh, retry due", SlotState(100.0, retry_at=105.0, error=DOWN), 105.0, TIMING, {}, REVALIDATE),
    ("expired, backing off, transient", SlotState(100.0, retry_at=120.0, error=DOWN), 115.0, TIMING, {}, STALE),
    ("expired, backing off, timeout", SlotState(100.0, retry_at=120.0, error=TIMEOUT), 115.0, TIMING, {}, STALE),
    ("expired, backing off, permanent", SlotState(100.0, retry_at=120.0, error=FORBIDDEN), 115.0, TIMING, {},
     FAIL),
    ("expired, backing off, no stale wanted", SlotState(100.0, retry_at=120.0, error=DOWN), 115.0, TIMING,
     {"stale_ok": False}, FAIL),
    ("forced, backing off, transient", SlotState(100.0, retry_at=120.0, error=DOWN), 101.0, TIMING,
     {"force": True}, STALE),
    ("invalidated, backing off", SlotState(100.0, expired=True, retry_at=120.0, error=DOWN), 101.0, TIMING, {},
     STALE),
    ("backing off without a recorded error", SlotState(100.0, retry_at=120.0), 115.0, TIMING, {}, FAIL),
    # max_stale: ttl + max_stale after the fetch, inclusive
    ("stale at the limit", SlotState(100.0, retry_at=300.0, error=DOWN), 210.0, TIMING, {}, STALE),
    ("stale past the limit", SlotState(100.0, retry_at=300.0, error=DOWN), 210.5, TIMING, {}, FAIL),
    ("stale limit without ttl", SlotState(100.0, retry_at=300.0, error=DOWN), 200.0, NEVER_EXPIRES,
     {"force": True}, STALE),
    # the fetch just made failed
    ("failed now, transient", SlotState(100.0), 115.0, TIMING, {"failure": DOWN}, STALE),
    ("failed now, permanent", SlotState(100.0), 115.0, TIMING, {"failure": FORBIDDEN}, FAIL),
    ("failed now, malformed", SlotState(100.0), 115.0, TIMING, {"failure": MALFORMED}, FAIL),
    ("failed now, nothing held", SlotState(), 115.0, TIMING, {"failure": DOWN}, FAIL),
    ("failed now, too old", SlotState(0.0), 115.0, TIMING, {"failure": DOWN}, FAIL),
    ("failed now, no stale wanted", SlotState(100.0), 115.0, TIMING, {"failure": DOWN, "stale_ok": False}, FAIL),
    ("failed now, while fresh", SlotState(100.0), 101.0, TIMING, {"failure": TIMEOUT}, STALE),
    ("failed now, fetched at -inf (raced)", SlotState(float("-inf")), 101.0, TIMING, {"failure": DOWN}, FAIL),
]


@pytest.mark.parametrize(("state", "now", "timing", "options", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_decide(state: SlotState, now: float, timing: Timing, options: dict[str, object], expected: Action) -> None:
    assert decide(state, now, timing, **options) is expected  # type: ignore[arg-type]


def test_every_action_is_reachable() -> None:
    assert {case[-1] for case in CASES} == set(Action)


@pytest.mark.parametrize(("failures", "delay"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 8.0), (40, 8.0)])
def test_retry_backs_off_exponentially_to_the_cap(failures: int, delay: float) -> None:
    assert TIMING.retry_at(failures, 100.0) == 100.0 + delay


@pytest.mark.parametrize(("last", "now", "limited"), [(None, 0.0, False), (10.0, 10.5, True), (10.0, 11.0, False)])
def test_rate_limit_per_miss_interval(last: float | None, now: float, limited: bool) -> None:
    assert TIMING.rate_limited(last, now) is limited


def test_expiry_is_fetch_time_plus_ttl() -> None:
    assert TIMING.expires_at(100.0) == 110.0
    assert NEVER_EXPIRES.expires_at(100.0) == float("inf")
