"""A no-match is never older than ``miss_refresh_interval`` from the server's confirmation, and one that this very
lookup did not confirm with a request says so (``remembered_age`` and the "(as of N s ago ...)" suffix).

The miss revalidation is rate-limited: a *different* question that misses within the interval, over what the
last revalidation confirmed, is answered from that confirmation. It must say how old that is, and be remembered
only until that confirmation's interval ends (not for a further interval from when it was computed). A
miss over more than that (``/api`` as well) is confirmed again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from restmapper import GroupKind, LazyRESTMapper, is_no_match
from restmapper.discovery import DiscoveryClient
from restmapper.errors import MappingError
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest

MODES = ["aggregated", "legacy"]
SUFFIX = "(as of {age} s ago; misses are cached for up to 1 s)"


def setup(mode: str) -> tuple[FakeCluster, ManualClock, LazyRESTMapper]:
    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    mapper.resolve("deploy")
    return cluster, clock, mapper


def lookups(mapper: LazyRESTMapper) -> dict[str, Callable[[], Any]]:
    return {"resolve": lambda: mapper.resolve("things"),
            "rest_mapping": lambda: mapper.rest_mapping(GroupKind("quick.io", "Thing"))}


def first_miss(mapper: LazyRESTMapper) -> None:
    """A miss that revalidates (uses up the interval's one revalidation)."""
    with pytest.raises(MappingError) as info:
        mapper.resolve("widgets")
    assert info.value.remembered_age is None


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", ["resolve", "rest_mapping"])
def test_a_rate_limited_no_match_says_how_old_it_is(mode: str, which: str) -> None:
    cluster, clock, mapper = setup(mode)
    first_miss(mapper)
    cluster.add_crd(crd_manifest("quick.io", "Thing"))
    clock.advance(0.9)
    before = cluster.request_count()
    with pytest.raises(MappingError) as info:
        lookups(mapper)[which]()
    assert cluster.request_count() == before  # rate-limited: not asked
    assert is_no_match(info.value)
    assert info.value.remembered_age == pytest.approx(0.9)
    assert str(info.value).endswith(SUFFIX.format(age="0.9")), str(info.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("which", ["resolve", "rest_mapping"])
def test_a_no_match_is_remembered_only_until_the_confirming_revalidation_is_an_interval_old(
        mode: str, which: str) -> None:
    """Memoized at t=0.9 from a confirmation at t=0: gone at t=1.0, not at t=1.9."""
    cluster, clock, mapper = setup(mode)
    first_miss(mapper)
    cluster.add_crd(crd_manifest("quick.io", "Thing"))
    clock.advance(0.9)
    lookup = lookups(mapper)[which]
    with pytest.raises(MappingError):
        lookup()
    clock.advance(0.1)  # one interval after the server confirmed the miss
    assert lookup() is not None


@pytest.mark.parametrize("mode", MODES)
def test_at_the_same_instant_an_unconfirmed_no_match_still_says_so(mode: str) -> None:
    """A manual clock that did not move: the no-match was still not confirmed by this lookup."""
    cluster, _clock, mapper = setup(mode)
    first_miss(mapper)
    before = cluster.request_count()
    for _ in range(2):  # computed, then replayed from the memo
        with pytest.raises(MappingError) as info:
            mapper.rest_mapping(GroupKind("quick.io", "Thing"))
        assert cluster.request_count() == before
        assert info.value.remembered_age == 0.0
        assert str(info.value) == 'no matches for kind "Thing" in group "quick.io" ' + SUFFIX.format(age="0.0")


@pytest.mark.parametrize("mode", MODES)
def test_a_no_match_confirmed_by_this_lookup_keeps_upstreams_message(mode: str) -> None:
    cluster, clock, mapper = setup(mode)
    first_miss(mapper)
    clock.advance(1.0)
    before = cluster.request_count()
    with pytest.raises(MappingError) as info:
        mapper.rest_mapping(GroupKind("quick.io", "Thing"))
    assert cluster.request_count() > before
    assert info.value.remembered_age is None
    assert str(info.value) == 'no matches for kind "Thing" in group "quick.io"'


@pytest.mark.parametrize("mode", MODES)
def test_the_readme_advice_holds_after_any_lookup(mode: str) -> None:
    """README: a test that adds a CRD after a miss advances the clock by ``miss_refresh_interval``; that is
    enough however many other lookups missed in between."""
    cluster, clock, mapper = setup(mode)
    first_miss(mapper)
    clock.advance(0.5)
    with pytest.raises(MappingError):
        mapper.resolve("gadgets")  # another miss, rate-limited
    cluster.add_crd(crd_manifest("quick.io", "Thing"))
    with pytest.raises(MappingError):
        mapper.resolve("things")
    clock.advance(1.0)
    assert mapper.resolve("things").resource.resource == "things"


def test_the_cache_says_when_a_no_match_was_confirmed() -> None:
    cluster, clock, mapper = setup("aggregated")
    cache, start = mapper.cache, clock()
    assert cache.miss_confirmed_at(None) == start  # read by an earlier lookup
    clock.advance(0.3)
    with cache.lookup():
        cache.revalidate_on_miss(None)
        assert cache.miss_confirmed_at(None) is None  # this lookup asked the server
    assert cache.miss_confirmed_at({"apps"}) == pytest.approx(start + 0.3)
    assert cluster.request_count() > 0


@pytest.mark.parametrize("mode", MODES)
def test_the_dynamic_drop_in_remembers_a_miss_only_until_its_confirmation_is_an_interval_old(mode: str) -> None:
    from helpers.dynamic import FakeClock, api_client
    from kubernetes.dynamic.exceptions import ResourceNotFoundError

    from restmapper.dynamic import SelfHealingDiscoverer, SelfHealingDynamicClient

    cluster = FakeCluster.embedded(mode=mode)
    clock = FakeClock()
    with cluster.serve() as s:
        dc = SelfHealingDynamicClient(api_client(s.url),
                                      discoverer=lambda c, f: SelfHealingDiscoverer(c, f, clock=clock))
        with pytest.raises(ResourceNotFoundError):
            dc.resources.get(api_version="widgets.io/v1", kind="Widget")  # revalidates
        cluster.add_crd(crd_manifest("quick.io", "Thing"))
        clock.advance(0.9)
        with pytest.raises(ResourceNotFoundError):
            dc.resources.get(api_version="quick.io/v1", kind="Thing")  # rate-limited
        clock.advance(0.1)
        assert dc.resources.get(api_version="quick.io/v1", kind="Thing").kind == "Thing"


@pytest.mark.parametrize("mode", MODES)
def test_the_drop_in_says_how_old_a_remembered_miss_is(mode: str) -> None:
    """The drop-in's ResourceNotFoundError words a remembered miss as the mapper's errors do."""
    from kubernetes import client as kclient
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import ResourceNotFoundError

    from restmapper.dynamic import SelfHealingDiscoverer

    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    transport = InProcessTransport(cluster)
    resources = DynamicClient(
        kclient.ApiClient(kclient.Configuration(host=cluster.base_url)),
        discoverer=lambda c, f: SelfHealingDiscoverer(c, f, clock=clock, transport=transport)).resources
    with pytest.raises(ResourceNotFoundError) as first:
        resources.get(api_version="quick.io/v1", kind="Thing")
    assert str(first.value) == "No matches found for {'api_version': 'quick.io/v1', 'kind': 'Thing'}"
    clock.advance(0.4)
    with pytest.raises(ResourceNotFoundError) as again:  # remembered
        resources.get(api_version="quick.io/v1", kind="Thing")
    assert str(again.value).endswith(SUFFIX.format(age="0.4")), str(again.value)
    with pytest.raises(ResourceNotFoundError) as other:  # a first-time question, the revalidation rate-limited
        resources.get(api_version="quick.io/v1", kind="Gizmo")
    assert str(other.value) == ("No matches found for {'api_version': 'quick.io/v1', 'kind': 'Gizmo'} "
                                + SUFFIX.format(age="0.4"))
    clock.advance(0.6)
    with pytest.raises(ResourceNotFoundError) as confirmed:  # asked again: the server's word now
        resources.get(api_version="quick.io/v1", kind="Gizmo")
    assert "as of" not in str(confirmed.value)


@pytest.mark.parametrize("mode", MODES)
def test_a_miss_over_more_than_the_last_revalidation_read_is_confirmed_again(mode: str) -> None:
    """A miss about one named group revalidates ``/apis`` alone; a miss that may
    match any group moments later also reads ``/api``, last confirmed long before. It was rate-limited all the
    same and answered "as of 2.3 s ago; misses are cached for up to 1 s". The rate limit spares a revalidation
    only when everything the no-match reads was confirmed within the interval."""
    cluster, clock, mapper = setup(mode)  # reads /api and /apis at t = 0
    clock.advance(5)
    with pytest.raises(MappingError) as info:
        mapper.rest_mapping(GroupKind("quick.io", "Thing"))  # revalidates what it reads: /apis
    assert info.value.remembered_age is None
    clock.advance(0.5)
    before = cluster.request_count()
    with pytest.raises(MappingError) as info:
        mapper.resolve("things")  # reads /api too: confirmed 5.5 s ago, so it is asked again
    assert is_no_match(info.value)
    assert info.value.remembered_age is None or info.value.remembered_age <= 1.0, str(info.value)
    assert cluster.request_count() > before
    # Within the interval of that confirmation, both misses are rate-limited again (no request), and say so.
    clock.advance(0.5)
    before = cluster.request_count()
    for ask in (lambda: mapper.resolve("things"), lambda: mapper.rest_mapping(GroupKind("quick.io", "Thing"))):
        with pytest.raises(MappingError) as info:
            ask()
        assert info.value.remembered_age is not None and info.value.remembered_age <= 1.0, str(info.value)
    assert cluster.request_count() == before
