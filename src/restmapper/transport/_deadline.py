"""A total deadline for one request: a slow or trickling server cannot hold a caller past it.

Sockets only have per-read timeouts: a server sending one byte per second never trips them. A :class:`Deadline`
is armed on one shared watchdog thread; when it fires it shuts the request's socket down, which wakes the reader
blocked in ``recv``; the transport then reports :class:`~restmapper.errors.RequestTimeoutError` instead of whatever
the read raised.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
from collections.abc import Iterator

from restmapper.errors import RequestTimeoutError, TransportError

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "Cancellation", "Deadline", "attached", "check_request_timeout",
           "end_idle_deadline_thread"]

DEFAULT_REQUEST_TIMEOUT = 32.0
"""Seconds one request may take from sending to the last body byte: client-go's discovery client timeout."""

_current = threading.local()


class _Watchdog:
    """One daemon thread firing every armed deadline in time order (a thread per request would cost ~0.1 ms each).

    Cancelled deadlines stay in the heap until they reach its top (lazy deletion); their number is bounded by the
    requests started within one deadline period. The thread runs from the first armed deadline until
    :meth:`release` finds none pending (the next one starts a new thread).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()  # guards _heap and _thread
        self._heap: list[tuple[float, int, Deadline]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, when: float, deadline: Deadline) -> None:
        with self._cond:
            heapq.heappush(self._heap, (when, next(self._seq), deadline))
            if self._thread is None or not self._thread.is_alive():  # first use, or in a forked child
                self._thread = threading.Thread(target=self._run, name="restmapper-deadlines", daemon=True)
                self._thread.start()
            elif self._heap[0][2] is deadline:
                self._cond.notify()

    def release(self, timeout: float | None) -> bool:
        """End the thread when no deadline is pending (every request it guards has finished).

        Returns:
            True when no watchdog thread runs at return (none was running, or it ended within ``timeout``).
        """
        with self._cond:
            thread = self._thread
            if thread is None:
                return True
            if any(not entry[2].done for entry in self._heap):
                return False  # a request is in flight: the thread is still needed
            self._heap.clear()
            self._thread = None  # the thread sees it is no longer the watchdog's and returns
            self._cond.notify_all()
        if thread is not threading.current_thread() and thread.ident is not None:
            thread.join(timeout)
        return not thread.is_alive()

    def _run(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                while True:
                    if self._thread is not me:
                        return
                    while self._heap and self._heap[0][2].done:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    delay = self._heap[0][0] - time.monotonic()
                    if delay <= 0:
                        due = heapq.heappop(self._heap)[2]
                        break
                    self._cond.wait(delay)
            due._expire()


_WATCHDOG = _Watchdog()


def end_idle_deadline_thread(timeout: float | None = 10.0) -> bool:
    """End the ``restmapper-deadlines`` thread (the request-deadline watchdog every transport in the process shares)
    when no request is in flight; the next request starts it again. For owners of threads, such as
    ``ObjectCache.stop``, so that nothing they started outlives them.

    Args:
        timeout: seconds to wait for the thread to end, or None without bound.

    Returns:
        True when the thread is not running at return; False while a request (of any transport) is in flight.
    """
    return _WATCHDOG.release(timeout)


def check_request_timeout(value: float | None) -> float | None:
    """Validate a ``request_timeout`` option (positive seconds, or None for no total deadline)."""
    from restmapper.errors import InvalidArgumentError

    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise InvalidArgumentError(f"request_timeout must be a positive number of seconds or None, got {value!r}")
    return float(value)


class Deadline:
    """The total deadline of one request attempt; a context manager that arms and disarms it.

    Args:
        seconds: the deadline, or None for none (then the object does nothing).
        path: the request path, for the error.
    """

    def __init__(self, seconds: float | None, path: str, method: str = "GET") -> None:
        self.seconds = seconds
        self.path = path
        self.method = method
        self._cancellation: Cancellation | None = None  # the one in force when the request started (__enter__)
        self._lock = threading.Lock()  # guards _sock and _expired
        self._sock: socket.socket | None = None
        self._expired = False
        self.done = False  # read by the watchdog without the lock: a stale False only costs a no-op _expire

    def __enter__(self) -> Deadline:
        if self.seconds is not None:
            _WATCHDOG.arm(time.monotonic() + self.seconds, self)
        self._previous = getattr(_current, "deadline", None)
        _current.deadline = self
        self._cancellation = getattr(_current, "cancellation", None)
        if self._cancellation is not None:
            self._cancellation._add(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _current.deadline = self._previous
        if self._cancellation is not None:
            self._cancellation._discard(self)
        with self._lock:
            self.done = True
            self._sock = None

    @property
    def expired(self) -> bool:
        """True once the deadline has passed (the socket, if known, was shut down)."""
        with self._lock:
            return self._expired

    def attach(self, sock: object) -> None:
        """Tell the deadline which socket the request reads from (shut at once when already expired)."""
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sock = sock
            late = self._expired
        if late:
            _shutdown(sock)

    def error(self) -> TransportError:
        """The error to raise once :attr:`expired`: a timeout, or a (not transient) cancellation."""
        if self._cancellation is not None and self._cancellation.cancelled:
            return TransportError(f"{self.method} {self.path}: cancelled", path=self.path, transient=False)
        return RequestTimeoutError(self.path, self.seconds if self.seconds is not None else 0.0, self.method)

    def check(self) -> None:
        """Raise :meth:`error` when the deadline has passed."""
        if self.expired:
            raise self.error()

    def _expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self._expired = True
            sock = self._sock
        if sock is not None:
            _shutdown(sock)


class Cancellation:
    """Cuts, from any thread, the requests a thread makes inside ``with cancellation:`` (and every later one).

    A request waiting for its headers, or reading a trickled body, is woken at once by shutting its socket down
    (as its deadline would); it raises a :class:`~restmapper.errors.TransportError` that is not transient (no
    retry). Transports that do not use :class:`Deadline` are not cut. Used by the reflector so that ``stop()``
    does not wait on a slow server.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _live and cancelled
        self._live: set[Deadline] = set()
        self.cancelled = False
        self._previous: list[Cancellation | None] = []

    def __enter__(self) -> Cancellation:
        self._previous.append(getattr(_current, "cancellation", None))
        _current.cancellation = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        _current.cancellation = self._previous.pop()

    def cancel(self) -> None:
        """Cut every request in flight under this cancellation, and every later one (idempotent)."""
        with self._lock:
            self.cancelled = True
            live = list(self._live)
        for deadline in live:
            deadline._expire()

    def _add(self, deadline: Deadline) -> None:
        with self._lock:
            self._live.add(deadline)
            cancelled = self.cancelled
        if cancelled:
            deadline._expire()

    def _discard(self, deadline: Deadline) -> None:
        with self._lock:
            self._live.discard(deadline)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def attached(sock: object) -> None:
    """Attach ``sock`` to the deadline of the request running on this thread, if any (used by connections)."""
    deadline: Deadline | None = getattr(_current, "deadline", None)
    if deadline is not None:
        deadline.attach(sock)


@contextlib.contextmanager
def translated(deadline: Deadline) -> Iterator[None]:
    """Turn any error raised after the deadline fired into the deadline's error (the read was cut by it)."""
    try:
        yield
    except Exception:
        if deadline.expired:
            raise deadline.error() from None
        raise
