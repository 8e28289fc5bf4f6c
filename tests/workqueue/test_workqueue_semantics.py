"""The work queue's rules, as client-go's util/workqueue: each rule once, against the thread and the asyncio form.

Time is a ManualClock: nothing here sleeps; ``get()`` is called with ``timeout=0`` (never waits) unless a test
is about waiting.
"""

from __future__ import annotations

import math
import pickle
import queue as stdlib_queue

import pytest
from helpers.workqueue import Form, form

from restmapper.errors import InvalidArgumentError, RestMapperError, ShutDown, WaitTimeoutError, WorkQueueTimeoutError
from restmapper.workqueue import ItemExponentialFailureRateLimiter

__all__ = ["form"]


def test_items_come_out_in_the_order_they_were_added(form: Form) -> None:
    for item in ("a", "b", "c"):
        form.add(item)
    assert form.drain_all() == ["a", "b", "c"]


def test_an_item_waiting_in_the_queue_is_queued_once(form: Form) -> None:
    form.add("a")
    form.add("b")
    form.add("a")
    assert form.len() == 2
    assert form.drain_all() == ["a", "b"]
    with pytest.raises(WorkQueueTimeoutError):
        form.get()


def test_an_item_being_processed_is_not_handed_out_again(form: Form) -> None:
    """Added while a worker holds it, the item waits for that worker's done: no second worker gets it."""
    form.add("a")
    assert form.get() == "a"
    form.add("a")
    form.add("a")
    assert form.len() == 0
    with pytest.raises(WorkQueueTimeoutError):
        form.get()


def test_an_item_added_while_processed_is_processed_again_after_done(form: Form) -> None:
    form.add("a")
    item = form.get()
    form.add("a")
    form.done(item)
    assert form.len() == 1
    assert form.get() == "a"
    form.done("a")
    assert form.len() == 0  # processed again exactly once


def test_an_item_not_added_again_is_not_requeued_by_done(form: Form) -> None:
    form.add("a")
    form.done(form.get())
    assert form.len() == 0


def test_done_of_an_item_not_being_processed_is_a_typed_error_and_changes_nothing(form: Form) -> None:
    form.add("a")
    with pytest.raises(InvalidArgumentError, match="not being processed"):
        form.done("a")  # queued, not handed out: a requeue here would queue it twice
    assert form.len() == 1
    form.done(form.get())
    with pytest.raises(InvalidArgumentError):
        form.done("a")  # twice
    assert form.len() == 0


def test_an_unhashable_item_is_a_type_error(form: Form) -> None:
    with pytest.raises(TypeError):
        form.add(["not", "hashable"])  # type: ignore[arg-type]
    assert form.len() == 0


def test_add_after_queues_the_item_once_its_time_has_come(form: Form) -> None:
    form.add_after("a", 2.0)
    assert form.len() == 0
    form.clock.advance(1.999)
    assert form.len() == 0
    with pytest.raises(WorkQueueTimeoutError):
        form.get()
    form.clock.advance(0.001)
    assert form.get() == "a"


def test_add_after_without_a_positive_delay_adds_at_once(form: Form) -> None:
    form.add_after("a", 0)
    form.add_after("b", -5)
    assert form.drain_all() == ["a", "b"]


def test_delayed_items_come_out_in_due_order(form: Form) -> None:
    form.add_after("late", 3.0)
    form.add_after("early", 1.0)
    form.add_after("middle", 2.0)
    form.clock.advance(3.0)
    assert form.drain_all() == ["early", "middle", "late"]


def test_add_after_of_a_waiting_item_keeps_the_earlier_due_time(form: Form) -> None:
    form.add_after("a", 5.0)
    form.add_after("a", 1.0)   # brings it forward
    form.add_after("a", 10.0)  # never pushes it back
    form.clock.advance(1.0)
    assert form.drain_all() == ["a"]
    form.clock.advance(10.0)
    assert form.len() == 0  # the later requests of the same wait added nothing more


def test_a_delayed_item_already_queued_dedupes_when_due(form: Form) -> None:
    form.add("a")
    form.add_after("a", 1.0)
    form.clock.advance(1.0)
    assert form.len() == 1
    assert form.drain_all() == ["a"]


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -math.inf])
def test_add_after_rejects_a_delay_that_is_not_a_finite_number(form: Form, seconds: float) -> None:
    with pytest.raises(InvalidArgumentError):
        form.add_after("a", seconds)
    with pytest.raises(TypeError):
        form.add_after("a", "1")  # type: ignore[arg-type]
    form.clock.advance(1e9)
    assert form.len() == 0


