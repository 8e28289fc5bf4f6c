"""The line-streaming answer shared by both transports (watches): one implementation of ``StreamResponse``."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator, Mapping

from restmapper.errors import ResponseTooLargeError, TransportError
from restmapper.transport._body import check_content_length, read_capped, split_lines
from restmapper.transport._deadline import Deadline, translated

__all__ = ["LineStream"]

_CHUNK = 64 * 1024
_STREAM_CHUNK = 8 * 1024


class LineStream:
    """A streaming answer read line by line, closable from another thread (implements ``StreamResponse``).

    The HTTP library's specifics come in as callables, so that the requests and urllib3 transports share the
    reading, size-capping, close-wakes-the-reader and error-mapping logic.
    """

    def __init__(
        self,
        *,
        status: int,
        headers: Mapping[str, str],
        path: str,
        limit: int,
        chunks: Callable[[int], Iterator[bytes]],
        errors: tuple[type[BaseException], ...],
        map_error: Callable[[BaseException], TransportError],
        sock: Callable[[], object],
        release: Callable[[], None],
        read_deadline: float | None = None,
    ) -> None:
        """Wrap a response.

        Args:
            status: HTTP status.
            headers: response headers.
            path: the request path (for messages).
            limit: size cap in bytes (per line for iter_lines, whole body for read).
            chunks: ``chunks(size)`` yields decoded body chunks.
            errors: exception types the library raises while reading.
            map_error: turns one of those into a scrubbed TransportError.
            sock: returns the underlying socket, if any (shut down by close() to wake a blocked reader).
            release: closes the response and returns nothing half-read to a pool.
            read_deadline: total seconds :meth:`read` may take (an error body trickled by the server), or None.
        """
        self.status = status
        self.headers = headers
        self._path = path
        self._limit = limit
        self._chunks = chunks
        # What iter_lines() treats as the stream failing (read() catches a narrower set).
        self._read_errors: tuple[type[BaseException], ...] = (*errors, OSError)
        self._line_errors: tuple[type[BaseException], ...] = (*errors, OSError, ValueError, AttributeError)
        self._map_error = map_error
        self._sock = sock
        self._release = release
        self._closed = threading.Event()
        self._read_deadline = read_deadline

    def __repr__(self) -> str:
        return f"<stream GET {self._path} status={self.status}>"

    def iter_lines(self) -> Iterator[bytes]:
        """Yield the non-empty lines of the body until the server ends it or :meth:`close` is called.

        Raises:
            TransportError: read timeout or dropped connection (not after close()).
            ResponseTooLargeError: one line exceeded the size cap.
        """
        try:
            yield from split_lines(self._chunks(_STREAM_CHUNK), self._limit, self._path)
        except ResponseTooLargeError:
            self.close()
            raise
        except self._line_errors as exc:
            # After close() from another thread the socket is shut down under the reader; that is the end of the
            # stream, not an error (urllib3 reports it in several shapes, AttributeError on a released fp among them).
            if self._closed.is_set():
                return
            raise self._map_error(exc) from None

    def read(self) -> bytes:
        """Return the rest of the body, bounded by the size cap.

        Raises:
            TransportError: the connection failed while reading.
            RequestTimeoutError: the body took longer than the read deadline.
            ResponseTooLargeError: the body exceeded the size cap.
        """
        try:
            with Deadline(self._read_deadline, self._path) as deadline, translated(deadline):
                deadline.attach(self._sock())
                check_content_length(self.headers, self._limit, self._path)
                try:
                    body = read_capped(self._chunks(_CHUNK), self._limit, self._path)
                except self._read_errors as exc:
                    raise self._map_error(exc) from None
                deadline.check()
                return body
        finally:
            self.close()

    def close(self) -> None:
        """Close the stream; idempotent and callable from another thread (it wakes a blocked reader)."""
        if self._closed.is_set():
            return
        self._closed.set()
        sock = self._sock()
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._release()

    def __enter__(self) -> LineStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
