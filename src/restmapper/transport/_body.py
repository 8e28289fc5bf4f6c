"""Bounded body reading shared by the transports: the size cap is enforced while bytes arrive."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from restmapper.errors import ResponseTooLargeError
from restmapper.transport.base import header


def check_content_length(headers: Mapping[str, str], limit: int, path: str) -> None:
    """Raise ResponseTooLargeError when a declared ``Content-Length`` already exceeds ``limit`` bytes."""
    declared = header(headers, "Content-Length")
    if declared is None:
        return
    try:
        size = int(declared.strip())
    except ValueError:
        return
    if size > limit:
        raise ResponseTooLargeError(path, limit)


def read_capped(chunks: Iterable[bytes], limit: int, path: str) -> bytes:
    """Join ``chunks`` into one body, raising as soon as more than ``limit`` bytes have arrived.

    Raises:
        ResponseTooLargeError: the body is larger than ``limit`` bytes (the rest is never read).
    """
    parts: list[bytes] = []
    total = 0
    for chunk in chunks:
        if not chunk:
            continue
        total += len(chunk)
        if total > limit:
            # The error's traceback keeps this frame: drop what was read, or a cached error keeps it alive.
            parts.clear()
            del chunk
            raise ResponseTooLargeError(path, limit)
        parts.append(chunk)
    return b"".join(parts)


def split_lines(chunks: Iterable[bytes], limit: int, path: str) -> Iterator[bytes]:
    """Yield the non-empty lines of a chunked body (without their ``\\n`` or ``\\r\\n``), each bounded by ``limit``.

    A watch stream sends one JSON event per line; chunk and line boundaries need not coincide, so a partial
    line is buffered until its newline (or the end of the stream) arrives.

    Raises:
        ResponseTooLargeError: one line grew past ``limit`` bytes without a newline.
    """
    # Only the new chunk is searched for newlines and the partial line grows in place: linear in the body size
    # (re-scanning a growing buffer made a 16 MiB line cost seconds of CPU).
    pending = bytearray()
    for chunk in chunks:
        if not chunk:
            continue
        start = 0
        while (cut := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:cut]
            if len(pending) > limit:
                pending.clear()
                raise ResponseTooLargeError(path, limit)
            line = bytes(pending).rstrip(b"\r")
            pending.clear()
            if line:
                yield line
            start = cut + 1
        pending += chunk[start:]
        if len(pending) > limit:
            pending.clear()
            raise ResponseTooLargeError(path, limit)
    tail = bytes(pending).rstrip(b"\r")
    if tail:
        yield tail
