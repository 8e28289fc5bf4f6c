"""Lease leader election on a thread: :class:`LeaderElector`."""

from __future__ import annotations

import logging
import math
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypeGuard

from restmapper._public import repr_when_unfinished
from restmapper.errors import InvalidArgumentError
from restmapper.leader._election import Election, Turn
from restmapper.leader._lock import LeaseLock, check_mapper
from restmapper.mapper.lazy import LazyRESTMapper

__all__ = ["JITTER", "MAX_LEASE_SECONDS", "MIN_RETRY_PERIOD", "LeaderElector", "default_identity",
           "validate_options", "validate_timing"]

_log = logging.getLogger("restmapper.leader")

JITTER = 0.1
"""A candidate waits ``retry_period * (1 + JITTER * random())`` between attempts, so that candidates started
together do not retry in lockstep. client-go's factor is 1.2 (up to 2.2 retry periods); a small one keeps the
takeover after a release within one retry period and a fraction."""


def default_identity() -> str:
    """Return ``<hostname>_<random UUID>``: unique per process even for replicas sharing a host name."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


MAX_LEASE_SECONDS = 2**31 - 1
"""The largest ``leaseDurationSeconds`` a Lease holds (the field is an int32)."""

MIN_RETRY_PERIOD = 0.01
"""The shortest ``retry_period`` accepted, in seconds: below it the election loop would spin on the API server."""


def validate_timing(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """Check the timing rules of client-go's ``NewLeaderElector``, and that the lease fits the Lease.

    The Lease stores ``leaseDurationSeconds`` as an int32 count of seconds: the elector writes
    ``ceil(lease_duration)``, which is then always greater than ``renew_deadline`` (what other candidates wait,
    from their observation, stays longer than we keep leading without a renewal).

    Raises:
        InvalidArgumentError: a value is not a positive finite number, ``ceil(lease_duration)`` exceeds
            :data:`MAX_LEASE_SECONDS`, ``lease_duration <= renew_deadline`` or
            ``renew_deadline <= 1.2 * retry_period``.
    """
    for label, value in (("lease_duration", lease_duration), ("renew_deadline", renew_deadline),
                         ("retry_period", retry_period)):
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
                or not math.isfinite(value)):
            raise InvalidArgumentError(f"{label} must be a positive finite number of seconds, got {value!r}")
    if retry_period < MIN_RETRY_PERIOD:
        raise InvalidArgumentError(f"retry_period ({retry_period} s) must be at least {MIN_RETRY_PERIOD} s")
    if math.ceil(lease_duration) > MAX_LEASE_SECONDS:
        raise InvalidArgumentError(f"lease_duration ({lease_duration} s) does not fit the Lease's int32 "
                                   f"leaseDurationSeconds (at most {MAX_LEASE_SECONDS} s)")
    if lease_duration <= renew_deadline:
        raise InvalidArgumentError(f"lease_duration ({lease_duration} s) must be greater than renew_deadline "
                                   f"({renew_deadline} s): a leader must stop before another can take over")
    if renew_deadline <= 1.2 * retry_period:
        raise InvalidArgumentError(f"renew_deadline ({renew_deadline} s) must be greater than 1.2 * retry_period "
                                   f"({retry_period} s), so that a renewal can be retried before the deadline")


def validate_options(identity: object, release_on_cancel: object, clock: object,
                     callbacks: dict[str, object]) -> str:
    """Check an elector's other options; return the identity (None: :func:`default_identity`).

    Raises:
        InvalidArgumentError: ``identity`` is not a non-blank string, or holds a control character or ``/``;
            ``release_on_cancel`` is not a bool; ``clock`` or a callback is neither callable nor None.
    """
    identity = default_identity() if identity is None else identity
    if not _is_identity(identity):
        raise InvalidArgumentError(f"identity must be a non-blank string without control characters or '/', "
                                   f"got {identity!r}")
    if not isinstance(release_on_cancel, bool):
        raise InvalidArgumentError(f"release_on_cancel must be a bool, got {release_on_cancel!r}")
    for label, value in (("clock", clock), *callbacks.items()):
        if value is not None and not callable(value):
            raise InvalidArgumentError(f"{label} must be callable or None, got {value!r}")
    return identity


def _is_identity(identity: object) -> TypeGuard[str]:
    """Whether ``identity`` can name a candidate in a Lease: a non-blank string without ``/`` or control characters."""
    if not isinstance(identity, str) or not identity.strip() or "/" in identity:
        return False
    return not any(ord(char) < 32 or ord(char) == 127 for char in identity)


def _call(name: str, callback: Callable[..., Any] | None, *args: Any) -> Exception | None:
    """Run ``callback``; log and return what it raised (a callback's failure never stops the election loop)."""
    if callback is None:
        return None
    try:
        callback(*args)
    except Exception as exc:
        _log.exception("leader election callback %s raised", name)
        return exc
    return None


class ElectionView:
    """What both electors report of their election (the shared :class:`Election` state machine), read-only."""

    _election: Election

    @property
    def is_leader(self) -> bool:
        """True while we lead: our last accepted write was sent less than ``renew_deadline`` seconds ago."""
        return self._election.is_leader()

    @property
    def leader(self) -> str:
        """The holder identity in the Lease as we last observed it ("" when nobody holds it)."""
        return self._election.leader

    @property
    def lease_transitions(self) -> int:
        """``spec.leaseTransitions`` of the Lease as we last observed it."""
        return self._election.lease_transitions

    @property
    def last_error(self) -> BaseException | None:
        """The last failed request's error (a ``TransportError``/``RestMapperError``), or None."""
        return self._election.last_error


class LeaderElector(ElectionView):
    """Lease leader election (``coordination.k8s.io/v1``), with client-go's ``leaderelection`` semantics.

    Candidates sharing one Lease take turns: each tries every ``retry_period`` to acquire it; the holder renews it
    every ``retry_period``; a candidate takes it over when the holder released it, or when the record did not
    change for ``lease_duration`` seconds *as this candidate observed it* (its own monotonic clock, from the moment
    it saw the record change; never the ``renewTime`` the holder wrote with its clock). Every write carries the
    Lease's ``resourceVersion``: a 409 is a lost race (another candidate wrote first), not an error.
    ``leaseTransitions`` counts changes of holder.

    **No two leaders.** A leader stops (``is_leader`` turns False, then ``on_stopped_leading`` runs) when
    ``renew_deadline`` seconds passed since it *sent* its last accepted write, or at once when the Lease names
    another live holder. Another candidate can acquire only by writing over that record, hence only after it
    observed it for ``lease_duration`` seconds, and it observed it after the server committed it, after we sent
    it. So the guarantee rests on ``renew_deadline < lease_duration`` (checked here) and on the candidates' clocks
    running at the same *rate* (no skew between them matters, no synchronisation is needed); as client-go's, it
    also needs the Lease to be written only by candidates. ``is_leader`` is exact at every instant; callbacks
    can be late by the request in flight (bounded by the time left to the deadline).

    **Release.** With ``release_on_cancel``, :meth:`stop` runs ``on_stopped_leading`` and, after it returned,
    releases the Lease (holder "", as client-go's ``ReleaseOnCancel``), so a standby can never lead while our
    callback still runs (client-go releases first). Without it, a standby takes over after ``lease_duration``.

    After losing the lease (deadline or takeover) the elector is a candidate again, so the process can lead again
    later; ``on_started_leading`` then runs again.

    **Callbacks.** ``on_started_leading`` runs on a thread of its own (as client-go runs ``OnStartedLeading`` in
    its own goroutine), so it may run the controller for as long as we lead: renewals go on meanwhile. It must
    watch :attr:`is_leader` (False at once on a stop or a loss; client-go's cancelled context) and return when it
    turns False. When leadership ends, the elector waits for it to return, at most ``renew_deadline`` seconds
    (then logs an error and goes on: past that bound the standby may lead while it still runs), then runs
    ``on_stopped_leading``, then (on a stop) releases the Lease. Handlers bound with ``ObjectCache.add_handler(...,
    while_leading=elector)`` are detached and waited for the same way, first. ``on_stopped_leading`` and
    ``on_new_leader`` run on the election thread and should return promptly (the lease is not renewed while they
    run). An exception in ``on_stopped_leading`` or ``on_new_leader`` is logged and does not stop the election.
    When ``on_started_leading`` raises (we cannot lead; client-go's process would crash and free the Lease), the
    exception is logged and kept in :attr:`last_error`, the leadership listeners and ``on_stopped_leading`` are
    told, the Lease is released, and the elector is a candidate again after ``lease_duration`` seconds (so a
    standby takes over first). A failed Lease request (acquire, renew, release) is kept in :attr:`last_error` and
    logged (logger ``restmapper.leader``) at WARNING the first time and then at most once per 60 s per reason (what
    failed, the error's type and HTTP status), with the count of repeats since the last line; the repeats in
    between are logged at DEBUG.

    Example::

        elector = LeaderElector(mapper, "my-controller", "kube-system",
                                on_started_leading=controller.start, on_stopped_leading=controller.stop)
        elector.start()
        ...
        elector.stop()      # on_stopped_leading, then the Lease is released

    Attributes:
        identity: this candidate's identity, written as ``spec.holderIdentity``.
        name: the Lease name.
        namespace: the Lease namespace.
    """

    def __init__(
        self,
        mapper: LazyRESTMapper,
        name: str,
        namespace: str,
        *,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        on_started_leading: Callable[[], object] | None = None,
        on_stopped_leading: Callable[[], object] | None = None,
        on_new_leader: Callable[[str], object] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Configure an elector (nothing is sent until :meth:`start`, :meth:`run` or :meth:`tick`).

        Args:
            mapper: resolves the Lease kind; its transport (a :class:`~restmapper.transport.WritingTransport`)
                sends the requests.
            name: the Lease name.
            namespace: the Lease namespace.
            identity: this candidate's identity; None: ``<hostname>_<random UUID>``.
            lease_duration: seconds a candidate waits, from when it observed the record change, before taking the
                lease over (client-go's ``LeaseDuration``, default 15).
            renew_deadline: seconds the leader keeps leading without an accepted renewal (``RenewDeadline``, 10).
            retry_period: seconds between attempts to acquire or renew (``RetryPeriod``, 2).
            release_on_cancel: release the Lease on :meth:`stop` (``ReleaseOnCancel``).
            on_started_leading: called with no argument when we start leading, on a thread of its own; it may run
                until :attr:`is_leader` turns False (see the class docstring).
            on_stopped_leading: called with no argument when we stop leading (lost or stopped).
            on_new_leader: called with the holder's identity when we observe a new holder (ourselves included).
            clock: monotonic clock in seconds (inject :class:`~restmapper.testing.ManualClock` with :meth:`tick`).

        Raises:
            InvalidArgumentError: a name or namespace that is no DNS-1123 subdomain / label; a bad identity or
                option (see :func:`validate_options`); timing that breaks client-go's rules or does not fit the
                Lease (see :func:`validate_timing`); a transport that cannot write.
            TypeError: ``mapper`` is not a LazyRESTMapper (a kubeconfig path, None).
        """
        check_mapper("LeaderElector", mapper)
        validate_timing(lease_duration, renew_deadline, retry_period)
        identity = validate_options(identity, release_on_cancel, clock, {
            "on_started_leading": on_started_leading, "on_stopped_leading": on_stopped_leading,
            "on_new_leader": on_new_leader})
        self.identity = identity
        self.name = name
        self.namespace = namespace
        self.release_on_cancel = release_on_cancel
        self.renew_deadline = renew_deadline
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._clock = clock if clock is not None else time.monotonic
        self._election = Election(LeaseLock(mapper, name, namespace), identity, lease_duration=lease_duration,
                                  renew_deadline=renew_deadline, retry_period=retry_period, clock=self._clock)
        self._turn_lock = threading.RLock()  # one turn (or the final stop) at a time
        # Guards the two below; never held during I/O, so registering a listener never waits for a request.
        self._listeners_lock = threading.RLock()
        self._listeners: list[tuple[Callable[[], object], Callable[[], object]]] = []
        self._announced = False  # on_started_leading ran, on_stopped_leading not yet
        self._term = 0  # counts starts of leading: a late failure of an earlier on_started_leading is ignored
        self._started_thread: threading.Thread | None = None  # runs on_started_leading
        self._started_returned = threading.Event()  # set when on_started_leading returned (or never ran)
        self._started_returned.set()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._in_turn: int | None = None  # the thread ident running a turn now (turn lock held), or None
        self._finished = False

    # --- driving ---------------------------------------------------------------------------------------------------

    def add_leadership_listener(self, on_started: Callable[[], object],
                                on_stopped: Callable[[], object]) -> Callable[[], None]:
        """Call ``on_started`` when we start leading (at once, here, if we lead now) and ``on_stopped`` when we
        stop, each before ``on_started_leading`` / ``on_stopped_leading`` (so before a release). What
        ``ObjectCache.add_handler(..., while_leading=elector)`` binds to. Never waits for a Lease request in
        flight (safe to call from an event loop).

        Returns:
            A function removing the listener (it is not called again once that returns).
        """
        pair = (on_started, on_stopped)
        with self._listeners_lock:
            self._listeners.append(pair)
            if self._announced:
                _call("leadership listener", on_started)

        def remove() -> None:
            with self._listeners_lock:
                if pair in self._listeners:
                    self._listeners.remove(pair)

        return remove

    def tick(self) -> float:
        """Run one turn of the election loop now, on the calling thread, and return seconds until the next is due.

        What the background loop of :meth:`start` does every ``retry_period``: try to acquire (a candidate) or
        renew (the leader) once, then run the callbacks this turn called for. For deterministic tests with an
        injected clock; do not mix with :meth:`start` or :meth:`run`.

        Raises:
            InvalidArgumentError: the elector was stopped.
        """
        with self._turn_lock:
            if self._finished:
                raise InvalidArgumentError(f"leader elector {self.identity!r} was stopped")
            turn = self._turn()
            if self._stopping.is_set():  # stop() was called during the turn (from a callback, or a signal handler)
                self._finish()
            return turn.delay

    def start(self) -> LeaderElector:
        """Run the election on a daemon thread and return self.

        Raises:
            InvalidArgumentError: already started, or stopped.
        """
        with self._turn_lock:
            self._claim()
            self._thread = threading.Thread(target=self._run_then_finish, name=f"restmapper-leader-{self.name}",
                                            daemon=True)
        self._thread.start()
        return self

    def run(self) -> None:
        """Run the election on the calling thread until :meth:`stop` is called (from another thread).

        Raises:
            InvalidArgumentError: already started, or stopped.
        """
        with self._turn_lock:
            self._claim()
            self._thread = threading.current_thread()
        self._run_then_finish()

    def stop(self, timeout: float | None = 10.0) -> bool:
        """Stop: ``is_leader`` turns False at once (whatever is returned); then, if we were leading,
        ``on_stopped_leading`` runs and returns, and then (with ``release_on_cancel``) the Lease is released, after
        the turn in flight (if any) ended, so that a renewal in flight can never undo the release. Once this
        returned True, ``on_started_leading`` never runs. Idempotent.

        Args:
            timeout: seconds to wait for the election thread to finish its turn in flight.

        Returns:
            True when the election has finished; False when a turn is still in flight (a request; or this is
            called from the election thread inside a turn: a callback, or a signal handler interrupting
            :meth:`run`): the elector then finishes (callbacks, release) as soon as that turn ends, and a turn
            that acquired the Lease meanwhile does not start leading.
        """
        self._election.close()
        self._stopping.set()
        if self._in_turn == threading.get_ident():
            return False
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                return False
        self._finish()
        return True

    def __enter__(self) -> LeaderElector:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @repr_when_unfinished
    def __repr__(self) -> str:
        return (f"LeaderElector({self.namespace}/{self.name}, identity={self.identity!r}, "
                f"leading={self.is_leader})")

    # --- internals -------------------------------------------------------------------------------------------------

    def _run_then_finish(self) -> None:
        try:
            self._loop()
        finally:  # also when stop() gave up waiting for a turn in flight: the stop still happens, here
            self._finish()

    def _claim(self) -> None:
        if self._finished and self._thread is None:
            raise InvalidArgumentError(f"leader elector {self.identity!r} was stopped before it was started: "
                                       "an elector runs once, create a new one")
        if self._thread is not None or self._finished:
            raise InvalidArgumentError(f"leader elector {self.identity!r} was already started")

    def _turn(self) -> Turn:
        """One turn and its callbacks (turn lock held)."""
        self._in_turn = threading.get_ident()
        try:
            turn = self._election.turn()
            self._callbacks(turn)
        finally:
            self._in_turn = None
        return turn

    def _loop(self) -> None:
        while not self._stopping.is_set():
            with self._turn_lock:
                if self._stopping.is_set():
                    break
                turn = self._turn()
            delay = turn.delay
            if not self._election.leading:
                delay *= 1 + JITTER * random.random()
            self._stopping.wait(delay)

    def _callbacks(self, turn: Turn) -> None:
        if turn.new_leader is not None:
            _call("on_new_leader", self._on_new_leader, turn.new_leader)
        if turn.started and not self._election.closed:  # never start after a stop() returned
            _log.info("leader election %s/%s: %s started leading", self.namespace, self.name, self.identity)
            self._announce(started=True)
        if turn.stopped and self._announced:
            _log.info("leader election %s/%s: %s stopped leading", self.namespace, self.name, self.identity)
            self._announce(started=False)

    def _announce(self, *, started: bool) -> None:
        """Run the listeners, then the user's callback, of a start or a stop (turn lock held).

        A start runs ``on_started_leading`` on a thread of its own; a stop waits (bounded) for it to return before
        ``on_stopped_leading``, after the listeners (which wait for bound handlers) ran.
        """
        with self._listeners_lock:
            self._announced = started
            for on_started, on_stopped in list(self._listeners):
                _call("leadership listener", on_started if started else on_stopped)
        if started:
            self._term += 1
            self._started_returned.clear()
            self._started_thread = threading.Thread(target=self._run_started, args=(self._term,), daemon=True,
                                                    name=f"restmapper-leader-{self.name}-started")
            self._started_thread.start()
            return
        if (threading.current_thread() is not self._started_thread
                and not self._started_returned.wait(self._election.renew_deadline)):
            _log.error("leader election %s/%s: %s stopped leading but on_started_leading has not returned after "
                       "%s s (it must return once is_leader is False); going on", self.namespace, self.name,
                       self.identity, self._election.renew_deadline)
        _call("on_stopped_leading", self._on_stopped)

    def _run_started(self, term: int) -> None:
        """The thread of ``on_started_leading``; when it raises, hand the lease over (see the class docstring)."""
        try:
            failure = _call("on_started_leading", self._on_started)
        finally:
            self._started_returned.set()
        if failure is None:
            return
        with self._turn_lock:
            if self._term == term and self._announced and not self._finished:
                self._announce(started=False)
                self._election.resign(failure)

    def _finish(self) -> None:
        with self._turn_lock:
            if self._finished:
                return
            self._finished = True
            self._election.close()
            if self._announced:
                self._announce(started=False)
            if self.release_on_cancel:  # after the callback returned (and the turn in flight): see release()
                self._election.release()
