"""A kind can move so that its writes never answer "404 for the type", and the client must still notice:

- cluster-scoped -> namespaced (a CRD recreated namespaced): an object carrying ``metadata.namespace`` (or a
  ``namespace=`` argument) for a kind the mapper holds as cluster-scoped resolves the kind again (rate-limited,
  as after a 404 for the type) before anything is sent: MappingChangedError naming both mappings when it moved,
  else a typed InvalidArgumentError (a namespace names no place for a cluster-scoped object). A 405 on a write
  (the cluster-wide path of a kind now namespaced) resolves it again the same way, and nothing is resent;
- ``update_status`` on a version no longer served answers 404 on the ``/status`` subresource, which cannot tell a
  missing type from a missing subresource: the kind is resolved again, MappingChangedError when it moved; an
  object's own 404 (its Status names it) stays ObjectNotFoundError.
"""

from __future__ import annotations

import asyncio
import copy
import json

import pytest
from helpers.client import cache as cache  # fixtures, used by name (the alias marks them used)
from helpers.client import served as served
from helpers.store import cm, widget_obj
from helpers.watch import WIDGET, widget

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import APIStatusError, InvalidArgumentError, MappingChangedError, ObjectNotFoundError
from restmapper.model import GroupVersionKind, Scope
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster

WIDGETS = "widgets.example.com"
WIDGET_V1 = GroupVersionKind("example.com", "v1", "Widget")
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
          "status": {"replicas": 1}}
CLUSTER_PATH = "/apis/example.com/v1/widgets"
METHOD_NOT_ALLOWED = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 405,
                                 "reason": "MethodNotAllowed", "message": "the server does not allow this method",
                                 "details": {}})


def _writes(cluster: FakeCluster) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in cluster.requests if r.method != "GET"]


def _cluster_scoped_then_namespaced(cluster: FakeCluster, client: Client) -> None:
    """The mapper learns Widget cluster-scoped; the CRD is then recreated namespaced."""
    cluster.delete_crd(WIDGETS)
    cluster.add_crd(widget(scope="Cluster"))
    client.create(widget_obj("w1", namespace=None))
    cluster.delete_crd(WIDGETS)
    cluster.add_crd(widget(scope="Namespaced"))
    cluster.clear_requests()


MOVED_WRITES = {
    "create with metadata.namespace": lambda c: c.create(widget_obj("w2", namespace="default")),
    "patch with namespace=": lambda c: c.patch(WIDGET_V1, "w2", {"spec": {"size": 1}}, "default"),
    "delete with namespace=": lambda c: c.delete(WIDGET_V1, "w2", "default"),
}


@pytest.mark.parametrize("write", list(MOVED_WRITES))
def test_a_namespaced_write_of_a_kind_held_cluster_scoped_is_refused_when_it_moved(
        served: ServedCluster, cache: ObjectCache, write: str) -> None:
    cluster = served.cluster
    client = Client(cache)
    _cluster_scoped_then_namespaced(cluster, client)
    with pytest.raises(MappingChangedError) as caught:
        MOVED_WRITES[write](client)
    assert (caught.value.old.scope, caught.value.new.scope) == (Scope.CLUSTER, Scope.NAMESPACED)
    assert caught.value.answered is None and "was not sent" in str(caught.value)
    assert _writes(cluster) == []
    # The mapper now holds the new scope: a write built again goes to the namespaced path.
    client.create(widget_obj("w3", namespace="default"))
    assert _writes(cluster) == [("POST", "/apis/example.com/v1/namespaces/default/widgets")]


def test_a_namespaced_async_write_of_a_kind_held_cluster_scoped_is_refused_when_it_moved(
        served: ServedCluster, cache: ObjectCache) -> None:
    cluster = served.cluster
    _cluster_scoped_then_namespaced(cluster, Client(cache))

    async def scenario() -> None:
        with pytest.raises(MappingChangedError):
            await AsyncClient(AsyncObjectCache(cache)).create(widget_obj("w2", namespace="default"))

    asyncio.run(scenario())
    assert _writes(cluster) == []


