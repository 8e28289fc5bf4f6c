"""AsyncRESTMapper: warm answers inline, cold ones off the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from restmapper import GroupKind, NoKindMatchError
from restmapper.aio import AsyncRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy


def test_async_lookups_do_io_off_the_loop_and_answer_warm_ones_inline() -> None:
    cluster = FakeCluster.embedded()
    io_threads: set[int] = set()
    with cluster.mock():
        transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
        real_get = transport.get

        def recording_get(path, headers=None, **kw):  # type: ignore[no-untyped-def]
            io_threads.add(threading.get_ident())
            return real_get(path, headers, **kw)

        transport.get = recording_get  # type: ignore[method-assign]
        mapper = AsyncRESTMapper(LazyRESTMapper(DiscoveryClient(transport)))

        async def main() -> None:
            loop_thread = threading.get_ident()
            gk = GroupKind("apps", "Deployment")
            assert (await mapper.rest_mapping(gk)).resource.resource == "deployments"
            assert (await mapper.resolve("deploy")).resource.resource == "deployments"
            assert loop_thread not in io_threads and io_threads
            n = cluster.request_count()
            await mapper.rest_mapping(gk)  # loading core bumped the cache generation: recomputed, no I/O
            assert cluster.request_count() == n
            assert mapper.mapper.cached_rest_mapping(gk) is not None
            assert (await mapper.rest_mapping(gk)).resource.resource == "deployments"
            assert (await mapper.resolve("deploy")).resource.resource == "deployments"
            assert cluster.request_count() == n
            with pytest.raises(NoKindMatchError):
                await mapper.rest_mapping(GroupKind("nope.example.com", "Nope"))
            assert [m.resource.resource for m in await mapper.resolve_all("svc,cm")] == ["services", "configmaps"]

        asyncio.run(main())


def _widget_crd() -> dict[str, object]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


def test_async_wait_for_finds_a_late_crd_and_cancels_without_holding_threads() -> None:
    from restmapper import WaitTimeoutError

    cluster = FakeCluster.embedded()
    with cluster.mock():
        transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
        mapper = AsyncRESTMapper(LazyRESTMapper(DiscoveryClient(transport), miss_refresh_interval=0.01))

        async def main() -> None:
            waiter = asyncio.create_task(mapper.wait_for(GroupKind("example.com", "Widget"), 30,
                                                         poll_interval=0.02))
            await asyncio.sleep(0.05)
            assert not waiter.done()
            cluster.add_crd(_widget_crd())
            mapping = await asyncio.wait_for(waiter, 10)
            assert mapping.resource.resource == "widgets"
            # Many cancelled waiters must not occupy the default executor (the loop's DNS lookups use it).
            waiters = [asyncio.create_task(mapper.wait_for("ghosts", 30, poll_interval=0.02)) for _ in range(20)]
            await asyncio.sleep(0.1)
            for w in waiters:
                w.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
            await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, lambda: None), 2)
            with pytest.raises(WaitTimeoutError):
                await mapper.wait_for("ghosts", 0.05, poll_interval=0.02)

        asyncio.run(main())


# --- the whole mapper surface, an executor, async constructors ---------------------------------------------

def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


def test_async_mapper_covers_the_whole_sync_surface() -> None:
    from restmapper.mapper import LazyRESTMapper as Sync

    missing = _public(Sync) - _public(AsyncRESTMapper)
    assert not missing, f"AsyncRESTMapper lacks {sorted(missing)}"


def test_every_async_method_answers_as_the_sync_one_and_runs_in_the_given_executor() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from restmapper.model import GroupVersion, GroupVersionKind, GroupVersionResource
    from restmapper.testing import InProcessTransport

    sync = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())))
    calls = [
        ("rest_mapping", (GroupKind("apps", "Deployment"),)),
        ("rest_mappings", (GroupKind("autoscaling", "HorizontalPodAutoscaler"),)),
        ("kind_for", (GroupVersionResource("", "", "pods"),)),
        ("kinds_for", (GroupVersionResource("autoscaling", "", "horizontalpodautoscalers"),)),
        ("resource_for", (GroupVersionResource("apps", "", "deployment"),)),
        ("resources_for", (GroupVersionResource("", "", "horizontalpodautoscaler"),)),
        ("resource_singularizer", ("deployments",)),
        ("is_namespaced", (GroupVersionKind("apps", "v1", "Deployment"),)),
        ("resolve", ("certs",)),
        ("resolve_all", ("all,crd",)),
        ("expand_category", ("all",)),
    ]
    seen_threads: set[str] = set()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="mapper-pool") as pool:
        original = pool.submit

        def submit(fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            def tracked():  # type: ignore[no-untyped-def]
                seen_threads.add(threading.current_thread().name)
                return fn(*args, **kwargs)
            return original(tracked)

        pool.submit = submit  # type: ignore[method-assign]
        amapper = AsyncRESTMapper(LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded()))),
                                  executor=pool)

        async def main() -> None:
            for name, args in calls:
                expected = getattr(sync, name)(*args)
                assert await getattr(amapper, name)(*args) == expected, name
            amapper.invalidate_group("apps")
            amapper.invalidate_group_version(GroupVersion("autoscaling", "v2"))
            amapper.report_not_found(GroupVersion("cert-manager.io", "v1"))
            amapper.invalidate_all()
            assert amapper.stats.evictions >= 0
            with pytest.raises(TypeError):
                await amapper.is_namespaced(GroupKind("apps", "Deployment"))  # type: ignore[arg-type]

        asyncio.run(main())
    assert seen_threads and all(n.startswith("mapper-pool") for n in seen_threads)


def test_async_constructors_read_config_off_the_loop(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        monkeypatch.setenv("KUBECONFIG", str(served.kubeconfig_path))

        async def main() -> None:
            amapper = await AsyncRESTMapper.from_kubeconfig(ttl=10)
            assert (await amapper.resolve("deploy")).resource.group == "apps"
            assert amapper.mapper.cache.ttl == 10
            with pytest.raises(TypeError):
                AsyncRESTMapper(object())  # type: ignore[arg-type]

        asyncio.run(main())
