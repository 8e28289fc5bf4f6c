"""The first-time dotted paths: ``resolve(resource.group)``, ``resolve(resource.version.group)`` and
``resource_for``/``kind_for`` of a named group, answered straight from a ready group's index.

They must answer exactly as the full path (the judge: a mapper whose direct paths are off), including when a group
is named like a version-and-group (``v1.a.example.com`` beside ``a.example.com``), a group is matched by prefix, a
group version fails (DESIGN 5.10: bail out, never answer confidently wrong), a group refreshes or is evicted. The
index helpers they read (:meth:`GroupIndex.version_reading`, :meth:`MergedIndex.prefix_free`,
:meth:`MergedIndex.indexed_unlisted`) are checked against what they stand for.
"""

from __future__ import annotations

import random
import re
import warnings
from typing import Any

import pytest

from restmapper import GroupVersionResource, RestMapperError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import GroupIndex, LazyRESTMapper
from restmapper.mapper.merged import MergedIndex
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion
from restmapper.testing import FakeCluster, ManualClock, crd_manifest
from restmapper.testing.transport import InProcessTransport

# --- the index helpers, against what they stand for ------------------------------------------------------------


def _random_group(rng: random.Random) -> GroupIndex:
    versions = rng.sample(["v1", "v2", "v1beta1", "v2alpha1"], rng.randint(1, 3))
    lists = []
    for version in versions:
        resources = []
        for _ in range(rng.randint(0, 4)):
            plural = rng.choice(["widgets", "gadgets", "templates", "processedtemplates", "Widgets", "things"])
            kind = rng.choice(["Widget", "Gadget", "Template", "widget", "", "Thing"])
            singular = rng.choice(["", "widget", "thing", "gadget"])
            resources.append(APIResource(plural, singular, rng.random() < 0.5, kind, ("get",), (), ()))
        lists.append(APIResourceList(GroupVersion("g.example.com", version), tuple(resources)))
    group = APIGroup("g.example.com", tuple(versions), rng.choice(versions))
    return GroupIndex.from_lists(group, lists)


def _reference_reading(index: GroupIndex, version: str, name: str) -> Any:
    """``version(version).match_resource(name)``, then ``match_kind`` of their one kind (False: none of them)."""
    vindex = index.version(version)
    hits = () if vindex is None else vindex.match_resource(name)
    if vindex is None or not hits:
        return False
    kinds = {h.kind for h in hits}
    return vindex.match_kind(hits[0].kind) if len(kinds) == 1 else None


@pytest.mark.parametrize("seed", range(200))
def test_the_version_reading_is_match_resource_then_match_kind(seed: int) -> None:
    rng = random.Random(seed)
    index = _random_group(rng)
    for version in ["v1", "v2", "v1beta1", "v2alpha1", "v9", ""]:
        for name in ["widgets", "widget", "gadgets", "templates", "processedtemplates", "things", "thing", "Widgets",
                     "nothing"]:
            assert index.version_reading(version, name) is _reference_reading(index, version, name) or (
                index.version_reading(version, name) == _reference_reading(index, version, name) is False)
            vindex = index.version(version)
            assert index.version_hits(version, name) == (() if vindex is None else vindex.match_resource(name))


def test_a_version_whose_resources_share_a_kind_reads_the_kind_table() -> None:
    """``templates`` and ``processedtemplates`` are both ``Template``: the kind's home is ``templates``."""
    group = APIGroup("t.example.com", ("v1",), "v1")
    resources = (APIResource("processedtemplates", "processedtemplate", True, "Template", ("get",), (), ()),
                 APIResource("templates", "template", True, "Template", ("get",), (), ()))
    index = GroupIndex.from_lists(group, [APIResourceList(GroupVersion("t.example.com", "v1"), resources)])
    found = index.version_reading("v1", "processedtemplates")
    assert found is not False and found is not None and found.plural == "templates"


