"""The thread-form queue against a plain model of client-go's rules, over random sequences of add, add_after, get,
done, clock advances and shutdown (hypothesis stateful testing): same items out in the same order, same lengths,
and never an item queued twice or queued while processed."""

from __future__ import annotations

import itertools
from typing import Any

from helpers.properties import examples
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from restmapper.errors import ShutDown, WorkQueueTimeoutError
from restmapper.testing import ManualClock
from restmapper.workqueue import RateLimitingQueue

ITEMS = st.sampled_from("abc")
DELAYS = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0])


class QueueModel(RuleBasedStateMachine):
    """The model keeps lists and dicts only: the queue's heap, stale entries and conditions are what is tested."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.queue: RateLimitingQueue[str] = RateLimitingQueue("model", clock=self.clock)
        self.fifo: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.waiting: dict[str, tuple[float, int]] = {}  # item -> (due, order asked)
        self.order = itertools.count()
        self.shut = False

    def _add(self, item: str) -> None:
        if self.shut or item in self.dirty:
            return
        self.dirty.add(item)
        if item not in self.processing:
            self.fifo.append(item)

    def _promote(self) -> None:
        now = self.clock()
        for item, _ in sorted(((i, w) for i, w in self.waiting.items() if w[0] <= now), key=lambda iw: iw[1]):
            del self.waiting[item]
            self._add(item)

    @rule(item=ITEMS)
    def add(self, item: str) -> None:
        self.queue.add(item)
        self._add(item)

    @rule(item=ITEMS, delay=DELAYS)
    def add_after(self, item: str, delay: float) -> None:
        self.queue.add_after(item, delay)
        self._promote()
        if self.shut:
            return
        if delay <= 0:
            self._add(item)
            return
        due = self.clock() + delay
        if item not in self.waiting or due < self.waiting[item][0]:
            self.waiting[item] = (due, next(self.order))

    @rule(seconds=DELAYS.filter(lambda d: d > 0))
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @rule()
    def get(self) -> None:
        self._promote()
        expected: Any
        if self.fifo:
            expected = self.fifo.pop(0)
            self.processing.add(expected)
            self.dirty.discard(expected)
        else:
            expected = ShutDown if self.shut else WorkQueueTimeoutError
        try:
            got: Any = self.queue.get(timeout=0)
        except (ShutDown, WorkQueueTimeoutError) as exc:
            got = type(exc)
        assert got == expected

    @precondition(lambda self: self.processing)
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(item)
        self.processing.discard(item)
        if item in self.dirty:
            self.fifo.append(item)

    @rule()
    def shutdown(self) -> None:
        self.queue.shutdown()
        self.shut = True
        self.waiting.clear()

    @invariant()
    def same_length_and_no_item_queued_twice(self) -> None:
        self._promote()
        assert self.queue.len() == len(self.fifo)
        assert len(set(self.fifo)) == len(self.fifo)
        assert not set(self.fifo) & self.processing


QueueModel.TestCase.settings = settings(examples(100), stateful_step_count=40)
TestQueueAgainstModel = QueueModel.TestCase
