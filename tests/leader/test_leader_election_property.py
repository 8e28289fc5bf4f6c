"""Two candidates on one kit Lease: never two leaders, over random runs of releases, crashes, partitions and races.

A simulation on a ManualClock schedules each live candidate's turns when they are due (what its thread would do,
without jitter), and between the scheduled turns applies random events: a crash (the process is gone: no more
turns, no release; a new candidate with a new identity replaces it), a stop (callback then release; replaced too),
a partition of one candidate from the Lease and its healing, an early turn, and a race (one candidate's turn runs
inside another's, between its read and its write). After every step:

- at most one live candidate's ``is_leader`` is True, and the stored Lease names it;
- at most one live candidate is between ``on_started_leading`` and ``on_stopped_leading``;
- a Lease that was not released changes holder only ``lease_duration`` after the old holder's last write.

At the end, with every partition healed and the candidates left alone, exactly one leads.
"""

from __future__ import annotations

from typing import Any

from helpers.leader import LEASE_PATH, Candidate, candidate, holder, lease_or_none
from helpers.properties import examples
from hypothesis import given
from hypothesis import strategies as st

from restmapper.testing import FakeCluster, LeasePartition, ManualClock

TIMING = {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}


class Simulation:
    """Two live candidates at all times, their turn schedule, and the events of the run."""

    def __init__(self) -> None:
        self.clock = ManualClock()
        self._interleave: Any = None  # run by the kit before answering a delayed request (a race)
        self.cluster = FakeCluster(sleep=self._before_answer)
        self.alive: list[Candidate] = []
        self.due: dict[str, float] = {}
        self.partitions: dict[str, LeasePartition] = {}
        self.stored: tuple[str, str] = ("", "")  # (holder, resourceVersion) of the Lease at the last check
        self.written_at: dict[str, float] = {}  # when each holder's last accepted write was sent
        self._spawned = 0
        for _ in range(2):
            self._spawn()

    def _before_answer(self, _seconds: float) -> None:
        if self._interleave is not None:
            self._interleave()

    def _spawn(self) -> None:
        self._spawned += 1
        c = candidate(self.cluster, self.clock, f"replica-{self._spawned}", **TIMING)
        self.alive.append(c)
        self.due[c.identity] = self.clock()

    def _gone(self, index: int) -> Candidate:
        c = self.alive.pop(index)
        del self.due[c.identity]
        partition = self.partitions.pop(c.identity, None)
        if partition is not None:
            partition.remove()
        self._spawn()
        return c

    def _turn(self, c: Candidate) -> None:
        self.due[c.identity] = self.clock() + c.tick()

    # --- events --------------------------------------------------------------------------------------------------

    def run(self, seconds: float) -> None:
        """Let ``seconds`` pass, running every turn that falls due, in time order."""
        end = self.clock() + seconds
        for _ in range(10_000):  # a turn always schedules the next one later, unless the elector is broken
            c = min(self.alive, key=lambda x: self.due[x.identity])
            if self.due[c.identity] > end:
                break
            self.clock.advance(max(self.due[c.identity] - self.clock(), 0.0))
            self.check()
            self._turn(c)
            self.check()
        else:
            raise AssertionError(f"turns stopped advancing the schedule at {self.clock()}")
        self.clock.advance(end - self.clock())
        self.check()

    def tick(self, index: int) -> None:
        """An early turn (a thread's jittered wait, or a wake-up): the schedule is not the only time turns run."""
        self._turn(self.alive[index])
        self.check()

    def crash(self, index: int) -> None:
        self._gone(index)

    def stop(self, index: int) -> None:
        self.alive[index].elector.stop()
        self.check()
        self._gone(index)

    def partition(self, index: int) -> None:
        identity = self.alive[index].identity
        if identity not in self.partitions:
            self.partitions[identity] = self.cluster.partition_lease(identity)

    def heal(self, index: int) -> None:
        partition = self.partitions.pop(self.alive[index].identity, None)
        if partition is not None:
            partition.remove()

    def race(self, index: int, at_request: int) -> None:
        """Run the other candidate's turn while this one's ``at_request``-th Lease request is in flight."""
        c, other = self.alive[index], self.alive[1 - index]
        seen = 0

        def interleave() -> None:
            nonlocal seen
            seen += 1
            if seen == at_request:
                self._interleave = None
                self._turn(other)
                self.check()

        self._interleave = interleave
        fault = self.cluster.inject(LEASE_PATH, latency=1e-9, times=at_request)
        try:
            self._turn(c)
        finally:
            self._interleave = None
            fault.remove()
        self.check()

    # --- invariants ----------------------------------------------------------------------------------------------

    def check(self) -> None:
        self._check_takeover()
        leaders = [c.identity for c in self.alive if c.elector.is_leader]
        assert len(leaders) <= 1, f"two leaders at {self.clock()}: {leaders}"
        if leaders:
            assert holder(self.cluster) == leaders[0]
        running = [c.identity for c in self.alive if c.leading]
        assert len(running) <= 1, f"two candidates ran on_started_leading without stopping: {running}"

    def _check_takeover(self) -> None:
        """A lease not released changes holder only ``lease_duration`` after its holder's last write was sent."""
        stored = lease_or_none(self.cluster)
        if stored is None:
            return
        now_holder, rv = stored["spec"].get("holderIdentity") or "", stored["metadata"]["resourceVersion"]
        before, before_rv = self.stored
        if rv == before_rv:
            return
        self.stored = (now_holder, rv)
        if before and now_holder and now_holder != before:
            waited = self.clock() - self.written_at[before]
            assert waited >= TIMING["lease_duration"], f"{now_holder} took over from {before} after {waited} s"
        if now_holder:  # a write sent now (the clock does not move during a turn)
            self.written_at[now_holder] = self.clock()

    def settle(self) -> None:
        for identity in list(self.partitions):
            self.partitions.pop(identity).remove()
        self.run(TIMING["lease_duration"] + 4 * TIMING["retry_period"] + TIMING["renew_deadline"])
        assert sum(c.elector.is_leader for c in self.alive) == 1
        assert sum(c.leading for c in self.alive) == 1


candidates = st.integers(0, 1)
events = st.lists(st.one_of(
    st.tuples(st.just("run"), st.sampled_from([0.5, 1.0, 2.5, 6.0, 11.0, 16.0])),
    st.tuples(st.just("tick"), candidates),
    st.tuples(st.just("crash"), candidates),
    st.tuples(st.just("stop"), candidates),
    st.tuples(st.just("partition"), candidates),
    st.tuples(st.just("heal"), candidates),
    st.tuples(st.just("race"), candidates, st.integers(1, 2)),
), min_size=4, max_size=30)


@examples(30)
@given(events)
def test_two_candidates_never_lead_at_once(run: list[tuple[Any, ...]]) -> None:
    sim = Simulation()
    sim.run(0.0)
    for name, *args in run:
        getattr(sim, name)(*args)
    sim.settle()
