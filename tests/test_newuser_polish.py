"""New-user review: object cache errors name the cache's own call, ``api-resources --api-group`` is complete when
only other groups fail, ``resolve -o json`` says when a category's answer is partial, and a bad call names the
public class."""

from __future__ import annotations

import inspect
import io
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from restmapper import LazyRESTMapper
from restmapper.cli import Session, run
from restmapper.cli._embedded import EmbeddedTransport
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError
from restmapper.model import APIResource
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, InProcessTransport
from restmapper.transport import RequestsTransport

METRICS = [APIResource("pods", "pod", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "node", False, "NodeMetrics", ("get", "list"))]


# --- 1: the object cache's argument errors name the cache's call ------------------------------------------------

@pytest.fixture()
def cache() -> Iterator[ObjectCache]:
    with FakeCluster.embedded().serve() as served:  # served: the object cache refuses a transport that cannot watch
        cache = ObjectCache(LazyRESTMapper(DiscoveryClient(RequestsTransport(served.url))), sync_timeout=5)
        yield cache
        cache.stop()


CASES: list[tuple[str, Callable[[ObjectCache], Any], str]] = [
    ("list-category", lambda c: c.list("all"), 'cache.list("'),
    ("get-type-name", lambda c: c.get("deploy/web", "web", "default"), 'cache.get("deploy", "web", ...)'),
    ("list-type-name", lambda c: c.list("deploy/web"), 'cache.list("deploy")'),
    ("list-comma", lambda c: c.list("deploy,svc"), 'cache.list("deploy"), cache.list("svc")'),
    ("list-manifest", lambda c: c.list("apps/v1 Deployment"), 'cache.list("Deployment.v1.apps")'),
    ("list-api-version-type", lambda c: c.list("apps/v1/deployments"), 'cache.list("deployments.v1.apps")'),
    ("list-space", lambda c: c.list("deploy "), 'cache.list("deploy")'),
    ("wait-type-name", lambda c: c.wait_for_sync("deploy/web", 1), 'cache.wait_for_sync("deploy", ...)'),
    ("informer-category", lambda c: c.informer("all"), 'cache.informer("'),
]