def test_add_rate_limited_waits_as_the_limiter_says_and_forget_resets(form: Form) -> None:
    limited = Form(form.kind, form.clock, rate_limiter=ItemExponentialFailureRateLimiter(1.0, 100.0))
    try:
        limited.add_rate_limited("a")  # 1st failure: 1 s
        limited.clock.advance(0.5)
        assert limited.len() == 0
        limited.clock.advance(0.5)
        assert limited.get() == "a"
        limited.add_rate_limited("a")  # 2nd failure while processing: 2 s, then after done
        limited.done("a")
        limited.clock.advance(1.0)
        assert limited.len() == 0
        limited.clock.advance(1.0)
        assert limited.drain_all() == ["a"]
        assert limited.queue.num_requeues("a") == 2
        limited.queue.forget("a")
        assert limited.queue.num_requeues("a") == 0
        limited.add_rate_limited("a")  # backoff starts afresh: 1 s
        limited.clock.advance(1.0)
        assert limited.drain_all() == ["a"]
    finally:
        limited.close()


def test_get_after_shutdown_hands_out_what_is_queued_then_raises_shut_down(form: Form) -> None:
    form.add("a")
    form.add("b")
    form.shutdown()
    assert form.queue.shutting_down()
    assert form.drain_all() == ["a", "b"]
    with pytest.raises(ShutDown) as caught:
        form.get()
    assert caught.value.name == "test"


def test_adds_after_shutdown_are_ignored_and_delayed_items_dropped(form: Form) -> None:
    form.add_after("delayed", 1.0)
    form.shutdown()
    form.add("a")
    form.add_after("b", 0)
    form.add_rate_limited("c")
    form.clock.advance(1.0)
    assert form.len() == 0
    with pytest.raises(ShutDown):
        form.get()


def test_an_item_added_before_shutdown_while_processed_is_still_processed_again(form: Form) -> None:
    """client-go: the dirty mark made before the shutdown survives it; done queues the item once more."""
    form.add("a")
    item = form.get()
    form.add("a")
    form.shutdown()
    form.done(item)
    assert form.get() == "a"
    form.done("a")
    with pytest.raises(ShutDown):
        form.get()


def test_get_with_a_timeout_raises_a_timeout_that_is_also_queue_empty(form: Form) -> None:
    with pytest.raises(WorkQueueTimeoutError) as caught:
        form.get(timeout=0)
    error = caught.value
    assert isinstance(error, stdlib_queue.Empty)
    assert isinstance(error, WaitTimeoutError) and isinstance(error, TimeoutError)
    assert (error.target, error.timeout) == ("test", 0)
    assert "within 0s" in str(error)
    assert form.len() == 0


def test_the_queue_errors_are_restmapper_errors_and_pickle() -> None:
    for error in (ShutDown("q"), WorkQueueTimeoutError(None, 1.5)):
        assert isinstance(error, RestMapperError)
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy), copy.args) == (type(error), str(error), error.args)
    assert "(unnamed)" in str(WorkQueueTimeoutError(None, 1.5))


def test_len_counts_queued_items_only(form: Form) -> None:
    form.add("a")
    form.add("b")
    form.add_after("c", 1.0)
    item = form.get()
    assert form.len() == 1 and len(form.queue) == 1
    form.done(item)
    assert form.len() == 1


def test_a_name_that_is_not_a_string_is_a_type_error(form: Form) -> None:
    with pytest.raises(TypeError):
        type(form.queue)(42)


@pytest.mark.parametrize(("timeout", "error"), [(math.nan, InvalidArgumentError), (math.inf, InvalidArgumentError),
                                                ("1", TypeError)])
def test_get_rejects_a_timeout_that_is_not_a_finite_number(form: Form, timeout: object,
                                                            error: type[Exception]) -> None:
    form.add("a")
    with pytest.raises(error, match="get timeout"):
        form.get(timeout)  # type: ignore[arg-type]
    assert form.len() == 1  # nothing was taken


def test_a_negative_get_timeout_counts_as_zero(form: Form) -> None:
    with pytest.raises(WorkQueueTimeoutError):
        form.get(timeout=-1)
