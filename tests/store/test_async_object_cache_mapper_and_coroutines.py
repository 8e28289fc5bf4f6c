"""AsyncObjectCache exposes its cache's mapper as the sync cache does, and its methods are coroutines exactly where
the README says so."""

from __future__ import annotations

import inspect

import pytest
from helpers.store import object_cache

from restmapper.aio import AsyncObjectCache
from restmapper.testing import FakeCluster

COROUTINES = {"start", "informer", "get", "list", "wait_for_sync", "wait_for", "wait_for_deleted", "add_handler",
              "aclose"}
PLAIN = {"informers", "remove_handler", "from_kubeconfig", "from_incluster", "from_config"}


def test_async_object_cache_has_the_read_only_mapper_of_its_cache() -> None:
    with FakeCluster().serve() as served, object_cache(served) as cache:
        wrapped = AsyncObjectCache(cache)
        assert wrapped.mapper is cache.mapper
        with pytest.raises(AttributeError):
            wrapped.mapper = cache.mapper  # type: ignore[misc]


def test_async_object_cache_methods_are_coroutines_where_the_readme_says() -> None:
    public = {n for n in dir(AsyncObjectCache) if not n.startswith("_")}
    assert public == COROUTINES | PLAIN | {"mapper"}
    for name in COROUTINES | PLAIN:
        fn = inspect.getattr_static(AsyncObjectCache, name)
        assert inspect.iscoroutinefunction(getattr(fn, "__func__", fn)) == (name in COROUTINES), name
