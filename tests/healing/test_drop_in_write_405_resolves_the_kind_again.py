"""A write through a drop-in ``Resource`` that answers 405 Method Not Allowed resolves the kind again, as
:class:`restmapper.client.Client` does (one rule, :func:`restmapper.mapper.has_moved`).

A CRD recreated namespaced leaves a stale cluster-scoped ``Resource``: a create POSTs to the cluster-wide path,
which a namespaced kind does not accept (405), never a 404 for the type. The group is reported to the mapper
(rate-limited) and the kind looked up again: when it moved (another scope, version or plural)
``MappingChangedError`` names both mappings (``answered`` 405) and nothing is resent; the cache holds the new
mapping at once (no wait for the TTL). When it did not move, the server's 405 stands.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib
from helpers.dynamic import api_client
from kubernetes.dynamic.exceptions import MethodNotAllowedError

from restmapper.dynamic import SelfHealingDynamicClient
from restmapper.errors import MappingChangedError
from restmapper.model import Scope
from restmapper.testing import FakeCluster, crd_manifest

GROUP = "example.com"
METHOD_NOT_ALLOWED = ('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server does not allow '
                      'this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}')


def _body(name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": metadata, "spec": {"size": 1}}


def _cluster() -> FakeCluster:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",), scope="Cluster"))
    return cluster


def _recreate_namespaced(cluster: FakeCluster) -> None:
    cluster.delete_crd(f"widgets.{GROUP}")
    cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",), scope="Namespaced"))
    cluster.clear_requests()


def _inject_405(cluster: FakeCluster) -> None:
    cluster.inject(f"/apis/{GROUP}/v1/widgets", status=405, body=METHOD_NOT_ALLOWED,
                   content_type="application/json", times=1)
    cluster.clear_requests()


def _posts(cluster: FakeCluster) -> list[str]:
    return [r.path for r in cluster.requests if r.method == "POST"]


def _check_refused(cluster: FakeCluster, outcome: Any) -> None:
    assert isinstance(outcome, MappingChangedError), repr(outcome)
    assert outcome.verb == "create" and outcome.answered == 405
    assert outcome.old.scope is Scope.CLUSTER and outcome.new.scope is Scope.NAMESPACED
    assert getattr(outcome.__cause__, "status", None) == 405
    assert _posts(cluster) == [f"/apis/{GROUP}/v1/widgets"], "the create was sent again"


def test_sync_drop_in_create_to_a_kind_recreated_namespaced_raises_mapping_changed() -> None:
    cluster = _cluster()
    with cluster.serve() as served:
        client = SelfHealingDynamicClient(api_client(served.url))
        widgets = client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
        _recreate_namespaced(cluster)
        with pytest.raises(MappingChangedError) as raised:
            client.create(widgets, body=_body("new"))
        _check_refused(cluster, raised.value)
        assert client.resources.get(api_version=f"{GROUP}/v1", kind="Widget").namespaced


def test_sync_drop_in_405_stands_when_the_kind_did_not_move() -> None:
    cluster = _cluster()
    with cluster.serve() as served:
        client = SelfHealingDynamicClient(api_client(served.url))
        widgets = client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
        _inject_405(cluster)
        with pytest.raises(MethodNotAllowedError):
            client.create(widgets, body=_body("new"))
        assert _posts(cluster) == [f"/apis/{GROUP}/v1/widgets"]


@pytest.mark.parametrize("name", sorted(LIBRARIES))
@pytest.mark.parametrize("moved", [True, False], ids=["recreated namespaced", "unchanged"])
def test_async_drop_in_create_answered_405_follows_the_same_rule(name: str, moved: bool) -> None:
    lib = Lib(name)
    cluster = _cluster()
    with cluster.serve() as served:
        async def main() -> Any:
            async with lib.api_client(served.url) as api:
                client = await lib.healing_client(api)
                widgets = await client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
                (_recreate_namespaced if moved else _inject_405)(cluster)
                try:
                    return await client.create(widgets, body=_body("new"))
                except Exception as exc:  # judged below
                    return exc

        outcome = asyncio.run(main())
    if moved:
        _check_refused(cluster, outcome)
        return
    # The server's 405 stands (kubernetes_asyncio returns it as a Status instead of raising it).
    assert getattr(outcome, "status", None) == 405 or getattr(outcome, "code", None) == 405, repr(outcome)
    assert _posts(cluster) == [f"/apis/{GROUP}/v1/widgets"]
