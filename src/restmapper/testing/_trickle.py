"""A reply body sent a few bytes at a time (a fault: :meth:`FakeCluster.inject` with ``trickle``).

A server or proxy that trickles keeps a client's read alive (every read gets a byte before its timeout) while the
response takes as long as the server likes: only a total deadline, or closing the connection, ends it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from restmapper.testing._router import StreamBody

__all__ = ["Trickle"]

_PIECE_BYTES = 8
_POLL_SECONDS = 0.05


class Trickle:
    """A :class:`~restmapper.testing._router.StreamBody` yielding ``body`` (bytes, or a watch stream's chunks) in
    pieces of 8 bytes, ``interval`` seconds apart, until done or the client goes away."""

    def __init__(self, body: bytes | StreamBody, interval: float) -> None:
        self._body = body
        self._interval = interval
        self._wait = threading.Event()  # never set: an interruptible wait

    def _chunks(self, should_stop: Callable[[], bool]) -> Iterator[bytes]:
        if isinstance(self._body, bytes):
            yield self._body
        else:
            yield from self._body.stream(should_stop)

    def stream(self, should_stop: Callable[[], bool]) -> Iterator[bytes]:
        """Yield the body piece by piece (see the class docstring)."""
        for chunk in self._chunks(should_stop):
            for start in range(0, len(chunk), _PIECE_BYTES):
                waited = 0.0
                while waited < self._interval:
                    if should_stop():
                        return
                    step = min(_POLL_SECONDS, self._interval - waited)
                    self._wait.wait(step)
                    waited += step
                yield chunk[start:start + _PIECE_BYTES]

    def collect(self) -> bytes:
        """The whole body at once (the ``responses`` mock cannot trickle)."""
        return self._body if isinstance(self._body, bytes) else self._body.collect()
