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

from restmapper.errors import RequestTimeoutError

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "Deadline", "attached", "check_request_timeout"]

DEFAULT_REQUEST_TIMEOUT = 32.0
"""Seconds one request may take from sending to the last body byte: client-go's discovery client timeout."""

_current = threading.local()


class _Watchdog:
    """One daemon thread firing every armed deadline in time order (a thread per request would cost ~0.1 ms each).

    Cancelled deadlines stay in the heap until they reach its top (lazy deletion); their number is bounded by the
    requests started within one deadline period.
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

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
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

    def __init__(self, seconds: float | None, path: str) -> None:
        self.seconds = seconds
        self.path = path
        self._lock = threading.Lock()  # guards _sock and _expired
        self._sock: socket.socket | None = None
        self._expired = False
        self.done = False  # read by the watchdog without the lock: a stale False only costs a no-op _expire

    def __enter__(self) -> Deadline:
        if self.seconds is not None:
            _WATCHDOG.arm(time.monotonic() + self.seconds, self)
        self._previous = getattr(_current, "deadline", None)
        _current.deadline = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        _current.deadline = self._previous
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

    def error(self) -> RequestTimeoutError:
        """The error to raise once :attr:`expired`."""
        return RequestTimeoutError(self.path, self.seconds if self.seconds is not None else 0.0)

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
