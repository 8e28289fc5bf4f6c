"""With lazy=False, the error for a kind whose informer was not started names the call that was refused (a
handler registration is no read)."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest
from helpers.store import object_cache

from restmapper.errors import InformerNotStartedError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster

CALLS: dict[str, Callable[[ObjectCache], object]] = {
    "cache.add_handler()": lambda c: c.add_handler("cm", on_add=print),
    "cache.get()": lambda c: c.get("cm", "a", "default"),
    "cache.list()": lambda c: c.list("cm"),
    "cache.wait_for_sync()": lambda c: c.wait_for_sync("cm", 1.0),
}


@pytest.mark.parametrize("call", list(CALLS))
def test_informer_not_started_error_names_the_call_made(call: str) -> None:
    with FakeCluster().serve() as served, object_cache(served, lazy=False) as cache, \
            pytest.raises(InformerNotStartedError) as caught:
        CALLS[call](cache)
    assert caught.value.call == call and f"does not start one on {call}:" in str(caught.value)
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (copy.kind, copy.call, str(copy)) == (caught.value.kind, call, str(caught.value))
