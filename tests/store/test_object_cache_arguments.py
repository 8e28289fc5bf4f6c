"""Rule: a wrong argument to the object cache is a clear error up front, never an internal error or a silent wait.

Every public argument of the ``ObjectCache`` and ``AsyncObjectCache`` constructors and read methods is checked by
type before anything starts: a ``TypeError`` naming the call and the argument (and what to pass instead, for the
mistakes users make: a kubeconfig path for the mapper, a dict of labels, an int resourceVersion). A transport that
cannot stream watches (the pytest plugin's ``mapper`` fixture) is refused when the cache is built, saying how to
get one that can. A resource-type argument the cache cannot take (a category, ``TYPE/NAME``, a comma list, a
manifest's pair) is an InvalidArgumentError naming the cache's own call (``cache.list("deploy")``), never the
mapper's. Sync and asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.store import cm, object_cache

from restmapper import LazyRESTMapper
from restmapper.aio import AsyncObjectCache
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, InProcessTransport, ServedCluster
from restmapper.transport import RequestsTransport


@pytest.fixture(scope="module")
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", x="1"))
    with cluster.serve() as s:
        yield s


@pytest.fixture(scope="module")
def cache(served: ServedCluster) -> Iterator[ObjectCache]:
    with object_cache(served) as c:
        yield c


def test_a_kubeconfig_path_for_the_mapper_names_from_kubeconfig() -> None:
    with pytest.raises(TypeError, match=r'ObjectCache\.from_kubeconfig\("/home/me/\.kube/config"\)'):
        ObjectCache("/home/me/.kube/config")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r'AsyncObjectCache\.from_kubeconfig\("/home/me/\.kube/config"\)'):
        AsyncObjectCache("/home/me/.kube/config")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LazyRESTMapper"):
        ObjectCache(DiscoveryClient(InProcessTransport(FakeCluster())))  # type: ignore[arg-type]


CONSTRUCTOR = [
    ("namespace", 5, "namespace as str"),
    ("resync", "60", "resync as a number"),
    ("sync_timeout", "30", "sync_timeout as a number"),
    ("sync_timeout", True, "sync_timeout as a number"),
    ("watch_timeout", None, "watch_timeout as a number"),
    ("page_size", 1.5, "page_size as an int"),
    ("backoff_initial", "1", "backoff_initial as a number"),
    ("backoff_max", [30], "backoff_max as a number"),
    ("probe_initial", "1", "probe_initial as a number"),
    ("probe_max", {}, "probe_max as a number"),
    ("transform", "drop_managed_fields", "transform as a callable"),
    ("sleep", 0.5, "sleep as a callable"),
    ("daemon", "yes", "daemon as a bool"),
    ("transport", "https://127.0.0.1:6443", "transport as a restmapper Transport"),
    ("watcher", object(), "watcher as a restmapper.watch.Watcher"),
]


@pytest.mark.parametrize(("option", "value", "expected"), CONSTRUCTOR, ids=[f"{o}={v!r}" for o, v, _ in CONSTRUCTOR])
def test_constructor_options_of_the_wrong_type_are_type_errors(served: ServedCluster, option: str, value: Any,
                                                              expected: str) -> None:
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(served.cluster)))
    with pytest.raises(TypeError, match=expected) as info:
        ObjectCache(mapper, **{"transport": _streaming(served), option: value})
    assert "ObjectCache()" in str(info.value)


def _streaming(served: ServedCluster) -> Any:
    from restmapper.transport import RequestsTransport

    return RequestsTransport(served.url)


def test_a_transport_that_cannot_stream_is_refused_up_front_saying_what_to_use(served: ServedCluster) -> None:
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(served.cluster)))  # the plugin's mapper fixture
    with pytest.raises(InvalidArgumentError, match="streams watches") as info:
        ObjectCache(mapper)
    assert "InProcessTransport" in str(info.value) and "object_cache fixture" in str(info.value)
    assert "cluster.serve()" in str(info.value)
    cache = ObjectCache(mapper, transport=_streaming(served))  # a streaming transport for lists and watches
    try:
        assert cache.get("cm", "a", "default")["data"] == {"x": "1"}
    finally:
        assert cache.stop()


READS: list[tuple[str, Callable[[ObjectCache], Any], str]] = [
    ("get-name", lambda c: c.get("cm", 5, "default"), "name as str"),
    ("get-name-none", lambda c: c.get("cm", None, "default"), "name as str"),
    ("get-namespace", lambda c: c.get("cm", "a", ["default"]), "namespace as str"),
    ("list-labels-dict", lambda c: c.list("cm", label_selector={"app": "web"}), "'app=web'"),
    ("list-fields-dict", lambda c: c.list("cm", field_selector={"metadata.name": "a"}), "'metadata.name=a'"),
    ("list-namespace", lambda c: c.list("cm", namespace=3), "namespace as str"),
    ("list-index", lambda c: c.list("cm", index=1, value="x"), "index as str"),
    ("list-value", lambda c: c.list("cm", index="x", value=1), "value as str"),
    ("wait_for-rv-int", lambda c: c.wait_for("cm", "a", "default", resource_version=42, timeout=5),
     "resourceVersions are strings: '42'"),
    ("wait_for-generation-str", lambda c: c.wait_for("cm", "a", "default", generation="2", timeout=5),
     "generation as an int"),
    ("wait_for-timeout-str", lambda c: c.wait_for("cm", "a", "default", timeout="5"), "timeout as a number"),
    ("wait_for-name", lambda c: c.wait_for("cm", 5, "default", timeout=5), "name as str"),
    ("wait_for_sync-timeout", lambda c: c.wait_for_sync("cm", "10"), "timeout as a number"),
    ("wait_for_deleted-uid", lambda c: c.wait_for_deleted("cm", "a", "default", uid=7, timeout=5), "uid as str"),
    ("wait_for_deleted-timeout", lambda c: c.wait_for_deleted("cm", "a", "default", uid=None, timeout="5"),
     "timeout as a number"),
    ("remove_handler-function", lambda c: c.remove_handler(print), "HandlerHandle that add_handler returned"),
    ("derived-build", lambda c: c.derived("cm", "build"), "build as a callable"),
    ("derived-dispose", lambda c: c.derived("cm", len, dispose=1), "dispose as a callable"),
    ("informer-remove_handler", lambda c: c.informer("cm").remove_handler(print), "HandlerHandle"),
    ("informer-get", lambda c: c.informer("cm").get(5, "default"), "name as str"),
    ("informer-by_index", lambda c: c.informer("cm").by_index("tier", 5), "value as str"),
    ("informer-add_indexer", lambda c: c.informer("cm").add_indexer(5, len), "index as str"),
    ("informer-list", lambda c: c.informer("cm").list(label_selector={"app": "web"}), "label_selector as str"),
    ("informer-wait_for", lambda c: c.informer("cm").wait_for("a", "default", resource_version=1, timeout=5),
     "resource_version as str"),
]


@pytest.mark.parametrize(("case", "read", "expected"), READS, ids=[c for c, _, _ in READS])
def test_read_arguments_of_the_wrong_type_are_type_errors(cache: ObjectCache, case: str,
                                                          read: Callable[[ObjectCache], Any], expected: str) -> None:
    with pytest.raises(TypeError, match=expected):
        read(cache)
    assert cache.get("cm", "a", "default")["data"] == {"x": "1"}  # unharmed


def test_a_wrong_type_is_refused_before_an_informer_starts(served: ServedCluster) -> None:
    with object_cache(served) as fresh:
        with pytest.raises(TypeError):
            fresh.list("widgets.example.com", label_selector={"app": "web"})
        with pytest.raises(TypeError):
            fresh.wait_for("cm", "a", "default", resource_version=42, timeout=5)
        assert fresh.informers() == []


ASYNC_READS: list[tuple[str, Callable[[AsyncObjectCache], Any], str]] = [
    ("get-name", lambda c: c.get("cm", 5, "default"), "name as str"),
    ("list-labels-dict", lambda c: c.list("cm", label_selector={"app": "web"}), "'app=web'"),
    ("wait_for-rv-int", lambda c: c.wait_for("cm", "a", "default", resource_version=42, timeout=5),
     "resourceVersions are strings"),
    ("wait_for-generation", lambda c: c.wait_for("cm", "a", "default", generation=2.0, timeout=5),
     "generation as an int"),
    ("wait_for_sync-timeout", lambda c: c.wait_for_sync("cm", "10"), "timeout as a number"),
    ("remove_handler-function", lambda c: asyncio.sleep(0, c.remove_handler(print)), "HandlerHandle"),
    ("wait_for_deleted-uid", lambda c: c.wait_for_deleted("cm", "a", "default", uid=7, timeout=5), "uid as str"),
]


@pytest.mark.parametrize(("case", "read", "expected"), ASYNC_READS, ids=[c for c, _, _ in ASYNC_READS])
def test_async_read_arguments_of_the_wrong_type_are_type_errors(
        cache: ObjectCache, case: str, read: Callable[[AsyncObjectCache], Any], expected: str) -> None:
    async def main() -> None:
        with pytest.raises(TypeError, match=expected):
            await read(AsyncObjectCache(cache))

    asyncio.run(main())


@pytest.fixture()
def embedded_cache() -> Iterator[ObjectCache]:
    with FakeCluster.embedded().serve() as served:  # served: the object cache refuses a transport that cannot watch
        embedded_cache = ObjectCache(LazyRESTMapper(DiscoveryClient(RequestsTransport(served.url))), sync_timeout=5)
        yield embedded_cache
        embedded_cache.stop()


CACHE_CALL_CASES: list[tuple[str, Callable[[ObjectCache], Any], str]] = [
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


@pytest.mark.parametrize(("call", "wanted"), [(c[1], c[2]) for c in CACHE_CALL_CASES],
                         ids=[c[0] for c in CACHE_CALL_CASES])
def test_cache_errors_name_the_cache_call(embedded_cache: ObjectCache, call: Callable[[ObjectCache], Any],
                                          wanted: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        call(embedded_cache)
    text = str(info.value)
    assert wanted in text, text
    assert "resolve(" not in text and "resolve_all(" not in text and "rest_mapping(" not in text, text


def test_cache_category_error_names_a_member_that_lists(embedded_cache: ObjectCache) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        embedded_cache.list("all")
    text = str(info.value)
    assert 'cache.list() takes one resource type; "all" is a category' in text, text
    member = text.rsplit('cache.list("', 1)[1].split('"')[0]
    assert isinstance(embedded_cache.list(member), list)  # the suggestion is a type the cache lists


def test_cache_still_lists_a_good_type(embedded_cache: ObjectCache) -> None:
    assert isinstance(embedded_cache.list("deployments"), list)


def test_async_cache_errors_name_the_cache_call(embedded_cache: ObjectCache) -> None:
    import asyncio

    from restmapper.aio import AsyncObjectCache

    async def main() -> list[str]:
        acache = AsyncObjectCache(embedded_cache)
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
