"""The in-process transport behind ``--embedded`` (published as :class:`restmapper.testing.InProcessTransport`)."""

from __future__ import annotations

from restmapper.testing.transport import InProcessTransport

EmbeddedTransport = InProcessTransport
"""The name this transport had before it was published in the testing kit."""

__all__ = ["EmbeddedTransport"]
