"""Rate limiters as client-go's default_rate_limiters.go: per-item exponential backoff, an overall token bucket,
their maximum, and the controller default combining both (5 ms doubling to 1000 s; 10 qps, burst 100)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from restmapper.errors import InvalidArgumentError
from restmapper.testing import ManualClock
from restmapper.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)


def test_exponential_backoff_doubles_from_the_base_delay_per_item() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    assert [limiter.when("a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert limiter.when("b") == 0.005  # per item
    assert (limiter.num_requeues("a"), limiter.num_requeues("b"), limiter.num_requeues("c")) == (4, 1, 0)


def test_exponential_backoff_is_capped_at_the_max_delay_even_after_very_many_failures() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    waits = [limiter.when("a") for _ in range(2000)]
    assert waits[17] == 655.36 and waits[18] == 1000.0
    assert set(waits[18:]) == {1000.0}


def test_forget_resets_an_items_backoff() -> None:
    limiter = ItemExponentialFailureRateLimiter(1.0, 60.0)
    limiter.when("a")
    limiter.when("a")
    limiter.forget("a")
    limiter.forget("never-seen")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0


@given(st.floats(0, 10), st.floats(0, 1e4), st.integers(0, 80))
def test_exponential_backoff_is_base_times_two_to_the_failures_capped(base: float, cap: float, failures: int) -> None:
    if cap < base:
        with pytest.raises(InvalidArgumentError):
            ItemExponentialFailureRateLimiter(base, cap)
        return
    limiter = ItemExponentialFailureRateLimiter(base, cap)
    waits = [limiter.when("x") for _ in range(failures + 1)]
    assert waits[-1] == min(base * 2.0 ** failures, cap)
    assert waits == sorted(waits)  # never shrinks until forgotten
    assert limiter.num_requeues("x") == failures + 1


def test_token_bucket_answers_the_burst_at_once_then_one_token_per_tick() -> None:
    clock = ManualClock()
    bucket = BucketRateLimiter(10.0, 100, clock=clock)
    assert {bucket.when(i) for i in range(100)} == {0.0}
    assert [round(bucket.when(i), 9) for i in range(3)] == [0.1, 0.2, 0.3]  # borrowing future tokens
    clock.advance(0.3)  # the three borrowed tokens are paid back
    assert bucket.when("x") == pytest.approx(0.1)
    clock.advance(1000.0)  # refills to the burst, never beyond
    assert {bucket.when(i) for i in range(100)} == {0.0}
    assert bucket.when("y") == pytest.approx(0.1)
    assert bucket.num_requeues("y") == 0
    bucket.forget("y")  # nothing to forget: shared by every item


def test_max_of_takes_the_longest_wait_and_forgets_in_every_limiter() -> None:
    clock = ManualClock()
    per_item = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    bucket = BucketRateLimiter(10.0, 1, clock=clock)
    limiter = MaxOfRateLimiter(per_item, bucket)
    assert limiter.when("a") == 0.005  # the bucket had a token; the item's backoff is longer
    assert limiter.when("b") == pytest.approx(0.1)  # the bucket is empty: its wait is longer
    assert limiter.num_requeues("a") == 1
    limiter.forget("a")
    assert per_item.num_requeues("a") == 0
    with pytest.raises(InvalidArgumentError):
        MaxOfRateLimiter()


def test_the_default_controller_rate_limiter_is_client_gos() -> None:
    clock = ManualClock()
    limiter = default_controller_rate_limiter(clock)
    per_item, bucket = limiter.limiters
    assert isinstance(per_item, ItemExponentialFailureRateLimiter) and isinstance(bucket, BucketRateLimiter)
    assert (per_item.base_delay, per_item.max_delay, bucket.qps, bucket.burst) == (0.005, 1000.0, 10.0, 100)
    # 100 distinct items fail once each: the burst covers them, each waits its own 5 ms
    assert {limiter.when(i) for i in range(100)} == {0.005}
    # the 101st failure in the same instant waits for the bucket (0.1 s), not the item's 5 ms
    assert limiter.when(100) == pytest.approx(0.1)


def test_a_queue_without_a_rate_limiter_backs_off_as_the_controller_default_on_its_clock() -> None:
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue("q", clock=clock)
    q.add_rate_limited("a")
    clock.advance(0.004)
    assert q.len() == 0
    clock.advance(0.001)
    assert q.get(timeout=0) == "a"
    assert q.num_requeues("a") == 1


@pytest.mark.parametrize(("args", "error"), [
    ((-1.0, 10.0), InvalidArgumentError),
    ((math.nan, 10.0), InvalidArgumentError),
    ((0.1, math.inf), InvalidArgumentError),
    (("1", 10.0), TypeError),
])
def test_exponential_limiter_rejects_bad_delays(args: tuple[object, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        ItemExponentialFailureRateLimiter(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(("qps", "burst", "error"), [
    (0.0, 1, InvalidArgumentError),
    (math.inf, 1, InvalidArgumentError),
    (10.0, 0, InvalidArgumentError),
    (10.0, 1.5, TypeError),
])
def test_token_bucket_rejects_bad_settings(qps: float, burst: int, error: type[Exception]) -> None:
    with pytest.raises(error):
        BucketRateLimiter(qps, burst)
