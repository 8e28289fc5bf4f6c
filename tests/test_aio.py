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
