"""The drop-in's answers across a refresh of one group: warm answers come from the memo; after group B is
refreshed, answers about group A are unchanged, answers about B reflect B's new discovery, and an answer that may
come from any group still depends on every group's health (a group that became unreadable refuses it, DESIGN 5.10).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.aio_dynamic import LIBRARIES, Lib
from helpers.dynamic import crd
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from restmapper import PartialDiscoveryWarning
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

MODES = ["legacy", "aggregated"]
A, B = "a.example.com", "b.example.com"

QUESTIONS_ABOUT_A: list[tuple[str, dict[str, Any]]] = [
    ("get", {"api_version": f"{A}/v1", "kind": "Alpha"}),
    ("get", {"group": A, "api_version": "v1", "kind": "Alpha"}),
    ("get", {"kind": "Alpha"}),
    ("get", {"kind": "AlphaList"}),
    ("get", {"name": "alphas"}),
    ("get", {"short_names": ["al"]}),
    ("get", {"short_names": "al"}),
    ("search", {"kind": "Alpha"}),
    ("search", {"group": A}),
    ("search", {"api_version": f"{A}/v1"}),
    ("search", {"categories": ["alphacat"]}),
]


def _cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    alpha = crd(A, "Alpha", short_names=("al",))
    alpha["spec"]["names"]["categories"] = ["alphacat"]
    cluster.add_crd(alpha)
    cluster.add_crd(crd(B, "Beta", short_names=("be",)))
    return cluster


def _discoverer(cluster: FakeCluster) -> SelfHealingDiscoverer:
    config = kclient.Configuration(host="https://kube.restmapper.test")
    client = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock(), max_stale=0))
    found = client.resources
    assert isinstance(found, SelfHealingDiscoverer)
    return found


def _count_computations(resources: SelfHealingDiscoverer) -> list[int]:
    """Count, from now on, the answers the drop-in computes (not served from its memo)."""
    computed = [0]
    lookup = resources._lookup

    def counting(*args: Any, **kwargs: Any) -> Any:
        computed[0] += 1
        return lookup(*args, **kwargs)

    resources._lookup = counting  # type: ignore[method-assign]
    return computed


def _ask(resources: SelfHealingDiscoverer, method: str, kwargs: dict[str, Any]) -> Any:
    answer = getattr(resources, method)(**kwargs)
    if method == "search":
        return [(r.group_version, r.kind, r.name, r.short_names) for r in answer]
    return (answer.group_version, answer.kind, answer.name, getattr(answer, "short_names", None))


@pytest.mark.parametrize("mode", MODES)
def test_answers_about_group_a_are_warm_and_unchanged_across_a_refresh_of_group_b(mode: str) -> None:
    cluster = _cluster(mode)
    resources = _discoverer(cluster)
    # An unpinned question first: it loads and indexes every group (indexing a group moves its cell once).
    assert _ask(resources, "get", {"kind": "Beta"})[2] == "betas"
    first = [_ask(resources, m, kw) for m, kw in QUESTIONS_ABOUT_A]
    computed = _count_computations(resources)
    assert [_ask(resources, m, kw) for m, kw in QUESTIONS_ABOUT_A] == first
    assert computed[0] == 0, "warm answers come from the memo"

    cluster.update_crd(crd(B, "Beta", short_names=("bee",)))  # B changes, as a CRD update does
    resources.mapper.invalidate_group(B)  # the watcher (or a 404) would invalidate it
    assert [_ask(resources, m, kw) for m, kw in QUESTIONS_ABOUT_A] == first
    assert [_ask(_discoverer(cluster), m, kw) for m, kw in QUESTIONS_ABOUT_A] == first


@pytest.mark.parametrize("mode", MODES)
def test_answers_about_the_refreshed_group_are_recomputed_and_right(mode: str) -> None:
    cluster = _cluster(mode)
    resources = _discoverer(cluster)
    questions: list[tuple[str, dict[str, Any]]] = [
        ("get", {"api_version": f"{B}/v1", "kind": "Beta"}), ("get", {"kind": "Beta"}),
        ("search", {"kind": "Beta"}), ("get", {"name": "betas"}), ("search", {"group": B})]
    before = [_ask(resources, m, kw) for m, kw in questions]
    assert all("be" in str(answer) for answer in before)
    assert _ask(resources, "get", {"short_names": ["be"]})[2] == "betas"
    computed = _count_computations(resources)

    cluster.update_crd(crd(B, "Beta", short_names=("bee",)))
    resources.mapper.invalidate_group(B)
    after = [_ask(resources, m, kw) for m, kw in questions]
    assert computed[0] >= len(questions), "every answer that read group B is recomputed"
    assert after == [_ask(resources, m, kw) for m, kw in questions], "and memoized again"
    assert after == [_ask(_discoverer(cluster), m, kw) for m, kw in questions], "equal to a new discoverer's"
    assert all("bee" in str(answer) for answer in after)
    assert _ask(resources, "get", {"short_names": ["bee"]})[2] == "betas"
    with pytest.raises(ResourceNotFoundError):
        resources.get(short_names=["be"])


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_from_any_group_is_partial_once_a_lower_group_is_unreadable(mode: str) -> None:
    cluster = _cluster(mode)
    resources = _discoverer(cluster)
    pinned = {"api_version": f"{A}/v1", "kind": "Alpha"}
    assert resources.get(kind="Alpha").kind == "Alpha"
    assert resources.get(**pinned).kind == "Alpha"
    assert [r.kind for r in resources.search(kind="Alpha")] == ["Alpha"]
    if mode == "legacy":
        cluster.inject(f"/apis/{B}/v1", status=503, body="down", content_type="text/plain")
    else:
        cluster.set_stale(f"{B}/v1", True)
    resources.mapper.invalidate_group(B)
    assert resources.get(**pinned).kind == "Alpha", "pinned to A: B cannot change it"
    # B (ranked below A) could hold another Alpha (upstream's get would then raise ResourceNotUniqueError): the
    # answer is given with a warning naming B's version, on every call (never memoized while B is unreadable).
    for _ in range(2):
        with pytest.warns(PartialDiscoveryWarning) as caught:
            assert resources.get(kind="Alpha").group == A
        assert GroupVersion(B, "v1") in caught[0].message.failed
    with pytest.warns(Warning):  # a partial answer, with B's version as failed
        partial = resources.search(kind="Alpha")
    assert [r.kind for r in partial] == ["Alpha"] and GroupVersion(B, "v1") in partial.failed


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_the_asyncio_drop_ins_answer_about_a_and_b_across_a_refresh_of_b(library: str) -> None:
    lib = Lib(library)
    cluster = _cluster("aggregated")

    async def main() -> None:
        async with lib.api_client("https://kube.restmapper.test") as api:
            client = await lib.dynamic.DynamicClient(api, discoverer=lambda c, f: lib.discoverer(
                c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock()))
            resources = client.resources
            assert (await resources.get(kind="Beta")).name == "betas"
            alpha = await resources.get(kind="Alpha")
            found = [r.name for r in await resources.search(kind="Alpha")]
            cluster.update_crd(crd(B, "Beta", short_names=("bee",)))
            resources.mapper.invalidate_group(B)
            assert await resources.get(kind="Alpha") is alpha  # A's Resource objects are kept: A did not change
            assert [r.name for r in await resources.search(kind="Alpha")] == found
            assert (await resources.get(kind="Beta")).short_names == ["bee"]

    asyncio.run(main())


def test_an_answer_read_before_its_group_changed_is_not_memoized_as_current() -> None:
    cluster = _cluster("legacy")
    resources = _discoverer(cluster)
    groups = resources.cache.groups
    raced = [False]

    def racing(names: Any = None, versions: Any = None) -> Any:
        view = groups(names, versions)
        if names is not None and A in names and not raced[0]:
            raced[0] = True  # A changes after this read, before the lookup records what it read
            cluster.update_crd(crd(A, "Alpha", short_names=("al2",)))
            resources.mapper.invalidate_group(A)
            groups({A})
        return view

    resources.cache.groups = racing  # type: ignore[method-assign]
    pinned = {"api_version": f"{A}/v1", "kind": "Alpha"}
    assert resources.get(**pinned).short_names == ["al"]  # what was read: the server's answer a moment ago
    assert raced[0]
    assert resources.get(**pinned).short_names == ["al2"], "the answer read before the change was memoized"


@pytest.mark.parametrize("mode", MODES)
def test_a_first_time_question_about_a_group_read_before_does_not_ask_the_cache(mode: str) -> None:
    """A group the drop-in read once is ready (loaded, complete, healthy, fresh): the next question about it that
    is not memoized answers from the entry the mapper holds (``LazyRESTMapper.cached_groups``), without a cache
    lookup."""
    cluster = _cluster(mode)
    cluster.add_crd(crd(A, "Gamma", short_names=("ga",)))
    resources = _discoverer(cluster)
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").kind == "Alpha"
    cache = resources.cache
    calls: list[object] = []
    original = cache.groups

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return original(*args, **kwargs)

    cache.groups = counted  # type: ignore[method-assign]
    assert resources.get(api_version=f"{A}/v1", kind="Gamma").kind == "Gamma"
    assert resources.get(group=A, api_version="v1", kind="AlphaList").kind == "AlphaList"
    assert calls == []
    # Once A is invalidated, the next question asks the cache (and sees A anew).
    resources.mapper.invalidate_group(A)
    assert resources.get(api_version=f"{A}/v1", kind="Gamma").kind == "Gamma"
    assert calls
