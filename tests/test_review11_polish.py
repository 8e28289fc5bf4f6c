"""Review 11 (new user): messages say what to do in the caller's own terms, and options are never silently ignored."""

from __future__ import annotations

import functools
import io
import json
from typing import Any

import pytest
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient

from restmapper import GroupDiscoveryError, GroupKind, LazyRESTMapper
from restmapper.cache import DiscoveryCache
from restmapper.cli import run
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest


def _mapper(cluster: FakeCluster | None = None, **options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster or FakeCluster.embedded())), **options)


# --- F1, F2: each caller is told what to type in its own terms ---------------------------------------------------

@pytest.mark.parametrize(("arg", "instead"), [("deploy/web", "deploy"), ("deployments/scale", "deployments"),
                                              ("deployments.apps/web", "deployments.apps")])
def test_cli_tells_a_shell_user_what_to_type_for_type_name(arg: str, instead: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["resolve", "--embedded", arg], stdout=out, stderr=err) == 1
    assert f"restmapper resolve {instead}" in err.getvalue(), err.getvalue()
    assert "resolve_all(" not in err.getvalue() and "resolve(" not in err.getvalue()
    out = io.StringIO()
    assert run(["resolve", "--embedded", "-o", "json", arg], stdout=out, stderr=io.StringIO()) == 1
    [row] = json.loads(out.getvalue())
    assert row["reason"] == "InvalidArgument" and f"restmapper resolve {instead}" in row["error"]


def test_library_message_for_type_name_keeps_naming_the_python_call() -> None:
    with pytest.raises(InvalidArgumentError, match=r'resolve\("deploy"\)'):
        _mapper().resolve("deploy/web")


def test_manifest_pair_message_has_an_apostrophe_not_a_quote() -> None:
    with pytest.raises(InvalidArgumentError) as info:
        _mapper().resolve("apps/v1 Deployment")
    assert "manifest's apiVersion" in str(info.value), str(info.value)
    assert 'from_api_version_and_kind("apps/v1", "Deployment")' in str(info.value)


# --- F18: the drop-in's unpinned get says how to ask one group -------------------------------------------------

def test_unpinned_drop_in_get_refused_by_another_group_says_how_to_pin_it() -> None:
    """a.example.com (ranked above z.example.com) is unreadable and could serve the Widget that wins: the answer
    found in z.example.com is refused, and the error says how to ask z.example.com alone."""
    cluster = FakeCluster.embedded(mode="aggregated")
    cluster.add_crd(crd_manifest("a.example.com", "Widget"))
    cluster.add_crd(crd_manifest("z.example.com", "Widget"))
    cluster.set_stale("a.example.com/v1", True)
    config = kclient.Configuration(host="https://kube.restmapper.test")
    resources = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock(),
        max_stale=0)).resources
    with pytest.raises(GroupDiscoveryError) as info:
        resources.get(kind="Widget")
    text = str(info.value)
    assert "a.example.com/v1" in text
    assert "api_version=" in text and "group=" in text, text
    assert "'z.example.com/v1'" in text, text  # the group the answer was found in, ready to paste
    assert resources.get(api_version="z.example.com/v1", kind="Widget").kind == "Widget"  # the remedy works
    assert resources.get(group="z.example.com", kind="Widget").kind == "Widget"


# --- F19: options given with a ready cache are refused, not ignored --------------------------------------------

@pytest.mark.parametrize("options", [{"ttl": 0}, {"clock": ManualClock()}, {"miss_refresh_interval": 5.0},
                                     {"max_stale": 0}, {"ttl": None}])
def test_cache_options_with_a_ready_cache_are_refused(options: dict[str, Any]) -> None:
    cache = DiscoveryCache(DiscoveryClient(InProcessTransport(FakeCluster.embedded())))
    with pytest.raises(TypeError, match=r"DiscoveryCache\(") as info:
        LazyRESTMapper(cache, **options)
    assert next(iter(options)) in str(info.value)


def test_a_ready_cache_with_default_options_is_taken_as_is() -> None:
    clock = ManualClock()
    cache = DiscoveryCache(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), ttl=0, clock=clock)
    mapper = LazyRESTMapper(cache)
    assert mapper.cache is cache and mapper.resolve("deploy").resource.resource == "deployments"


# --- F12: report_not_found given what a mapping holds -----------------------------------------------------------

def test_report_not_found_points_at_group_version_of_what_a_mapping_holds() -> None:
    mapper = _mapper()
    mapping = mapper.resolve("deploy")
    for wrong in (mapping.resource, mapping.group_version_kind):
        with pytest.raises(TypeError, match=r"\.group_version"):
            mapper.report_not_found(wrong)  # type: ignore[arg-type]
    mapper.report_not_found(mapping.resource.group_version)


# --- F15: invalidate_group takes an API group name ---------------------------------------------------------------

@pytest.mark.parametrize("wrong", ["example.com/v1", "Example.com", "apps/", " apps", "example.com/v1/widgets"])
def test_invalidate_group_refuses_what_cannot_be_a_group(wrong: str) -> None:
    with pytest.raises(InvalidArgumentError, match="group"):
        _mapper().invalidate_group(wrong)


def test_invalidate_group_of_the_crd_group_makes_the_new_version_seen() -> None:
    cluster = FakeCluster.embedded()
    mapper = _mapper(cluster, ttl=None)
    cluster.add_crd(crd_manifest("example.com", "Gadget"))
    assert mapper.rest_mapping(GroupKind("example.com", "Gadget")).resource.version == "v1"
    cluster.update_crd(crd_manifest("example.com", "Gadget", versions=("v2", "v1")))
    with pytest.raises(InvalidArgumentError, match="invalidate_group_version"):
        mapper.invalidate_group("example.com/v1")
    mapper.invalidate_group("")  # core: the empty group is a group
    mapper.invalidate_group("example.com")
    assert mapper.rest_mapping(GroupKind("example.com", "Gadget")).resource.version == "v2"


# --- F7: the drop-in's options through functools.partial, as the README shows --------------------------------------

def test_drop_in_options_bound_with_partial_take_effect() -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest("example.com", "Gadget"))
    clock = ManualClock()
    config = kclient.Configuration(host="https://kube.restmapper.test")
    discoverer = functools.partial(SelfHealingDiscoverer, ttl=60, clock=clock, transport=InProcessTransport(cluster),
                                   observe_requests=False)
    resources = DynamicClient(kclient.ApiClient(config), discoverer=discoverer).resources
    assert resources.get(group="example.com", kind="Gadget").api_version == "v1"
    cluster.update_crd(crd_manifest("example.com", "Gadget", versions=("v2", "v1")))
    clock.advance(59)
    assert resources.get(group="example.com", kind="Gadget").api_version == "v1"  # fresh for ttl=60 s
    clock.advance(2)
    assert resources.get(group="example.com", kind="Gadget").api_version == "v2"  # expired: the new preferred
