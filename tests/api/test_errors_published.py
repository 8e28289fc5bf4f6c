"""``restmapper.errors`` is the one import path of every error, though their code lives in private modules
(``errors/_core.py``, ``errors/_objects.py``: the house limit of ~600 lines a module): each name is published with
``__module__ == "restmapper.errors"``, so tracebacks, ``repr`` of the class and pickles say ``restmapper.errors.X``
as they did when it was one module (pickles made then still load)."""

from __future__ import annotations

import pickle
import traceback
from typing import Any

import pytest

from restmapper import errors
from restmapper.model import GroupVersion

PUBLISHED = [*errors.__all__, "release_frames", "remembered_suffix", "replayed_suffix"]


@pytest.mark.parametrize("name", PUBLISHED)
def test_every_name_is_published_as_restmapper_errors(name: str) -> None:
    value = getattr(errors, name)
    assert value.__module__ == "restmapper.errors"
    assert getattr(errors, value.__qualname__) is value  # pickle's lookup: module.qualname
    if isinstance(value, type):
        assert repr(value) == f"<class 'restmapper.errors.{name}'>"


def test_a_traceback_names_restmapper_errors() -> None:
    exc = errors.ObjectNotFoundError("Widget.example.com", "ns", "w1")
    assert traceback.format_exception_only(exc)[0].startswith("restmapper.errors.ObjectNotFoundError: ")
    assert traceback.format_exception_only(errors.ConfigError("x"))[0] == "restmapper.errors.ConfigError: x\n"


def _samples() -> list[Any]:
    status = errors.APIStatusError("/apis/apps/v1", 503, "unavailable")
    return [errors.ObjectNotFoundError("Widget.example.com", "ns", "w1"),
            errors.GroupDiscoveryError("apps", {GroupVersion("apps", "v1"): status})]


def test_pickles_name_only_the_public_module() -> None:
    for exc in [*_samples(), errors.CacheSyncTimeoutError("Widget.example.com", 1.0, None),
                errors.InformerStoppedError("stopped"), errors.PartialDiscoveryWarning("partial")]:
        data = pickle.dumps(exc, protocol=4)
        assert b"restmapper.errors" in data and b"restmapper.errors." not in data, data  # no private module
        copy = pickle.loads(data)
        assert type(copy) is type(exc) and str(copy) == str(exc)
        assert pickle.dumps(copy, protocol=4) == data  # every field as it was


# Made by 4754a5e (errors.py one module): pickle.dumps(_samples(), protocol=4).
BEFORE_THE_SPLIT = (
    b"\x80\x04\x95l\x02\x00\x00\x00\x00\x00\x00]\x94(\x8c\x11restmapper.errors\x94\x8c\x08_rebuild\x94\x93\x94h\x01"
    b"\x8c\x13ObjectNotFoundError\x94\x93\x94\x8cBWidget.example.com 'w1' not found in namespace 'ns' (object cache)"
    b"\x94\x85\x94}\x94(\x8c\x04kind\x94\x8c\x12Widget.example.com\x94\x8c\tnamespace\x94\x8c\x02ns\x94\x8c\x04name"
    b"\x94\x8c\x02w1\x94u\x87\x94R\x94h\x03h\x01\x8c\x13GroupDiscoveryError\x94\x93\x94\x8cbunable to retrieve the "
    b"complete list of server APIs: apps/v1: /apis/apps/v1: HTTP 503: unavailable\x94\x85\x94}\x94(\x8c\x06failed"
    b"\x94}\x94\x8c\x10restmapper.model\x94\x8c\x0cGroupVersion\x94\x93\x94)\x81\x94]\x94(\x8c\x04apps\x94\x8c\x02v1"
    b"\x94ebh\x03h\x01\x8c\x0eAPIStatusError\x94\x93\x94\x8c$/apis/apps/v1: HTTP 503: unavailable\x94\x85\x94}\x94("
    b"\x8c\x04path\x94\x8c\r/apis/apps/v1\x94\x8c\ttransient\x94\x88\x8c\x06status\x94M\xf7\x01\x8c\x06reason\x94"
    b"\x8c\x0bunavailable\x94\x8c\x0bretry_after\x94Nu\x87\x94R\x94s\x8c\x07partial\x94N\x8c\x05group\x94h\x1d\x8c"
    b"\x05asked\x94\x8c\x00\x94\x8c\x04hint\x94h0\x8c\tdocuments\x94}\x94u\x87\x94R\x94e."
)


def test_pickles_made_before_the_split_still_load() -> None:
    loaded = pickle.loads(BEFORE_THE_SPLIT)
    for old, new in zip(loaded, _samples(), strict=True):
        assert type(old) is type(new) and str(old) == str(new)
    assert loaded[1].failed[GroupVersion("apps", "v1")].status == 503
    assert pickle.dumps(_samples(), protocol=4) == BEFORE_THE_SPLIT  # and new pickles are the same bytes
