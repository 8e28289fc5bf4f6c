"""A wrong argument type is refused at the call with a TypeError naming the call and the type expected, never an
AttributeError from deep inside (a kubeconfig path passed where a mapper belongs is the usual slip)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from restmapper import LazyRESTMapper
from restmapper.cache import DiscoveryCache
from restmapper.discovery import DiscoveryClient
from restmapper.errors import is_ambiguous, is_no_match, is_not_found
from restmapper.leader import LeaderElector
from restmapper.leader.aio import AsyncLeaderElector
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock
from restmapper.watch import Watcher


def _client() -> DiscoveryClient:
    return DiscoveryClient(InProcessTransport(FakeCluster.embedded()))


@pytest.mark.parametrize("mapper", ["mapper", None, 3])
def test_watcher_needs_a_mapper(mapper: Any) -> None:
    with pytest.raises(TypeError, match=r"^Watcher\(\) takes a LazyRESTMapper"):
        Watcher(mapper)


@pytest.mark.parametrize("elector", [LeaderElector, AsyncLeaderElector])
@pytest.mark.parametrize("mapper", ["mapper", None])
def test_leader_elector_needs_a_mapper(elector: Any, mapper: Any) -> None:
    with pytest.raises(TypeError, match=rf"^{elector.__name__}\(\) takes a LazyRESTMapper"):
        elector(mapper, "lease", "default")


@pytest.mark.parametrize("check", [is_no_match, is_ambiguous, is_not_found])
@pytest.mark.parametrize("value", ["x", None, 404])
def test_error_predicates_need_an_exception(check: Any, value: Any) -> None:
    with pytest.raises(TypeError, match=rf"^{check.__name__}\(\) takes an exception"):
        check(value)


def test_a_mapper_clock_must_be_callable() -> None:
    with pytest.raises(TypeError, match="clock must be a callable"):
        LazyRESTMapper(_client(), clock=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="clock must be a callable"):
        DiscoveryCache(_client(), clock=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="clock must be a callable"):
        LazyRESTMapper(DiscoveryCache(_client()), clock=None)  # type: ignore[arg-type]


def test_the_default_clock_named_with_a_ready_cache_is_no_conflict() -> None:
    cache = DiscoveryCache(_client(), clock=ManualClock())
    mapper = LazyRESTMapper(cache, clock=time.monotonic, ttl=300.0)
    assert mapper.cache is cache
