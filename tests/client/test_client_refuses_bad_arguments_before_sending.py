"""The client refuses what cannot mean one well-formed write before anything is sent, sync and asyncio:

- a single-object verb (patch, delete) without a name: a missing name would address the collection, where a
  DELETE deletes every object (deletecollection);
- a body holding NaN or Infinity (JSON has neither: the server answers 400 and a lenient one would store what no
  reader parses) or nested too deeply to encode;
- a timeout that is not a positive, finite number of seconds (a bool is no number of seconds);
- ``apply(force=...)`` that is not a bool.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import pytest
from helpers.client import cache as cache  # fixtures, used by name (the alias marks them used)
from helpers.client import served as served
from helpers.store import cm

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import InvalidArgumentError
from restmapper.store import ObjectCache
from restmapper.testing import ServedCluster

CONFIGMAPS = "configmaps"


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


Call = Callable[[Any], Any]
REFUSED: dict[str, tuple[type[Exception], Call]] = {
    "delete without a name": (TypeError, lambda c: c.delete(CONFIGMAPS, None, "default")),
    "delete with an empty name": (InvalidArgumentError, lambda c: c.delete(CONFIGMAPS, "", "default")),
    "patch without a name": (TypeError, lambda c: c.patch(CONFIGMAPS, None, {"data": {}}, "default")),
    "patch with an empty name": (InvalidArgumentError, lambda c: c.patch(CONFIGMAPS, "", {"data": {}}, "default")),
    "create with NaN": (InvalidArgumentError, lambda c: c.create({**cm("n"), "data": {"k": math.nan}})),
    "update with Infinity": (InvalidArgumentError, lambda c: c.update({**cm("a"), "data": {"k": math.inf}})),
    "patch with -Infinity": (InvalidArgumentError,
                             lambda c: c.patch(CONFIGMAPS, "a", {"data": {"k": -math.inf}}, "default")),
    "json patch with NaN": (InvalidArgumentError, lambda c: c.patch(
        CONFIGMAPS, "a", [{"op": "add", "path": "/data/k", "value": math.nan}], "default", "json")),
    "apply with NaN": (InvalidArgumentError, lambda c: c.apply({**cm("a"), "data": {"k": math.nan}}, "me")),
    "create nested too deeply": (InvalidArgumentError, lambda c: c.create({**cm("d"), "data": _deep(5000)})),
    "apply with force='no'": (TypeError, lambda c: c.apply(cm("a"), "me", force="no")),
    "apply with force=1": (TypeError, lambda c: c.apply(cm("a"), "me", force=1)),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_call_sends_nothing(served: ServedCluster, cache: ObjectCache, case: str) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a", k="1"))
    cluster.apply_object(cm("b", k="1"))
    assert cache.wait_for_sync(CONFIGMAPS, 10)
    expected, call = REFUSED[case]
    cluster.clear_requests()
    with pytest.raises(expected):
        call(Client(cache, timeout=5))
    assert [(r.method, r.path) for r in cluster.requests if r.method != "GET"] == []
    assert sorted(o["metadata"]["name"] for o in cluster.list_objects(CONFIGMAPS, "default")) == ["a", "b"]


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_async_call_sends_nothing(served: ServedCluster, cache: ObjectCache, case: str) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a", k="1"))
    assert cache.wait_for_sync(CONFIGMAPS, 10)
    expected, call = REFUSED[case]
    cluster.clear_requests()

    async def scenario() -> None:
        with pytest.raises(expected):
            await call(AsyncClient(AsyncObjectCache(cache), timeout=5))

    asyncio.run(scenario())
    assert [(r.method, r.path) for r in cluster.requests if r.method != "GET"] == []


def test_the_refusal_of_a_non_finite_value_names_where_it_is(cache: ObjectCache) -> None:
    with pytest.raises(InvalidArgumentError, match=r"data\.items\[1\]"):
        Client(cache).create({**cm("n"), "data": {"items": [1.0, math.nan]}})


BAD_TIMEOUTS: list[tuple[object, type[Exception]]] = [
    (math.inf, InvalidArgumentError), (math.nan, InvalidArgumentError), (0, InvalidArgumentError),
    (-1, InvalidArgumentError), (True, TypeError), ("5", TypeError), (None, TypeError)]


@pytest.mark.parametrize(("timeout", "expected"), BAD_TIMEOUTS, ids=[repr(t) for t, _ in BAD_TIMEOUTS])
def test_a_client_timeout_must_be_a_positive_finite_number(cache: ObjectCache, timeout: object,
                                                           expected: type[Exception]) -> None:
    with pytest.raises(expected):
        Client(cache, timeout=timeout)  # type: ignore[arg-type]
    with pytest.raises(expected):
        AsyncClient(AsyncObjectCache(cache), timeout=timeout)  # type: ignore[arg-type]


WAIT_TIMEOUTS = [t for t in BAD_TIMEOUTS if t[0] != 0]


@pytest.mark.parametrize(("timeout", "expected"), WAIT_TIMEOUTS, ids=[repr(t) for t, _ in WAIT_TIMEOUTS])
def test_a_cache_wait_timeout_must_be_a_finite_number(served: ServedCluster, cache: ObjectCache, timeout: object,
                                                      expected: type[Exception]) -> None:
    served.cluster.apply_object(cm("a", k="1"))
    with pytest.raises(expected):
        cache.wait_for(CONFIGMAPS, "a", "default", timeout=timeout)  # type: ignore[arg-type]
    with pytest.raises(expected):
        cache.wait_for_deleted(CONFIGMAPS, "a", "default", uid=None, timeout=timeout)  # type: ignore[arg-type]

    async def scenario() -> None:
        acache = AsyncObjectCache(cache)
        with pytest.raises(expected):
            await acache.wait_for(CONFIGMAPS, "a", "default", timeout=timeout)  # type: ignore[arg-type]
        with pytest.raises(expected):
            await acache.wait_for_deleted(CONFIGMAPS, "a", "default", uid=None,
                                          timeout=timeout)  # type: ignore[arg-type]

    asyncio.run(scenario())


def test_a_huge_finite_timeout_waits_rather_than_overflowing(served: ServedCluster, cache: ObjectCache) -> None:
    """Beyond ``threading.TIMEOUT_MAX`` a wait is waited in slices: a write read back later still returns."""
    cluster = served.cluster
    assert cache.wait_for_sync(CONFIGMAPS, 10)
    cluster.delay_watch_events(0.05)  # the wait must block at least once
    try:
        created = Client(cache, timeout=1e300).create(cm("huge", k="1"))
        assert cache.get(CONFIGMAPS, "huge", "default")["metadata"]["uid"] == created["metadata"]["uid"]
        gone = cluster.delete_object(CONFIGMAPS, "huge", "default")
        cache.wait_for_deleted(CONFIGMAPS, "huge", "default", uid=created["metadata"]["uid"],
                               resource_version=gone["metadata"]["resourceVersion"], timeout=1e300)
    finally:
        cluster.delay_watch_events(0)
