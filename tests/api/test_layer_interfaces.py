"""The interfaces between the layers: each layer takes what it needs, not a concrete class.

- The mapper builds its cache over anything with the discovery client's interface (``DiscoverySource``), and
  takes a ready cache (``CacheSource``) as it is, refusing cache options given with it (never silently ignored);
  anything else is a TypeError that says what to pass.
- The watcher needs only ``WatchedMapper`` (transport + invalidation); it and the object cache list and watch
  over ``mapper.transport``.
- ``from_kubeconfig``/``from_incluster`` build through ``from_config``, which each class defines, and name their
  class (a bad option's TypeError names the method called).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from helpers.store import widget_cluster
from helpers.watch import make_mapper

from restmapper import GroupKind, LazyRESTMapper
from restmapper.aio import AsyncObjectCache
from restmapper.cache import DiscoveryCache
from restmapper.cache._source import DiscoverySource
from restmapper.discovery import DiscoveryClient, RootDiscovery
from restmapper.errors import ObjectNotFoundError, RestMapperError
from restmapper.mapper._source import CacheSource
from restmapper.model import APIResourceList, GroupVersion
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock
from restmapper.transport.base import Transport
from restmapper.transport.config import resolve_config
from restmapper.watch import Watcher

DEPLOYMENT = GroupKind("apps", "Deployment")


class RecordingSource:
    """A discovery source that is not a DiscoveryClient: it records what the cache asks and forwards."""

    def __init__(self, client: DiscoveryClient) -> None:
        self._client = client
        self.asked: list[str] = []

    @property
    def transport(self) -> Transport:
        return self._client.transport

    def fetch_core(self) -> RootDiscovery:
        self.asked.append("/api")
        return self._client.fetch_core()

    def fetch_named(self, *, listing: bool = False) -> RootDiscovery:
        self.asked.append("/apis")
        return self._client.fetch_named(listing=listing)

    def fetch_group_versions(
        self, gvs: Iterable[GroupVersion]
    ) -> tuple[dict[GroupVersion, APIResourceList], dict[GroupVersion, RestMapperError]]:
        gvs = list(gvs)
        self.asked.extend(gv.path for gv in gvs)
        return self._client.fetch_group_versions(gvs)


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_mapper_builds_its_cache_over_any_discovery_source(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    client = DiscoveryClient(InProcessTransport(cluster))
    source = RecordingSource(client)
    assert isinstance(source, DiscoverySource) and not isinstance(source, DiscoveryClient)
    mapper = LazyRESTMapper(source)
    expected = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster))).rest_mapping(DEPLOYMENT)
    assert mapper.rest_mapping(DEPLOYMENT) == expected
    assert isinstance(mapper.cache, DiscoveryCache) and mapper.cache.discovery is source
    assert "/apis" in source.asked  # the cache read through the source, not around it
    assert mapper.transport is client.transport


def test_mapper_takes_a_ready_cache_as_it_is() -> None:
    cluster = FakeCluster.embedded()
    cache = DiscoveryCache(DiscoveryClient(InProcessTransport(cluster)), ttl=7.0)
    assert isinstance(cache, CacheSource) and not isinstance(cache, DiscoverySource)
    with pytest.raises(TypeError, match="ttl"):  # options are the cache's: never silently ignored
        LazyRESTMapper(cache, ttl=99.0)
    mapper = LazyRESTMapper(cache)
    assert mapper.cache is cache and mapper.cache.ttl == 7.0
    assert mapper.rest_mapping(DEPLOYMENT).resource.resource == "deployments"


@pytest.mark.parametrize(("thing", "hint"), [("http://127.0.0.1:8080", "for a URL"), (object(), "wrap a transport"),
                                             (None, "wrap a transport")])
def test_mapper_over_anything_else_is_a_type_error(thing: object, hint: str) -> None:
    with pytest.raises(TypeError, match=f"takes a DiscoveryClient or a DiscoveryCache.*{hint}"):
        LazyRESTMapper(thing)  # type: ignore[arg-type]


class Invalidations:
    """The whole of what a watcher needs from a mapper (``WatchedMapper``): no lookups at all."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.groups: list[str] = []
        self.everything = 0
        self.changed = threading.Event()

    def invalidate_group(self, group: str) -> None:
        self.groups.append(group)
        self.changed.set()

    def invalidate_all(self) -> None:
        self.everything += 1


def test_watcher_needs_only_transport_and_invalidation() -> None:
    with widget_cluster() as served:
        target = Invalidations(DiscoveryClient.from_kubeconfig(str(served.kubeconfig_path)).transport)
        watcher = Watcher(target, watch_apiservices=False, watch_timeout=5.0)
        assert watcher.transport is target.transport
        with watcher:
            assert watcher.wait_until_healthy(30)
            assert target.everything == 1  # a start forgets what was cached before it
            assert target.changed.wait(30)  # the first list invalidates every CRD group it found
        assert "example.com" in target.groups


def test_object_cache_and_mapper_share_one_transport() -> None:
    with widget_cluster() as served:
        mapper = make_mapper(served.url)  # a transport that streams: the object cache refuses one that cannot
        cache = ObjectCache(mapper)
        try:
            assert cache.transport is mapper.transport is mapper.cache.transport
        finally:
            assert cache.stop(10)


def test_from_kubeconfig_and_from_incluster_name_their_class() -> None:
    for cls in (DiscoveryClient, LazyRESTMapper, ObjectCache, AsyncObjectCache):
        for name in ("from_kubeconfig", "from_incluster"):
            assert getattr(cls, name).__func__.__qualname__ == f"{cls.__name__}.{name}"
        assert "from_config" in vars(cls)
    for cls in (LazyRESTMapper, ObjectCache, AsyncObjectCache):
        for name in ("from_kubeconfig", "from_incluster"):  # refused before any configuration is read
            with pytest.raises(TypeError, match=rf"{cls.__name__}\.{name}\b.*no_such_option"):
                getattr(cls, name)(no_such_option=1)


def test_object_cache_from_config_splits_its_options() -> None:
    with widget_cluster() as served:
        cache = ObjectCache.from_config(resolve_config(str(served.kubeconfig_path)), sync_timeout=7.0, ttl=12.0)
        try:
            assert cache.mapper.cache.ttl == 12.0
            with pytest.raises(ObjectNotFoundError):
                cache.get("cm", "nothing-here", "default")  # read through a synced informer: the cache works
        finally:
            assert cache.stop(10)


@pytest.mark.parametrize("cls", [LazyRESTMapper, ObjectCache])
def test_misspelt_option_fails_before_any_config_is_read(cls: type, tmp_path: Path) -> None:
    # The kubeconfig does not exist: the option is checked first, and the error names the method called.
    with pytest.raises(TypeError, match=rf"{cls.__name__}\.from_kubeconfig\(\).*'tll'.*did you mean 'ttl'"):
        cls.from_kubeconfig(str(tmp_path / "missing"), tll=3)
    with pytest.raises(TypeError, match=rf"{cls.__name__}\.from_incluster\(\).*'tll'"):
        cls.from_incluster(str(tmp_path / "missing"), tll=3)


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
