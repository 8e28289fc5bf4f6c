"""An in-process transport to a :class:`~restmapper.testing.FakeCluster`, for ``--embedded``.

No socket, no thread, no extra dependency: each GET is answered by ``FakeCluster.handle``, the same entry
point the loopback server and the ``responses`` front end use, so the answers are byte-for-byte what kubectl
sees from ``restmapper serve``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from restmapper.errors import TransportError
from restmapper.transport import Response, StreamResponse

if TYPE_CHECKING:
    from restmapper.testing import FakeCluster

__all__ = ["EmbeddedTransport"]


class EmbeddedTransport:
    """A :class:`~restmapper.transport.Transport` answering from a fake cluster in the same process.

    Attributes:
        base_url: the cluster's ``base_url`` (never contacted).
        identity: a constant: the embedded cluster has no users.
    """

    identity = "embedded"

    def __init__(self, cluster: FakeCluster) -> None:
        """Wrap ``cluster``."""
        self.cluster = cluster
        self.base_url = cluster.base_url

    def get(self, path: str, headers: Mapping[str, str] | None = None, *,
            params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """Return the cluster's answer to ``GET path`` (``timeout`` is ignored: nothing waits on a network).

        Raises:
            TransportError: the cluster simulated a connection reset.
        """
        try:
            status, reply_headers, body = self.cluster.handle("GET", path, dict(params or {}), dict(headers or {}))
        except ConnectionResetError as exc:
            raise TransportError(f"GET {path}: connection reset", path=path) from exc
        return Response(status, reply_headers, body, path)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> StreamResponse:
        """Not supported: the command line never watches.

        Raises:
            TransportError: always.
        """
        raise TransportError(f"GET {path}: the embedded transport does not stream", path=path, transient=False)

    def close(self) -> None:
        """Nothing to release."""
