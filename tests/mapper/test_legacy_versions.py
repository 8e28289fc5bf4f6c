"""Legacy discovery fetches only what a question needs: the named version, else the preferred one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from restmapper import GroupKind, GroupVersionResource, NoKindMatchError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

GROUP = "five.example.com"
VERSIONS = ("v2", "v1", "v1beta2", "v1beta1", "v1alpha1")  # v2 is the storage (and preferred) version
_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(kind: str, versions: tuple[str, ...] = VERSIONS) -> dict[str, Any]:
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                     "versions": [{"name": v, "served": True, "storage": v == versions[0], "schema": _SCHEMA}
                                  for v in versions]}}


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(builtin=True, mode="legacy")
    c.add_crd(_crd("Gizmo"))
    c.add_crd(_crd("Oldie", ("v2", "v1alpha1")))
    with c.mock():
        yield c


def _mapper(cluster: FakeCluster) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))))


def _version_requests(cluster: FakeCluster) -> list[str]:
    return [r.path for r in cluster.requests if r.path.startswith(f"/apis/{GROUP}/")]


def test_a_lookup_naming_one_version_fetches_only_that_version(cluster: FakeCluster) -> None:
    mapper = _mapper(cluster)
    mapping = mapper.rest_mapping(GroupKind(GROUP, "Gizmo"), "v1beta2")
    assert mapping.resource == GroupVersionResource(GROUP, "v1beta2", "gizmos")
    assert _version_requests(cluster) == [f"/apis/{GROUP}/v1beta2"]
    # Another version later: one more request, and the first stays cached.
    assert mapper.rest_mapping(GroupKind(GROUP, "Gizmo"), "v1").resource.version == "v1"
    assert _version_requests(cluster) == [f"/apis/{GROUP}/v1beta2", f"/apis/{GROUP}/v1"]
    assert mapper.kind_for(GroupVersionResource(GROUP, "v1alpha1", "gizmos")).version == "v1alpha1"
    assert len(_version_requests(cluster)) == 3


def test_a_lookup_naming_no_version_fetches_the_preferred_one(cluster: FakeCluster) -> None:
    mapper = _mapper(cluster)
    assert mapper.rest_mapping(GroupKind(GROUP, "Gizmo")).resource.version == "v2"
    assert _version_requests(cluster) == [f"/apis/{GROUP}/v2"]


def test_a_kind_missing_from_the_preferred_version_reads_the_rest_of_the_group(cluster: FakeCluster) -> None:
    """Priority as client-go: the preferred version first, then the others; a kind only in v1 is still found."""
    cluster.update_crd(_crd("Gizmo", ("v2", "v1", "v1beta2", "v1beta1", "v1alpha1")))
    cluster.add_crd(_crd("Legacyonly", ("v2", "v1")) | {"spec": {**_crd("Legacyonly", ("v2", "v1"))["spec"],
                                                                  "versions": [
        {"name": "v2", "served": False, "storage": False, "schema": _SCHEMA},
        {"name": "v1", "served": True, "storage": True, "schema": _SCHEMA}]}})
    mapper = _mapper(cluster)
    assert mapper.rest_mapping(GroupKind(GROUP, "Legacyonly")).resource.version == "v1"
    assert set(_version_requests(cluster)) == {f"/apis/{GROUP}/{v}" for v in VERSIONS}


def test_a_version_the_group_does_not_serve_is_a_confirmed_no_match(cluster: FakeCluster) -> None:
    """The miss is confirmed by the server: the version was read by this very lookup, which is the server's word
    (not read a second time by the miss revalidation), so the no-match is not a remembered one."""
    mapper = _mapper(cluster)
    with pytest.raises(NoKindMatchError) as info:
        mapper.rest_mapping(GroupKind(GROUP, "Oldie"), "v1beta2")
    assert info.value.remembered_age is None
    assert _version_requests(cluster)[0] == f"/apis/{GROUP}/v1beta2"
    assert _version_requests(cluster).count(f"/apis/{GROUP}/v1beta2") == 1


def test_questions_about_every_group_still_read_every_version(cluster: FakeCluster) -> None:
    mapper = _mapper(cluster)
    mapper.rest_mapping(GroupKind(GROUP, "Gizmo"), "v1")
    assert [m.resource.version for m in mapper.rest_mappings(GroupKind(GROUP, "Gizmo"))] == list(VERSIONS)
    assert mapper.kinds_for(GroupVersionResource("", "", "gizmo"))[0].version == "v2"
    # Reading the whole group re-reads the one version read before (one request more, not a partial answer).
    assert set(_version_requests(cluster)) == {f"/apis/{GROUP}/{v}" for v in VERSIONS}
    assert len(_version_requests(cluster)) == len(VERSIONS) + 1
