"""An in-process :class:`~restmapper.transport.Transport` to a :class:`~restmapper.testing.FakeCluster`.

In the spirit of httpx's ``MockTransport``: the whole "server" is a function call, so a test needs no socket, no
thread and no ``responses``. Each request is answered by ``FakeCluster.handle``, the entry point the loopback server
and the ``responses`` front end also use, so the answers are byte-for-byte what kubectl sees from
``restmapper serve``. The CLI's ``--embedded`` runs on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from restmapper.errors import TransportError
from restmapper.transport import Response, StreamResponse

if TYPE_CHECKING:
    from restmapper.testing.cluster import FakeCluster

__all__ = ["InProcessTransport"]


class InProcessTransport:
    """A transport answering from a fake cluster in the same process.

    Example::

        cluster = FakeCluster.embedded()
        mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))

    Attributes:
        cluster: the cluster answering.
        base_url: the cluster's ``base_url`` (never contacted).
        identity: a constant: the fake cluster has no users.
        streams: False: no watches (``ObjectCache`` needs them: serve the cluster, or use the pytest plugin's
            ``object_cache`` fixture).
    """

    identity = "in-process"
    streams = False
    """It cannot stream watches (see :meth:`stream`): the object cache refuses it up front and says what to use."""

    def __init__(self, cluster: FakeCluster) -> None:
        """Wrap ``cluster``."""
        self.cluster = cluster
        self.base_url = cluster.base_url

    def get(self, path: str, headers: Mapping[str, str] | None = None, *,
            params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """Return the cluster's answer to ``GET path`` (``timeout`` is ignored: nothing waits on a network).

        Raises:
            TransportError: the cluster simulated a connection reset (transient, as a real reset is).
        """
        return self.request("GET", path, headers, params=params, timeout=timeout)

    def request(self, method: str, path: str, headers: Mapping[str, str] | None = None, body: bytes = b"", *,
                params: Mapping[str, str] | None = None, timeout: float | None = None) -> Response:
        """Return the cluster's answer to ``method path`` with ``body`` (a write; ``timeout`` is ignored).

        Raises:
            TransportError: the cluster simulated a connection reset (transient, as a real reset is).
        """
        try:
            status, reply_headers, data = self.cluster.handle(method, path, dict(params or {}), dict(headers or {}),
                                                              body)
        except ConnectionResetError as exc:
            raise TransportError(f"{method} {path}: connection reset", path=path) from exc
        return Response(status, reply_headers, data, path)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> StreamResponse:
        """Not supported: serve the cluster (``FakeCluster.serve()``) to watch.

        Raises:
            TransportError: always.
        """
        raise TransportError(f"GET {path}: the in-process transport does not stream; use FakeCluster.serve()",
                             path=path, transient=False)

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return f"InProcessTransport(base_url={self.base_url!r})"
