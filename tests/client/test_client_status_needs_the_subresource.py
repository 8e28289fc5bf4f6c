"""``Client.update_status`` on a kind whose discovery lists no ``status`` subresource (a ConfigMap, a CRD version
without ``subresources.status``) is refused before anything is sent: the server would answer a bare 404 that names
nothing. A kind that has one is sent as before."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator

import pytest
from helpers.store import cm, object_cache, widget_obj
from helpers.watch import WIDGET

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.add_crd(WIDGET)  # no status subresource
    gadget = copy.deepcopy(WIDGET)
    gadget["metadata"]["name"] = "gadgets.example.com"
    gadget["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"}
    for version in gadget["spec"]["versions"]:
        version["subresources"] = {"status": {}}
    cluster.add_crd(gadget)
    with cluster.serve() as s:
        yield s


def _status_requests(served: ServedCluster) -> int:
    return sum(1 for r in served.cluster.requests if r.path.endswith("/status"))


def test_a_configmap_has_no_status_to_update(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        client = Client(cache)
        written = client.create(cm("a"))
        with pytest.raises(InvalidArgumentError, match=r"configmaps.*no status subresource"):
            client.update_status(written)
        assert _status_requests(served) == 0


def test_a_crd_version_without_the_status_subresource_is_refused(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        client = Client(cache)
        written = client.create(widget_obj("w"))
        with pytest.raises(InvalidArgumentError, match=r"widgets\.example\.com/v1 has no status subresource"):
            client.update_status(written)
        assert _status_requests(served) == 0


def test_a_kind_with_a_status_subresource_is_sent(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        client = Client(cache)
        written = client.create({"apiVersion": "example.com/v1", "kind": "Gadget",
                                 "metadata": {"name": "g", "namespace": "default"}, "spec": {"size": 1}})
        updated = client.update_status({**written, "status": {"ready": True}})
        assert updated["status"] == {"ready": True} and _status_requests(served) == 1


def test_the_async_client_refuses_it_too(served: ServedCluster) -> None:
    async def scenario() -> None:
        with object_cache(served) as cache:
            client = AsyncClient(AsyncObjectCache(cache))
            written = await client.create(cm("b"))
            with pytest.raises(InvalidArgumentError, match="no status subresource"):
                await client.update_status(written)

    asyncio.run(scenario())
    assert _status_requests(served) == 0
