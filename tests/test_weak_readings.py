"""DESIGN 5.10 for kubectl's argument resolution: an answer reached by a weaker reading is given as certain only
when no group version that could hold a stronger one is unreadable, whatever its rank.

kubectl reads ``resolve(ARG)`` in tiers: a real name (plural or singular) of *any* group beats a short name of any
group (client-go's shortcut expander checks every resource list for a real name before it expands), and a
resource reading beats a kind reading. So while any group version in scope cannot be read, a short-name or
kind-reading answer may be wrong: that version may serve the real name. Such an answer is given as kubectl gives
it (DESIGN 8.4: a broken aggregated API must not break lookups of other groups' resources), but never silently:
with a :class:`PartialDiscoveryWarning` naming the unreadable versions and the spelling to ask for, and with
``failed`` set where the answer has room for it (``resolve_all``). ``warnings.simplefilter("error", ...)`` turns
it into a refusal. A real-name answer keeps the rank rule: only unreadable versions ranking above it count.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from restmapper import GroupDiscoveryError, LazyRESTMapper, PartialDiscoveryWarning, ShortNameConflictWarning
from restmapper.discovery import DiscoveryClient
from restmapper.model import APIResource, GroupVersion, GroupVersionResource
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

MODES = ("legacy", "aggregated")
PODS = GroupVersionResource("", "v1", "pods")


def _mapper(cluster: FakeCluster) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))


def _thing(name: str, kind: str, short: tuple[str, ...] = (), singular: str = "") -> APIResource:
    return APIResource(name, singular or name.rstrip("s"), True, kind, ("get", "list"), short, ())


def _cluster(mode: str) -> FakeCluster:
    """Built-ins plus ``x.example.com/v1``, an aggregated API that serves a resource whose real name is ``po``
    (so ``po`` means x's resource, not core's pods, as in kubectl)."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("x.example.com/v1", [_thing("po", "Thing", singular="thing")], priority=50)
    return cluster


def _quiet(call: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call()  # type: ignore[operator]


@pytest.mark.parametrize("mode", MODES)
def test_a_real_name_in_a_readable_group_beats_a_core_short_name(mode: str) -> None:
    assert _mapper(_cluster(mode)).resolve("po").resource.group == "x.example.com"


@pytest.mark.parametrize("mode", MODES)
def test_a_short_name_answer_is_warned_while_a_group_that_may_serve_that_real_name_is_unreadable(mode: str) -> None:
    cluster = _cluster(mode)
    cluster.set_stale("x.example.com/v1")
    mapper = _mapper(cluster)
    for _ in range(3):  # every time: neither the memo nor the held answers drop the warning
        with pytest.warns(PartialDiscoveryWarning) as record:
            assert mapper.resolve("po").resource == PODS
        text = str(record[0].message)
        assert 'resource type "po" resolved to "pods", but group versions that could not be read may serve' in text
        assert "x.example.com/v1" in text and 'ask for "pods" to be sure' in text
    # Refused when asked to: the warning turned into an error, nothing remembered wrongly.
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialDiscoveryWarning)
        with pytest.raises(PartialDiscoveryWarning):
            mapper.resolve("po")
    # By its real name the answer is certain: core ranks first.
    _quiet(lambda: mapper.resolve("pods"))


@pytest.mark.parametrize("mode", MODES)
def test_resolve_all_marks_a_short_name_answer_partial_like_a_category(mode: str) -> None:
    cluster = _cluster(mode)
    cluster.set_stale("x.example.com/v1")
    mapper = _mapper(cluster)
    for _ in range(2):
        with pytest.warns(PartialDiscoveryWarning):
            found = mapper.resolve_all("po,deployments")
        assert [m.resource.resource for m in found] == ["pods", "deployments"]
        assert found.partial and set(found.failed) == {GroupVersion("x.example.com", "v1")}
    with pytest.warns(PartialDiscoveryWarning):
        everything = mapper.resolve_all("all")
    assert everything.partial and GroupVersion("x.example.com", "v1") in everything.failed


