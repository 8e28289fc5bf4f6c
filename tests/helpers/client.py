"""Fixtures shared by the client tests: the Widget cluster served on loopback and an object cache over it.

Import them into a test module (``from helpers.client import cache, served``) to use them by name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.store import object_cache, widget_cluster
from restmapper.store import ObjectCache
from restmapper.testing import ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    """The Widget cluster (``helpers.store.widget_cluster``) served on loopback for the test."""
    with widget_cluster() as served:
        yield served


@pytest.fixture
def cache(served: ServedCluster) -> Iterator[ObjectCache]:
    """A started object cache over ``served`` (``helpers.store.object_cache``), stopped after the test."""
    with object_cache(served) as cache:
        yield cache