@pytest.mark.parametrize(("call", "wanted"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_cache_errors_name_the_cache_call(cache: ObjectCache, call: Callable[[ObjectCache], Any],
                                          wanted: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        call(cache)
    text = str(info.value)
    assert wanted in text, text
    assert "resolve(" not in text and "resolve_all(" not in text and "rest_mapping(" not in text, text


def test_cache_category_error_names_a_member_that_lists(cache: ObjectCache) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        cache.list("all")
    text = str(info.value)
    assert 'cache.list() takes one resource type; "all" is a category' in text, text
    member = text.rsplit('cache.list("', 1)[1].split('"')[0]
    assert isinstance(cache.list(member), list)  # the suggestion is a type the cache lists


def test_cache_still_lists_a_good_type(cache: ObjectCache) -> None:
    assert isinstance(cache.list("deployments"), list)


# --- 2: api-resources --api-group is complete when only other groups failed -------------------------------------

def _broken(mode: str) -> Session:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    if mode == "aggregated":
        cluster.set_stale("metrics.k8s.io/v1beta1")
    else:
        cluster.inject("/apis/metrics.k8s.io/v1beta1", status=503, body="unavailable", content_type="text/plain")
    return Session(DiscoveryClient(EmbeddedTransport(cluster)))


def _cli(argv: list[str], session: Session) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(argv, session=session, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_api_group_filter_outside_the_failing_group_is_complete(mode: str) -> None:
    code, out, err = _cli(["api-resources", "--api-group", "apps", "--no-headers"], _broken(mode))
    assert (code, err) == (0, "")
    assert "deployments" in out and "metrics" not in out


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("flags", [["--api-group", "metrics.k8s.io"], []])
def test_failing_group_in_the_filter_or_no_filter_still_fails(mode: str, flags: list[str]) -> None:
    code, _, err = _cli(["api-resources", *flags], _broken(mode))
    assert code == 1
    assert err.startswith("error: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1")


# --- 3: resolve -o json says a category's answer is partial ----------------------------------------------------

@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_resolve_json_marks_a_partial_category(mode: str) -> None:
    code, out, err = _cli(["resolve", "-o", "json", "all,deploy,deployments.apps"], _broken(mode))
    assert code == 0 and "Warning:" in err
    objects = json.loads(out)
    assert isinstance(objects, list)
    of_all = [o for o in objects if o["input"] == "all"]
    of_deploy = [o for o in objects if o["input"] == "deploy"]
    of_deployments = [o for o in objects if o["input"] == "deployments.apps"]
    assert of_all and of_deploy and of_deployments
    # A category's members may be missing; a short name may be beaten by a real name in the unreadable version
    # (tests/test_weak_readings.py; a bare real name too, by a category it may declare); a name in a group is not.
    for o in of_all + of_deploy:
        assert o["partial"] is True and o["failedGroupVersions"] == ["metrics.k8s.io/v1beta1"], o
        assert {"group", "version", "resource", "kind", "namespaced"} <= o.keys()
    for o in of_deployments:
        assert "partial" not in o and "failedGroupVersions" not in o


def test_resolve_json_of_a_complete_category_has_no_partial_mark() -> None:
    out = io.StringIO()
    assert run(["resolve", "--embedded", "-o", "json", "all"], stdout=out, stderr=io.StringIO()) == 0
    assert all("partial" not in o for o in json.loads(out.getvalue()))


# --- 4: a bad call names the public class ----------------------------------------------------------------------

def test_unknown_keyword_names_lazy_restmapper() -> None:
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())))
    with pytest.raises(TypeError, match=r"^LazyRESTMapper\.resolve\(\) got an unexpected keyword argument"):
        mapper.resolve("deploy", namspace="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^LazyRESTMapper\.resolve_all\(\)"):
        mapper.resolve_all("deploy", bogus=1)  # type: ignore[call-arg]
    assert mapper.resolve("deploy").resource.resource == "deployments"


def _public_classes() -> list[type]:
    from restmapper.discovery import DiscoveryClient
    from restmapper.dynamic import SelfHealingDiscoverer, SelfHealingDynamicClient
    classes: list[type] = [LazyRESTMapper, DiscoveryClient, ObjectCache, SelfHealingDiscoverer,
                           SelfHealingDynamicClient]
    try:
        from restmapper.dynamic.kubernetes_aio import SelfHealingAioDiscoverer, SelfHealingAioDynamicClient
        classes += [SelfHealingAioDiscoverer, SelfHealingAioDynamicClient]
    except ImportError:
        pass
    try:
        from restmapper.dynamic.kubernetes_asyncio import (
            SelfHealingAsyncioDiscoverer,
            SelfHealingAsyncioDynamicClient,
        )
        classes += [SelfHealingAsyncioDiscoverer, SelfHealingAsyncioDynamicClient]
    except ImportError:
        pass
    return classes


@pytest.mark.parametrize("cls", _public_classes(), ids=lambda c: c.__name__)
def test_every_public_method_of_restmapper_names_the_public_class(cls: type) -> None:
    wrong = []
    for name, attr in inspect.getmembers(cls):
        if name.startswith("_") or isinstance(inspect.getattr_static(cls, name), property):
            continue
        func = getattr(attr, "__func__", attr)
        if not inspect.isfunction(func) or not func.__module__.startswith("restmapper"):
            continue
        if func.__qualname__ != f"{cls.__qualname__}.{name}":
            wrong.append(f"{name}: {func.__qualname__}")
    assert wrong == []


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_resolve_json_of_a_category_found_nowhere_as_its_group_failed_is_an_error(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [
        APIResource("pods", "pod", True, "PodMetrics", ("get", "list"), categories=("metricsonly",))])
    if mode == "aggregated":
        cluster.set_stale("metrics.k8s.io/v1beta1")
    else:
        cluster.inject("/apis/metrics.k8s.io/v1beta1", status=503, body="unavailable", content_type="text/plain")
    code, out, _ = _cli(["resolve", "-o", "json", "metricsonly,deployments.apps"],
                        Session(DiscoveryClient(EmbeddedTransport(cluster))))
    assert code == 1
    first, *rest = json.loads(out)
    assert first["input"] == "metricsonly" and first["reason"] == "DiscoveryFailed"  # could not tell: an error
    assert "metrics.k8s.io/v1beta1" in first["error"]
    assert [o["resource"] for o in rest] == ["deployments"] and "partial" not in rest[0]


def test_async_cache_errors_name_the_cache_call(cache: ObjectCache) -> None:
    import asyncio

    from restmapper.aio import AsyncObjectCache

    async def main() -> list[str]:
        acache = AsyncObjectCache(cache)
        texts = []
        for call in (acache.list("all"), acache.get("deploy/web", "web", "default"), acache.wait_for_sync("a,b", 1)):
            with pytest.raises(InvalidArgumentError) as info:
                await call
            texts.append(str(info.value))
        return texts

    listed, got, waited = asyncio.run(main())
    assert 'cache.list() takes one resource type; "all" is a category' in listed, listed
    assert 'cache.get("deploy", "web", ...)' in got, got
    assert 'cache.wait_for_sync("a", ...), cache.wait_for_sync("b", ...)' in waited, waited
