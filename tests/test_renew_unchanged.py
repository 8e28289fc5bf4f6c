"""A revalidation that finds ``/apis`` unchanged renews its groups' entries; it rebuilds none of them.

Rule: installing an aggregated document again (a 304, or the same document after an invalidation elsewhere)
changes a healthy group's entry in its fetch time only: same content generation, same resource lists (nothing
converted or compared again), answers memoized from it stay valid. Any group whose entry is not a plain copy of
what the document says (evicted, failed, stale, outdated, a new document's content) is rebuilt from the document.
"""

from __future__ import annotations

from typing import Any

import pytest

from restmapper import GroupKind, GroupVersionResource
from restmapper.cache import _state
from restmapper.discovery import DiscoveryClient
from restmapper.errors import GroupDiscoveryError
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.transport import RequestsTransport, RetryPolicy

crd = crd_manifest  # reviews of this file import it

GROUPS = [f"g{i}.example.com" for i in range(20)]


def count_rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the groups whose entry is built from an aggregated document from now on, in order."""
    rebuilt: list[str] = []
    upstream = _state.aggregated_parts

    def counting(root: Any, g: Any, stale: Any) -> Any:
        rebuilt.append(g.name)
        return upstream(root, g, stale)

    monkeypatch.setattr(_state, "aggregated_parts", counting)
    return rebuilt


@pytest.fixture
def setup(monkeypatch: pytest.MonkeyPatch) -> Any:
    cluster = FakeCluster(crds=[crd(g, f"Widget{i}") for i, g in enumerate(GROUPS)])
    clock = ManualClock()
    rebuilt = count_rebuilds(monkeypatch)
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url,
                                                                  retry=RetryPolicy(max_attempts=1))),
                                clock=clock, ttl=60)
        mapper.expand_category("all")  # every group loaded and indexed
        yield cluster, clock, mapper, rebuilt


def test_a_304_renews_every_healthy_group_and_rebuilds_none(setup: Any) -> None:
    cluster, clock, mapper, rebuilt = setup
    before = {g: mapper.cache.entry(g) for g in GROUPS}
    answers = {g: mapper.rest_mapping(GroupKind(g, f"Widget{i}")) for i, g in enumerate(GROUPS)}
    rebuilt.clear()
    clock.advance(61)  # every entry expired: the next lookup revalidates /api and /apis
    cluster.clear_requests()
    assert mapper.rest_mapping(GroupKind(GROUPS[3], "Widget3")) is answers[GROUPS[3]]
    assert mapper.stats.not_modified >= 1
    assert [r.path for r in cluster.requests if r.path.startswith("/apis")] == ["/apis"]
    assert rebuilt == []
    for g in GROUPS:
        entry, old = mapper.cache.entry(g), before[g]
        assert entry is not None and old is not None
        assert entry.fetched_at == clock()  # renewed: fresh for another TTL
        assert entry.generation == old.generation and entry.resources is old.resources
    cluster.clear_requests()
    for i, g in enumerate(GROUPS):  # answers memoized before the revalidation stand, with no request
        assert mapper.rest_mapping(GroupKind(g, f"Widget{i}")) == answers[g]
    assert cluster.requests == []


def test_an_evicted_group_is_rebuilt_from_the_same_document_and_only_it(setup: Any) -> None:
    _, _, mapper, rebuilt = setup
    rebuilt.clear()
    mapper.invalidate_group(GROUPS[5])
    assert mapper.kind_for(GroupVersionResource(GROUPS[5], "v1", "widget5s")).kind == "Widget5"
    assert rebuilt == [GROUPS[5]]
    assert mapper.cache.entry(GROUPS[5]) is not None


def test_a_changed_document_is_read_for_every_group(setup: Any) -> None:
    cluster, clock, mapper, rebuilt = setup
    cluster.add_crd(crd(GROUPS[7], "Gadget"))  # same group, one more kind: a new /apis document
    rebuilt.clear()
    clock.advance(61)
    assert mapper.rest_mapping(GroupKind(GROUPS[7], "Gadget")).resource.resource == "gadgets"
    assert set(GROUPS) <= set(rebuilt)  # a new document: every group read from it
    assert mapper.rest_mapping(GroupKind(GROUPS[6], "Widget6")).resource.resource == "widget6s"


def test_a_stale_version_is_never_renewed_as_healthy(setup: Any) -> None:
    cluster, clock, mapper, rebuilt = setup
    cluster.set_stale(f"{GROUPS[2]}/v1")
    clock.advance(61)
    rebuilt.clear()
    with pytest.raises(GroupDiscoveryError):  # never a confident no-match over a stale version
        mapper.rest_mapping(GroupKind(GROUPS[2], "Nope"))
    assert GROUPS[2] in rebuilt
    entry = mapper.cache.entry(GROUPS[2])
    assert entry is None or entry.failed or entry.stale
    cluster.set_stale(f"{GROUPS[2]}/v1", False)
    clock.advance(61)
    rebuilt.clear()
    assert mapper.rest_mapping(GroupKind(GROUPS[2], "Widget2")).resource.resource == "widget2s"
    assert GROUPS[2] in rebuilt  # the document changed back: read again, never renewed from the failed entry
    entry = mapper.cache.entry(GROUPS[2])
    assert entry is not None and not entry.failed and not entry.stale


def test_a_revalidation_that_finds_nothing_changed_reuses_the_root_discovery(setup: Any) -> None:
    cluster, _, mapper, _ = setup
    client = mapper.cache.discovery
    first = client.fetch_named()
    again = client.fetch_named()
    assert again.not_modified and again is client.fetch_named()
    assert first.groups == again.groups
    cluster.add_crd(crd("new.example.com", "Fresh"))
    changed = client.fetch_named()
    assert not changed.not_modified and changed is not again
    assert any(g.name == "new.example.com" for g in changed.groups)


def test_after_a_real_change_of_apis_unchanged_groups_are_renewed_on_the_next_304(setup: Any) -> None:
    """Review adv6 F1: a new /apis document (one CRD added anywhere) kept each unchanged group's entry on its part
    of the old document, so no later 304 renewed it: every revalidation rebuilt and compared every group again."""
    cluster, clock, mapper, rebuilt = setup
    before = {g: mapper.cache.entry(g) for g in GROUPS}
    cluster.add_crd(crd("new.example.com", "Fresh"))
    clock.advance(61)
    assert mapper.rest_mapping(GroupKind("new.example.com", "Fresh")).resource.resource == "freshs"
    for g in GROUPS:  # read from the new document, the same content: the same generation, answers stand
        entry, old = mapper.cache.entry(g), before[g]
        assert entry is not None and old is not None and entry.generation == old.generation
    for _ in range(2):
        rebuilt.clear()
        clock.advance(61)  # nothing changed since: a 304
        assert mapper.rest_mapping(GroupKind(GROUPS[3], "Widget3")).resource.resource == "widget3s"
        assert [g for g in rebuilt if g in GROUPS] == []
