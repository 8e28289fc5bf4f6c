"""Lease leader election: client-go's leaderelection semantics, each rule against the kit's Lease.

Electors are driven turn by turn (``tick``) on a ManualClock: every timing below is exact, nothing sleeps.
"""

from __future__ import annotations

import re
import socket
import threading
from typing import Any

import pytest
from helpers.kit import wait_until
from helpers.leader import LEASE, LEASE_PATH, NAME, NAMESPACE, candidate, holder, lease, mapper_for

from restmapper.discovery import DiscoveryClient
from restmapper.errors import APIStatusError, InvalidArgumentError, TransportError
from restmapper.leader import LeaderElector, default_identity
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock
from restmapper.transport import Response

MICRO_TIME = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z\Z")


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster.embedded()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def test_the_first_candidate_creates_the_lease_and_leads(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    assert a.tick() == 2.0
    assert a.elector.is_leader
    assert a.events == ["leader:a", "started"]
    spec = lease(cluster)["spec"]
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    assert MICRO_TIME.match(spec["acquireTime"]) and MICRO_TIME.match(spec["renewTime"])


def test_a_standby_does_not_acquire_while_the_holder_renews(cluster: FakeCluster, clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    for _ in range(30):  # a minute of renewals: far past lease_duration
        b.tick()
        assert not b.elector.is_leader
        clock.advance(2.0)
        a.tick()
        assert a.elector.is_leader
    assert b.events == ["leader:a"]
    assert lease(cluster)["spec"]["leaseTransitions"] == 0
    assert b.elector.last_error is None


def test_every_renewal_changes_the_lease(cluster: FakeCluster, clock: ManualClock) -> None:
    """A renewal that changed nothing would be a no-op the server does not write: standbys would not see it."""
    a = candidate(cluster, clock, "a")
    a.tick()
    seen = {lease(cluster)["metadata"]["resourceVersion"]}
    for _ in range(5):
        a.tick()  # same ManualClock instant: renewTime still moves forward
        seen.add(lease(cluster)["metadata"]["resourceVersion"])
    assert len(seen) == 6


def test_after_a_crash_a_standby_takes_over_lease_duration_after_it_observed_the_last_renewal(
        cluster: FakeCluster, clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    clock.advance(1.0)
    b.tick()  # b observes a's record now (t0)
    # a crashes: no more renewals, no release
    clock.advance(14.9)
    b.tick()
    assert not b.elector.is_leader
    clock.advance(0.1)  # t0 + lease_duration
    b.tick()
    assert b.elector.is_leader
    assert b.events == ["leader:a", "leader:b", "started"]
    spec = lease(cluster)["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1


def test_expiry_is_judged_from_our_observation_never_from_the_holders_renew_time(
        cluster: FakeCluster, clock: ManualClock) -> None:
    """A holder whose clock is years behind (or ahead) writes odd renewTimes; only our observation counts."""
    cluster.apply_object({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                          "metadata": {"name": NAME, "namespace": NAMESPACE},
                          "spec": {"holderIdentity": "skewed", "leaseDurationSeconds": 15,
                                   "renewTime": "2001-01-01T00:00:00.000000Z",
                                   "acquireTime": "2001-01-01T00:00:00.000000Z", "leaseTransitions": 3}})
    b = candidate(cluster, clock, "b")
    b.tick()
    assert not b.elector.is_leader  # renewTime is 25 years old, yet we only just saw the record
    clock.advance(14.0)
    b.tick()
    assert not b.elector.is_leader
    clock.advance(1.0)
    b.tick()
    assert b.elector.is_leader
    assert lease(cluster)["spec"]["leaseTransitions"] == 4


def test_a_record_change_restarts_the_expiry_count(cluster: FakeCluster, clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    clock.advance(10.0)
    a.tick()  # a renews
    clock.advance(4.0)
    b.tick()  # b sees the renewal now: 15 s from here
    clock.advance(14.0)
    b.tick()
    assert not b.elector.is_leader
    clock.advance(1.0)
    b.tick()
    assert b.elector.is_leader


def test_a_lost_race_is_not_an_error(clock: ManualClock) -> None:
    """Both candidates read the expired Lease; a writes between b's read and b's write: b's write is a 409."""
    requests = 0

    def before_answer(_seconds: float) -> None:  # the kit calls this before answering a delayed request
        nonlocal requests
        requests += 1
        if requests == 2:  # after b's read, before b's write is applied
            a.tick()

    cluster = FakeCluster.embedded(sleep=before_answer)
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    cluster.apply_object({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                          "metadata": {"name": NAME, "namespace": NAMESPACE},
                          "spec": {"holderIdentity": "gone", "leaseDurationSeconds": 15}})
    a.tick()
    b.tick()
    clock.advance(15.0)
    cluster.clear_requests()
    cluster.inject(LEASE_PATH, latency=1e-9, times=2)  # b's next two requests
    b.tick()
    assert a.elector.is_leader and not b.elector.is_leader
    assert b.elector.last_error is None
    assert holder(cluster) == "a"
    # Recorded on arrival: b's read, b's write (held back while a reads and writes), then a's read and write.
    assert [r.method for r in cluster.requests if r.path == LEASE_PATH] == ["GET", "PUT", "GET", "PUT"]
    assert lease(cluster)["spec"]["leaseTransitions"] == 1


def test_a_renewal_partitioned_past_renew_deadline_stops_before_anyone_can_acquire(
        cluster: FakeCluster, clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    renewed = clock()
    with cluster.partition_lease("a") as partition:
        stopped_at = acquired_at = None
        while acquired_at is None:
            clock.advance(0.5)
            a.tick()
            b.tick()
            if stopped_at is None and not a.leading:
                stopped_at = clock()
            if b.elector.is_leader:
                acquired_at = clock()
        assert partition.refused > 0
    assert isinstance(a.elector.last_error, TransportError)
    assert stopped_at is not None and stopped_at <= renewed + 10.0
    assert acquired_at >= renewed + 15.0
    assert a.events == ["leader:a", "started", "stopped"]
    a.tick()
    assert a.events[-1] == "leader:b" and not a.elector.is_leader


def test_is_leader_turns_false_at_the_renew_deadline_without_a_turn(cluster: FakeCluster,
                                                                     clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    a.tick()
    clock.advance(9.999)
    assert a.elector.is_leader
    clock.advance(0.001)
    assert not a.elector.is_leader


def test_the_next_turn_is_due_no_later_than_the_renew_deadline(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    a.tick()
    with cluster.partition_lease("a"):
        clock.advance(9.0)
        assert a.tick() == pytest.approx(1.0)  # not a whole retry period: stop on time
        clock.advance(1.0)
        a.tick()
    assert a.events[-1] == "stopped"


def test_on_stopped_leading_returns_before_the_lease_is_released(cluster: FakeCluster, clock: ManualClock) -> None:
    seen_in_callback: list[Any] = []
    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock,
                      on_stopped_leading=lambda: seen_in_callback.append((holder(cluster), a.is_leader)))
    b = candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    a.stop()
    assert seen_in_callback == [("a", False)]  # still ours on the server, but we no longer lead
    spec = lease(cluster)["spec"]
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1 and spec["leaseTransitions"] == 0
    clock.advance(2.0)
    b.tick()  # no lease_duration wait after a release
    assert b.elector.is_leader
    assert lease(cluster)["spec"]["leaseTransitions"] == 1


def test_without_release_on_cancel_a_standby_waits_lease_duration(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a", release_on_cancel=False)
    b = candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    a.elector.stop()
    assert a.events[-1] == "stopped" and holder(cluster) == "a"
    clock.advance(14.0)
    b.tick()
    assert not b.elector.is_leader
    clock.advance(1.0)
    b.tick()
    assert b.elector.is_leader


def test_a_stolen_lease_stops_the_leader_at_its_next_turn(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    a.tick()
    cluster.steal_lease(NAME, NAMESPACE, "thief")
    clock.advance(2.0)
    a.tick()
    assert not a.elector.is_leader
    assert a.events == ["leader:a", "started", "leader:thief", "stopped"]
    assert a.elector.last_error is None
    assert lease(cluster)["spec"]["leaseTransitions"] == 1


def test_an_expired_lease_is_acquired_at_the_next_attempt(cluster: FakeCluster, clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    cluster.expire_lease(NAME, NAMESPACE)
    b.tick()
    assert b.elector.is_leader
    clock.advance(2.0)
    a.tick()
    assert not a.elector.is_leader and a.events[-2:] == ["leader:b", "stopped"]


def test_a_former_leader_is_a_candidate_again_and_can_lead_again(cluster: FakeCluster, clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    cluster.steal_lease(NAME, NAMESPACE, "b")
    a.tick()
    b.tick()  # b believes the record names it: it renews and leads
    assert b.elector.is_leader and not a.elector.is_leader
    b.elector.stop()  # releases
    a.tick()
    assert a.elector.is_leader
    assert a.events.count("started") == 2 and a.events.count("stopped") == 1


def test_a_server_error_is_recorded_and_retried(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    fault = cluster.inject(LEASE_PATH, status=500, body="etcdserver: request timed out")
    assert a.tick() == 2.0
    assert not a.elector.is_leader
    assert isinstance(a.elector.last_error, APIStatusError) and a.elector.last_error.status == 500
    fault.remove()
    a.tick()
    assert a.elector.is_leader


def test_a_failing_on_started_leading_hands_the_lease_to_a_standby(cluster: FakeCluster,
                                                                   clock: ManualClock) -> None:
    """We cannot lead (client-go's process would crash): stop, release, a standby takes over, we retry later."""
    failures = [RuntimeError("controller failed to start")]

    def boom() -> None:
        if failures:
            raise failures.pop()

    stopped: list[str] = []
    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock, on_started_leading=boom,
                      on_stopped_leading=lambda: stopped.append(str(holder(cluster))))
    b = candidate(cluster, clock, "b")
    a.tick()  # on_started_leading runs (and raises) on its own thread, which then hands the lease over
    assert wait_until(lambda: holder(cluster) == "", 10)
    assert not a.is_leader and isinstance(a.last_error, RuntimeError)
    assert stopped == ["a"]  # told before the release
    clock.advance(2.0)
    b.tick()
    a.tick()  # backing off: no attempt
    assert b.elector.is_leader and holder(cluster) == "b"
    clock.advance(15.0)
    b.elector.stop()
    a.tick()  # a candidate again: the lease is free, and on_started_leading now succeeds
    assert holder(cluster) == "a" and a.is_leader


def test_a_stopped_elector_refuses_more_turns(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    a.elector.stop()
    a.elector.stop()  # idempotent
    with pytest.raises(InvalidArgumentError):
        a.tick()
    assert holder(cluster) is None  # never acquired, nothing released


@pytest.mark.parametrize(("options", "message"), [
    ({"lease_duration": 10.0, "renew_deadline": 10.0}, "lease_duration"),
    ({"renew_deadline": 2.4, "retry_period": 2.0}, "renew_deadline"),
    ({"retry_period": 0}, "retry_period"),
    ({"identity": ""}, "identity"),
])
def test_timing_and_identity_are_validated_as_client_go_does(cluster: FakeCluster, options: dict[str, Any],
                                                             message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        LeaderElector(mapper_for(cluster), NAME, NAMESPACE, **options)


def test_an_empty_lease_name_is_refused(cluster: FakeCluster) -> None:
    with pytest.raises(InvalidArgumentError, match="name"):
        LeaderElector(mapper_for(cluster), "", NAMESPACE)


def test_a_transport_that_cannot_write_is_refused(cluster: FakeCluster) -> None:
    class ReadOnly:
        base_url, identity = cluster.base_url, "read-only"

        def __init__(self) -> None:
            self._inner = InProcessTransport(cluster)

        def get(self, path: str, headers: Any = None, *, params: Any = None, timeout: Any = None) -> Response:
            return self._inner.get(path, headers, params=params, timeout=timeout)

        def stream(self, path: str, headers: Any = None, *, params: Any = None, timeout: Any = None) -> Any:
            return self._inner.stream(path, headers, params=params, timeout=timeout)

        def close(self) -> None:
            pass

    with pytest.raises(InvalidArgumentError, match="request"):
        LeaderElector(LazyRESTMapper(DiscoveryClient(ReadOnly())), NAME, NAMESPACE)


def test_the_default_identity_is_the_host_name_and_a_random_suffix(cluster: FakeCluster) -> None:
    first, second = default_identity(), default_identity()
    assert first.startswith(socket.gethostname() + "_") and first != second
    assert LeaderElector(mapper_for(cluster), NAME, NAMESPACE).identity.startswith(socket.gethostname() + "_")


def test_on_its_thread_a_standby_takes_over_after_a_release(cluster: FakeCluster) -> None:
    """start()/stop() on real time with short periods; events, not sleeps, say when things happened."""
    a_started, b_started = threading.Event(), threading.Event()
    order: list[str] = []
    timing = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.05}
    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", on_started_leading=a_started.set,
                      on_stopped_leading=lambda: order.append(f"a stopped, holder {holder(cluster)}"), **timing)
    b = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="b",
                      on_started_leading=lambda: (order.append("b started"), b_started.set()), **timing)
    with a:
        assert a_started.wait(10)
        b.start()
        assert not b_started.is_set() and a.is_leader
    assert b_started.wait(10)  # well before lease_duration: the lease was released
    b.stop()
    assert order == ["a stopped, holder a", "b started"]
    assert lease(cluster)["spec"]["holderIdentity"] == ""
    assert cluster.get_object(LEASE, NAME, NAMESPACE) is not None


def test_run_blocks_until_stop(cluster: FakeCluster) -> None:
    started = threading.Event()
    a = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", on_started_leading=started.set,
                      lease_duration=3.0, renew_deadline=2.0, retry_period=0.05)
    runner = threading.Thread(target=a.run)
    runner.start()
    assert started.wait(10)
    assert a.stop()
    runner.join(10)
    assert not runner.is_alive() and not a.is_leader and holder(cluster) == ""
