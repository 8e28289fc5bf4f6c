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
