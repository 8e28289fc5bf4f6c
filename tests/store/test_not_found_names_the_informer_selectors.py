"""A cache read that finds no object says, when the informer lists with selectors, that the cache holds only
objects matching them (the server may have the object); without selectors the message is unchanged."""

from __future__ import annotations

import pytest
from helpers.store import cm, object_cache

from restmapper.errors import ObjectNotFoundError
from restmapper.testing import FakeCluster


def test_not_found_outside_the_label_selector_names_the_selector() -> None:
    cluster = FakeCluster()
    db = cm("db")
    db["metadata"]["labels"] = {"app": "db"}
    cluster.apply_object(db)
    with cluster.serve() as served, object_cache(served, label_selector="app=web") as cache:
        with pytest.raises(ObjectNotFoundError) as caught:
            cache.get("configmaps", "db", "default")
        assert caught.value.selectors == "label selector 'app=web'"
        assert "holds only objects matching its label selector 'app=web'" in str(caught.value)
        with pytest.raises(ObjectNotFoundError, match="label selector 'app=web'"):
            cache.wait_for("configmaps", "db", "default", resource_version="1", timeout=5.0)


def test_not_found_without_selectors_has_no_selector_hint() -> None:
    with FakeCluster().serve() as served, object_cache(served) as cache:
        with pytest.raises(ObjectNotFoundError) as caught:
            cache.get("configmaps", "db", "default")
        assert caught.value.selectors == "" and str(caught.value) == "ConfigMap 'db' not found in namespace " \
            "'default' (object cache)"
