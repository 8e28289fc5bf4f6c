"""The asyncio drop-ins match a ``...List`` kind without reading through the ``ResourceList``: its ``__getattr__``
calls ``base_resource()``, a coroutine in the asyncio libraries, so touching it leaves a coroutine never awaited
(a ``RuntimeWarning``, an error under ``-W error``)."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib, run

from restmapper.testing import FakeCluster


@pytest.fixture(params=sorted(LIBRARIES))
def lib(request: pytest.FixtureRequest) -> Lib:
    return Lib(request.param)


@pytest.mark.parametrize("kwargs", [{"kind": "DeploymentList"}, {"kind": "DeploymentList", "namespaced": True},
                                    {"kind": "DeploymentList", "name": "deployments"},
                                    {"api_version": "apps/v1", "kind": "DeploymentList", "verbs": "list"},
                                    {"kind": "DeploymentList", "preferred": True},
                                    {"name": "deployments"}, {"api_version": "v1", "namespaced": True}])
def test_list_kinds_never_leave_a_coroutine_unawaited(lib: Lib, kwargs: dict[str, Any]) -> None:
    with FakeCluster.embedded().serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                client = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    found = await client.resources.search(**kwargs)
                    gc.collect()  # a coroutine dropped unawaited warns when it is finalized
                unawaited = [str(w.message) for w in caught if "never awaited" in str(w.message)]
                assert unawaited == []
                if "kind" in kwargs:
                    assert [(r.group, r.api_version, r.kind) for r in found] == [("apps", "v1", "DeploymentList")]
                else:  # the generic List (no resource behind it) is tested against the filters too
                    assert found and "List" not in [r.kind for r in found]

        run(main)
