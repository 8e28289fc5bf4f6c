"""Errors of writes are typed as apimachinery reads them and name the request that failed:

- a 409 is a ConflictError unless its reason is one apimachinery knows as another (``AlreadyExists``): an empty
  or a future reason counts by the code (``errors.IsConflict``);
- a write that got no answer names its own HTTP method (not ``GET``);
- a write whose informer cannot list or watch (RBAC: 403) is not waited out for the whole timeout: the wait ends
  at once with the informer's ForbiddenError, carrying the server's Status (the client raises WriteNotObservedError
  chaining it, with what was written), sync and asyncio.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from helpers.client import cache as cache  # fixtures, used by name (the alias marks them used)
from helpers.client import served as served
from helpers.store import cm

from restmapper.aio import AsyncObjectCache
from restmapper.client import AsyncClient, Client
from restmapper.errors import (
    AlreadyExistsError,
    ConflictError,
    ForbiddenError,
    TransportError,
    WriteNotObservedError,
)
from restmapper.store import ObjectCache
from restmapper.testing import ServedCluster

CONFIGMAPS = "configmaps"
COLLECTION = "/api/v1/namespaces/default/configmaps"


def _status(code: int, reason: object) -> str:
    doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "message": f"refused {code}",
           "details": {"name": "a", "kind": "configmaps"}}
    if reason is not None:
        doc["reason"] = reason
    return json.dumps(doc)


@pytest.mark.parametrize(("reason", "expected"), [
    ("", ConflictError), ("SomeFutureReason", ConflictError), (None, ConflictError), ("Conflict", ConflictError),
    ("AlreadyExists", AlreadyExistsError), (["not", "a", "reason"], ConflictError)])
def test_a_409_is_typed_by_its_reason_then_its_code(served: ServedCluster, cache: ObjectCache, reason: object,
                                                     expected: type[Exception]) -> None:
    served.cluster.inject(COLLECTION, status=409, body=_status(409, reason), content_type="application/json",
                          times=1)
    with pytest.raises(expected) as caught:
        Client(cache).create(cm("a"))
    assert type(caught.value) is expected


@pytest.mark.parametrize(("method", "write"), [
    ("POST", lambda c: c.create(cm("a"))),
    ("PUT", lambda c: c.update(cm("a"))),
    ("PATCH", lambda c: c.patch(CONFIGMAPS, "a", {"data": {"k": "2"}}, "default")),
    ("DELETE", lambda c: c.delete(CONFIGMAPS, "a", "default"))])
def test_a_write_without_an_answer_names_its_method(served: ServedCluster, cache: ObjectCache, method: str,
                                                    write: object) -> None:
    served.cluster.apply_object(cm("a", k="1"))
    path = COLLECTION if method == "POST" else f"{COLLECTION}/a"
    served.cluster.inject(path, reset=True)
    with pytest.raises(TransportError) as caught:
        write(Client(cache))  # type: ignore[operator]
    assert str(caught.value).startswith(f"{method} {path}:"), str(caught.value)


FORBIDDEN = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                        "code": 403, "message": 'configmaps is forbidden: User "bot" cannot list resource',
                        "details": {"kind": "configmaps"}})


def _forbidden_informer(served: ServedCluster, cache: ObjectCache) -> None:
    served.cluster.inject("/api/v1/configmaps", status=403, body=FORBIDDEN, content_type="application/json")
    assert cache.informer(CONFIGMAPS).wait_for_state("failing", timeout=10)  # it exists, and fails


def test_a_write_whose_informer_is_forbidden_ends_its_wait_at_once(served: ServedCluster,
                                                                   cache: ObjectCache) -> None:
    _forbidden_informer(served, cache)
    started = time.monotonic()
    with pytest.raises(WriteNotObservedError) as caught:
        Client(cache, timeout=30).create(cm("a", k="1"))
    assert time.monotonic() - started < 10  # not the 30 s timeout
    cause = caught.value.__cause__
    assert isinstance(cause, ForbiddenError) and cause.server_status is not None
    assert cause.server_status["reason"] == "Forbidden"
    assert caught.value.written["metadata"]["name"] == "a"  # the write happened
    assert served.cluster.get_object(CONFIGMAPS, "a", "default") is not None
    with pytest.raises(ForbiddenError):  # the cache's own wait ends the same way
        cache.wait_for(CONFIGMAPS, "a", "default", resource_version="1", timeout=30)


def test_an_async_write_whose_informer_is_forbidden_ends_its_wait_at_once(served: ServedCluster,
                                                                          cache: ObjectCache) -> None:
    _forbidden_informer(served, cache)
    served.cluster.apply_object(cm("b", k="1"))

    async def scenario() -> None:
        client = AsyncClient(AsyncObjectCache(cache), timeout=30)
        for write in (client.create(cm("a", k="1")), client.delete(CONFIGMAPS, "b", "default")):
            with pytest.raises(WriteNotObservedError) as caught:
                await asyncio.wait_for(write, 10)
            assert isinstance(caught.value.__cause__, ForbiddenError)

    asyncio.run(scenario())
