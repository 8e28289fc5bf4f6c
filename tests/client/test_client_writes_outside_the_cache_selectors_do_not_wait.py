"""A write of an object the cache's informer cannot hold (outside its label or field selector, as the server
returned it) does not wait for the informer to see it: its list and watch never carry it.

The client's timeout is short: a client waiting for such an object raises WriteNotObservedError after it.
"""

from __future__ import annotations

import pytest
from helpers.store import cm, object_cache

from restmapper.client import Client
from restmapper.errors import ObjectNotFoundError
from restmapper.testing import FakeCluster


def _labelled(name: str, **labels: str) -> dict[str, object]:
    obj = cm(name)
    obj["metadata"]["labels"] = labels  # type: ignore[index]
    return obj


def test_create_outside_the_label_selector_returns_without_waiting() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_labelled("web", app="web"))
    with cluster.serve() as served, object_cache(served, label_selector="app=web") as cache:
        assert cache.wait_for_sync("configmaps", timeout=10)
        assert Client(cache, timeout=2.0).create(_labelled("db", app="db"))["metadata"]["name"] == "db"


def test_delete_outside_the_label_selector_returns_without_waiting() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_labelled("web", app="web"))
    cluster.apply_object(_labelled("db", app="db"))
    with cluster.serve() as served, object_cache(served, label_selector="app=web") as cache:
        assert cache.wait_for_sync("configmaps", timeout=10)
        Client(cache, timeout=2.0).delete("configmaps", "db", namespace="default")
        assert [o["metadata"]["name"] for o in cache.list("configmaps")] == ["web"]


def test_create_outside_the_field_selector_returns_without_waiting() -> None:
    cluster = FakeCluster()
    with cluster.serve() as served, object_cache(served, field_selector="metadata.name=web") as cache:
        assert cache.wait_for_sync("configmaps", timeout=10)
        assert Client(cache, timeout=2.0).create(cm("db"))["metadata"]["name"] == "db"


def test_update_moving_an_object_out_of_the_selector_returns_once_the_cache_dropped_it() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_labelled("web", app="web"))
    with cluster.serve() as served, object_cache(served, label_selector="app=web") as cache:
        assert cache.wait_for_sync("configmaps", timeout=10)
        held = cache.get("configmaps", "web", "default")
        moved = {**held, "metadata": {**held["metadata"], "labels": {"app": "other"}}}
        Client(cache, timeout=10.0).update(moved)
        with pytest.raises(ObjectNotFoundError):
            cache.get("configmaps", "web", "default")
