"""A constructor that raised leaves a half-built object in its traceback's frames, where debuggers and
``pytest --showlocals`` call ``repr()`` on it: that repr says the construction did not finish, and never raises
in turn (an AttributeError there hides the error the user needs to read)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers.watch import make_mapper

from restmapper.client import AsyncClient, Client
from restmapper.leader import LeaderElector
from restmapper.leader.aio import AsyncLeaderElector
from restmapper.store import ObjectCache
from restmapper.transport import RequestsTransport

URL = "http://127.0.0.1:1"

FAILING: dict[str, Callable[[], Any]] = {
    "ObjectCache": lambda: ObjectCache(make_mapper(URL), sync_timeout=-1),
    "Client": lambda: Client("cache"),  # type: ignore[arg-type]
    "AsyncClient": lambda: AsyncClient("cache"),  # type: ignore[arg-type]
    "LeaderElector": lambda: LeaderElector(make_mapper(URL), "lease", "default", lease_duration=-1),
    "AsyncLeaderElector": lambda: AsyncLeaderElector(make_mapper(URL), "lease", "default", lease_duration=-1),
    "RequestsTransport": lambda: RequestsTransport(URL, token=3),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", FAILING)
def test_repr_of_an_object_whose_constructor_raised(name: str) -> None:
    with pytest.raises(Exception) as info:
        FAILING[name]()
    tb = info.tb
    half_built = []
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("self")
        if type(candidate).__name__ == name:
            half_built.append(candidate)
        tb = tb.tb_next
    assert half_built, "the constructor raised before its own frame"
    for obj in half_built:
        assert repr(obj) == f"{name}(<construction did not finish>)"
