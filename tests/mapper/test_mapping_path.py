"""``RESTMapping.path()`` builds the path the API server serves, and refuses what client-go refuses (an empty
name, a namespaced resource without a namespace, a segment that is not a valid path segment) with an
InvalidArgumentError, never a no-match; every other character is escaped so that nothing ends the path."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from restmapper import LazyRESTMapper, is_no_match
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock


@pytest.fixture
def mapper() -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), clock=ManualClock())


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
