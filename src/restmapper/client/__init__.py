"""Writes the object cache reads back: :class:`Client` and :class:`AsyncClient` (controller-runtime's client).

::

    from restmapper.client import Client
    from restmapper.store import ObjectCache

    cache = ObjectCache.from_kubeconfig()
    client = Client(cache)
    created = client.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "settings", "namespace": "default"}, "data": {"a": "1"}})
    cache.get("configmaps", "settings", "default")      # never older than `created`

Each write resolves its kind through the cache's mapper, heals a stale mapping (a 404 for the type) only where
the request keeps its meaning, raises typed errors carrying the server's Status (:mod:`restmapper.errors`), and
returns once the cache holds what it wrote (or no longer holds what it deleted).
"""

from __future__ import annotations

from restmapper.client._client import AsyncClient, Client
from restmapper.client._writes import KindArg

__all__ = ["AsyncClient", "Client", "KindArg"]
