"""The ``kubernetes.dynamic`` drop-in under the certainty rules (DESIGN 5.10).

- ``resources.get`` never says "not found" (``ResourceNotFoundError``) while a group that could hold the answer
  could not be read, and never answers from a lower-priority group while a higher one is unreadable: it raises
  :class:`~restmapper.errors.GroupDiscoveryError`. An unreadable group ranked below the answer does not fail it:
  the answer comes with a :class:`~restmapper.errors.PartialDiscoveryWarning` naming it, by the mapper's rule.
- Only a 404 for the resource *type* evicts a group: not a 404 naming an object (``details.name``), and not a
  404 on a subresource path (kube-apiserver answers an unknown built-in subresource with the same empty-details
  Status as an unknown type, and a CRD's unknown subresource with the object's NotFound); evictions of one group
  are rate-limited like misses.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from helpers.aio_dynamic import Lib
from helpers.dynamic import FakeClock, api_client, crd
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

from restmapper import GroupDiscoveryError, PartialDiscoveryWarning, is_no_match
from restmapper.dynamic import SelfHealingDiscoverer, SelfHealingDynamicClient
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster

_DISCOVERY = re.compile(r"^/(api|apis)(/v1|/[^/]+(/[^/]+)?)?$")


def discovery_requests(cluster: FakeCluster) -> int:
    """Requests for discovery documents (``/api``, ``/apis``, ``/api/v1``, ``/apis/g``, ``/apis/g/v``)."""
    return sum(1 for r in cluster.requests if _DISCOVERY.match(r.path))


def client(url: str, clock: FakeClock) -> DynamicClient:
    return SelfHealingDynamicClient(api_client(url), discoverer=lambda c, f: SelfHealingDiscoverer(c, f, clock=clock))


def test_subresource_probes_and_missing_objects_never_evict() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("example.com", "Widget"))
    clock = FakeClock()
    with cluster.serve() as s:
        dc = client(s.url, clock)
        widgets = dc.resources.get(api_version="example.com/v1", kind="Widget")
        configmaps = dc.resources.get(api_version="v1", kind="ConfigMap")
        dc.create(widgets, body={"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}},
                  namespace="default")
        evictions = dc.resources.cache.stats.evictions
        cluster.clear_requests()
        for i in range(20):
            for path in ("/apis/example.com/v1/namespaces/default/widgets/w1/scale",  # no such subresource
                         "/api/v1/namespaces/default/configmaps/c1/scale",
                         f"/apis/example.com/v1/namespaces/default/widgets/missing-{i}"):  # no such object
                with pytest.raises(NotFoundError):
                    dc.request("get", path)
            with pytest.raises(NotFoundError):
                dc.get(configmaps, name=f"missing-{i}", namespace="default")
        assert discovery_requests(cluster) == 0
        assert dc.resources.cache.stats.evictions == evictions


def test_type_404_evicts_once_per_miss_interval() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("example.com", "Widget"))
    clock = FakeClock()
    with cluster.serve() as s:
        dc = client(s.url, clock)
        widgets = dc.resources.get(api_version="example.com/v1", kind="Widget")
        cluster.remove_crd("widgets.example.com")
        stats = dc.resources.cache.stats
        cluster.clear_requests()
        for _ in range(20):
            with pytest.raises(NotFoundError):
                dc.get(widgets, namespace="default")
        after = dc.resources.cache.stats
        assert after.evictions == stats.evictions + 1
        assert after.negative_hits >= stats.negative_hits + 19  # the other 19 reports were rate-limited
        assert discovery_requests(cluster) <= 2
        clock.advance(1.5)
        cluster.clear_requests()
        with pytest.raises(NotFoundError):
            dc.get(widgets, namespace="default")
        assert discovery_requests(cluster) >= 1  # the next interval may evict and look again


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_get_with_the_needed_group_unreadable_is_not_not_found(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    if mode == "aggregated":
        cluster.set_stale("cert-manager.io/v1")
    else:
        cluster.inject("/apis/cert-manager.io/v1", status=503, body="unavailable", content_type="text/plain")
    with cluster.serve() as s:
        dc = client(s.url, FakeClock())
        for kwargs in (dict(api_version="cert-manager.io/v1", kind="Certificate"), dict(kind="Certificate")):
            with pytest.raises(GroupDiscoveryError) as info:
                dc.resources.get(**kwargs)
            assert not isinstance(info.value, ResourceNotFoundError) and not is_no_match(info.value)
            assert "cert-manager.io/v1" in str(info.value) and "Certificate" in str(info.value)
        assert dc.resources.get(api_version="apps/v1", kind="Deployment").name == "deployments"
        with pytest.raises(ResourceNotFoundError):
            dc.resources.get(api_version="apps/v1", kind="NoSuchKind")


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_get_never_answers_core_from_another_group(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd("longhorn.io", "Node"))
    cluster.inject("/api" if mode == "aggregated" else "/api/v1", status=503, body="unavailable")
    with cluster.serve() as s:
        dc = client(s.url, FakeClock())
        for kwargs in (dict(kind="Node"), dict(api_version="v1", kind="Node")):
            with pytest.raises(GroupDiscoveryError) as info:
                dc.resources.get(**kwargs)
            assert "v1" in str(info.value)
        assert dc.resources.get(api_version="longhorn.io/v1", kind="Node").group == "longhorn.io"


@pytest.mark.parametrize("wrong", [kclient.Configuration(), "http://127.0.0.1:1", None])
def test_drop_in_with_the_wrong_thing_is_a_type_error(wrong: Any) -> None:
    with pytest.raises(TypeError, match="ApiClient"):
        SelfHealingDynamicClient(wrong)


def _break_cert_manager(cluster: FakeCluster, mode: str) -> None:
    if mode == "aggregated":
        cluster.set_stale("cert-manager.io/v1")
    else:
        cluster.inject("/apis/cert-manager.io/v1", status=500, body="Internal error", content_type="text/plain")


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_kind_only_get_answers_while_an_unrelated_lower_group_is_down(mode: str) -> None:
    """``get(kind="Deployment")`` while cert-manager.io/v1 answers 500 (or is stale): apps/v1, as the mapper and
    kubectl answer, with a PartialDiscoveryWarning whose ``failed`` names cert-manager.io/v1 (it ranks below apps
    but could serve a second Deployment kind). Without a kind filter it would have to read every group."""
    cluster = FakeCluster.embedded(mode=mode)
    _break_cert_manager(cluster, mode)
    with cluster.serve() as s:
        dc = client(s.url, FakeClock())
        assert dc.resources.mapper.resolve("Deployment").resource.group == "apps"
        for kwargs in (dict(kind="Deployment"), dict(kind="deployment"), dict(kind="DeploymentList"),
                       dict(name="deployments"), dict(short_names=["deploy"])):
            with pytest.warns(PartialDiscoveryWarning) as caught:
                found = dc.resources.get(**kwargs)
            assert found.group_version == "apps/v1", kwargs
            (warning,) = [w.message for w in caught if isinstance(w.message, PartialDiscoveryWarning)]
            assert list(warning.failed) == [GroupVersion("cert-manager.io", "v1")]
            assert caught[0].filename == __file__  # at the caller's line
            with pytest.warns(PartialDiscoveryWarning):
                assert {r.group_version for r in dc.resources.search(**kwargs)} == {"apps/v1"}
        with pytest.raises(GroupDiscoveryError):  # the failed group itself is not answered for
            dc.resources.get(kind="Certificate")


@pytest.mark.parametrize("name", ["kubernetes.aio", "kubernetes_asyncio"])
def test_kind_only_get_of_the_async_drop_ins_answers_while_an_unrelated_lower_group_is_down(name: str) -> None:
    lib = Lib(name)
    cluster = FakeCluster.embedded(mode="legacy")
    _break_cert_manager(cluster, "legacy")
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                dc = await lib.healing_client(api)
                with pytest.warns(PartialDiscoveryWarning) as caught:
                    found = await dc.resources.get(kind="Deployment")
                assert found.group_version == "apps/v1"
                assert list(caught[0].message.failed) == [GroupVersion("cert-manager.io", "v1")]
                assert caught[0].filename == __file__
                with pytest.raises(GroupDiscoveryError):
                    await dc.resources.get(kind="Certificate")

        asyncio.run(main())
