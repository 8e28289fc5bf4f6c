"""A read through a stale drop-in ``Resource`` that the server answers without a 404, but for other objects, is
never handed back as if it were the resource's.

- A CRD recreated with the same plural and another kind (``widgets`` now serves ``Gizmo``): the answer's ``kind``
  (``Gizmo``, ``GizmoList``) is not the ``Resource``'s.
- A CRD recreated in another scope, read where the path still exists: a namespaced ``Resource`` listing all
  namespaces reaches the cluster-scoped kind's collection (objects without ``metadata.namespace``); a
  cluster-scoped one reaches the namespaced kind's all-namespaces list (objects with one). The first item tells.

The group is reported to the mapper (rate-limited) and the kind looked up again; a read is resent once only where
:func:`restmapper.mapper.may_resend` lets a read follow (the kind under a renamed plural, same version and scope),
else ``MappingChangedError`` (``answered`` 200) names the mapping the answer showed, and nothing is resent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib
from helpers.dynamic import api_client

from restmapper.dynamic import SelfHealingDynamicClient
from restmapper.errors import MappingChangedError
from restmapper.model import Scope
from restmapper.testing import FakeCluster, crd_manifest

GROUP = "example.com"


def _body(kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": metadata, "spec": {"size": 1}}


def _cluster(scope: str) -> FakeCluster:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",), scope=scope))
    cluster.apply_object(_body("Widget", "w", "team-a" if scope == "Namespaced" else None))
    return cluster


def _recreate(cluster: FakeCluster, change: str) -> None:
    cluster.delete_crd(f"widgets.{GROUP}")
    if change == "kind":
        cluster.add_crd(crd_manifest(GROUP, "Gizmo", versions=("v1",), plural="widgets"))
        cluster.apply_object(_body("Gizmo", "g", "team-a"))
    elif change == "to cluster":
        cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",), scope="Cluster"))
        cluster.apply_object(_body("Widget", "cluster-wide"))
    else:  # to namespaced
        cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",), scope="Namespaced"))
        cluster.apply_object(_body("Widget", "secret", "team-b"))
    cluster.clear_requests()


CASES = {  # change -> (initial scope, read keywords, the answered mapping's kind and scope)
    "kind": ("Namespaced", {"namespace": "team-a"}, ("Gizmo", Scope.NAMESPACED)),
    "kind, one object": ("Namespaced", {"namespace": "team-a", "name": "g"}, ("Gizmo", Scope.NAMESPACED)),
    "to cluster": ("Namespaced", {}, ("Widget", Scope.CLUSTER)),
    "to namespaced": ("Cluster", {}, ("Widget", Scope.NAMESPACED)),
}


def _check(cluster: FakeCluster, case: str, outcome: Any) -> None:
    scope, _, (kind, new_scope) = CASES[case]
    assert isinstance(outcome, MappingChangedError), repr(outcome)
    assert outcome.verb == "get" and outcome.answered == 200
    assert outcome.old.group_version_kind.kind == "Widget" and outcome.old.scope is Scope.of(scope == "Namespaced")
    assert outcome.new.group_version_kind.kind == kind and outcome.new.scope is new_scope
    reads = [r.path for r in cluster.requests if r.method == "GET" and "/widgets" in r.path]
    assert len(reads) == 1, f"the read was sent again: {reads}"
    # The mapper was told: discovery of the group was read again at once, not after the TTL.
    assert any(r.path == f"/apis/{GROUP}/v1" for r in cluster.requests)


@pytest.mark.parametrize("case", CASES)
def test_sync_drop_in_read_answered_for_another_mapping_raises_mapping_changed(case: str) -> None:
    scope, keywords, _ = CASES[case]
    cluster = _cluster(scope)
    with cluster.serve() as served:
        client = SelfHealingDynamicClient(api_client(served.url))
        widgets = client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
        _recreate(cluster, case.split(",")[0])
        with pytest.raises(MappingChangedError) as raised:
            client.get(widgets, **keywords)
        _check(cluster, case, raised.value)


@pytest.mark.parametrize("name", sorted(LIBRARIES))
@pytest.mark.parametrize("case", CASES)
def test_async_drop_in_read_answered_for_another_mapping_raises_mapping_changed(name: str, case: str) -> None:
    scope, keywords, _ = CASES[case]
    lib = Lib(name)
    cluster = _cluster(scope)
    with cluster.serve() as served:
        async def main() -> Any:
            async with lib.api_client(served.url) as api:
                client = await lib.healing_client(api)
                widgets = await client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
                _recreate(cluster, case.split(",")[0])
                try:
                    return await client.get(widgets, **keywords)
                except Exception as exc:  # judged below
                    return exc

        outcome = asyncio.run(main())
    _check(cluster, case, outcome)


def test_sync_drop_in_reads_that_agree_with_the_resource_pass_untouched() -> None:
    cluster = _cluster("Namespaced")
    cluster.apply_object(_body("Widget", "w2", "team-b"))
    with cluster.serve() as served:
        client = SelfHealingDynamicClient(api_client(served.url))
        widgets = client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
        cluster.clear_requests()
        assert [o.metadata.name for o in client.get(widgets).items] == ["w", "w2"]
        assert client.get(widgets, namespace="team-a", name="w").kind == "Widget"
        assert client.get(widgets, namespace="nobody").items == []
        assert [r.path for r in cluster.requests] == [f"/apis/{GROUP}/v1/widgets",
                                                      f"/apis/{GROUP}/v1/namespaces/team-a/widgets/w",
                                                      f"/apis/{GROUP}/v1/namespaces/nobody/widgets"]


def test_sync_drop_in_read_follows_the_kind_to_its_new_plural_when_another_kind_took_the_old_one() -> None:
    cluster = _cluster("Namespaced")
    with cluster.serve() as served:
        client = SelfHealingDynamicClient(api_client(served.url))
        widgets = client.resources.get(api_version=f"{GROUP}/v1", kind="Widget")
        cluster.delete_crd(f"widgets.{GROUP}")
        cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1",), plural="widgetz"))
        cluster.add_crd(crd_manifest(GROUP, "Gizmo", versions=("v1",), plural="widgets"))
        cluster.apply_object(_body("Widget", "w", "team-a"))
        cluster.apply_object(_body("Gizmo", "g", "team-a"))
        cluster.clear_requests()
        listed = client.get(widgets, namespace="team-a")
        assert [(o.kind, o.metadata.name) for o in listed.items] == [("Widget", "w")]
        reads = [r.path for r in cluster.requests if r.method == "GET" and "/widget" in r.path]
        assert reads == [f"/apis/{GROUP}/v1/namespaces/team-a/widgets", f"/apis/{GROUP}/v1/namespaces/team-a/widgetz"]
