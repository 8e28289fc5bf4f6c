"""Helpers shared by the leader-election tests: electors on one kit Lease, driven turn by turn on a ManualClock."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from restmapper.discovery import DiscoveryClient
from restmapper.leader import LeaderElector
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

LEASE = "leases.coordination.k8s.io"
NAME, NAMESPACE = "controller", "default"
LEASE_PATH = f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/{NAME}"


def mapper_for(cluster: FakeCluster) -> LazyRESTMapper:
    """A mapper of its own (a replica's own process) over the in-process transport."""
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))


@dataclass
class Candidate:
    """An elector plus what its callbacks saw: ``events`` in order (``started``, ``stopped``, ``leader:<id>``)."""

    elector: LeaderElector
    events: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)  # notified when on_started_leading ran

    def tick(self) -> float:
        """One turn; when it started leading, wait (bounded) for on_started_leading, which runs on its own thread."""
        delay = self.elector.tick()
        if self.elector.is_leader:
            with self.changed:
                assert self.changed.wait_for(lambda: self.leading, 10), "on_started_leading did not run"
        return delay

    @property
    def identity(self) -> str:
        return self.elector.identity

    @property
    def leading(self) -> bool:
        """What the callbacks said last: between on_started_leading and on_stopped_leading."""
        state = [e for e in self.events if e in ("started", "stopped")]
        return bool(state) and state[-1] == "started"


def candidate(cluster: FakeCluster, clock: ManualClock, identity: str, **options: Any) -> Candidate:
    """An elector for the test Lease whose callbacks record into ``Candidate.events``."""
    events: list[str] = []
    changed = threading.Condition()

    def started() -> None:
        with changed:
            events.append("started")
            changed.notify_all()

    elector = LeaderElector(
        mapper_for(cluster), NAME, NAMESPACE, identity=identity, clock=clock,
        on_started_leading=started, on_stopped_leading=lambda: events.append("stopped"),
        on_new_leader=lambda who: events.append(f"leader:{who}"), **options)
    return Candidate(elector, events, changed)


def lease(cluster: FakeCluster) -> dict[str, Any]:
    """The stored test Lease (it must exist)."""
    stored = cluster.get_object(LEASE, NAME, NAMESPACE)
    assert stored is not None
    return stored


def holder(cluster: FakeCluster) -> str | None:
    """The stored holder identity, None when the Lease does not exist."""
    stored = cluster.get_object(LEASE, NAME, NAMESPACE)
    return None if stored is None else stored["spec"].get("holderIdentity")


def lease_or_none(cluster: FakeCluster) -> dict[str, Any] | None:
    """The stored test Lease, None when it does not exist."""
    return cluster.get_object(LEASE, NAME, NAMESPACE)
