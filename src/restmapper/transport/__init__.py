"""Transports: the only layer that does network I/O."""

from __future__ import annotations

from restmapper.transport.base import DEFAULT_MAX_BODY_BYTES, Response, StreamResponse, Transport, header

__all__ = ["DEFAULT_MAX_BODY_BYTES", "Response", "StreamResponse", "Transport", "header"]
