"""Wrong-argument forms are argument errors, never a no-match (review 9: F1, F3, F9)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from restmapper import GroupVersionKind, LazyRESTMapper, is_no_match
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock


@pytest.fixture
def mapper() -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), clock=ManualClock())


# --- F9: RESTMapping.path() -----------------------------------------------------------------------------------


def test_path_builds_what_the_api_server_serves(mapper: LazyRESTMapper) -> None:
    deploy, ns = mapper.resolve("deploy"), mapper.resolve("ns")
    assert deploy.path() == "/apis/apps/v1/deployments"  # across all namespaces
    assert deploy.path(namespace="") == "/apis/apps/v1/deployments"
    assert deploy.path(namespace="default") == "/apis/apps/v1/namespaces/default/deployments"
    assert deploy.path(namespace="default", name="web") == "/apis/apps/v1/namespaces/default/deployments/web"
    assert ns.path(name="kube-system") == "/api/v1/namespaces/kube-system"
    assert ns.path(namespace="ignored", name="x") == "/api/v1/namespaces/x"


@pytest.mark.parametrize("kwargs, words", [
    (dict(name="web"), "needs a namespace"),
    (dict(namespace="", name="web"), "needs a namespace"),
    (dict(namespace="default", name=""), "may not be empty"),
    (dict(namespace="a/b"), "not a valid path segment"),
    (dict(namespace="kube-system/secrets/x/../.."), "not a valid path segment"),
    (dict(namespace="default", name="x/../../secrets"), "not a valid path segment"),
    (dict(namespace="default", name=".."), "not a valid path segment"),
    (dict(namespace=".", name="web"), "not a valid path segment"),
    (dict(namespace="default", name="a%2Fb"), "not a valid path segment"),
])
def test_path_refuses_what_client_go_refuses(mapper: LazyRESTMapper, kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidArgumentError, match=words) as info:
        mapper.resolve("deploy").path(**kwargs)
    assert isinstance(info.value, ValueError) and not is_no_match(info.value)


def test_path_checks_segments_of_cluster_scoped_resources_too(mapper: LazyRESTMapper) -> None:
    with pytest.raises(InvalidArgumentError):
        mapper.resolve("ns").path(name="a/b")
    with pytest.raises(TypeError, match="name must be a str"):
        mapper.resolve("ns").path(name=3)  # type: ignore[arg-type]


@given(namespace=st.text(min_size=1).filter(lambda t: t not in (".", "..") and "/" not in t and "%" not in t),
       name=st.text(min_size=1).filter(lambda t: t not in (".", "..") and "/" not in t and "%" not in t))
def test_path_segments_are_escaped_so_nothing_ends_the_path(namespace: str, name: str) -> None:
    """``?``, ``#``, spaces and control characters in a namespace or name (the object cache passes a user's
    namespace on) are escaped as Go's ``url.URL`` escapes a path: the path stays four segments and round-trips."""
    deploy = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded()))).resolve("deploy")
    path = deploy.path(namespace=namespace, name=name)
    split = urlsplit("https://h" + path)
    assert (split.query, split.fragment) == ("", "")
    assert [unquote(seg) for seg in split.path.split("/")] == ["", "apis", "apps", "v1", "namespaces", namespace,
                                                               "deployments", name]
    assert deploy.path(namespace="default", name="a?b") == "/apis/apps/v1/namespaces/default/deployments/a%3Fb"


# --- F3 and F1: resolve() takes one resource type --------------------------------------------------------------


@pytest.mark.parametrize("arg, words", [
    ("deploy,svc", r'resolve_all\("deploy,svc"\)'),
    ("all", r'resolve_all\("all"\)'),
    ("deployments/scale", r'resolve\("deployments"\)'),
    ("deploy/web", r'resolve\("deploy"\)'),
    ("apps/v1 Deployment", r'from_api_version_and_kind\("apps/v1", "Deployment"\)'),
])
def test_resolve_refuses_forms_that_are_not_one_resource_type(mapper: LazyRESTMapper, arg: str, words: str) -> None:
    with pytest.raises(InvalidArgumentError, match=words) as info:
        mapper.resolve(arg)
    assert isinstance(info.value, ValueError) and not is_no_match(info.value)


def test_kubectl_forms_resolve_where_kubectl_resolves_them(mapper: LazyRESTMapper) -> None:
    """``kubectl get deploy,svc`` and ``kubectl get all`` work: through resolve_all / expand_category."""
    assert [m.resource.resource for m in mapper.resolve_all("deploy,svc")] == ["deployments", "services"]
    assert "pods" in [m.resource.resource for m in mapper.resolve_all("all")]
    gvk = GroupVersionKind.from_api_version_and_kind("apps/v1", "Deployment")
    assert mapper.rest_mapping(gvk).path(namespace="default") == "/apis/apps/v1/namespaces/default/deployments"


def test_a_missing_type_that_is_no_category_is_still_a_no_match(mapper: LazyRESTMapper) -> None:
    with pytest.raises(LookupError) as info:
        mapper.resolve("xyzzy")
    assert is_no_match(info.value)


def test_resolve_all_refuses_type_name_forms(mapper: LazyRESTMapper) -> None:
    with pytest.raises(InvalidArgumentError, match=r'resolve_all\("deploy"\)'):
        mapper.resolve_all("deploy/web")
