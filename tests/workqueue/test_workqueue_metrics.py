"""Work-queue metrics under client-go's names, labelled by queue name, through the optional Prometheus module; the
queue itself never needs prometheus_client."""

from __future__ import annotations

import asyncio
import gc
import importlib
import sys

import pytest
from prometheus_client import CollectorRegistry

from restmapper.metrics import WorkqueueMetrics
from restmapper.testing import ManualClock
from restmapper.workqueue import AsyncRateLimitingQueue, ItemExponentialFailureRateLimiter, RateLimitingQueue

NAMES = ("workqueue_depth", "workqueue_adds_total", "workqueue_queue_duration_seconds",
         "workqueue_work_duration_seconds", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
         "workqueue_longest_running_processor_seconds")


def _value(registry: CollectorRegistry, name: str, queue: str = "widgets") -> float | None:
    return registry.get_sample_value(name, {"name": queue})


@pytest.mark.parametrize("form", [RateLimitingQueue, AsyncRateLimitingQueue])
def test_a_named_queue_reports_client_gos_seven_metrics(form: type[RateLimitingQueue[str]]) -> None:
    registry = CollectorRegistry()
    clock = ManualClock()
    q = form("widgets", ItemExponentialFailureRateLimiter(1.0, 10.0), clock=clock,
             metrics=WorkqueueMetrics(registry))
    q.add("a")
    q.add("a")  # deduped: not an add
    q.add("b")
    assert (_value(registry, "workqueue_adds_total"), _value(registry, "workqueue_depth")) == (2, 2)
    clock.advance(2.0)
    a = asyncio.run(q.get(timeout=0)) if isinstance(q, AsyncRateLimitingQueue) else q.get(timeout=0)
    assert _value(registry, "workqueue_depth") == 1
    assert _value(registry, "workqueue_queue_duration_seconds_sum") == 2.0
    assert _value(registry, "workqueue_queue_duration_seconds_count") == 1
    clock.advance(3.0)
    assert _value(registry, "workqueue_unfinished_work_seconds") == 3.0
    assert _value(registry, "workqueue_longest_running_processor_seconds") == 3.0
    q.add_rate_limited(a)
    q.add_after("c", 5.0)
    assert _value(registry, "workqueue_retries_total") == 2
    q.done(a)
    assert _value(registry, "workqueue_work_duration_seconds_sum") == 3.0
    assert (_value(registry, "workqueue_unfinished_work_seconds"),
            _value(registry, "workqueue_longest_running_processor_seconds")) == (0.0, 0.0)
    buckets = [s.labels["le"] for m in registry.collect() if m.name == "workqueue_work_duration_seconds"
               for s in m.samples if s.name.endswith("_bucket")]
    assert buckets[0] == "1e-08" and buckets[-2] == "1000.0" and len(buckets) == 13  # client-go's 12, and +Inf
    names = {m.name + ("_total" if m.type == "counter" else "") for m in registry.collect()}
    assert names == set(NAMES)


def test_an_unnamed_queue_reports_nothing() -> None:
    registry = CollectorRegistry()
    q: RateLimitingQueue[str] = RateLimitingQueue(metrics=WorkqueueMetrics(registry))
    q.add("a")
    q.done(q.get(timeout=0))
    q.add_after("b", 1.0)
    assert [s for m in registry.collect() for s in m.samples] == []  # no queue's children were made


def test_the_gauges_of_a_discarded_queue_read_zero_and_do_not_keep_it_alive() -> None:
    registry = CollectorRegistry()
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue("widgets", clock=clock, metrics=WorkqueueMetrics(registry))
    q.add("a")
    q.get(timeout=0)
    clock.advance(1.0)
    assert _value(registry, "workqueue_unfinished_work_seconds") == 1.0
    del q
    gc.collect()
    assert _value(registry, "workqueue_unfinished_work_seconds") == 0.0


def test_the_work_queue_works_without_prometheus_client(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m.startswith(("prometheus_client", "restmapper.workqueue",
                                                          "restmapper.metrics"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # "not installed"
    workqueue = importlib.import_module("restmapper.workqueue")
    q = workqueue.RateLimitingQueue("widgets")
    q.add("a")
    assert q.get(timeout=0) == "a"
    assert "prometheus_client" not in {m for m in sys.modules if sys.modules[m] is not None}
