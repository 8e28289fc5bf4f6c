"""Invariant: after an informer moves to another version, it never answers with objects of the old version.

Between the move and the first successful list at the new version the store still holds the old version's
objects (kept so the relist can diff them: no event storm). Until that list lands, reads must wait (and time
out with ``CacheSyncTimeoutError``) and the state must not say ``synced``: answering with the old apiVersion while
``mapping`` names the new one is confidently wrong (DESIGN 5.10).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from store_helpers import WIDGETS, object_cache, widget_cluster, widget_obj

from restmapper.store import CacheSyncTimeoutError
from restmapper.testing import ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def test_after_a_move_old_version_objects_are_never_served(served: ServedCluster) -> None:
    served.cluster.apply_object(widget_obj("w1"))
    with object_cache(served, sync_timeout=0.3) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)
        assert cache.get(WIDGETS, "w1", "default")["apiVersion"] == "example.com/v1"
        assert served.cluster.wait_for_watchers(1, 10)
        # The new version's list fails until we lift the fault: the move is made, its relist cannot land.
        fault = served.cluster.inject("/apis/example.com/v1beta1/widgets*", status=500, body="boom")
        served.cluster.set_served(WIDGETS, False, version="v1")
        assert informer.wait_until(lambda i: i.mapping is not None and i.mapping.resource.version == "v1beta1",
                                   timeout=10)
        assert informer.state != "synced"
        assert not informer.has_synced
        with pytest.raises(CacheSyncTimeoutError):
            informer.get("w1", "default")
        with pytest.raises(CacheSyncTimeoutError):
            cache.list(WIDGETS, "default")
        fault.remove()
        assert informer.wait_for_sync(10)
        assert cache.get(WIDGETS, "w1", "default")["apiVersion"] == "example.com/v1beta1"
        assert [o["apiVersion"] for o in cache.list(WIDGETS, "default")] == ["example.com/v1beta1"]
