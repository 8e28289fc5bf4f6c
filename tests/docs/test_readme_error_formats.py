"""The README's "Error messages, and which spellings match" says what is true.

Each claim of that section is checked here against the embedded cluster: message formats (apimachinery's and
kubectl's), the remembered-miss ending on the mapper's errors and the drop-in's, and which spellings match where.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.mapper import group, res
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from restmapper import (
    GroupKind,
    GroupVersionKind,
    GroupVersionResource,
    LazyRESTMapper,
    NoKindMatchError,
    NoResourceMatchError,
)
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.errors import AmbiguousKindError, ResourceTypeNotFoundError
from restmapper.mapper import StaticRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

ENDING = " (as of 0.4 s ago; misses are cached for up to 1 s)"


@pytest.fixture
def setup() -> tuple[LazyRESTMapper, ManualClock, Any]:
    cluster = FakeCluster.embedded()
    clock = ManualClock()
    transport = InProcessTransport(cluster)
    mapper = LazyRESTMapper(DiscoveryClient(transport), clock=clock)
    resources = DynamicClient(
        kclient.ApiClient(kclient.Configuration(host=cluster.base_url)),
        discoverer=lambda c, f: SelfHealingDiscoverer(c, f, clock=clock, transport=InProcessTransport(cluster)),
    ).resources
    return mapper, clock, resources


def test_no_match_messages(setup: tuple[LazyRESTMapper, ManualClock, Any]) -> None:
    mapper, clock, _ = setup
    with pytest.raises(NoKindMatchError) as kind:
        mapper.rest_mapping(GroupKind("example.com", "Widget"))
    assert str(kind.value) == 'no matches for kind "Widget" in group "example.com"'
    assert NoKindMatchError(GroupKind("example.com", "Widget"), ["v1"]).args[0] == (
        'no matches for kind "Widget" in version "example.com/v1"')
    assert NoKindMatchError(GroupKind("example.com", "Widget"), ["v1", "v2"]).args[0] == (
        'no matches for kind "Widget" in versions ["example.com/v1" "example.com/v2"]')
    clock.advance(1)
    with pytest.raises(NoResourceMatchError) as resource:
        mapper.kind_for(GroupVersionResource("apps", "v1", "xyzzies"))
    assert str(resource.value) == "no matches for apps/v1, Resource=xyzzies"
    clock.advance(1)
    with pytest.raises(NoResourceMatchError) as bare:
        mapper.kind_for(GroupVersionResource("", "", "xyzzies"))
    assert str(bare.value) == "no matches for /, Resource=xyzzies"
    clock.advance(1)
    with pytest.raises(ResourceTypeNotFoundError) as typed:
        mapper.resolve("xyzzies")
    assert str(typed.value) == 'the server doesn\'t have a resource type "xyzzies"'
    assert typed.value.argument == "xyzzies"
    clock.advance(0.4)
    with pytest.raises(ResourceTypeNotFoundError) as remembered:
        mapper.resolve("xyzzies")
    assert str(remembered.value) == 'the server doesn\'t have a resource type "xyzzies"' + ENDING


def test_ambiguity_message() -> None:
    core = group("", {"v1alpha1": [res("foos", "Foo")], "v1": [res("foos", "Foo")]}, "v1alpha1")
    with pytest.raises(AmbiguousKindError) as info:
        StaticRESTMapper([core], resource_priority=(), kind_priority=()).rest_mapping(GroupKind("", "Foo"))
    assert str(info.value).startswith("/, Kind=Foo matches multiple kinds [/v1alpha1, Kind=Foo, /v1, Kind=Foo]")


def test_the_drop_in_message_and_its_remembered_ending(setup: tuple[LazyRESTMapper, ManualClock, Any]) -> None:
    _, clock, resources = setup
    with pytest.raises(ResourceNotFoundError) as first:
        resources.get(api_version="example.com/v1", kind="Xyzzy")
    assert str(first.value) == "No matches found for {'api_version': 'example.com/v1', 'kind': 'Xyzzy'}"
    clock.advance(0.4)
    with pytest.raises(ResourceNotFoundError) as again:
        resources.get(api_version="example.com/v1", kind="Xyzzy")
    assert str(again.value) == str(first.value) + ENDING


def test_which_spellings_match(setup: tuple[LazyRESTMapper, ManualClock, Any]) -> None:
    mapper, _, resources = setup
    assert mapper.kind_for(GroupVersionResource("", "", "PODS")).kind == "Pod"
    assert mapper.resolve("DEPLOYMENT").resource.resource == "deployments"
    assert mapper.rest_mapping(GroupKind("apps", "deployment")).group_version_kind.kind == "Deployment"
    assert mapper.rest_mapping(GroupVersionKind("apps", "v1", "deployment")).group_version_kind.kind == "Deployment"
    with pytest.raises(NoKindMatchError):
        mapper.rest_mapping(GroupKind("apps", "DEPLOYMENT"))
    assert mapper.resolve("hpa").resource.resource == "horizontalpodautoscalers"
    with pytest.raises(ResourceTypeNotFoundError):
        mapper.resolve("HPA")
    with pytest.raises(ResourceTypeNotFoundError):
        mapper.resolve("deployments.APPS")
    assert resources.get(kind="DEPLOYMENT").kind == "Deployment"
    assert resources.get(name="DEPLOYMENTS").kind == "Deployment"
    assert resources.get(short_names="DEPLOY").kind == "Deployment"
