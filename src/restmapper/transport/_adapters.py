"""``requests`` adapters for :class:`~restmapper.transport.requests_transport.RequestsTransport`.

Their connections tell the running request's deadline their socket before reading the answer, and
:class:`SNIAdapter` sends kubeconfig's ``tls-server-name`` as SNI.
"""

from __future__ import annotations

from typing import Any

import requests.adapters
import urllib3
import urllib3.connection
import urllib3.poolmanager

from restmapper.transport._deadline import attached

__all__ = ["DeadlineAdapter", "SNIAdapter"]


class _HTTPConnection(urllib3.connection.HTTPConnection):
    def getresponse(self) -> Any:
        attached(self.sock)  # from here on, the request's deadline can cut a server trickling its headers
        return super().getresponse()


class _HTTPSConnection(urllib3.connection.HTTPSConnection):
    def getresponse(self) -> Any:
        attached(self.sock)
        return super().getresponse()


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS: dict[str, type[urllib3.HTTPConnectionPool]] = {"http": _HTTPPool, "https": _HTTPSPool}


class DeadlineAdapter(requests.adapters.HTTPAdapter):
    """Connections that tell the running request's :class:`Deadline` their socket before reading the answer."""

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if manager.pool_classes_by_scheme is urllib3.poolmanager.pool_classes_by_scheme:  # not SOCKS
            manager.pool_classes_by_scheme = _POOLS
        return manager


class SNIAdapter(DeadlineAdapter):
    """Sends ``tls_server_name`` as SNI and checks the certificate against it (kubeconfig ``tls-server-name``)."""

    def __init__(self, server_hostname: str) -> None:
        self._server_hostname = server_hostname
        super().__init__()

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        pool_kwargs["server_hostname"] = self._server_hostname
        pool_kwargs["assert_hostname"] = self._server_hostname
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
