"""Every seconds option (object cache, watcher, reflector, waits) is a finite real number: NaN or infinity would make
a wait that never ends or a loop that never waits, so each is refused up front with a typed error naming it, as a
bool or a string is (the mapper's cache timings too; ``ttl=None`` means never expire)."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest
from helpers.watch import make_mapper

from restmapper import LazyRESTMapper
from restmapper.cache import DiscoveryCache
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, InProcessTransport
from restmapper.transport import check_seconds
from restmapper.watch import Watcher
from restmapper.watch.reflector import Reflector

URL = "http://127.0.0.1:1"
BAD = [math.nan, math.inf, -math.inf]

CACHE_OPTIONS = ["watch_timeout", "watch_idle_timeout", "relist_period", "resync", "sync_timeout", "backoff_initial",
                 "backoff_max", "probe_initial", "probe_max"]


@pytest.mark.parametrize("value", BAD, ids=str)
@pytest.mark.parametrize("option", CACHE_OPTIONS)
def test_object_cache_refuses_a_non_finite_seconds_option(option: str, value: float) -> None:
    with pytest.raises(InvalidArgumentError, match=option):
        ObjectCache(make_mapper(URL), **{option: value})


@pytest.mark.parametrize("value", BAD, ids=str)
@pytest.mark.parametrize("option", ["watch_timeout", "watch_idle_timeout", "backoff_initial", "backoff_max"])
def test_watcher_refuses_a_non_finite_seconds_option(option: str, value: float) -> None:
    with pytest.raises(InvalidArgumentError, match=option):
        Watcher(make_mapper(URL), **{option: value})


@pytest.mark.parametrize("value", ["70", True, None])
def test_watcher_refuses_a_seconds_option_that_is_not_a_number(value: Any) -> None:
    with pytest.raises(TypeError, match="watch_idle_timeout"):
        Watcher(make_mapper(URL), watch_idle_timeout=value)


@pytest.mark.parametrize("value", BAD, ids=str)
@pytest.mark.parametrize("option", ["watch_timeout", "idle_timeout", "relist_period"])
def test_reflector_refuses_a_non_finite_seconds_option(option: str, value: float) -> None:
    mapper = make_mapper(URL)
    with pytest.raises(InvalidArgumentError, match=option):
        Reflector(mapper.transport, "/api/v1/configmaps", None, threading.Event(),  # type: ignore[arg-type]
                  **{option: value})


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_wait_refuses_a_non_finite_timeout(value: float) -> None:
    cache = ObjectCache(make_mapper(URL))
    with pytest.raises(InvalidArgumentError, match="timeout"):
        cache.wait_for("cm", "a", "default", resource_version="1", timeout=value)


@pytest.mark.parametrize(("value", "optional", "positive", "error"), [
    (0, False, True, InvalidArgumentError),
    (0, False, False, None),
    (0.5, False, True, None),
    (None, True, True, None),
    (None, False, True, TypeError),
    (False, False, False, TypeError),
    ("1", False, True, TypeError),
    (-1, False, False, InvalidArgumentError),
    (math.nan, True, False, InvalidArgumentError),
])
def test_check_seconds(value: Any, optional: bool, positive: bool, error: type[Exception] | None) -> None:
    if error is None:
        check_seconds("f", "x", value, optional=optional, positive=positive)
    else:
        with pytest.raises(error, match="x"):
            check_seconds("f", "x", value, optional=optional, positive=positive)


@pytest.mark.parametrize(("timeout", "poll_interval"), [(math.nan, 1.0), (math.inf, 1.0), (1.0, math.nan),
                                                        (1.0, math.inf)])
def test_waiting_for_a_kind_refuses_non_finite_seconds(timeout: float, poll_interval: float) -> None:
    from restmapper.mapper.wait import wait_for_mapping
    from restmapper.model import GroupKind

    with pytest.raises(InvalidArgumentError):
        wait_for_mapping(make_mapper(URL), GroupKind("example.com", "Widget"), timeout=timeout,
                         poll_interval=poll_interval)


def _embedded_mapper(**options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), **options)


@pytest.mark.parametrize("option", ["ttl", "miss_refresh_interval", "max_stale"])
@pytest.mark.parametrize("value", ["5", b"5", True, [5]])
def test_cache_timings_must_be_numbers_of_seconds(option: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"{option} must be a number of seconds"):
        _embedded_mapper(**{option: value})


def test_ttl_none_and_numbers_are_accepted() -> None:
    for ttl in (None, 0, 5, 2.5):
        _embedded_mapper(ttl=ttl)


@pytest.mark.parametrize("value", BAD, ids=str)
@pytest.mark.parametrize("option", ["ttl", "miss_refresh_interval", "max_stale"])
def test_cache_timings_refuse_nan_and_infinity(option: str, value: float) -> None:
    with pytest.raises(InvalidArgumentError, match=option):
        _embedded_mapper(**{option: value})
    with pytest.raises(InvalidArgumentError, match=option):
        DiscoveryCache(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), **{option: value})


@pytest.mark.parametrize(("option", "value"), [("timeout", "1"), ("poll_interval", math.nan)])
def test_a_mapper_wait_names_wait_for_in_its_errors(option: str, value: Any) -> None:
    mapper = _embedded_mapper()
    with pytest.raises((TypeError, InvalidArgumentError), match=rf"^wait_for\(\) takes {option}"):
        mapper.wait_for("deployments", **{"timeout": 1.0, option: value})
