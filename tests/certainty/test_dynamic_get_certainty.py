"""``resources.get`` of the drop-in is never confidently wrong while a group version is unreadable (DESIGN 5.10).

By the mapper's rule (client-go priority, as ``resolve`` and kubectl): an unreadable group version ranking above
the answer refuses it (:class:`GroupDiscoveryError`); one ranking below it, which could serve a second match
(upstream's ``get`` would then say "not unique"), gives the answer with a :class:`PartialDiscoveryWarning`
naming it in ``failed``. A ``...List`` kind is judged as its resource, by rank too, in ``get`` and ``search``.
A refusal says how to ask the group the answer was found in (``api_version=`` or ``group=``).
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib
from helpers.dynamic import crd
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotUniqueError

from restmapper import GroupDiscoveryError, PartialDiscoveryWarning, is_no_match
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest

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


def _partial(resources: Any, failed: str, **kwargs: Any) -> Any:
    """The answer of ``resources.get(**kwargs)``, which must warn that ``failed`` could not be read."""
    with pytest.warns(PartialDiscoveryWarning) as caught:
        found = resources.get(**kwargs)
    (warning,) = [w.message for w in caught if isinstance(w.message, PartialDiscoveryWarning)]
    assert list(warning.failed) == [GroupVersion(*failed.split("/"))], warning.failed
    assert "resources.get(" in str(warning) and failed in str(warning)
    return found


@pytest.mark.parametrize("mode", MODES)
def test_an_unreadable_group_below_the_answer_makes_it_partial_above_refuses_it(mode: str) -> None:
    """Two groups serve Widget; upstream says "not unique". With z.example.com (ranked below a.example.com)
    unreadable, a.example.com's Widget is answered with a warning naming z; with a.example.com unreadable, z's
    Widget is refused (a.example.com's would win)."""
    healthy = _resources(_widgets(mode))
    for kwargs in WIDGET_QUESTIONS:
        with pytest.raises(ResourceNotUniqueError):
            healthy.get(**kwargs)
    cluster = _widgets(mode)
    _break(cluster, mode, "z.example.com/v1")
    resources = _resources(cluster)
    for kwargs in WIDGET_QUESTIONS:
        assert _partial(resources, "z.example.com/v1", **kwargs).group_version == "a.example.com/v1"
        assert _partial(resources, "z.example.com/v1", **kwargs).group_version == "a.example.com/v1"  # not memoized
    cluster = _widgets(mode)
    _break(cluster, mode, "a.example.com/v1")
    resources = _resources(cluster)
    for kwargs in WIDGET_QUESTIONS:
        _refused(resources, "a.example.com/v1", **kwargs)


@pytest.mark.parametrize("mode", MODES)
def test_a_pinned_group_version_is_unaffected_by_other_failures(mode: str) -> None:
    resources = _with_mk(mode, "z.example.com/v1")
    for kwargs in ({"api_version": "a.example.com/v1", "kind": "Widget"},
                   {"api_version": "a.example.com/v1", "kind": "WidgetList"},
                   {"group": "a.example.com", "kind": "Widget"},
                   {"api_version": "m.example.com/v2", "kind": "Mk"}):
        found = resources.get(**kwargs)
        assert (found.group_version, found.kind) == (kwargs.get("api_version", "a.example.com/v1"), kwargs["kind"])
    # z.example.com/v1 could serve an Mk too, but ranks below m.example.com: the answer stands, warned
    assert _partial(resources, "z.example.com/v1", kind="Mk").group_version == "m.example.com/v2"


@pytest.mark.parametrize("mode", MODES)
def test_a_failure_below_the_answer_in_its_own_group_keeps_the_preferred_version(mode: str) -> None:
    resources = _with_mk(mode, "m.example.com/v1")
    for kwargs in ({"kind": "Mk"}, {"kind": "MkList"}, {"group": "m.example.com", "kind": "MkList"}):
        if mode == "legacy":  # v1 is listed below v2: the drop-in's answer is v2 either way (not even partial)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
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
    """As the sync drop-in: warned (at the caller's line, on the loop) for a failure ranked below the answer,
    refused for one ranked above it."""
    lib = Lib(name)
    cluster = _widgets("legacy")
    with cluster.serve() as served:
        async def main() -> None:
            async with lib.api_client(served.url) as api:
                ours = await lib.dynamic.DynamicClient(api, discoverer=lib.discoverer)
                below = cluster.inject("/apis/z.example.com/v1", status=503, body="down")
                for kwargs in ({"kind": "Widget"}, {"kind": "WidgetList"}):
                    with pytest.warns(PartialDiscoveryWarning) as caught:
                        found = await ours.resources.get(**kwargs)
                    assert found.group_version == "a.example.com/v1"
                    (warning,) = caught
                    assert warning.filename == __file__
                    assert list(warning.message.failed) == [GroupVersion("z.example.com", "v1")]
                    with pytest.warns(PartialDiscoveryWarning):
                        assert len(await ours.resources.search(**kwargs)) == 1
                below.remove()
                cluster.inject("/apis/a.example.com/v1", status=503, body="down")
                await ours.resources.invalidate_cache()
                for kwargs in ({"kind": "Widget"}, {"kind": "WidgetList"}):
                    with pytest.raises(GroupDiscoveryError) as info:
                        await ours.resources.get(**kwargs)
                    assert GroupVersion("a.example.com", "v1") in info.value.failed and not is_no_match(info.value)

        asyncio.run(main())


def test_unpinned_drop_in_get_refused_by_another_group_says_how_to_pin_it() -> None:
    """a.example.com (ranked above z.example.com) is unreadable and could serve the Widget that wins: the answer
    found in z.example.com is refused, and the error says how to ask z.example.com alone."""
    cluster = FakeCluster.embedded(mode="aggregated")
    cluster.add_crd(crd_manifest("a.example.com", "Widget"))
    cluster.add_crd(crd_manifest("z.example.com", "Widget"))
    cluster.set_stale("a.example.com/v1", True)
    config = kclient.Configuration(host="https://kube.restmapper.test")
    resources = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock(),
        max_stale=0)).resources
    with pytest.raises(GroupDiscoveryError) as info:
        resources.get(kind="Widget")
    text = str(info.value)
    assert "a.example.com/v1" in text
    assert "api_version=" in text and "group=" in text, text
    assert "'z.example.com/v1'" in text, text  # the group the answer was found in, ready to paste
    assert resources.get(api_version="z.example.com/v1", kind="Widget").kind == "Widget"  # the remedy works
    assert resources.get(group="z.example.com", kind="Widget").kind == "Widget"
