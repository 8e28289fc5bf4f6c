"""Healing of the client's writes: a request is sent again after a 404 for its type only when it keeps its meaning.

- a 404 for the type on a mapping that is still right (a stale route, the upgrade race): the group is reported to
  the mapper, the kind resolved again, and the request sent once more to the same mapping;
- the kind moved to another version (a CRD stopped serving the one the body was written for) or another scope (a
  CRD recreated cluster-scoped): a typed error naming both mappings, and nothing is sent to the new one;
- a delete of a kind named without a version follows the kind to another version in the same scope (no body whose
  meaning depends on the version);
- a 404 for the object is the object's: ObjectNotFoundError, nothing evicted;
- a kind no longer served at all: the mapper's no-match, chained from the 404.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client import cache as cache  # fixtures, used by name (the alias marks them used)
from helpers.client import served as served
from helpers.store import cm, widget_obj
from helpers.watch import widget

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import MappingChangedError, ObjectNotFoundError, is_no_match
from restmapper.model import GroupVersionKind, Scope
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster

WIDGETS = "widgets.example.com"
V1BETA1 = "/apis/example.com/v1beta1/namespaces/default/widgets"
V1 = "/apis/example.com/v1/namespaces/default/widgets"
TYPE_NOT_FOUND = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                             "reason": "NotFound", "message": "the server could not find the requested resource",
                             "details": {}})


def _writes(cluster: FakeCluster, prefix: str) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in cluster.requests if r.method != "GET" and r.path.startswith(prefix)]


def test_a_type_404_on_a_mapping_still_served_is_sent_again_once(served: ServedCluster, cache: ObjectCache) -> None:
    cluster = served.cluster
    client = Client(cache)
    path = "/api/v1/namespaces/default/configmaps"
    evictions = cache.mapper.stats.evictions
    cluster.inject(path, status=404, body=TYPE_NOT_FOUND, content_type="application/json", times=1)
    cluster.clear_requests()
    created = client.create(cm("a", k="1"))
    assert _writes(cluster, path) == [("POST", path), ("POST", path)]
    assert cache.mapper.stats.evictions == evictions + 1  # reported to the mapper, which re-read discovery
    assert cluster.get_object("configmaps", "a", "default")["metadata"]["uid"] == created["metadata"]["uid"]


def test_a_second_type_404_is_raised_not_resent_again(served: ServedCluster, cache: ObjectCache) -> None:
    cluster = served.cluster
    path = "/api/v1/namespaces/default/configmaps"
    cluster.inject(path, status=404, body=TYPE_NOT_FOUND, content_type="application/json", times=2)
    cluster.clear_requests()
    with pytest.raises(Exception) as caught:
        Client(cache).create(cm("a"))
    assert getattr(caught.value, "status", None) == 404 and not isinstance(caught.value, ObjectNotFoundError)
    assert len(_writes(cluster, path)) == 2


Write = Callable[[Any], Any]
BODY_WRITES: dict[str, Write] = {
    "create": lambda c: c.create(widget_obj("w2", version="v1beta1")),
    "update": lambda c: c.update({**widget_obj("w1", version="v1beta1"), "spec": {"size": 2}}),
    "patch": lambda c: c.patch(GroupVersionKind("example.com", "v1beta1", "Widget"), "w1", {"spec": {"size": 2}},
                               "default"),
    "apply": lambda c: c.apply(widget_obj("w1", version="v1beta1", size=3), "tests", force=True),
    "delete-of-a-version": lambda c: c.delete(GroupVersionKind("example.com", "v1beta1", "Widget"), "w1", "default"),
}


@pytest.mark.parametrize("write", list(BODY_WRITES), ids=list(BODY_WRITES))
def test_a_write_for_a_version_no_longer_served_is_refused_and_not_resent(served: ServedCluster, cache: ObjectCache,
                                                                          write: str) -> None:
    cluster = served.cluster
    client = Client(cache)
    client.create(widget_obj("w1", version="v1beta1"))  # the mapper now holds v1beta1 as served
    cluster.set_served(WIDGETS, False, version="v1beta1")
    cluster.clear_requests()
    with pytest.raises(MappingChangedError) as caught:
        BODY_WRITES[write](client)
    error = caught.value
    assert (error.old.resource.version, error.new.resource.version) == ("v1beta1", "v1")
    assert "v1beta1" in str(error) and "Nothing was resent" in str(error)
    assert getattr(error.__cause__, "status", None) == 404
    assert _writes(cluster, V1) == []  # nothing was sent to the version the body was not written for
    assert cluster.get_object(WIDGETS, "w2", "default") is None
    assert cluster.get_object(WIDGETS, "w1", "default")["spec"] == {}


@pytest.mark.parametrize("write", ["create", "patch", "delete"])
def test_a_write_after_the_kind_became_cluster_scoped_is_refused_and_not_resent(
        served: ServedCluster, cache: ObjectCache, write: str) -> None:
    cluster = served.cluster
    client = Client(cache)
    client.create(widget_obj("w1"))
    client.patch(WIDGETS, "w1", {"spec": {"size": 1}}, "default")  # the mapper holds "widgets..." as namespaced
    cluster.delete_crd(WIDGETS)
    cluster.add_crd(widget(scope="Cluster"))
    cluster.clear_requests()
    with pytest.raises(MappingChangedError) as caught:
        if write == "create":
            client.create(widget_obj("w2"))
        elif write == "patch":
            client.patch(WIDGETS, "w1", {"spec": {"size": 2}}, "default")
        else:
            client.delete(WIDGETS, "w1", "default")
    assert (caught.value.old.scope, caught.value.new.scope) == (Scope.NAMESPACED, Scope.CLUSTER)
    assert "Cluster" in str(caught.value)
    assert _writes(cluster, "/apis/example.com/v1/widgets") == []
    assert cluster.list_objects(WIDGETS) == []


def _on_v1beta1_only(cluster: FakeCluster, client: Client) -> None:
    """w1 exists; the mapper holds v1 for ``widgets.example.com``; then the CRD stops serving v1."""
    client.create(widget_obj("w1"))
    client.patch(WIDGETS, "w1", {"spec": {"size": 1}}, "default")
    cluster.set_served(WIDGETS, False, version="v1")
    cluster.clear_requests()


def test_a_delete_of_a_kind_named_without_version_follows_it_to_another_version(served: ServedCluster,
                                                                               cache: ObjectCache) -> None:
    cluster = served.cluster
    client = Client(cache)
    _on_v1beta1_only(cluster, client)
    client.delete(WIDGETS, "w1", "default")
    assert _writes(cluster, "/apis/example.com/") == [("DELETE", f"{V1}/w1"), ("DELETE", f"{V1BETA1}/w1")]
    assert cluster.get_object(WIDGETS, "w1", "default") is None


def test_a_patch_of_a_kind_named_without_version_is_not_sent_to_another_version(served: ServedCluster,
                                                                               cache: ObjectCache) -> None:
    cluster = served.cluster
    client = Client(cache)
    _on_v1beta1_only(cluster, client)
    with pytest.raises(MappingChangedError) as caught:  # a patch is written for a schema
        client.patch(WIDGETS, "w1", {"spec": {"size": 2}}, "default")
    assert (caught.value.old.resource.version, caught.value.new.resource.version) == ("v1", "v1beta1")
    assert _writes(cluster, "/apis/example.com/") == [("PATCH", f"{V1}/w1")]
    assert cluster.get_object(WIDGETS, "w1", "default")["spec"] == {"size": 1}


def test_an_object_404_is_object_not_found_and_evicts_nothing(served: ServedCluster, cache: ObjectCache) -> None:
    client = Client(cache)
    client.create(widget_obj("w1"))
    client.patch(WIDGETS, "w1", {"spec": {"size": 1}}, "default")
    evictions = cache.mapper.stats.evictions
    served.cluster.clear_requests()
    with pytest.raises(ObjectNotFoundError):
        client.patch(WIDGETS, "ghost", {"spec": {"size": 2}}, "default")
    assert cache.mapper.stats.evictions == evictions
    assert [r.path for r in served.cluster.requests] == [f"{V1}/ghost"]  # no discovery request, no resend


def test_a_kind_no_longer_served_is_the_mappers_no_match(served: ServedCluster, cache: ObjectCache) -> None:
    client = Client(cache)
    client.create(widget_obj("w1"))
    served.cluster.delete_crd(WIDGETS)
    with pytest.raises(Exception) as caught:
        client.create(widget_obj("w2"))
    assert is_no_match(caught.value) and getattr(caught.value.__cause__, "status", None) == 404


def test_the_async_client_refuses_a_moved_version_the_same_way(served: ServedCluster, cache: ObjectCache) -> None:
    cluster = served.cluster

    async def scenario() -> None:
        client = AsyncClient(AsyncObjectCache(cache))
        await client.create(widget_obj("w1", version="v1beta1"))
        cluster.set_served(WIDGETS, False, version="v1beta1")
        cluster.clear_requests()
        with pytest.raises(MappingChangedError):
            await client.update({**widget_obj("w1", version="v1beta1"), "spec": {"size": 2}})
        assert _writes(cluster, V1) == []

    asyncio.run(scenario())
