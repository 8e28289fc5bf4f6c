"""Fixtures shared by the client tests: the Widget cluster served on loopback and an object cache over it.

Import them into a test module (``from client_helpers import cache, served``) to use them by name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from store_helpers import object_cache, widget_cluster

from restmapper.store import ObjectCache
from restmapper.testing import ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    """The Widget cluster (``store_helpers.widget_cluster``) served on loopback for the test."""
    with widget_cluster() as served:
        yield served


@pytest.fixture
def cache(served: ServedCluster) -> Iterator[ObjectCache]:
    """A started object cache over ``served`` (``store_helpers.object_cache``), stopped after the test."""
    with object_cache(served) as cache:
        yield cache
