"""An object of a metadata_only cache (``PartialObjectMetadata``) cannot be written back with create, update,
update_status or apply: the client refuses it before sending, with a typed error naming patch and apply."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers.store import cm, object_cache

from restmapper.client import Client
from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster

WRITES: dict[str, Callable[[Client, dict[str, Any]], object]] = {
    "create": lambda c, o: c.create(o),
    "update": lambda c, o: c.update(o),
    "update_status": lambda c, o: c.update_status(o),
    "apply": lambda c, o: c.apply(o, field_manager="me"),
}


@pytest.mark.parametrize("verb", list(WRITES))
def test_writing_back_partial_object_metadata_is_refused_before_sending(verb: str) -> None:
    cluster = FakeCluster()
    cluster.apply_object(cm("web", x="1"))
    with cluster.serve() as served, object_cache(served, metadata_only=True) as cache:
        held = cache.get("configmaps", "web", "default")
        assert held["kind"] == "PartialObjectMetadata"
        writes_before = [r for r in cluster.requests if r.method != "GET"]
        with pytest.raises(InvalidArgumentError, match=r"PartialObjectMetadata.*patch"):
            WRITES[verb](Client(cache, timeout=5.0), held)
        assert [r for r in cluster.requests if r.method != "GET"] == writes_before
        patched = Client(cache, timeout=5.0).patch("configmaps", "web", {"metadata": {"labels": {"a": "b"}}},
                                                   namespace="default")
        assert patched["metadata"]["labels"] == {"a": "b"} and patched["data"] == {"x": "1"}