@pytest.mark.parametrize("mode", MODES)
def test_a_real_name_answer_ranking_above_every_unreadable_version_is_given_without_a_warning(mode: str) -> None:
    cluster = _cluster(mode)
    cluster.set_stale("x.example.com/v1")
    mapper = _mapper(cluster)
    for arg, group in (("pods", ""), ("pod", ""), ("Pod", ""), ("deployments", "apps"), ("Deployment", "apps"),
                       ("deployments.apps", "apps")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert mapper.resolve(arg).resource.group == group
        # resolve_all tries a category first (kubectl's ReplaceAliases); a category an unreadable version might
        # declare under a real resource's name is not counted (on purpose: see resolve.preempted).
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not mapper.resolve_all(arg).partial


@pytest.mark.parametrize("mode", MODES)
def test_a_short_name_answer_is_quiet_when_every_group_was_read(mode: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("x.example.com/v1", [_thing("things", "Thing")], priority=50)
    mapper = _mapper(cluster)
    _quiet(lambda: mapper.resolve("po"))
    _quiet(lambda: mapper.resolve("deploy"))
    assert not mapper.resolve_all("po,deploy").partial


@pytest.mark.parametrize("mode", MODES)
def test_a_kind_reading_answer_is_warned_while_a_version_that_may_serve_that_resource_name_is_unreadable(
        mode: str) -> None:
    """``Widget.y.example.com`` names no resource in y's readable version, so it is read as y's kind ``Widget``
    (resource ``gadgets``); y's unreadable other version may serve a resource named ``widget``, which kubectl's
    resource reading would pick first, whatever that version's rank."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("y.example.com/v1", [_thing("gadgets", "Widget", singular="gadget")], preferred=True)
    cluster.add_api_resources("y.example.com/v2", [_thing("gadgets", "Widget", singular="gadget")])
    gadgets = GroupVersionResource("y.example.com", "v1", "gadgets")
    _quiet(lambda: _mapper(cluster).resolve("Widget.y.example.com"))
    cluster.set_stale("y.example.com/v2")
    mapper = _mapper(cluster)
    try:
        by_name = mapper.resolve("gadgets.y.example.com").resource
    except GroupDiscoveryError:  # aggregated: a Stale version may be the real preferred one, ranking first
        with pytest.raises(GroupDiscoveryError):
            mapper.resolve("Widget.y.example.com")
    else:
        assert by_name == gadgets
        with pytest.warns(PartialDiscoveryWarning, match='ask for "gadgets.v1.y.example.com" to be sure'):
            assert mapper.resolve("Widget.y.example.com").resource == gadgets


@pytest.mark.parametrize("mode", MODES)
def test_a_dotted_short_name_is_warned_while_another_version_of_its_group_is_unreadable(mode: str) -> None:
    """``wd.a.example.com`` expands ``wd`` in group a; a real name ``wd`` in a's unreadable v1 (ranking below the
    preferred v2) would beat it; an unreadable version of another group is out of scope."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("a.example.com/v2", [_thing("widgets", "Widget", ("wd",))], preferred=True)
    cluster.add_api_resources("a.example.com/v1", [_thing("widgets", "Widget", ("wd",))])
    cluster.add_api_resources("b.example.com/v1", [_thing("things", "Thing")])
    widgets = GroupVersionResource("a.example.com", "v2", "widgets")
    cluster.set_stale("b.example.com/v1")
    _quiet(lambda: _mapper(cluster).resolve("wd.a.example.com"))
    cluster.set_stale("a.example.com/v1")
    mapper = _mapper(cluster)
    try:
        mapper.resolve("widgets.a.example.com")
    except GroupDiscoveryError:  # aggregated: a Stale version may be the real preferred one, ranking first
        with pytest.raises(GroupDiscoveryError):
            mapper.resolve("wd.a.example.com")
        return
    with pytest.warns(PartialDiscoveryWarning, match="a.example.com/v1") as record:
        assert mapper.resolve("wd.a.example.com").resource == widgets
    assert "b.example.com" not in str(record[0].message)


@pytest.mark.parametrize("mode", MODES)
def test_a_remembered_short_name_answer_is_warned_once_a_group_became_unreadable(mode: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("x.example.com/v1", [_thing("things", "Thing")], priority=50)
    mapper = _mapper(cluster)
    for _ in range(3):  # memoized, then held (the hot layer)
        _quiet(lambda: mapper.resolve("po"))
    cluster.set_stale("x.example.com/v1")
    mapper.invalidate_group("x.example.com")
    for _ in range(2):
        with pytest.warns(PartialDiscoveryWarning, match="x.example.com/v1"):
            assert mapper.resolve("po").resource == PODS


def test_a_short_name_outranked_by_an_unreadable_group_is_still_an_error() -> None:
    """Rule 2 first: an unreadable group ranking above the short name's group may claim the short name itself."""
    cluster = FakeCluster(builtin=True, mode="legacy")
    cluster.add_api_resources("a.example.com/v1", [_thing("widgets", "Widget", ("wd",))], priority=20)
    cluster.add_api_resources("b.example.com/v1", [_thing("widgets", "Widget", ("wd",))], priority=10)
    with pytest.warns(ShortNameConflictWarning, match="widgets.b.example.com"):  # both groups call it wd
        assert _mapper(cluster).resolve("wd").resource.group == "a.example.com"
    cluster.set_stale("a.example.com/v1")
    with pytest.raises(GroupDiscoveryError) as caught:
        _mapper(cluster).resolve("wd")
    assert GroupVersion("a.example.com", "v1") in caught.value.failed


@pytest.mark.parametrize("mode", MODES)
def test_the_inline_reads_never_hand_out_a_warned_answer_silently(mode: str) -> None:
    """``cached_resolve`` (what ``AsyncRESTMapper`` and the object cache answer inline) offers only answers with
    nothing to warn: a warned one is left to ``resolve``, which warns."""
    cluster = _cluster(mode)
    cluster.set_stale("x.example.com/v1")
    mapper = _mapper(cluster)
    with pytest.warns(PartialDiscoveryWarning):
        mapper.resolve("po")
    assert mapper.cached_resolve("po") is None
    _quiet(lambda: mapper.resolve("pods"))
    assert mapper.cached_resolve("pods") is not None and mapper.cached_resolve("pods").resource == PODS


@pytest.mark.parametrize("mode", MODES)
def test_the_warning_is_shown_once_per_call_site_and_carries_the_failures(mode: str) -> None:
    """While an API stays down the warning repeats on every call: its text holds no ages (so Python's default
    once-per-location filter shows it once), and the warning object carries ``failed`` (for the error filter)."""
    cluster = _cluster(mode)
    cluster.set_stale("x.example.com/v1")
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            mapper.resolve("po")
            clock.advance(0.7)  # replays, then retries: the causes' ages change
    texts = {str(w.message) for w in caught}
    assert len(caught) == 5 and len(texts) == 1, texts
    assert "ago" not in next(iter(texts))
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialDiscoveryWarning)
        with pytest.raises(PartialDiscoveryWarning) as raised:
            mapper.resolve("po")
    assert set(raised.value.failed) == {GroupVersion("x.example.com", "v1")}


def test_the_warning_points_at_the_users_line_through_the_object_cache() -> None:
    from store_helpers import object_cache

    cluster = _cluster("legacy")
    cluster.set_stale("x.example.com/v1")
    with cluster.serve() as served, object_cache(served) as cache, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache.list("po")
    partial = [w for w in caught if issubclass(w.category, PartialDiscoveryWarning)]
    assert partial and all(w.filename == __file__ for w in partial), [(w.filename, w.lineno) for w in partial]


@pytest.mark.parametrize("mode", MODES)
def test_a_warned_answer_is_remembered_for_a_miss_interval_not_recomputed_each_call(mode: str) -> None:
    """While an API stays down, the warned answer is computed over every group once per miss interval, not on every
    call (it was ~0.7 ms each), and still warns on every call; after the interval it is asked again."""
    cluster = _cluster(mode)
    cluster.set_stale("x.example.com/v1")
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    computed = [0]
    real = mapper._resolve_question

    def counting(arg: str, expand: bool) -> Any:
        build = real(arg, expand)

        def question() -> Any:  # built only when the answer is computed (not on a memo hit)
            computed[0] += 1
            return build()

        return question

    mapper._resolve_question = counting  # type: ignore[method-assign]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(20):
            assert mapper.resolve("po").resource == PODS
        assert computed[0] == 1 and len(caught) == 20
        clock.advance(mapper.cache.miss_refresh_interval)
        mapper.resolve("po")
    assert computed[0] == 2
