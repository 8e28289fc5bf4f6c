"""Leader election reads and writes the Lease's record as client-go does: expiry from the observed record's own
``leaseDurationSeconds``, the duration written rounded up, only record changes restart the expiry count, and a
Lease deleted under its holder is re-created without a flap.

Electors are driven turn by turn (``tick``) on a ManualClock: nothing sleeps.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from helpers.leader import LEASE, NAME, NAMESPACE, candidate, holder, lease, mapper_for

from restmapper.errors import InvalidArgumentError
from restmapper.leader import LeaderElector
from restmapper.testing import FakeCluster, ManualClock


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster.embedded()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def test_a_candidate_waits_the_holders_lease_duration_not_its_own(cluster: FakeCluster, clock: ManualClock) -> None:
    """a (60/40) leads and is partitioned; b (15/10) must wait the 60 s a wrote: never two leaders."""
    a = candidate(cluster, clock, "a", lease_duration=60.0, renew_deadline=40.0, retry_period=2.0)
    b = candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    with cluster.partition_lease("a"):
        for _ in range(40):
            clock.advance(2.0)
            a.tick()
            b.tick()
            assert not (a.elector.is_leader and b.elector.is_leader)
    assert holder(cluster) == "b"  # b took over once the 60 s it observed had passed


@pytest.mark.parametrize(("lease_duration", "renew_deadline", "written"),
                         [(10.5, 10.4, 11), (1.4, 1.3, 2), (2.49, 2.4, 3), (15.0, 10.0, 15)])
def test_the_lease_duration_written_is_rounded_up_above_the_renew_deadline(
        cluster: FakeCluster, clock: ManualClock, lease_duration: float, renew_deadline: float,
        written: int) -> None:
    a = candidate(cluster, clock, "a", lease_duration=lease_duration, renew_deadline=renew_deadline,
                  retry_period=1.0)
    a.tick()
    assert lease(cluster)["spec"]["leaseDurationSeconds"] == written > renew_deadline


@pytest.mark.parametrize("options", [{"lease_duration": math.inf}, {"lease_duration": 1e300},
                                     {"lease_duration": 2.0**31}, {"renew_deadline": math.nan},
                                     {"retry_period": -math.inf}])
def test_timing_that_does_not_fit_the_lease_is_refused(cluster: FakeCluster, clock: ManualClock,
                                                       options: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentError):
        candidate(cluster, clock, "a", **options)


def test_the_largest_lease_duration_that_fits_is_written(cluster: FakeCluster, clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a", lease_duration=2.0**31 - 1)
    a.tick()
    assert a.elector.is_leader and a.elector.last_error is None
    assert lease(cluster)["spec"]["leaseDurationSeconds"] == 2**31 - 1


def test_a_metadata_edit_does_not_restart_the_expiry_count(cluster: FakeCluster, clock: ManualClock) -> None:
    """The holder crashed; a label edited every 10 s changes the resourceVersion, not the record."""
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    for second in range(2, 16, 2):
        clock.advance(2.0)
        if second % 10 == 0:
            edited = copy.deepcopy(lease(cluster))
            edited["metadata"].setdefault("labels", {})["touched"] = str(second)
            edited["metadata"].pop("resourceVersion", None)
            cluster.apply_object(edited)
        b.tick()
    clock.advance(1.0)  # 15 s since b observed a's last renewal
    b.tick()
    assert holder(cluster) == "b" and b.elector.is_leader


def test_a_lease_deleted_under_a_sole_leader_is_recreated_without_a_flap(cluster: FakeCluster,
                                                                         clock: ManualClock) -> None:
    a = candidate(cluster, clock, "a")
    a.tick()
    cluster.delete_object(LEASE, NAME, NAMESPACE)
    for _ in range(10):
        clock.advance(2.0)
        a.tick()
        assert a.elector.is_leader
    assert holder(cluster) == "a"
    assert a.events == ["leader:a", "started"]


def test_a_leader_stops_at_once_when_it_observes_the_lease_recreated_by_another(cluster: FakeCluster,
                                                                              clock: ManualClock) -> None:
    a, b = candidate(cluster, clock, "a"), candidate(cluster, clock, "b")
    a.tick()
    b.tick()
    cluster.delete_object(LEASE, NAME, NAMESPACE)
    clock.advance(2.0)
    b.tick()  # b observes it gone and creates it
    assert holder(cluster) == "b" and b.elector.is_leader
    a.tick()  # a's renewal: a 409 or 404, then it reads b's record
    assert not a.elector.is_leader
    assert a.events[-1] == "stopped"


def test_an_unexpected_exception_in_a_turn_is_recorded_and_logged_not_raised(
        cluster: FakeCluster, caplog: pytest.LogCaptureFixture) -> None:
    """A failure that is no request error (here the injected clock) never kills the election loop."""
    manual = ManualClock()
    broken = [True]

    def clock() -> float:
        if broken[0]:
            raise RuntimeError("clock unavailable")
        return manual()

    elector = LeaderElector(mapper_for(cluster), NAME, NAMESPACE, identity="a", clock=clock)
    with caplog.at_level("ERROR", logger="restmapper.leader"):
        elector.tick()
    assert isinstance(elector.last_error, RuntimeError)
    assert any(r.exc_info and r.exc_info[1] is elector.last_error for r in caplog.records)
    broken[0] = False
    elector.tick()
    assert elector.is_leader
