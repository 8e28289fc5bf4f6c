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

kubectl facts relied on (client-go restmapper/shortcut.go expandResourceShortcut, apimachinery DefaultRESTMapper):
- the exact-name guard is restricted to the input group *exactly* and compares discovery's ``name`` and
  ``singularName`` only (no guessed singular);
- with a group given and no exact-group shortcut, the first shortcut of any group *starting with* it wins (step 3),
  before ``KindFor`` runs: so for a group prefix that names no group, a short name beats a real name;
- ``NewDiscoveryRESTMapper`` builds one DefaultRESTMapper per group version, so "exact group wins over prefix" holds
  within one group version only: ``deploymentconfigs.apps`` matches ``apps.openshift.io`` by prefix even though
  group ``apps`` exists.
Content served stale after a failed refresh (stale-on-error, or ``/apis`` served stale) counts as unreadable, for a
warm mapper as for a cold one; the object cache never reuses a warned answer silently.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from helpers.store import object_cache

from restmapper import GroupDiscoveryError, LazyRESTMapper, PartialDiscoveryWarning, ShortNameConflictWarning
from restmapper.discovery import DiscoveryClient
from restmapper.model import APIResource, GroupVersion, GroupVersionResource
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

MODES = ("legacy", "aggregated")
PODS = GroupVersionResource("", "v1", "pods")


def _mapper(cluster: FakeCluster, **options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), **options)


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
    from helpers.store import object_cache

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


def _res(name: str, kind: str, singular: str, short: tuple[str, ...] = (), categories: tuple[str, ...] = (),
         namespaced: bool = True) -> APIResource:
    return APIResource(name, singular, namespaced, kind, ("get", "list"), short, categories)


