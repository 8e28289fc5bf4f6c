"""``resources.search`` of the drop-in under the certainty rules (DESIGN 5.10).

Code written against upstream reads ``search(...) == []`` as "not installed" and takes ``results[0]`` as the
answer. So ``search`` raises :class:`GroupDiscoveryError` (naming the question and the unreadable group versions)
when the answer would be empty while a group version that could hold a match was unreadable, when the core group
is in scope and unreadable (another group never answers for core; ``api_version="v1"`` is core only), and when an
unreadable group version ranks above the first result. Otherwise a non-empty answer with unreadable group
versions below it is a :class:`SearchResults` with ``partial``/``failed`` and a ``PartialDiscoveryWarning``.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib
from helpers.dynamic import FakeClock, api_client, crd

from restmapper import APIResource, GroupDiscoveryError, is_no_match
from restmapper.dynamic import SearchResults, SelfHealingDiscoverer, SelfHealingDynamicClient
from restmapper.errors import PartialDiscoveryWarning
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster

EMPTY_CORE = '{"kind":"APIResourceList","groupVersion":"v1","resources":[]}'


def _cluster(mode: str = "legacy") -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd("example.com", "Widget"))
    cluster.add_api_resources("metrics.k8s.io/v1beta1",
                              [APIResource("pods", "", True, "PodMetrics", ("get", "list"))])
    return cluster


@pytest.fixture
def served() -> Iterator[tuple[FakeCluster, Any]]:
    cluster = _cluster()
    with cluster.serve() as s:
        yield cluster, _resources(s.url)


def _resources(url: str) -> Any:
    clock = FakeClock()
    return SelfHealingDynamicClient(api_client(url),
                                    discoverer=lambda c, f: SelfHealingDiscoverer(c, f, clock=clock)).resources


def _refused(resources: Any, failed: str, **kwargs: Any) -> GroupDiscoveryError:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused, not a partial answer
        with pytest.raises(GroupDiscoveryError) as info:
            resources.search(**kwargs)
    err = info.value
    assert not is_no_match(err)
    assert any(str(gv) == failed for gv in err.failed), err.failed
    assert "resources.search(" in str(err) and next(iter(kwargs)) in str(err)
    return err


@pytest.mark.parametrize("fault", [dict(status=200, body=EMPTY_CORE, content_type="application/json"),
                                   dict(status=503, body="down")])
def test_an_unreadable_core_is_never_answered_by_another_group(served: tuple[FakeCluster, Any],
                                                               fault: dict[str, Any]) -> None:
    cluster, resources = served
    cluster.inject("/api/v1", **fault)
    _refused(resources, "v1", name="pods")  # not metrics.k8s.io's PodMetrics
    _refused(resources, "v1", kind="Pod")  # not []
    _refused(resources, "v1", api_version="v1")  # not every group's v1
    _refused(resources, "v1", api_version="v1", kind="ConfigMap")


def test_api_version_v1_is_core_only(served: tuple[FakeCluster, Any]) -> None:
    _, resources = served
    answer = resources.search(api_version="v1")
    assert answer and {r.group for r in answer} == {""}
    assert isinstance(answer, SearchResults) and not answer.partial


def test_an_empty_answer_is_refused_while_a_group_that_could_hold_it_is_unreadable(
        served: tuple[FakeCluster, Any]) -> None:
    cluster, resources = served
    cluster.inject("/apis/example.com/v1", status=503, body="down")
    _refused(resources, "example.com/v1", kind="Widget")
    _refused(resources, "example.com/v1", group="example.com")
    _refused(resources, "example.com/v1", api_version="example.com/v1", kind="Widget")


@pytest.mark.parametrize("mode", ["legacy", "aggregated"])
def test_a_stale_aggregated_api_is_refused_not_empty(mode: str) -> None:
    cluster = _cluster(mode)
    cluster.set_stale("metrics.k8s.io/v1beta1")
    with cluster.serve() as s:
        resources = _resources(s.url)
        _refused(resources, "metrics.k8s.io/v1beta1", kind="PodMetrics")
        _refused(resources, "metrics.k8s.io/v1beta1", group="metrics.k8s.io")


def test_failures_below_the_first_result_give_a_partial_list_and_a_warning(served: tuple[FakeCluster, Any]) -> None:
    cluster, resources = served
    cluster.inject("/apis/metrics.k8s.io/v1beta1", status=503, body="down")
    with pytest.warns(PartialDiscoveryWarning, match="metrics.k8s.io/v1beta1"):
        answer = resources.search(name="pods")
    assert isinstance(answer, SearchResults) and answer.partial
    assert set(answer.failed) == {GroupVersion("metrics.k8s.io", "v1beta1")}
    assert answer[0].group == "" and answer[0].kind == "Pod"
    assert all(r.group == "" for r in answer)


def test_a_failure_ranked_above_the_first_result_is_refused() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.add_crd(crd("a.example.com", "Widget"))
    cluster.add_crd(crd("b.example.com", "Widget"))
    with cluster.serve() as s:
        resources = _resources(s.url)
        healthy = resources.search(kind="Widget")
        assert len(healthy) == 2 and not healthy.partial
        first, second = healthy[0].group, healthy[1].group
    for broken, refused in ((first, True), (second, False)):
        with cluster.serve() as s:
            fault = cluster.inject(f"/apis/{broken}/v1", status=503, body="down")
            resources = _resources(s.url)
            if refused:
                _refused(resources, f"{broken}/v1", kind="Widget")  # results[0] would be the wrong group
            else:
                with pytest.warns(PartialDiscoveryWarning):
                    answer = resources.search(kind="Widget")
                assert [r.group for r in answer] == [first] and answer.partial
            fault.remove()


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_the_async_drop_ins_search_by_the_same_rules(name: str) -> None:
    lib = Lib(name)
    cluster = _cluster()
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                ours = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                cluster.inject("/api/v1", status=503, body="down")
                for kwargs in ({"kind": "Pod"}, {"api_version": "v1"}, {"name": "pods"}):
                    with pytest.raises(GroupDiscoveryError) as info:
                        await ours.resources.search(**kwargs)
                    assert GroupVersion("", "v1") in info.value.failed and not is_no_match(info.value)

        asyncio.run(main())
