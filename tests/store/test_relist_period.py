"""``relist_period`` (off by default, as client-go): a server that drops an event without any 410 (a lost
``DELETED``) leaves the object cached until the next relist; the period bounds that."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from helpers.store import cm
from helpers.watch import make_mapper

from restmapper.errors import InvalidArgumentError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster


class _NoDeletes:
    """A watch stream without its DELETED events."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.status, self.headers = inner.status, inner.headers

    def iter_lines(self) -> Iterator[bytes]:
        return (line for line in self.inner.iter_lines() if b'"type":"DELETED"' not in line)

    def read(self) -> bytes:
        return bytes(self.inner.read())

    def close(self) -> None:
        self.inner.close()


class LosesDeletes:
    """A transport whose watches lose every DELETED event (a server or proxy dropping events, no 410)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.base_url, self.identity = inner.base_url, inner.identity

    def get(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        return self.inner.get(path, headers, **kw)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, **kw: Any) -> Any:
        return _NoDeletes(self.inner.stream(path, headers, **kw))

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("keep"))
    cluster.apply_object(cm("gone"))
    with cluster.serve() as s:
        yield s


def _cache(served: ServedCluster, **options: Any) -> ObjectCache:
    mapper = make_mapper(served.url)
    return ObjectCache(mapper, transport=LosesDeletes(mapper.transport), watch_timeout=1, sync_timeout=10, **options)


def test_relist_period_repairs_a_lost_delete(served: ServedCluster, watch_list: bool) -> None:
    cache = _cache(served, relist_period=0.5, watch_list=watch_list)
    try:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and served.cluster.wait_for_watchers(1, 10)
        served.cluster.delete_object("configmaps", "gone", "default")
        assert informer.wait_until(lambda i: not any(o["metadata"]["name"] == "gone" for o in i.list("default")),
                                   timeout=10)
        assert informer.stats.lists >= 2
    finally:
        assert cache.stop(10)


def test_without_relist_period_a_lost_delete_stays_as_in_client_go(served: ServedCluster, watch_list: bool) -> None:
    cache = _cache(served, watch_list=watch_list)
    try:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10) and served.cluster.wait_for_watchers(1, 10)
        served.cluster.delete_object("configmaps", "gone", "default")
        assert informer.wait_until(lambda i: i.stats.connects >= 3, timeout=10)  # two watches ended since
        assert informer.get("gone", "default") and informer.stats.lists == 1
    finally:
        assert cache.stop(10)


def test_relist_period_must_be_positive(served: ServedCluster) -> None:
    with pytest.raises(InvalidArgumentError, match="relist_period"):
        ObjectCache(make_mapper(served.url), relist_period=0)