@pytest.mark.parametrize("seed", range(50))
def test_prefix_free_and_indexed_unlisted_say_what_the_tables_say(seed: int) -> None:
    rng = random.Random(seed)
    names = ["", "a.example.com", "v1.a.example.com", "example.com", "a.example", "ab", "abc.io", "v1", "v1.a",
             "b.example.com", "example.co"]
    merged = MergedIndex()
    for step in range(40):
        op = rng.random()
        name = rng.choice(names)
        if op < 0.3:
            merged.set_listing(rng.sample(names, rng.randint(0, len(names))))
        elif op < 0.7:
            merged.put(name, step, lambda n=name: GroupIndex(APIGroup(n, ("v1",), "v1"), {}))
        else:
            merged.remove(name)
        for probe in [*names, "v1.a.example", "a.ex", "exam", "zzzzzzzz", "a.example.com.x"]:
            assert merged.prefix_free(probe) == (not merged.with_prefix(probe)), (step, probe)
            assert merged.indexed_unlisted(probe) == (
                merged.index(probe) is not None and not merged.listed(probe)), (step, probe)
        for label in ["v1", "v2", "v1beta1", "a", "ab", "v", "vx", ""]:
            under = any(n.startswith(label + ".") for n in merged.with_prefix(label + "."))
            version_like = label[:1] == "v" and label[1:2].isdigit()
            assert merged.under_no_group(label) == (version_like and not under), (step, label)
            if merged.under_no_group(label):
                assert all(merged.prefix_free(f"{label}.{rest}") for rest in ["a.example.com", "a", "x.y"])


# --- the direct paths, against the full path, while the cluster changes -----------------------------------------

GROUPS = ["a.example.com", "v1.a.example.com", "example.com", "b.example.com"]
AGG = ["x.example.com", "v2.x.example.com"]
NAMES = ["widgets", "widget", "Widget", "WIDGETS", "wd", "gadgets", "gd", "Gadget", "nothing"]
SUFFIXES = ["a.example.com", "v1.a.example.com", "v2.a.example.com", "v1.v1.a.example.com", "example.com",
            "v1.example.com", "b.example.com", "v2.b.example.com", "v1beta1.b.example.com", "x.example.com",
            "v1.x.example.com", "v2.x.example.com", "v2.v2.x.example.com", "a.example", "v1.a.example", "example"]
GVR_GROUPS = [*GROUPS, *AGG, "a.example", "nowhere.example.com"]


def _crd(group: str, kind: str, versions: tuple[str, ...], plural: str, singular: str, short: tuple[str, ...],
         scope: str) -> dict[str, Any]:
    return crd_manifest(group, kind, versions=versions, plural=plural, singular=singular, short_names=short,
                        scope=scope)


class _World:
    """A cluster changed at random: CRDs added, changed and removed, aggregated groups served in two versions,
    one of which may fail (stale)."""

    def __init__(self, rng: random.Random, mode: str) -> None:
        self.rng = rng
        self.cluster = FakeCluster(builtin=True, mode=mode)
        self.crds: dict[str, str] = {}  # crd name -> group
        self.agg: set[str] = set()

    def step(self) -> set[str]:
        """One random change; the groups it touched."""
        rng, cluster = self.rng, self.cluster
        op = rng.choice(["crd", "crd", "crd", "delcrd", "agg", "stale", "delagg"])
        if op == "crd" or (op == "delcrd" and not self.crds):
            group = rng.choice(GROUPS)
            base = rng.choice(["widget", "gadget"])
            kind = rng.choice([base.capitalize(), base.capitalize(), "Widget"])
            plural = rng.choice([base + "s", base + "s", "wd"])
            versions = rng.choice([("v1",), ("v1", "v2"), ("v2", "v1beta1"), ("v1beta1",)])
            short = tuple(s for s in rng.sample(["wd", "gd", "widgets"], rng.randint(0, 2)) if s != plural)
            name = f"{plural}.{group}"
            if name in self.crds:
                cluster.delete_crd(name)
            cluster.add_crd(_crd(group, kind, versions, plural, base, short, rng.choice(["Namespaced", "Cluster"])))
            self.crds[name] = group
            return {group}
        if op == "delcrd":
            name = rng.choice(sorted(self.crds))
            group = self.crds.pop(name)
            cluster.delete_crd(name)
            return {group}
        if op == "agg" or not self.agg:
            group = rng.choice(AGG)
            for version in ("v1", "v2"):
                kind = rng.choice(["Widget", "Gadget"])
                plural = kind.lower() + "s"
                resources = [APIResource(plural, kind.lower(), rng.random() < 0.5, kind, ("get", "list"),
                                         tuple(rng.sample(["wd", "gd"], rng.randint(0, 1))), ())]
                cluster.add_api_resources(f"{group}/{version}", resources, priority=rng.choice([50, 100, 1500]))
            self.agg.add(group)
            return {group}
        group = rng.choice(sorted(self.agg))
        if op == "delagg":
            self.agg.discard(group)
            for version in ("v1", "v2"):
                cluster.set_stale(f"{group}/{version}", False)
            cluster.remove_group(group)
            return {group}
        cluster.set_stale(f"{group}/{rng.choice(['v1', 'v2'])}", rng.random() < 0.7)  # a failing group version
        return {group}


