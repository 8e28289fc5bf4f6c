"""The election state machine, shared by the thread and asyncio drivers (it does the Lease I/O, never waits).

One :meth:`Election.turn` is what client-go's elector does on each tick of its acquire and renew loops
(``tryAcquireOrRenew``), and :meth:`Election.release` what it does on a cancelled context with
``ReleaseOnCancel``. The drivers (:mod:`restmapper.leader.elector`, :mod:`restmapper.leader.aio`) only wait between
turns and run the callbacks.

Times: ``clock`` is monotonic and local. Expiry of another holder's lease is judged from the clock reading at which
*we observed* its record change (client-go's ``observedTime``) plus the ``leaseDurationSeconds`` *that record* says
(client-go's ``isLeaseValid``: the holder's own timing, never ours), never from the ``renewTime`` it wrote with its
own wall clock. Only the leader election record counts as a change (client-go's ``observedRawRecord``): an edit of
the Lease's metadata (a label) does not restart the count. Our own leadership is bounded by ``renewed_at +
renew_deadline``, where ``renewed_at`` is the clock reading taken *before* sending the last write the server
accepted (so it precedes the server's commit, which precedes any other candidate's observation of it).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from restmapper.errors import APIStatusError, RestMapperError
from restmapper.leader._lock import LeaderElectionRecord, LeaseLock, micro_time

__all__ = ["WARN_EVERY", "Election", "Turn"]

_log = logging.getLogger("restmapper.leader")

WARN_EVERY = 60.0
"""Seconds: the least time between two log lines of one failure reason of an election (it retries every
``retry_period``, 2 s by default: a failing server must not write a warning each time)."""


@dataclass(frozen=True)
class Turn:
    """What one turn changed, for the driver to act on.

    Attributes:
        started: we became the leader in this turn.
        stopped: we stopped leading in this turn (renewal failed past ``renew_deadline``, or another holder).
        new_leader: the holder identity we observed for the first time in this turn, or None.
        delay: seconds until the next turn is due.
    """

    started: bool = False
    stopped: bool = False
    new_leader: str | None = None
    delay: float = 0.0


class _Repeats:
    """Which failures of an election are logged: per reason (what failed, and the error's type and HTTP status),
    the first, then one per :data:`WARN_EVERY` seconds of ``clock`` carrying the count of those not logged since
    (logged at DEBUG meanwhile). Used under the election's I/O lock."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._last: dict[str, tuple[float, int]] = {}  # reason -> (clock when last logged, repeats since)

    def repeats(self, what: str, exc: BaseException) -> int | None:
        """None: a repeat of a reason logged less than WARN_EVERY ago (counted); else how many repeats were
        counted since that reason was last logged (log now)."""
        status = exc.status if isinstance(exc, APIStatusError) else ""
        reason = f"{what}: {type(exc).__name__} {status}"
        try:
            now = self._clock()
        except Exception:  # a failing injected clock: what failed is logged, never rate-limited away
            return 0
        last = self._last.get(reason)
        if last is not None and now - last[0] < WARN_EVERY:
            self._last[reason] = (last[0], last[1] + 1)
            return None
        self._last[reason] = (now, 0)
        return 0 if last is None else last[1]


class Election:
    """The state of one candidate for one Lease; :meth:`turn` and :meth:`release` run one at a time.

    A finished election (:meth:`close`) sends no write naming us again; :meth:`release` waits for the turn in
    flight (one request at a time, guarded by an I/O lock), so a release is never undone by a late renewal.
    """

    def __init__(self, lock: LeaseLock, identity: str, *, lease_duration: float, renew_deadline: float,
                 retry_period: float, clock: Callable[[], float], wall_clock: Callable[[], float] = time.time
                 ) -> None:
        self.lock = lock
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock = clock
        self._wall_clock = wall_clock
        # Guards the fields below against readers on other threads (is_leader, leader); the I/O runs unlocked.
        self._guard = threading.Lock()
        self._io = threading.Lock()  # one turn or release at a time, whichever driver thread calls it
        self._closed = False
        self._lease: dict[str, Any] | None = None  # the Lease as last read or written (its resourceVersion)
        self._observed = LeaderElectionRecord()
        self._observed_at = float("-inf")  # clock reading when we saw the record change
        self._leading = False
        self._renewed_at = float("-inf")  # clock reading before sending our last accepted write
        self._reported = ""  # the holder last reported as new leader
        self._last_renew_wall = 0.0
        self._resume_at = float("-inf")  # after resign(): no attempt before this clock reading
        self.last_error: BaseException | None = None
        self._repeats = _Repeats(clock)

    # --- state seen from other threads ---------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """True while we lead: a write of ours was accepted less than ``renew_deadline`` ago (local clock) and the
        Lease as we last observed it names us (as client-go's ``IsLeader``: False at once when we observe another
        holder, or the Lease gone)."""
        with self._guard:
            return (self._leading and self._observed.holder_identity == self.identity
                    and self._clock() < self._renewed_at + self.renew_deadline)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called: this election never leads again."""
        return self._closed

    @property
    def leading(self) -> bool:
        """True between a turn that returned ``started`` and the one that returned ``stopped`` (or a stop)."""
        return self._leading

    @property
    def leader(self) -> str:
        """The holder identity of the record we last observed ("" when nobody holds the lease)."""
        return self._observed.holder_identity

    @property
    def lease_transitions(self) -> int:
        """``leaseTransitions`` of the record we last observed."""
        return self._observed.lease_transitions

    # --- turns -----------------------------------------------------------------------------------------------------

    def turn(self) -> Turn:
        """Try to acquire the lease (a candidate) or renew it (the leader) once; return what changed.

        Never raises: a failed request (or any other exception) is kept in :attr:`last_error`, logged, and counts as
        a failed attempt (a 409 is a lost race, not an error). After :meth:`close` it sends nothing and never
        reports ``started``.
        """
        with self._io:
            if self._closed:
                return Turn(delay=self.retry_period)
            try:
                wait = self._resume_at - self._clock()
                if not self._leading and wait > 0:  # resigned: let a standby take the lease first
                    return Turn(delay=min(wait, self.retry_period))
                was_leading = self._leading
                deadline = self._renewed_at + self.renew_deadline  # of the leadership we hold now, if any
                ok = self._try_acquire_or_renew(timeout=self._request_timeout())
                return self._outcome(was_leading, deadline, ok)
            except Exception as exc:  # recorded and logged (a bug, or a failing injected clock): the loop goes on
                self._failed("turn", exc)
                return Turn(delay=self.retry_period)

    def _outcome(self, was_leading: bool, deadline: float, ok: bool) -> Turn:
        now = self._clock()
        new_leader = None
        holder = self._observed.holder_identity
        if holder and holder != self._reported:
            self._reported = new_leader = holder
        if not was_leading:
            if ok:
                with self._guard:
                    if self._closed:  # stopped while the acquire was in flight: never start
                        return Turn(new_leader=new_leader, delay=self.retry_period)
                    self._leading = True
                return Turn(started=True, new_leader=new_leader, delay=self._renew_delay(now))
            return Turn(new_leader=new_leader, delay=self.retry_period)
        if now >= deadline or (not ok and holder != self.identity):
            # Past the renew deadline, or the record no longer names us (another holder, or the Lease gone and
            # re-created by another): stop now, before any other candidate can have waited the
            # leaseDurationSeconds we wrote (> renew_deadline) since our last accepted write.
            self.stop_leading()
            return Turn(stopped=True, new_leader=new_leader, delay=self.retry_period)
        return Turn(new_leader=new_leader, delay=self._renew_delay(now))

    def close(self) -> bool:
        """Finish: never lead again (``is_leader`` False from now on, no write naming us is sent after the one in
        flight); return True when we were leading. :meth:`release` may still follow."""
        with self._guard:
            self._closed = True
            was, self._leading = self._leading, False
        return was

    def stop_leading(self) -> bool:
        """Mark us as not leading (is_leader False from now on); return True when we were leading."""
        with self._guard:
            was, self._leading = self._leading, False
        return was

    def resign(self, cause: BaseException) -> None:
        """Give leadership up after our own failure to lead (``on_started_leading`` raised; client-go's process
        would crash): keep ``cause`` in :attr:`last_error`, stop leading, release the Lease, and make no attempt
        for ``lease_duration`` seconds, so that a standby (retrying every ``retry_period``) takes over first."""
        self.last_error = cause
        self.stop_leading()
        self.release()
        self._resume_at = self._clock() + self.lease_duration

    def release(self) -> bool:
        """Give the lease up if the record we observed names us (client-go's ``release``): holder "", a 1 s
        duration, transitions kept. Call :meth:`stop_leading` first. Returns True when the server accepted it.

        Waits for the turn in flight (another thread's) to end first, so that its write cannot land after ours.
        Never raises (a failure is recorded in :attr:`last_error`).
        """
        with self._io:
            if self._lease is None or self._observed.holder_identity != self.identity:
                return False
            now = self._wall_clock()
            record = LeaderElectionRecord("", 1, micro_time(now), micro_time(now), self._observed.lease_transitions)
            try:
                written = self.lock.update(self._lease, record, timeout=self.renew_deadline)
            except Exception as exc:  # recorded and logged: a release never kills the driver
                self._failed("release", exc)
                return False
            if written is None:
                return False
            self._observe(written)
            return True

    # --- internals -------------------------------------------------------------------------------------------------

    def _request_timeout(self) -> float:
        if self._leading:  # a renewal is worthless after the deadline: bound the request by what is left
            return max(self._renewed_at + self.renew_deadline - self._clock(), 0.001)
        return self.renew_deadline

    def _renew_delay(self, now: float) -> float:
        """Next renewal: a retry period from now, but no later than the renew deadline (to stop on time)."""
        return max(min(self.retry_period, self._renewed_at + self.renew_deadline - now), 0.0)

    def _try_acquire_or_renew(self, timeout: float) -> bool:
        try:
            return self._attempt(timeout)
        except Exception as exc:  # recorded and logged: the election loop never dies silently
            self._failed("acquire or renew", exc)
            return False

    def _failed(self, what: str, exc: BaseException) -> None:
        """Record a failure (:attr:`last_error`) and log it: a request failure at WARNING, anything else (a bug
        somewhere) at ERROR with its traceback; a repeat of one reason within :data:`WARN_EVERY` seconds at DEBUG,
        counted into the next line of that reason."""
        self.last_error = exc
        where = f"leader election {self.lock.namespace}/{self.lock.name} ({self.identity})"
        repeats = self._repeats.repeats(what, exc)
        if repeats is None:
            _log.debug("%s: %s failed again: %s", where, what, exc)
            return
        count = f" ({repeats} more times since the last warning)" if repeats else ""
        if isinstance(exc, RestMapperError):
            _log.warning("%s: %s failed: %s%s", where, what, exc, count)
        else:  # not a request failure: a bug somewhere; keep its traceback
            _log.error("%s: %s failed%s", where, what, count, exc_info=exc)

    def _record(self, *, acquire_time: str | None, transitions: int) -> LeaderElectionRecord:
        # renewTime strictly increases, so every renewal changes the record (and its resourceVersion): an update
        # that changed nothing would be a no-op the API server does not even write, and others would not see it.
        wall = max(self._wall_clock(), self._last_renew_wall + 1e-6)
        self._last_renew_wall = wall
        stamp = micro_time(wall)
        # Rounded up: the duration others wait must stay longer than our renew_deadline (validate_timing checks
        # that it fits the int32 field).
        return LeaderElectionRecord(self.identity, math.ceil(self.lease_duration), acquire_time or stamp, stamp,
                                    transitions)

    def _valid(self, now: float) -> bool:
        """True while the observed record's lease has not expired (client-go's ``isLeaseValid``)."""
        return now < self._observed_at + self._observed.lease_duration_seconds

    def _write(self, lease: dict[str, Any] | None, record: LeaderElectionRecord, timeout: float
               ) -> tuple[dict[str, Any] | None, float]:
        """Create (``lease`` None) or update the Lease; return what was written (None: a lost race, or closed)
        and the clock reading taken before sending."""
        with self._guard:
            if self._closed:  # a finished election never writes itself as holder
                return None, 0.0
        sent = self._clock()
        if lease is None:
            return self.lock.create(record, timeout), sent
        return self.lock.update(lease, record, timeout), sent

    def _attempt(self, timeout: float) -> bool:
        """One try to acquire or renew the Lease within ``timeout`` seconds; True when our write was accepted."""
        held = self._held_lease()
        if held is not None and self._renew(held, timeout):
            return True
        # Not ours, or the renewal met a 409 or an error: read the Lease and decide as a candidate would.
        return self._acquire(timeout)

    def _held_lease(self) -> dict[str, Any] | None:
        """The Lease we last wrote when we lead, hold it, and our view of it is fresh; else None."""
        if (self._leading and self._lease is not None and self._observed.holder_identity == self.identity
                and self._valid(self._clock())):
            return self._lease
        return None

    def _renew(self, lease: dict[str, Any], timeout: float) -> bool:
        """The fast path while we hold ``lease`` (the Lease we last wrote): update it; True when accepted."""
        record = self._record(acquire_time=self._observed.acquire_time, transitions=self._observed.lease_transitions)
        try:
            written, sent = self._write(lease, record, timeout)
        except RestMapperError as exc:  # e.g. a 404 (the Lease was deleted): as client-go, take the slow path
            self._failed("renew", exc)
            return False
        if written is None:
            return False
        self._accepted(written, sent)
        return True

    def _acquire(self, timeout: float) -> bool:
        """The slow path: read the Lease, then create it, take it over (expired) or renew it (ours); True when our
        write was accepted."""
        lease = self.lock.get(timeout)
        if lease is None:
            self._observe_gone()
            written, sent = self._write(None, self._record(acquire_time=None, transitions=0), timeout)
            if written is None:
                return False  # another candidate created it first
            self._accepted(written, sent)
            return True
        self._observe(lease)
        holder = self._observed.holder_identity
        if holder and holder != self.identity and self._valid(self._clock()):
            return False  # held by another candidate whose lease has not expired by our observation
        ours = holder == self.identity
        record = self._record(acquire_time=self._observed.acquire_time if ours else None,
                              transitions=self._observed.lease_transitions + (0 if ours else 1))
        written, sent = self._write(lease, record, timeout)
        if written is None:
            return False  # lost the race: someone wrote the Lease since we read it
        self._accepted(written, sent)
        return True

    def _accepted(self, lease: dict[str, Any], sent: float) -> None:
        self._observe(lease)
        with self._guard:
            self._renewed_at = sent

    def _observe(self, lease: dict[str, Any]) -> None:
        """Remember ``lease`` (its resourceVersion is the next write's precondition); restart the expiry count when
        its leader election record changed (metadata-only edits do not count, as client-go's
        ``observedRawRecord``)."""
        record = LeaderElectionRecord.from_lease(lease)
        with self._guard:
            self._lease = lease
            if record != self._observed:
                self._observed = record
                self._observed_at = self._clock()  # after the answer arrived: never earlier than the commit

    def _observe_gone(self) -> None:
        """The Lease does not exist: nobody holds it (``is_leader`` False until a create of ours is accepted)."""
        with self._guard:
            self._lease = None
            self._observed = LeaderElectionRecord()
            self._observed_at = self._clock()
