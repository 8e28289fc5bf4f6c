"""Memoized answers and invalidation: an invalidated group is seen at once, whatever the memo holds."""

from __future__ import annotations

from typing import Any

import pytest

from restmapper import GroupKind, GroupVersionResource, NoKindMatchError, NoResourceMatchError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(group: str, kind: str) -> dict[str, Any]:
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA}]}}


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_new_group_is_found_right_after_its_invalidation(mode: str) -> None:
    """A watcher invalidates a CRD's group when it appears: memoized misses about it must not outlive that."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_crd(_crd("old.example.com", "Old"))
    now = [1000.0]
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))),
                                clock=lambda: now[0], miss_refresh_interval=60)
        assert mapper.kind_for(GroupVersionResource("", "", "olds")).group == "old.example.com"
        with pytest.raises(NoKindMatchError):
            mapper.rest_mapping(GroupKind("new.example.com", "Widget"))
        with pytest.raises(NoResourceMatchError):
            mapper.kind_for(GroupVersionResource("", "", "widgets"))
        cluster.add_crd(_crd("new.example.com", "Widget"))
        mapper.invalidate_group("new.example.com")  # no clock advance: the memo is still "fresh"
        assert mapper.rest_mapping(GroupKind("new.example.com", "Widget")).resource.resource == "widgets"
        assert mapper.kind_for(GroupVersionResource("", "", "widgets")).group == "new.example.com"
        assert mapper.kind_for(GroupVersionResource("", "", "olds")).group == "old.example.com"
