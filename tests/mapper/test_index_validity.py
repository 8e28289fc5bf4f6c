"""Memoized answers and invalidation: an invalidated group is seen at once, whatever the memo holds."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from restmapper import GroupKind, GroupVersionResource, NoKindMatchError, NoResourceMatchError, RestMapperError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.mapper._memo import Remembered
from restmapper.mapper.merged import Cell, MergedIndex
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(group: str, kind: str) -> dict[str, Any]:
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": _SCHEMA}]}}


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_new_group_is_found_right_after_its_invalidation(mode: str) -> None:
    """A watcher invalidates a CRD's group when it appears: memoized misses about it must not outlive that."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_crd(_crd("old.example.com", "Old"))
    now = [1000.0]
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))),
                                clock=lambda: now[0], miss_refresh_interval=60)
        assert mapper.kind_for(GroupVersionResource("", "", "olds")).group == "old.example.com"
        with pytest.raises(NoKindMatchError):
            mapper.rest_mapping(GroupKind("new.example.com", "Widget"))
        with pytest.raises(NoResourceMatchError):
            mapper.kind_for(GroupVersionResource("", "", "widgets"))
        cluster.add_crd(_crd("new.example.com", "Widget"))
        mapper.invalidate_group("new.example.com")  # no clock advance: the memo is still "fresh"
        assert mapper.rest_mapping(GroupKind("new.example.com", "Widget")).resource.resource == "widgets"
        assert mapper.kind_for(GroupVersionResource("", "", "widgets")).group == "new.example.com"
        assert mapper.kind_for(GroupVersionResource("", "", "olds")).group == "old.example.com"


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_answers_straight_from_the_indexes_stop_at_the_ttl_and_at_a_stale_version(mode: str) -> None:
    """First-time questions skip the cache only while every group in scope is loaded, healthy and fresh: past the
    TTL, or with a version the server marks stale, the full path (revalidation, certainty rules) answers."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_crd(_crd("a.example.com", "Alpha"))
    cluster.add_crd(_crd("a.example.com", "Beta"))
    now = [1000.0]
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))),
                                clock=lambda: now[0], ttl=10, miss_refresh_interval=60)
        assert mapper.rest_mapping(GroupKind("a.example.com", "Alpha")).resource.resource == "alphas"
        cluster.clear_requests()
        ready = mapper.cached_groups({"a.example.com", "not-listed.example.com"})
        assert ready is not None
        entries, until = ready
        assert [e.name for e in entries] == ["a.example.com"] and now[0] < until <= now[0] + 10
        # A first-time question about the same group: answered without a word to the server or the cache.
        assert mapper.rest_mapping(GroupKind("a.example.com", "Beta")).resource.resource == "betas"
        assert cluster.request_count() == 0

        now[0] += 11  # past the TTL: nothing is ready any more, the next first-time question revalidates
        assert mapper.cached_groups({"a.example.com"}) is None
        assert mapper.kind_for(GroupVersionResource("a.example.com", "", "betas")).kind == "Beta"
        assert cluster.request_count() > 0

        cluster.set_stale("a.example.com/v1")
        mapper.invalidate_group("a.example.com")
        with pytest.raises(RestMapperError):
            mapper.rest_mapping(GroupKind("a.example.com", "Alpha"))
        assert mapper.cached_groups({"a.example.com"}) is None  # a group with a failed version is never ready


class _CountingCell(Cell):
    """A cell that counts how often its version is read."""

    __slots__ = ("reads",)

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "version":
            object.__setattr__(self, "reads", object.__getattribute__(self, "reads") + 1)
        return object.__getattribute__(self, name)


def test_a_memoized_answer_checks_its_own_cells_only_after_some_cell_moved() -> None:
    """The rule behind the warm path: while no cell of the mapper's index moved (its epoch unchanged) a hit reads
    none of its cells; after any cell moved it reads its own once, and a moved cell of its own voids it."""
    index = MergedIndex()
    mine, other = _CountingCell(), Cell()
    memo = Remembered("answer", None, float("inf"), ((mine, mine.version),), checked=index.epoch)
    mine.reads = 0
    assert memo.current(index.epoch) and memo.current(index.epoch)
    assert mine.reads == 0  # nothing moved: no cell read
    index.moved(other)  # another group changed: this answer is checked once, then trusted again
    assert memo.current(index.epoch) and memo.current(index.epoch)
    assert mine.reads == 1
    index.moved(mine)
    assert not memo.current(index.epoch)
    assert not memo.current(index.epoch)  # never marked checked while a cell of its own differs


def test_one_mappers_changes_leave_another_mappers_answers_unchecked() -> None:
    """The epoch belongs to one index: a change in another mapper's index does not make this one's answers read
    their cells again."""
    index, elsewhere = MergedIndex(), MergedIndex()
    mine = _CountingCell()
    memo = Remembered("answer", None, float("inf"), ((mine, mine.version),), checked=index.epoch)
    mine.reads = 0
    elsewhere.moved(elsewhere.cell("b.example.com"))
    assert memo.current(index.epoch)
    assert mine.reads == 0


def test_a_cell_moved_behind_a_memoized_answer_recomputes_it() -> None:
    """Moving the cell of the group an answer read makes the next lookup recompute, though the clock and the
    cache generation did not move (the epoch shortcut may never hide a move)."""
    cluster = FakeCluster(builtin=True)
    cluster.add_crd(_crd("a.example.com", "Alpha"))
    with cluster.mock():
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))),
                                clock=lambda: 1000.0)
        gk = GroupKind("a.example.com", "Alpha")
        key = ("rest_mapping", gk.group, gk.kind, "v1")
        first = mapper.rest_mapping(gk, "v1")
        remembered = mapper._memo.get(key)
        assert remembered is not None
        assert mapper.rest_mapping(gk, "v1") == first and mapper._memo.get(key) is remembered  # a hit
        mapper._groups.index.touch("a.example.com")
        assert mapper.rest_mapping(gk, "v1") == first
        recomputed = mapper._memo.get(key)
        assert recomputed is not remembered  # computed again
        assert mapper.rest_mapping(gk, "v1") == first and mapper._memo.get(key) is recomputed


@pytest.mark.parametrize("refetch", [True, False], ids=["refreshed", "evicted"])
@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_an_answer_read_before_a_concurrent_refresh_is_not_remembered_as_current(mode: str, refetch: bool) -> None:
    """A lookup that read its group's entry just before another thread refreshed the group (or just before the
    group was evicted) answers from what it read, but must not memoize that answer as current: it
    was served from the memo, with no request, until the TTL, though the server had stopped serving that version."""
    from restmapper.testing import InProcessTransport, ManualClock, crd_manifest

    cluster = FakeCluster.embedded(mode=mode)
    crd = cluster.add_crd(crd_manifest("g5.example.com", "Widget", versions=("v2", "v1")))
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    widget = GroupKind("g5.example.com", "Widget")
    read_groups = mapper.cache.groups
    raced: list[str] = []
    fired: list[bool] = []

    def groups(names: Any, versions: Any = None) -> Any:
        view = read_groups(names, versions)
        if not fired and names is not None and "g5.example.com" in names:
            fired.append(True)
            # Between this lookup's read and its indexing: the server stops serving v2, the watcher tells the
            # mapper, and another thread's lookup refreshes the group (it answers v1).
            cluster.set_served(crd, False, version="v2")
            mapper.invalidate_group("g5.example.com")
            if refetch:
                other = threading.Thread(target=lambda: raced.append(mapper.rest_mapping(widget).resource.version))
                other.start()
                other.join()
        return view

    mapper.cache.groups = groups  # type: ignore[method-assign]
    mapper.rest_mapping(widget)  # read before the refresh: either answer is fine for this call itself
    assert raced == (["v1"] if refetch else [])
    clock.advance(5)
    assert mapper.rest_mapping(widget).resource.version == "v1"  # never v2 from the memo
