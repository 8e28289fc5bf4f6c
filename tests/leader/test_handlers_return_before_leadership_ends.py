"""A handler bound to a leader elector returns before leadership ends: the elector's on_stopped_leading and its
release of the Lease wait (bounded) for a call in progress; a handler that stops the elector itself is not waited
for (it would wait for itself); ``remove_handler(..., wait=...)`` offers the same wait to any handler."""

from __future__ import annotations

import threading
from typing import Any

from helpers.leader import LEASE_PATH, NAME, NAMESPACE, candidate
from helpers.store import cm, object_cache

from restmapper.testing import FakeCluster, ManualClock


def _lease_puts(cluster: FakeCluster) -> int:
    return sum(1 for r in cluster.requests if r.method == "PUT" and r.path == LEASE_PATH)


def _blocking_update(entered: threading.Event, release: threading.Event) -> Any:
    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        entered.set()
        assert release.wait(10)

    return on_update


def test_stop_releases_the_lease_only_after_a_running_handler_returned() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))
    leader = candidate(cluster, clock, "A")
    entered, release = threading.Event(), threading.Event()
    with cluster.serve() as served, object_cache(served) as cache:
        cache.add_handler("configmaps", on_update=_blocking_update(entered, release), while_leading=leader.elector)
        assert cache.wait_for_sync("configmaps", timeout=10)
        leader.tick()
        cluster.apply_object(cm("a", x="1"))
        assert entered.wait(10)  # the handler runs, and blocks
        puts = _lease_puts(cluster)
        stopper = threading.Thread(target=leader.elector.stop)
        stopper.start()
        stopper.join(0.2)  # bounded look: stop() must still be waiting for the handler
        assert stopper.is_alive()
        assert _lease_puts(cluster) == puts and "stopped" not in leader.events
        release.set()
        stopper.join(10)
        assert not stopper.is_alive()
        assert _lease_puts(cluster) == puts + 1 and leader.events[-1] == "stopped"
        assert cluster.get_object("leases.coordination.k8s.io", NAME, NAMESPACE)["spec"]["holderIdentity"] in ("", None)


def test_a_lost_lease_tells_on_stopped_leading_only_after_a_running_handler_returned() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))
    leader = candidate(cluster, clock, "A")
    entered, release = threading.Event(), threading.Event()
    with cluster.serve() as served, object_cache(served) as cache:
        cache.add_handler("configmaps", on_update=_blocking_update(entered, release), while_leading=leader.elector)
        assert cache.wait_for_sync("configmaps", timeout=10)
        leader.tick()
        cluster.apply_object(cm("a", x="1"))
        assert entered.wait(10)
        cluster.steal_lease(NAME, NAMESPACE, "other")
        clock.advance(2.0)
        ticker = threading.Thread(target=leader.elector.tick)
        ticker.start()
        ticker.join(0.2)
        assert ticker.is_alive() and "stopped" not in leader.events
        release.set()
        ticker.join(10)
        assert not ticker.is_alive() and leader.events[-1] == "stopped"
        leader.elector.stop()


def test_a_handler_that_stops_its_elector_does_not_wait_for_itself() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    cluster.apply_object(cm("a", x="0"))
    leader = candidate(cluster, clock, "A")
    returned = threading.Event()

    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        leader.elector.stop()
        returned.set()

    with cluster.serve() as served, object_cache(served) as cache:
        cache.add_handler("configmaps", on_update=on_update, while_leading=leader.elector)
        assert cache.wait_for_sync("configmaps", timeout=10)
        leader.tick()
        cluster.apply_object(cm("a", x="1"))
        assert returned.wait(5)  # renew_deadline is 10 s: a wait for itself would not return in time
        assert leader.events[-1] == "stopped" and not leader.elector.is_leader


def test_remove_handler_with_wait_returns_after_the_call_in_progress() -> None:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", x="0"))
    entered, release = threading.Event(), threading.Event()
    with cluster.serve() as served, object_cache(served) as cache:
        handle = cache.add_handler("configmaps", on_update=_blocking_update(entered, release))
        assert cache.wait_for_sync("configmaps", timeout=10)
        cluster.apply_object(cm("a", x="1"))
        assert entered.wait(10)
        assert cache.remove_handler(handle, wait=0.05)  # the call still runs: timed out, logged, still removed
        remover = threading.Thread(target=cache.remove_handler, args=(handle,), kwargs={"wait": 10})
        remover.start()
        remover.join(0.2)
        assert remover.is_alive()
        release.set()
        remover.join(10)
        assert not remover.is_alive()
