"""The client's errors: each server refusal is typed, an APIStatusError carrying the server's Status; bad input is
refused before anything is sent."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers.client import cache as cache  # fixtures, used by name (the alias marks them used)
from helpers.client import served as served
from helpers.store import cm, object_cache

from restmapper.client import Client
from restmapper.errors import (
    AlreadyExistsError,
    APIStatusError,
    ConflictError,
    ForbiddenError,
    InvalidArgumentError,
    InvalidObjectError,
    ObjectNotFoundError,
    ObjectNotFoundStatusError,
    is_not_found,
)
from restmapper.model import GroupKind
from restmapper.store import ObjectCache
from restmapper.testing import ServedCluster

CMS = "/api/v1/namespaces/default/configmaps"


def _status(error: APIStatusError) -> dict[str, Any]:
    assert isinstance(error, APIStatusError)
    assert error.server_status is not None and error.server_status["kind"] == "Status"
    return dict(error.server_status)


def test_creating_a_taken_name_is_already_exists_not_a_conflict(cache: ObjectCache) -> None:
    client = Client(cache)
    client.create(cm("a"))
    with pytest.raises(AlreadyExistsError) as caught:
        client.create(cm("a"))
    assert not isinstance(caught.value, ConflictError)
    assert caught.value.status == 409 and _status(caught.value)["reason"] == "AlreadyExists"


def test_an_update_from_a_stale_resource_version_is_a_conflict(cache: ObjectCache) -> None:
    client = Client(cache)
    first = client.create(cm("a", k="1"))
    client.update({**copy.deepcopy(first), "data": {"k": "2"}})
    with pytest.raises(ConflictError) as caught:
        client.update({**copy.deepcopy(first), "data": {"k": "3"}})
    assert caught.value.status == 409 and _status(caught.value)["reason"] == "Conflict"


def test_a_failed_delete_precondition_is_a_conflict(cache: ObjectCache) -> None:
    client = Client(cache)
    first = client.create(cm("a", k="1"))
    with pytest.raises(ConflictError):
        client.delete("configmaps", "a", "default", uid="another-uid")
    client.update({**copy.deepcopy(first), "data": {"k": "2"}})
    with pytest.raises(ConflictError):
        client.delete("configmaps", "a", "default", resource_version=first["metadata"]["resourceVersion"])
    assert cache.get("configmaps", "a", "default")["data"] == {"k": "2"}


@pytest.mark.parametrize("write", ["update", "patch", "delete"])
def test_a_missing_object_is_object_not_found_from_the_server(cache: ObjectCache, write: str) -> None:
    client = Client(cache)
    with pytest.raises(ObjectNotFoundError) as caught:
        if write == "update":
            client.update(cm("ghost"))
        elif write == "patch":
            client.patch("configmaps", "ghost", {"data": {"k": "1"}}, "default")
        else:
            client.delete("configmaps", "ghost", "default")
    error = caught.value
    assert isinstance(error, ObjectNotFoundStatusError) and is_not_found(error)
    assert (error.kind, error.namespace, error.name, error.status) == ("configmaps", "default", "ghost", 404)
    assert _status(error)["details"]["name"] == "ghost"


def test_an_invalid_object_carries_the_servers_causes(cache: ObjectCache) -> None:
    with pytest.raises(InvalidObjectError) as caught:
        Client(cache).apply(cm("a"), "m" * 129)  # fieldManager is at most 128 characters
    assert caught.value.status == 422
    assert [c.get("field") for c in caught.value.causes] == ["fieldManager"]


def test_a_forbidden_write_is_forbidden_with_the_servers_message(served: ServedCluster, cache: ObjectCache) -> None:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
              "message": 'configmaps is forbidden: User "bot" cannot create resource "configmaps"',
              "details": {"kind": "configmaps"}}
    served.cluster.inject(CMS, status=403, body=json.dumps(status), content_type="application/json")
    served.cluster.clear_requests()
    with pytest.raises(ForbiddenError) as caught:
        Client(cache).create(cm("a"))
    assert caught.value.reason == status["message"] and _status(caught.value)["reason"] == "Forbidden"
    assert served.cluster.request_count(CMS) == 1  # a refusal is not retried


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: c.create(cm("a"), namespace="other"), "differs from the object's"),
    (lambda c: c.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}), "namespaced"),
    (lambda c: c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}, namespace="x"),
     "cluster-scoped"),
    (lambda c: c.delete("namespaces", "n", namespace="x"), "cluster-scoped"),
    (lambda c: c.patch("configmaps", "a", {}, "default", patch_type="smp"), "patch_type"),
    (lambda c: c.apply(cm("a"), ""), "field_manager"),
    (lambda c: c.create({"kind": "ConfigMap", "metadata": {"name": "a"}}), "apiVersion"),
    (lambda c: c.update({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "default"}}),
     "metadata.name"),
])
def test_bad_input_is_refused_before_anything_is_sent(served: ServedCluster, cache: ObjectCache, call: Any,
                                                      message: str) -> None:
    client = Client(cache)
    served.cluster.clear_requests()
    with pytest.raises(InvalidArgumentError, match=message):
        call(client)
    assert not [r for r in served.cluster.requests if r.method != "GET"]


@pytest.mark.parametrize("call", [
    lambda c: c.create(["not", "a", "manifest"]),
    lambda c: c.patch("configmaps", "a", [{"op": "add", "path": "/x", "value": 1}], "default"),  # merge: a dict
    lambda c: c.patch("configmaps", "a", {"data": {}}, "default", patch_type="json"),  # json: a list of ops
    lambda c: c.delete(GroupKind("", "ConfigMap"), "a", "default", uid=7),
])
def test_values_of_the_wrong_type_are_type_errors(cache: ObjectCache, call: Any) -> None:
    with pytest.raises(TypeError):
        call(Client(cache))


def test_a_cache_scoped_to_a_namespace_refuses_writes_it_could_not_read_back(served: ServedCluster) -> None:
    with object_cache(served, namespace="team-a") as cache, \
            pytest.raises(InvalidArgumentError, match="holds only namespace 'team-a'"):
        Client(cache).create(cm("a", namespace="default"))


def test_a_transport_that_cannot_write_is_refused_up_front(cache: ObjectCache) -> None:
    class ReadOnly:
        base_url, identity = "https://x", "x"

        def get(self, *args: Any, **kwargs: Any) -> Any: ...

        def stream(self, *args: Any, **kwargs: Any) -> Any: ...

        def close(self) -> None: ...

    with pytest.raises(TypeError, match="cannot send writes"):
        Client(cache, transport=ReadOnly())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Client("not a cache")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        Client(cache, timeout=0)