def _outcome(ask: Any, *args: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            answer = ask(*args)
            value: Any = (repr(answer), getattr(answer, "namespaced", None))
        except (RestMapperError, ValueError) as exc:
            value = ("error", type(exc).__name__)
    # A replayed failure says how old it is and when it is retried: the warm mapper's backoff may have grown.
    return value, tuple(sorted(re.sub(r" \(failed [^)]*\)", "", str(w.message)) for w in caught))


def _questions() -> list[tuple[str, Any]]:
    qs: list[tuple[str, Any]] = [("resolve", f"{name}.{suffix}") for name in NAMES for suffix in SUFFIXES]
    for method in ("resource_for", "kind_for"):
        for group in GVR_GROUPS:
            for version in ("", "v1", "v2"):
                for name in ("widgets", "widget", "WIDGETS", "wd", "gadgets"):
                    qs.append((method, GroupVersionResource(group, version, name)))
    return qs


def _judge(cluster: FakeCluster) -> LazyRESTMapper:
    """A fresh mapper whose direct paths are off: every answer from the full path."""
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    for name in ("_direct_dotted", "_direct_resolve", "_direct_resource", "_direct_mapping"):
        setattr(mapper, name, lambda *args: None)
    return mapper


def _counting_direct(mapper: LazyRESTMapper) -> list[int]:
    answered = [0]
    for name in ("_direct_dotted", "_direct_resource"):
        original = getattr(mapper, name)

        def counting(*args: Any, _original: Any = original) -> Any:
            found = _original(*args)
            answered[0] += found is not None
            return found

        setattr(mapper, name, counting)
    return answered


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_warm_mapper_answers_dotted_questions_as_the_full_path(seed: int, mode: str) -> None:
    """Random changes, each told to the warm mapper (one group invalidated, a 404 reported, or everything
    dropped); after each, a sample of dotted and named-group questions, asked first-time of the warm mapper (its
    direct paths read ready groups) and of a fresh judge without direct paths: the same answers, errors and
    warnings."""
    rng = random.Random(seed)
    world = _World(rng, mode)
    for _ in range(4):
        world.step()
    clock = ManualClock()
    warm = LazyRESTMapper(DiscoveryClient(InProcessTransport(world.cluster)), clock=clock)
    direct = _counting_direct(warm)
    questions = _questions()
    for step in range(8):
        touched = world.step()
        tell = rng.choice(["group", "group", "notfound", "all"])
        for group in touched:
            if tell == "group":
                warm.invalidate_group(group)
            elif tell == "notfound":
                warm.report_not_found(GroupVersion(group, "v1"))
        if tell == "all":
            warm.invalidate_all()
        clock.advance(2)  # past the failure backoff and the miss refresh interval (not the TTL)
        _outcome(warm.expand_category, "all")  # every group loaded again: the named ones are ready
        judge = _judge(world.cluster)
        sample = rng.sample(questions, 80)
        wrong = []
        for method, arg in sample:
            got, want = _outcome(getattr(warm, method), arg), _outcome(getattr(judge, method), arg)
            if got != want:
                wrong.append((method, arg, got, want))
        assert not wrong, (seed, step, wrong[:3])
    assert direct[0] > 30, "the direct paths answered (the test is not vacuous)"


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_group_named_like_a_version_and_group_takes_part_in_both_readings(mode: str) -> None:
    """``widgets.v1.a.example.com`` reads as ``widgets`` at ``v1`` of ``a.example.com`` first, then as ``widgets``
    of the group ``v1.a.example.com``; with both groups listed, both readings are tried in kubectl's order."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_crd(_crd("a.example.com", "Widget", ("v1",), "widgets", "widget", (), "Namespaced"))
    cluster.add_crd(_crd("v1.a.example.com", "Gadget", ("v2",), "gadgets", "gadget", ("wd",), "Cluster"))
    cluster.add_crd(_crd("v1.a.example.com", "Widget", ("v2",), "widgets", "widget", (), "Cluster"))
    # A kind of the first reading's group spelled as the second's resource: the second's resource reading comes
    # before the first's kind reading.
    cluster.add_crd(_crd("a.example.com", "Gizmo", ("v1",), "gizs", "giz", (), "Namespaced"))
    cluster.add_crd(_crd("v1.a.example.com", "Thing", ("v2",), "gizmos", "gizmo", (), "Cluster"))
    warm = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    warm.expand_category("all")
    judge = _judge(cluster)
    for arg in ["widgets.v1.a.example.com", "gadgets.v1.a.example.com", "wd.v1.a.example.com",
                "widgets.v2.v1.a.example.com", "gadgets.v2.a.example.com", "Widget.v1.a.example.com",
                "widget.a.example.com", "widgets.v1.a.example", "gadgets.v1.a", "gizmo.v1.a.example.com",
                "Gizmo.v1.a.example.com", "gizs.v1.a.example.com"]:
        assert _outcome(warm.resolve, arg) == _outcome(judge.resolve, arg), arg
    assert warm.resolve("gizmo.v1.a.example.com").resource.group == "v1.a.example.com"
    assert warm.resolve("widgets.v1.a.example.com").resource.group == "a.example.com"
    assert warm.resolve("gadgets.v1.a.example.com").resource.group == "v1.a.example.com"


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_failing_version_of_the_named_group_sends_dotted_questions_to_the_full_path(mode: str) -> None:
    """DESIGN 5.10: while a version of ``x.example.com`` fails, a dotted question about it is never answered from
    the group's index: the full path answers (and says what failed), as the judge does."""
    cluster = FakeCluster(builtin=True, mode=mode)
    for version, kind in (("v1", "Widget"), ("v2", "Gadget")):
        cluster.add_api_resources(f"x.example.com/{version}",
                                  [APIResource(kind.lower() + "s", kind.lower(), True, kind, ("get",), (), ())])
    clock = ManualClock()
    warm = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    warm.expand_category("all")
    direct = _counting_direct(warm)
    assert warm.resolve("gadgets.v2.x.example.com").resource.version == "v2"
    assert direct[0] == 1
    cluster.set_stale("x.example.com/v1")
    warm.invalidate_group("x.example.com")
    clock.advance(2)
    direct[0] = 0
    judge = _judge(cluster)
    for arg in ["widgets.x.example.com", "gadgets.x.example.com", "gadgets.v2.x.example.com",
                "widgets.v1.x.example.com"]:
        assert _outcome(warm.resolve, arg) == _outcome(judge.resolve, arg), arg
    for gvr in [GroupVersionResource("x.example.com", "", "gadgets"),
                GroupVersionResource("x.example.com", "v2", "gadgets")]:
        assert _outcome(warm.resource_for, gvr) == _outcome(judge.resource_for, gvr), gvr
    assert direct[0] == 0, "a troubled group is never ready"


def test_an_indexed_group_the_listing_no_longer_names_is_read_by_both_readings() -> None:
    """A group indexed while the listing does not name it (:meth:`MergedIndex.indexed_unlisted`) takes part in the
    reading that names it: the one-group shortcut is not taken."""
    merged = MergedIndex()
    merged.set_listing(["", "a.example.com"])
    merged.put("v1.a.example.com", 1, lambda: GroupIndex(APIGroup("v1.a.example.com", ("v1",), "v1"), {}))
    assert merged.indexed_unlisted("v1.a.example.com") and not merged.indexed_unlisted("a.example.com")
    merged.set_listing(["", "a.example.com", "v1.a.example.com"])
    assert not merged.indexed_unlisted("v1.a.example.com")
    merged.set_listing(["", "a.example.com"])
    assert merged.indexed_unlisted("v1.a.example.com")
    merged.remove("v1.a.example.com")
    assert not merged.indexed_unlisted("v1.a.example.com")


# --- warm categories: a new list per call ------------------------------------------------


def test_a_warm_category_is_a_new_list_per_call_and_ends_with_a_change() -> None:
    cluster = FakeCluster(builtin=True)
    crd = _crd("a.example.com", "Widget", ("v1",), "widgets", "widget", (), "Namespaced")
    crd["spec"]["names"]["categories"] = ["things"]
    cluster.add_crd(crd)
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    mapper.expand_category("all")
    answers = [mapper.expand_category("things") for _ in range(4)]  # first-time, then memoized
    assert all(a == answers[0] for a in answers) and len({id(a) for a in answers}) == 4
    answers[-1].clear()  # the caller's list: the answer held is not changed
    assert mapper.expand_category("things") == answers[0]
    other = _crd("b.example.com", "Gadget", ("v1",), "gadgets", "gadget", (), "Namespaced")
    other["spec"]["names"]["categories"] = ["things"]
    cluster.add_crd(other)
    mapper.invalidate_group("b.example.com")
    assert {g.group for g in mapper.expand_category("things")} == {"a.example.com", "b.example.com"}


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_short_name_two_resources_of_the_group_claim_warns_at_the_caller_as_the_full_path(mode: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("a.example.com/v1", [
        APIResource("widgets", "widget", True, "Widget", ("get",), ("wd",), ()),
        APIResource("wodgets", "wodget", False, "Wodget", ("get",), ("wd",), ())])
    warm = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    warm.expand_category("all")
    direct = _counting_direct(warm)
    judge = _judge(cluster)
    for arg in ("wd.a.example.com", "wd.v1.a.example.com"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = warm.resolve(arg)
        assert [w.filename for w in caught] == [__file__], arg  # points at the caller, as the full path's
        assert _outcome(warm.resolve, arg) == _outcome(judge.resolve, arg), arg  # memoized: warns again
        assert caught and "wodgets" in str(caught[0].message)
        assert got.resource.resource in ("widgets", "wodgets")
    assert direct[0] >= 2


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_kind_and_group_a_group_extending_it_claims_as_a_short_name_reads_that_group(mode: str) -> None:
    """``Widget.example.com`` matches no name of ``example.com`` as typed (names are lower case), so the shortcut
    expander's prefix step reads the short names of the groups extending it: ``example.com.ext`` claims
    ``Widget``. The warm mapper answers as the full path does, not from ``example.com``'s ``widgets`` alone."""
    cluster = FakeCluster.empty(mode=mode)
    cluster.add_api_resources("example.com/v1", [APIResource("widgets", "widget", True, "Widget", ("get",), (), ())])
    cluster.add_api_resources("example.com.ext/v1", [APIResource("gadgets", "gadget", True, "Gadget", ("get",),
                                                                 ("Widget",), ())])
    warm = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
    _outcome(warm.expand_category, "all")  # every group loaded: both are ready
    _outcome(warm.resolve, "widgets.example.com")
    want = _outcome(_judge(cluster).resolve, "Widget.example.com")
    assert "gadgets" in want[0][0]
    assert _outcome(warm.resolve, "Widget.example.com") == want


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_a_memoized_kind_and_group_follows_a_group_listed_later_that_extends_it(mode: str) -> None:
    """``Widget.example.com`` answered from ``example.com`` alone, memoized; then ``example.com.ext`` is served,
    claiming ``Widget`` as a short name, and the mapper is told: the answer is the full path's again."""
    cluster = FakeCluster.empty(mode=mode)
    cluster.add_api_resources("example.com/v1", [APIResource("widgets", "widget", True, "Widget", ("get",), (), ())])
    clock = ManualClock()
    warm = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    _outcome(warm.expand_category, "all")
    assert "'widgets'" in _outcome(warm.resolve, "Widget.example.com")[0][0]
    cluster.add_api_resources("example.com.ext/v1", [APIResource("gadgets", "gadget", True, "Gadget", ("get",),
                                                                 ("Widget",), ())])
    warm.invalidate_group("example.com.ext")
    clock.advance(2)
    want = _outcome(_judge(cluster).resolve, "Widget.example.com")
    assert "gadgets" in want[0][0]
    assert _outcome(warm.resolve, "Widget.example.com") == want
