"""The healing clients never resend a request where it would mean something else (DESIGN 5.9, "healing never
changes what a write means").

The rule, asserted for every request method of every healing client (``SelfHealingDynamicClient`` and the
asyncio drop-ins of ``kubernetes.aio`` and ``kubernetes_asyncio``) against each way a resource type can change
under a request:

- a request that answered 404 for its resource type is resent only when the kind is still served at the version
  the request was built for, in the same scope, and (to a renamed resource) only a read (get, list, watch) or a
  delete;
- a change of version or scope, and a write to a renamed resource, raise ``MappingChangedError`` naming the old and
  the new mapping, with the 404 as its cause, and nothing is sent again;
- when the mapping did not change (the upgrade race: listed, but 404 once on its own path) the same request is sent
  once more (it was not applied).

The rule is :func:`restmapper.mapper.may_resend`, which the writing :class:`restmapper.client.Client` follows too.

The requests the server received are checked from the kit's request log: one request for a refusal, the old path
then the new one for a resend.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib
from helpers.dynamic import api_client
from kubernetes import watch

from restmapper.dynamic import SelfHealingDynamicClient
from restmapper.errors import MappingChangedError
from restmapper.mapper import may_resend
from restmapper.model import GroupVersionKind, GroupVersionResource, RESTMapping, Scope
from restmapper.testing import FakeCluster, crd_manifest

GROUP = "example.com"
TYPE_404 = ('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server could not find the '
            'requested resource","reason":"NotFound","details":{},"code":404}')

CHANGES = {
    "version moved": "v1alpha1 stops being served; v1beta1 serves the kind",
    "scope changed": "deleted and recreated cluster-scoped",
    "renamed": "deleted and recreated with another plural, same version and scope",
    "unchanged": "listed as before, but 404 once on the objects' path (the upgrade race)",
}
EXPECTED = {  # (change, reads and deletes / writes) -> outcome
    ("version moved", "read"): "refused", ("version moved", "write"): "refused",
    ("scope changed", "read"): "refused", ("scope changed", "write"): "refused",
    ("renamed", "read"): "resent", ("renamed", "write"): "refused",
    ("unchanged", "read"): "resent", ("unchanged", "write"): "resent",
}
HTTP = {"list": "GET", "get": "GET", "watch": "GET", "delete": "DELETE", "create": "POST", "replace": "PUT",
        "patch": "PATCH", "server_side_apply": "PATCH"}
READS = {"list", "get", "watch", "delete"}


def _cluster() -> FakeCluster:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1alpha1", "v1beta1")))
    cluster.apply_object(_body("v1alpha1", "w1"))
    return cluster


def _body(version: str, name: str, namespace: str | None = "default") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Widget", "metadata": metadata, "spec": {"size": 1}}


def _change(cluster: FakeCluster, change: str) -> None:
    """Apply ``change`` to the cluster (the client still holds the v1alpha1, namespaced ``widgets`` mapping)."""
    if change == "version moved":
        cluster.set_served(f"widgets.{GROUP}", False, version="v1alpha1")
        return
    if change == "unchanged":
        cluster.inject(f"/apis/{GROUP}/v1alpha1/namespaces/default/widgets*", status=404, body=TYPE_404,
                       content_type="application/json", times=1)
        return
    cluster.delete_crd(f"widgets.{GROUP}")
    if change == "scope changed":
        cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1alpha1", "v1beta1"), scope="Cluster"))
        cluster.apply_object(_body("v1alpha1", "w1", namespace=None))
    else:
        cluster.add_crd(crd_manifest(GROUP, "Widget", versions=("v1alpha1", "v1beta1"), plural="widgetz"))
        cluster.apply_object(_body("v1alpha1", "w1"))


def _calls(version: str) -> dict[str, Callable[[Any, Any], Any]]:
    """Each request method, as a call on ``(client, resource)`` built for ``version`` in namespace default."""
    ns = "default"
    return {
        "list": lambda c, r: c.get(r, namespace=ns),
        "get": lambda c, r: c.get(r, name="w1", namespace=ns),
        "delete": lambda c, r: c.delete(r, name="w1", namespace=ns),
        "create": lambda c, r: c.create(r, body=_body(version, "w2"), namespace=ns),
        "replace": lambda c, r: c.replace(r, body=_body(version, "w1"), name="w1", namespace=ns),
        "patch": lambda c, r: c.patch(r, body={"metadata": {"labels": {"a": "b"}}}, name="w1", namespace=ns,
                                      content_type="application/merge-patch+json"),
        "server_side_apply": lambda c, r: c.server_side_apply(r, body=_body(version, "w1"), name="w1", namespace=ns,
                                                              field_manager="test"),
    }


def _object_requests(cluster: FakeCluster, verb: str) -> list[str]:
    return [r.path for r in cluster.requests if r.method == HTTP[verb] and "/widget" in r.path]


def _cells(verbs: Any) -> list[Any]:
    return [pytest.param(change, verb, id=f"{change}-{verb}") for change, verb in itertools.product(CHANGES, verbs)]


def _check(cluster: FakeCluster, change: str, verb: str, outcome: Any) -> None:
    expected = EXPECTED[change, "read" if verb in READS else "write"]
    sent = _object_requests(cluster, verb)
    assert sent[:1] and "/v1alpha1/namespaces/default/widgets" in sent[0], sent
    if expected == "resent":
        assert not isinstance(outcome, BaseException), outcome
        # kubernetes_asyncio returns an error Status instead of raising it.
        assert getattr(outcome, "kind", None) != "Status", outcome
        plural = "widgetz" if change == "renamed" else "widgets"
        assert len(sent) == 2 and f"/v1alpha1/namespaces/default/{plural}" in sent[1], sent
        return
    assert len(sent) == 1, f"{verb} was sent again: {sent}"
    assert isinstance(outcome, MappingChangedError), repr(outcome)
    assert outcome.verb == ("get" if verb in ("list", "watch") else verb)
    assert str(outcome.old.resource) == f"{GROUP}/v1alpha1, Resource=widgets" and outcome.old.scope is Scope.NAMESPACED
    new_version = "v1beta1" if change == "version moved" else "v1alpha1"
    assert outcome.new.resource.version == new_version
    assert outcome.new.scope is (Scope.CLUSTER if change == "scope changed" else Scope.NAMESPACED)
    assert getattr(outcome.__cause__, "status", None) == 404
    assert "was not resent" in str(outcome) and "Nothing was resent" in str(outcome)


@pytest.mark.parametrize(("change", "verb"), _cells([*_calls("v1alpha1"), "watch"]))
def test_sync_client_resends_only_where_the_request_means_the_same(change: str, verb: str) -> None:
    cluster = _cluster()
    with cluster.serve() as served:
        client = SelfHealingDynamicClient(api_client(served.url))
        widgets = client.resources.get(api_version=f"{GROUP}/v1alpha1", kind="Widget")
        _change(cluster, change)
        cluster.clear_requests()
        outcome: Any
        try:
            if verb == "watch":
                watcher = watch.Watch()
                outcome = next(iter(client.watch(widgets, namespace="default", timeout=2, watcher=watcher)))
                watcher.stop()
            else:
                outcome = _calls("v1alpha1")[verb](client, widgets)
        except Exception as exc:  # the outcome is judged below
            outcome = exc
        _check(cluster, change, verb, outcome)


@pytest.mark.parametrize("name", sorted(LIBRARIES))
@pytest.mark.parametrize(("change", "verb"), _cells([*_calls("v1alpha1"), "watch"]))
def test_async_clients_resend_by_the_same_rule(name: str, change: str, verb: str) -> None:
    lib = Lib(name)
    cluster = _cluster()
    with cluster.serve() as served:
        async def main() -> Any:
            async with lib.api_client(served.url) as api:
                client = await lib.healing_client(api)
                widgets = await client.resources.get(api_version=f"{GROUP}/v1alpha1", kind="Widget")
                _change(cluster, change)
                cluster.clear_requests()
                try:
                    if verb == "watch":
                        return await _first_event(lib, client, widgets)
                    return await _calls("v1alpha1")[verb](client, widgets)
                except Exception as exc:  # the outcome is judged below
                    return exc

        outcome = asyncio.run(main())
        _check(cluster, change, verb, outcome)


async def _first_event(lib: Lib, client: Any, resource: Any) -> Any:
    """The first event of ``client.watch(resource)`` in namespace default (the stream is then stopped)."""
    watcher = importlib.import_module(f"{lib.dynamic.__name__}.client").watch.Watch()
    async for event in client.watch(resource, namespace="default", timeout=2, watcher=watcher):
        watcher.stop()
        return event
    return None


def _mapping(version: str = "v1alpha1", plural: str = "widgets", scope: Scope = Scope.NAMESPACED,
             kind: str = "Widget") -> RESTMapping:
    return RESTMapping(GroupVersionResource(GROUP, version, plural), GroupVersionKind(GROUP, version, kind), scope)


@pytest.mark.parametrize(("new", "write", "read_named", "read_unnamed"), [
    (_mapping(), True, True, True),  # unchanged: the same request again
    (_mapping(plural="widgetz"), False, True, True),  # renamed: reads and deletes follow
    (_mapping(version="v1beta1"), False, False, True),  # version moved: only where the caller named none
    (_mapping(scope=Scope.CLUSTER), False, False, False),  # scope changed: never
    (_mapping(version="v1beta1", scope=Scope.CLUSTER), False, False, False),
    (_mapping(kind="Gadget"), False, False, False),  # another kind: never
])
def test_the_one_resend_rule(new: RESTMapping, write: bool, read_named: bool, read_unnamed: bool) -> None:
    old = _mapping()
    assert may_resend(old, new, writes=True) is write
    assert may_resend(old, new, writes=True, version_named=False) is write  # a body names its version anyway
    assert may_resend(old, new, writes=False) is read_named
    assert may_resend(old, new, writes=False, version_named=False) is read_unnamed
