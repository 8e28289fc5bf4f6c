"""``resources.get`` of the drop-in is never confidently wrong while a group version is unreadable (DESIGN 5.10).

Upstream's ``get`` raises ``ResourceNotUniqueError`` when several groups serve a match, so an unreadable group
version of another group in scope turns a single answer into :class:`GroupDiscoveryError` (review-final F1); a
``...List`` kind is judged as its resource, by rank too, in ``get`` and ``search`` (review-final F7).
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from dynamic_helpers import crd
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotUniqueError
from test_dynamic_async import LIBRARIES, Lib

from restmapper import GroupDiscoveryError, is_no_match
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

MODES = ["legacy", "aggregated"]
WIDGET_QUESTIONS: list[dict[str, Any]] = [{"kind": "Widget"}, {"short_names": ["w"]}, {"name": "widgets"},
                                          {"kind": "WidgetList"}]


def _resources(cluster: FakeCluster) -> Any:
    config = kclient.Configuration(host="https://kube.restmapper.test")
    return DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock(),
        max_stale=0)).resources


def _break(cluster: FakeCluster, mode: str, gv: str) -> None:
    if mode == "legacy":
        cluster.inject(f"/apis/{gv}", status=503, body="down", content_type="text/plain")
    else:
        cluster.set_stale(gv, True)


def _widgets(mode: str) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd("a.example.com", "Widget", short_names=("w",)))
    cluster.add_crd(crd("z.example.com", "Widget", short_names=("w",)))
    return cluster


def _with_mk(mode: str, broken: str) -> Any:
    """The drop-in over the two Widget groups plus m.example.com's Mk at v2 (preferred) and v1, ``broken`` failed."""
    cluster = _widgets(mode)
    cluster.add_crd(crd("m.example.com", "Mk", versions=("v2", "v1")))
    _break(cluster, mode, broken)
    return _resources(cluster)


def _refused(resources: Any, failed: str, method: str = "get", **kwargs: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused, not a partial answer
        with pytest.raises(GroupDiscoveryError) as info:
            getattr(resources, method)(**kwargs)
    assert not is_no_match(info.value)
    assert GroupVersion(*failed.split("/")) in info.value.failed, info.value.failed
    assert f"resources.{method}(" in str(info.value)


@pytest.mark.parametrize("mode", MODES)
def test_an_unreadable_group_below_the_answer_may_hold_a_second_match(mode: str) -> None:
    healthy = _resources(_widgets(mode))
    for kwargs in WIDGET_QUESTIONS:
        with pytest.raises(ResourceNotUniqueError):
            healthy.get(**kwargs)
    for broken in ("z.example.com/v1", "a.example.com/v1"):  # ranked below, then above, the answer
        cluster = _widgets(mode)
        _break(cluster, mode, broken)
        resources = _resources(cluster)
        for kwargs in WIDGET_QUESTIONS:
            _refused(resources, broken, **kwargs)


@pytest.mark.parametrize("mode", MODES)
def test_a_pinned_group_version_is_unaffected_by_other_failures(mode: str) -> None:
    resources = _with_mk(mode, "z.example.com/v1")
    for kwargs in ({"api_version": "a.example.com/v1", "kind": "Widget"},
                   {"api_version": "a.example.com/v1", "kind": "WidgetList"},
                   {"group": "a.example.com", "kind": "Widget"},
                   {"api_version": "m.example.com/v2", "kind": "Mk"}):
        found = resources.get(**kwargs)
        assert (found.group_version, found.kind) == (kwargs.get("api_version", "a.example.com/v1"), kwargs["kind"])
    _refused(resources, "z.example.com/v1", kind="Mk")  # z.example.com/v1 could serve an Mk too


@pytest.mark.parametrize("mode", MODES)
def test_a_failure_below_the_answer_in_its_own_group_keeps_the_preferred_version(mode: str) -> None:
    resources = _with_mk(mode, "m.example.com/v1")
    for kwargs in ({"kind": "Mk"}, {"kind": "MkList"}, {"group": "m.example.com", "kind": "MkList"}):
        if mode == "legacy":  # v1 is listed below v2: the drop-in's answer is v2 either way
            assert resources.get(**kwargs).group_version == "m.example.com/v2"
        else:  # a stale version is not listed, so it may be the real preferred one (as the mapper's rule)
            _refused(resources, "m.example.com/v1", **kwargs)
    _refused(resources, "m.example.com/v1", api_version="m.example.com/v1", kind="MkList")


@pytest.mark.parametrize("mode", MODES)
def test_a_list_kind_is_ranked_as_its_resource(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd("m.example.com", "Mk", versions=("v2", "v1")))
    assert _resources(cluster).get(kind="MkList").group_version == "m.example.com/v2"
    _break(cluster, mode, "m.example.com/v2")
    resources = _resources(cluster)
    for kind in ("Mk", "MkList"):
        _refused(resources, "m.example.com/v2", kind=kind)
        _refused(resources, "m.example.com/v2", group="m.example.com", kind=kind)
        _refused(resources, "m.example.com/v2", "search", kind=kind)  # not [v1], partial
    assert resources.get(api_version="m.example.com/v1", kind="MkList").group_version == "m.example.com/v1"


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_the_async_drop_ins_get_by_the_same_rules(name: str) -> None:
    lib = Lib(name)
    cluster = _widgets("legacy")
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                ours = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                cluster.inject("/apis/z.example.com/v1", status=503, body="down")
                for kwargs in ({"kind": "Widget"}, {"kind": "WidgetList"}):
                    with pytest.raises(GroupDiscoveryError) as info:
                        await ours.resources.get(**kwargs)
                    assert GroupVersion("z.example.com", "v1") in info.value.failed and not is_no_match(info.value)

        asyncio.run(main())
