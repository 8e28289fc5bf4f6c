"""The asyncio drop-ins: ``kubernetes.aio.dynamic`` and ``kubernetes_asyncio.dynamic`` with our discoverers.

Parity with each library's stock ``LazyDiscoverer`` on the loopback kit (as test_dynamic_parity.py does for
the synchronous client), the library's own Resource and error types, the same healing as the sync drop-in, and
credentials refreshed by the client's own hook on the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib, run
from helpers.dynamic import crd

from restmapper.errors import MappingChangedError
from restmapper.testing import FakeCluster, ServiceAccount


@pytest.fixture(params=sorted(LIBRARIES))
def lib(request: pytest.FixtureRequest) -> Lib:
    return Lib(request.param)


def summary(r: Any) -> tuple[Any, ...]:
    return (r.group_version, r.kind, r.name, r.namespaced, sorted(r.verbs or []), r.preferred)


async def not_found(lib: Lib, request: Awaitable[Any]) -> None:
    """Await a request that must fail with 404: ``kubernetes.aio`` raises NotFoundError, ``kubernetes_asyncio``
    returns the Status (its dynamic client does not raise error statuses)."""
    try:
        result = await request
    except lib.exceptions.NotFoundError:
        return
    assert (result.kind, result.code) == ("Status", 404)


def test_parity_with_the_stock_lazy_discoverer(lib: Lib, tmp_path: Path) -> None:
    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api_a, lib.api_client(served.url) as api_b:
                stock = await lib.dynamic.DynamicClient(api_a, cache_file=str(tmp_path / "stock.json"),
                                                        discoverer=lib.dynamic.LazyDiscoverer)
                ours = await lib.dynamic.DynamicClient(api_b, discoverer=lib.discoverer)
                assert ours.version == stock.version
                listed = [r for lst in [x async for x in ours.resources] for r in lst
                          if isinstance(r, lib.resource.Resource) and not isinstance(r, lib.resource.ResourceList)
                          and r.kind != "List"]
                assert len(listed) > 100
                checked = 0
                for r in listed:
                    theirs = [x for x in await stock.resources.search(api_version=r.group_version, kind=r.kind)
                              if x.kind == r.kind and not isinstance(x, lib.resource.ResourceList)]
                    if len(theirs) != 1:
                        continue  # two resources of one version with this kind: upstream cannot choose
                    mine = await ours.resources.get(api_version=r.group_version, kind=r.kind)
                    assert type(mine) is lib.resource.Resource
                    assert summary(mine) == summary(theirs[0]), r
                    assert sorted(mine.subresources) == sorted(theirs[0].subresources), r
                    # The stock discoverers pass the server's camelCase keys to a snake_case constructor, so their
                    # short_names are always None (the names sit in extra_args); ours carry the server's.
                    assert mine.short_names == theirs[0].extra_args.get("shortNames"), r
                    checked += 1
                assert checked > 100
                groups = await ours.resources.api_groups
                assert "apps" in groups and next(iter(groups)) == ""

        run(main)


def test_own_errors_and_preferred_version(lib: Lib) -> None:
    with FakeCluster.embedded().serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                client = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                with pytest.raises(lib.exceptions.ResourceNotFoundError):
                    await client.resources.get(api_version="nope.example.com/v1", kind="Nope")
                hpa = await client.resources.get(group="autoscaling", kind="HorizontalPodAutoscaler")
                assert hpa.api_version == "v2"  # upstream: ResourceNotUniqueError
                with pytest.raises(TypeError):
                    await client.resources.get(kind="Pod", colour="red")
                groups = await client.resources.parse_api_groups()
                assert type(groups["apis"]["apps"]["v1"]).__module__.startswith(lib.dynamic.__name__)
                pods = await client.resources.get(api_version="v1", kind="Pod")
                listed = await client.get(pods, namespace="default")
                assert listed.kind == "PodList"

        run(main)


def test_crd_recreated_cluster_scoped_request_is_refused_then_heals(lib: Lib) -> None:
    """The request on the old, namespaced mapping is not resent to the cluster-scoped path (MappingChangedError);
    the group was evicted, so the next lookup answers the cluster-scoped mapping."""
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("stuff.example.com", "Gizmo"))
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                client = await lib.healing_client(api)
                gizmo = await client.resources.get(api_version="stuff.example.com/v1", kind="Gizmo")
                assert gizmo.namespaced
                cluster.remove_crd("gizmos.stuff.example.com")
                cluster.add_crd(crd("stuff.example.com", "Gizmo", scope="Cluster"))
                with pytest.raises(MappingChangedError) as info:
                    await client.get(gizmo, namespace="default")  # the old, namespaced mapping
                assert not info.value.new.namespaced
                fresh = await client.resources.get(api_version="stuff.example.com/v1", kind="Gizmo")
                assert fresh.namespaced is False
                assert (await client.get(fresh)).kind == "GizmoList"
                pods = await client.resources.get(api_version="v1", kind="Pod")
                before = cluster.request_count(prefix="/api/v1/namespaces/default/pods/missing")
                await not_found(lib, client.get(pods, name="missing", namespace="default"))  # an object: no heal
                assert cluster.request_count(prefix="/api/v1/namespaces/default/pods/missing") == before + 1

        run(main)


def test_removed_version_404_evicts_the_group(lib: Lib) -> None:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd("stuff.example.com", "Gizmo", versions=("v1", "v2"), storage="v1"))
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                client = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                old = await client.resources.get(api_version="stuff.example.com/v2", kind="Gizmo")
                cluster.remove_crd("gizmos.stuff.example.com")
                cluster.add_crd(crd("stuff.example.com", "Gizmo", versions=("v1",)))
                await not_found(lib, client.get(old, namespace="default"))
                assert (await client.resources.get(group="stuff.example.com", kind="Gizmo")).api_version == "v1"

        run(main)


def test_credentials_are_refreshed_by_the_clients_hook_on_the_loop(lib: Lib, tmp_path: Path) -> None:
    account = ServiceAccount(tmp_path / "sa")
    loop_threads: list[int] = []
    with FakeCluster.embedded().serve(tls=True, authorize=account.authorize) as served:
        async def hook(cfg: Any) -> None:
            loop_threads.append(threading.get_ident())
            cfg.api_key["BearerToken"] = account.token

        async def main() -> None:
            api = lib.api_client(served.url, ssl_ca_cert=str(served.ca_file), refresh_api_key_hook=hook,
                                 api_key_prefix={"BearerToken": "Bearer"})
            async with api:
                client = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                assert (await client.resources.get(api_version="apps/v1", kind="Deployment")).name == "deployments"
                account.rotate()
                await client.resources.invalidate_cache()
                assert (await client.resources.get(api_version="apps/v1", kind="Deployment")).name == "deployments"
            assert set(loop_threads) == {threading.get_ident()}

        run(main)