def test_a_namespace_for_a_kind_still_cluster_scoped_is_a_typed_refusal(served: ServedCluster,
                                                                         cache: ObjectCache) -> None:
    cluster = served.cluster
    cluster.delete_crd(WIDGETS)
    cluster.add_crd(widget(scope="Cluster"))
    client = Client(cache)
    cluster.clear_requests()
    with pytest.raises(InvalidArgumentError, match="cluster-scoped"):
        client.create(widget_obj("w1", namespace="default"))
    with pytest.raises(InvalidArgumentError, match="cluster-scoped"):
        client.create(cm("ns-as-argument") | {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"},
                      namespace="default")
    assert _writes(cluster) == []


def test_a_405_resolves_the_kind_again_and_is_never_resent(served: ServedCluster, cache: ObjectCache) -> None:
    cluster = served.cluster
    client = Client(cache)
    _cluster_scoped_then_namespaced(cluster, client)
    cluster.inject(CLUSTER_PATH, status=405, body=METHOD_NOT_ALLOWED, content_type="application/json", times=1)
    with pytest.raises(MappingChangedError) as caught:  # a manifest without metadata.namespace: only the 405 tells
        client.create(widget_obj("w2", namespace=None))
    assert (caught.value.old.scope, caught.value.new.scope) == (Scope.CLUSTER, Scope.NAMESPACED)
    assert getattr(caught.value.__cause__, "status", None) == 405 == caught.value.answered
    assert _writes(cluster) == [("POST", CLUSTER_PATH)]


def _with_status(cluster: FakeCluster) -> None:
    """Give the Widget CRD a status subresource at every version (update_status is refused before sending
    otherwise)."""
    versions = copy.deepcopy(WIDGET["spec"]["versions"])
    for version in versions:
        version["subresources"] = {"status": {}}
    cluster.update_crd(widget(versions=versions))


def test_update_status_on_a_version_no_longer_served_is_a_mapping_change(served: ServedCluster,
                                                                          cache: ObjectCache) -> None:
    cluster = served.cluster
    _with_status(cluster)
    client = Client(cache)
    created = client.create(widget_obj("w1"))
    cluster.set_served(WIDGETS, False, version="v1")
    cluster.clear_requests()
    with pytest.raises(MappingChangedError) as caught:
        client.update_status({**created, "status": {"ok": True}})
    assert (caught.value.old.resource.version, caught.value.new.resource.version) == ("v1", "v1beta1")
    assert [m for m, _ in _writes(cluster)] == ["PUT"]  # not resent


def test_an_async_update_status_on_a_version_no_longer_served_is_a_mapping_change(served: ServedCluster,
                                                                                   cache: ObjectCache) -> None:
    cluster = served.cluster
    _with_status(cluster)

    async def scenario() -> None:
        client = AsyncClient(AsyncObjectCache(cache))
        created = await client.create(widget_obj("w1"))
        cluster.set_served(WIDGETS, False, version="v1")
        cluster.clear_requests()
        with pytest.raises(MappingChangedError):
            await client.update_status({**created, "status": {"ok": True}})
        assert [m for m, _ in _writes(cluster)] == ["PUT"]

    asyncio.run(scenario())


def test_update_status_of_a_missing_object_stays_object_not_found(served: ServedCluster, cache: ObjectCache) -> None:
    client = Client(cache)
    cache.mapper.resolve("deployments.apps")  # the group is known
    evictions = cache.mapper.stats.evictions
    served.cluster.clear_requests()
    with pytest.raises(ObjectNotFoundError):
        client.update_status(DEPLOY)
    assert [r.path for r in served.cluster.requests] == [f"{DEPLOYMENTS}/web/status"]  # no discovery, no resend
    assert cache.mapper.stats.evictions == evictions


def test_a_subresource_404_on_a_kind_that_did_not_move_is_the_servers_error(served: ServedCluster,
                                                                             cache: ObjectCache) -> None:
    """The Widget CRD has a status subresource in discovery but the server answers 404 on /status (discovery
    changed after it was read): the kind is where it was, so the server's error stands (never resent)."""
    cluster = served.cluster
    _with_status(cluster)
    client = Client(cache)
    created = client.create(widget_obj("w1"))
    cluster.update_crd(widget())  # the status subresource goes; the client's discovery still lists it
    cluster.clear_requests()
    with pytest.raises(APIStatusError) as caught:
        client.update_status({**created, "status": {"ok": True}})
    assert caught.value.status == 404 and not isinstance(caught.value, MappingChangedError)
    assert [m for m, _ in _writes(cluster)] == ["PUT"]