def _outcome(call: Callable[[], Any]) -> tuple[Any, list[type[Warning]]]:
    """The answer (or error class) and the PartialDiscoveryWarning-or-error categories emitted."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value: Any = call()
        except GroupDiscoveryError as exc:
            value = exc
    return value, [w.category for w in caught if issubclass(w.category, PartialDiscoveryWarning)]


def _warned_or_raised(call: Callable[[], Any]) -> bool:
    value, partial = _outcome(call)
    return isinstance(value, GroupDiscoveryError) or bool(partial)


@pytest.mark.parametrize("mode", MODES)
def test_a_prefix_real_name_answer_is_not_silent_while_a_prefix_group_with_that_short_name_is_unreadable(
        mode: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("a.example.com/v1", [_res("gadgets", "Gadget", "gadget")], priority=100)
    cluster.add_api_resources("a.other.io/v1", [_res("widgets", "Widget", "widget", ("gadgets",))], priority=50)
    # Everything readable: kubectl's expander step 3 turns gadgets.a into widgets.a.other.io (as the mapper does).
    assert _mapper(cluster).resolve("gadgets.a").resource == GroupVersionResource("a.other.io", "v1", "widgets")
    cluster.set_stale("a.other.io/v1")  # ranks BELOW a.example.com, yet may hold the short name that wins
    assert _warned_or_raised(lambda: _mapper(cluster).resolve("gadgets.a"))  # not: gadgets.a.example.com, silent


def _po_cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("x.example.com/v1", [_res("things", "Thing", "thing")], priority=50)
    return cluster


@pytest.mark.parametrize(("mode", "fault"), [("legacy", "/apis/x.example.com/v1"), ("aggregated", "/apis")])
def test_a_short_name_answer_is_not_silent_when_a_refresh_failed_and_content_is_served_stale(
        mode: str, fault: str) -> None:
    cluster = _po_cluster(mode)
    clock = ManualClock()
    warm = _mapper(cluster, clock=clock, ttl=30, max_stale=600)
    assert warm.resolve("po").resource.resource == "pods"  # x has no resource named po yet
    # x gains a real resource "po" (kubectl now answers x's po) and its discovery starts failing.
    cluster.add_api_resources("x.example.com/v1", [_res("things", "Thing", "thing"), _res("po", "Po", "po")],
                              priority=50)
    cluster.inject(fault, status=503)
    clock.advance(31)  # the TTL ends: the refresh fails, the earlier content is served (stale-on-error)
    assert _warned_or_raised(lambda: _mapper(cluster).resolve("po"))  # a cold mapper says so (it warns / raises)
    assert _warned_or_raised(lambda: warm.resolve("po"))  # not: core pods, no warning (wrong: x serves po)


@pytest.mark.parametrize("mode", MODES)
def test_a_short_name_answer_is_not_silent_while_the_group_listing_is_served_stale(mode: str) -> None:
    """A group created while ``/apis`` cannot be refreshed may serve the real name."""
    cluster = FakeCluster(builtin=True, mode=mode)
    clock = ManualClock()
    warm = _mapper(cluster, clock=clock, ttl=30, max_stale=600)
    assert warm.resolve("po").resource.resource == "pods"
    cluster.add_api_resources("y.example.com/v1", [_res("po", "Po", "po")], priority=50)
    cluster.inject("/apis", status=503)
    clock.advance(31)
    assert _warned_or_raised(lambda: warm.resolve("po"))  # not: core pods, silent (kubectl: y's po)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("arg", ["dc.apps", "deploymentconfigs.apps", "DeploymentConfig.apps"])
def test_an_existing_group_does_not_hide_groups_it_prefixes(mode: str, arg: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("apps.openshift.io/v1", [_res("deploymentconfigs", "DeploymentConfig",
                                                            "deploymentconfig", ("dc",))])
    # kubectl: dc.apps by the expander's prefix step; the others by the per-group-version prefix match of KindFor.
    assert _mapper(cluster).resolve(arg).resource == GroupVersionResource("apps.openshift.io", "v1",
                                                                          "deploymentconfigs")  # not: a no-match


@pytest.mark.parametrize("mode", MODES)
def test_a_prefix_short_name_answer_is_quiet_when_only_a_lower_ranked_prefix_group_is_unreadable(mode: str) -> None:
    """``hpa.autoscal``: step 3 takes the first prefix shortcut in discovery order; a real name never beats it (the
    guard is for group ``autoscal`` exactly: none), so an unreadable group ranking below autoscaling cannot change
    it (rule 2 covers one ranking above)."""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("autoscaling.x.io/v1", [_res("scalers", "Scaler", "scaler")], priority=50)
    cluster.set_stale("autoscaling.x.io/v1")
    value, partial = _outcome(lambda: _mapper(cluster).resolve("hpa.autoscal"))
    assert value.resource.resource == "horizontalpodautoscalers"
    assert partial == []  # not: a PartialDiscoveryWarning (an error under simplefilter("error"))


@pytest.mark.parametrize("mode", MODES)
def test_a_guessed_singular_loses_to_a_short_name(mode: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("a.example.com/v1", [_res("gadgets", "Gadget", "")], priority=100)  # no singularName
    cluster.add_api_resources("b.example.com/v1", [_res("widgets", "Widget", "widget", ("gadget",))], priority=50)
    # kubectl: no resource has name or singularName "gadget", so the short name expands: widgets.b.example.com.
    assert _mapper(cluster).resolve("gadget").resource.group == "b.example.com"  # not: a.example.com gadgets
    cluster.set_stale("b.example.com/v1")
    assert _warned_or_raised(lambda: _mapper(cluster).resolve("gadget"))  # not: silent


@pytest.mark.parametrize("mode", MODES)
def test_resolve_all_of_a_real_name_is_not_doubted_by_a_category_an_unreadable_group_may_declare(
        mode: str) -> None:
    """Decided (README): kubectl tries a category first, but counting a category an unreadable version
    might declare under a real resource's name would make every ``resolve_all("secrets")`` warn whenever any API
    is down, with no spelling that is certain for core. So that step is not counted: the real name is answered,
    quietly. (A readable category still wins, as kubectl.)"""
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("x.example.com/v1", [_res("things", "Thing", "thing", categories=("secrets",))],
                              priority=50)
    assert [m.resource.group for m in _mapper(cluster).resolve_all("secrets")] == ["x.example.com"]  # as kubectl
    cluster.set_stale("x.example.com/v1")
    found, partial = _outcome(lambda: _mapper(cluster).resolve_all("secrets"))
    assert not partial and not found.partial and [m.resource.group for m in found] == [""]


def test_the_object_cache_does_not_reuse_a_warned_resolution_silently() -> None:
    cluster = FakeCluster(builtin=True, mode="legacy")
    cluster.add_api_resources("x.example.com/v1", [_res("po", "Thing", "thing")], priority=50)
    cluster.set_stale("x.example.com/v1")
    with cluster.serve() as served, object_cache(served) as cache:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cache.list("po")
            cache.list("po")
        with warnings.catch_warnings():
            warnings.simplefilter("error", PartialDiscoveryWarning)  # the documented way to refuse such answers
            with pytest.raises(PartialDiscoveryWarning):
                cache.mapper.resolve("po")
            with pytest.raises(PartialDiscoveryWarning):  # not: core Pods listed, no warning at all
                cache.list("po")


@pytest.mark.parametrize(("mode", "fault"), [("legacy", "/apis/y.example.com/v1"), ("aggregated", "/apis")])
def test_a_kind_reading_answer_is_not_silent_when_a_refresh_failed_and_content_is_served_stale(
        mode: str, fault: str) -> None:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_api_resources("y.example.com/v1", [_res("gadgets", "Widget", "gadget")], priority=50)
    clock = ManualClock()
    warm = _mapper(cluster, clock=clock, ttl=30, max_stale=600)
    assert warm.resolve("Widget.y.example.com").resource.resource == "gadgets"  # a kind reading
    # y/v1 now serves a resource named widgets (a resource reading, which kubectl tries first) and cannot be read.
    cluster.add_api_resources("y.example.com/v1", [_res("gadgets", "Widget", "gadget"),
                                                   _res("widgets", "Thing", "widget")], priority=50)
    cluster.inject(fault, status=503)
    clock.advance(31)
    assert _warned_or_raised(lambda: warm.resolve("Widget.y.example.com"))  # not: gadgets, silent
