"""Warm answers end with the change that ends them: a question asked several times, then the world changes in one
of the ways that must end its answer, and the next answer must be the one a fresh client gives. Errors and answers
with warnings are asked again as well; a warm client and a fresh one answer alike over random sequences.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from helpers.model import make_dropin

from restmapper import GroupKind, GroupVersionResource
from restmapper.discovery import DiscoveryClient
from restmapper.errors import DiscoveryError, NoKindMatchError, NoResourceMatchError
from restmapper.mapper import LazyRESTMapper
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest

GVR = GroupVersionResource
ASKS = 4  # a hit at an epoch already checked holds an answer: later ones come from the layer

MAPPER_QUESTIONS: dict[str, Callable[[LazyRESTMapper], Any]] = {
    "rest_mapping(GK, v)": lambda m: m.rest_mapping(GroupKind("a.example.com", "Widget"), "v1"),
    "rest_mapping(GK)": lambda m: m.rest_mapping(GroupKind("a.example.com", "Widget")),
    "resolve(kind)": lambda m: m.resolve("Widget"),
    "resolve(plural)": lambda m: m.resolve("widgets"),
    "resolve(short)": lambda m: m.resolve("wd"),
    "resolve(plural.group)": lambda m: m.resolve("widgets.a.example.com"),
    "resolve(plural.v.group)": lambda m: m.resolve("widgets.v1.a.example.com"),
    "resource_for": lambda m: m.resource_for(GVR("", "", "widgets")),
    "kind_for": lambda m: m.kind_for(GVR("a.example.com", "", "widgets")),
    "kinds_for": lambda m: m.kinds_for(GVR("", "", "widget")),
    "expand_category": lambda m: m.expand_category("stuff"),
}
DROPIN_QUESTIONS: dict[str, Callable[[Any], Any]] = {
    "get(api_version, kind)": lambda d: d.get(api_version="a.example.com/v1", kind="Widget"),
    "get(kind, api_version)": lambda d: d.get(kind="Widget", api_version="a.example.com/v1"),
    "get(kind)": lambda d: d.get(kind="Widget"),
    "get(short_names)": lambda d: d.get(short_names=["wd"]),
    "search(kind)": lambda d: d.search(kind="Widget"),
}


def _cluster(scope: str = "Namespaced", versions: tuple[str, ...] = ("v1",)) -> FakeCluster:
    cluster = FakeCluster.embedded()
    cluster.add_crd(crd_manifest("a.example.com", "Widget", versions=versions, scope=scope, short_names=("wd",),
                                 categories=("stuff",)))
    cluster.add_crd(crd_manifest("b.example.com", "Gizmo", short_names=("gz",), categories=("stuff",)))
    return cluster


def _mapper(cluster: FakeCluster, clock: Callable[[], float], **options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, **options)


def _rescope(cluster: FakeCluster) -> None:
    """Widget deleted and recreated cluster-scoped, with a second version preferred (``spec.scope`` is immutable),
    out of the category ``stuff``."""
    cluster.remove_crd("widgets.a.example.com")
    cluster.add_crd(crd_manifest("a.example.com", "Widget", versions=("v2", "v1"), scope="Cluster",
                                 short_names=("wd",), categories=("other",)))


def _answer(ask: Callable[[Any], Any], client: Any) -> Any:
    got = ask(client)
    if isinstance(got, list):
        return [repr(x) if not hasattr(x, "namespaced") else (repr(x), x.namespaced) for x in got]
    namespaced = getattr(got, "namespaced", None)
    return (repr(got), namespaced)


def _dropin_answer(ask: Callable[[Any], Any], client: Any) -> Any:
    got = ask(client)
    items = got if isinstance(got, list) else [got]
    return [(r.group, r.api_version, r.kind, r.name, r.namespaced) for r in items]


@pytest.mark.parametrize("tell", ["invalidate_group", "ttl", "report_not_found"])
@pytest.mark.parametrize("question", sorted(MAPPER_QUESTIONS))
def test_a_held_answer_ends_with_the_change_that_ends_its_memo(question: str, tell: str) -> None:
    cluster, clock = _cluster(), ManualClock()
    mapper = _mapper(cluster, clock, ttl=30)
    ask = MAPPER_QUESTIONS[question]
    before = [_answer(ask, mapper) for _ in range(ASKS)]
    assert before == [before[0]] * ASKS
    _rescope(cluster)
    if tell == "invalidate_group":
        mapper.invalidate_group("a.example.com")
    elif tell == "report_not_found":
        mapper.report_not_found(GroupVersion("a.example.com", "v1"))
    else:
        assert _answer(ask, mapper) == before[0]  # untold and within the TTL: the held answer is still right
        clock.advance(31)
    fresh = _answer(ask, _mapper(cluster, clock))
    assert fresh != before[0]  # the change is visible to this question
    assert [_answer(ask, mapper) for _ in range(ASKS)] == [fresh] * ASKS


@pytest.mark.parametrize("question", sorted(DROPIN_QUESTIONS))
def test_a_held_dropin_answer_ends_with_an_invalidation_or_the_ttl(question: str) -> None:
    cluster, clock = _cluster(), ManualClock()
    dropin = make_dropin(cluster, clock, ttl=30)
    ask = DROPIN_QUESTIONS[question]
    before = [_dropin_answer(ask, dropin) for _ in range(ASKS)]
    assert before == [before[0]] * ASKS
    _rescope(cluster)
    dropin.mapper.invalidate_group("a.example.com")
    fresh = _dropin_answer(ask, make_dropin(cluster, clock))
    assert fresh != before[0]
    assert [_dropin_answer(ask, dropin) for _ in range(ASKS)] == [fresh] * ASKS
    _rescope(cluster)  # recreated once more (same content): untold, then the TTL ends it
    clock.advance(31)
    assert [_dropin_answer(ask, dropin) for _ in range(ASKS)] == [fresh] * ASKS


def test_an_answer_about_another_group_survives_a_refresh_unrecomputed() -> None:
    cluster, clock = _cluster(), ManualClock()
    mapper = _mapper(cluster, clock)
    gizmo = GroupKind("b.example.com", "Gizmo")
    first = mapper.rest_mapping(gizmo)
    assert mapper.rest_mapping(gizmo) is first
    requests = len(cluster.requests)
    mapper.invalidate_group("a.example.com")
    assert mapper.rest_mapping(gizmo) is first  # the same object: from the memo, not computed again
    assert mapper.rest_mapping(gizmo) is first
    assert len(cluster.requests) == requests  # and group a was not refetched for it


def test_answers_with_warnings_are_never_held() -> None:
    """A short name claimed by two groups warns on every call (kubectl warns each time)."""
    cluster, clock = _cluster(), ManualClock()
    cluster.add_crd(crd_manifest("c.example.com", "Wodget", short_names=("wd",)))
    mapper = _mapper(cluster, clock)
    for _ in range(ASKS):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mapper.resolve("wd")
        assert [w for w in caught if "wd" in str(w.message)], "the conflict warning is emitted on every call"


def test_errors_are_never_held() -> None:
    cluster, clock = _cluster(), ManualClock()
    mapper = _mapper(cluster, clock, miss_refresh_interval=1.0)
    for _ in range(ASKS):
        with pytest.raises(NoResourceMatchError):
            mapper.resolve("sprockets")
    cluster.add_crd(crd_manifest("c.example.com", "Sprocket"))
    clock.advance(1.1)
    assert mapper.resolve("sprockets").resource.group == "c.example.com"


def test_a_failed_reload_ends_the_stretch_of_answers_from_any_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """After an invalidation, an answer that may come from any group waits for every group to load again. The
    reload stays due while it runs: a question asked meanwhile reloads too (sharing the fetches) and is
    never answered from the groups as they were before the invalidation; when the reload fails it is still due,
    and no answer held before it is returned in its place."""
    cluster, clock = _cluster(), ManualClock()
    mapper = _mapper(cluster, clock)
    for _ in range(ASKS):
        assert mapper.resolve("gz").resource.group == "b.example.com"
    mapper.invalidate_group("a.example.com")
    real = mapper.cache.ensure_all
    calls = [0]

    def failing_reload() -> float:
        calls[0] += 1
        if calls[0] == 1:  # asked while this reload runs: it reloads too (and fails the same way)
            with pytest.raises(DiscoveryError):
                mapper.resolve("gz")
        raise DiscoveryError("/apis: 503 Service Unavailable")

    monkeypatch.setattr(mapper.cache, "ensure_all", failing_reload)
    with pytest.raises(DiscoveryError):
        mapper.resolve("gz")
    assert calls[0] == 2
    with pytest.raises(DiscoveryError):  # the reload is due again: not the answer held before it
        mapper.resolve("gz")
    assert calls[0] == 3
    monkeypatch.setattr(mapper.cache, "ensure_all", real)
    assert mapper.resolve("gz").resource.group == "b.example.com"


def test_a_search_answer_is_a_new_list_each_time() -> None:
    cluster, clock = _cluster(), ManualClock()
    dropin = make_dropin(cluster, clock)
    for _ in range(ASKS):
        got = dropin.search(kind="Widget")
        assert len(got) == 1
        got.clear()


def test_cached_lookups_for_event_loops_never_return_a_held_answer_after_a_change() -> None:
    """``cached_rest_mapping`` / ``cached_resolve`` (what AsyncRESTMapper and the object cache answer inline) read
    the held answers too, under the same rules: after an invalidation they answer None until asked again."""
    cluster, clock = _cluster(), ManualClock()
    mapper = _mapper(cluster, clock)
    widget = GroupKind("a.example.com", "Widget")
    for _ in range(ASKS):
        mapper.rest_mapping(widget)
        mapper.resolve("wd")
    assert mapper.cached_rest_mapping(widget) == mapper.rest_mapping(widget)
    assert mapper.cached_resolve("wd") == mapper.resolve("wd")
    assert mapper.cached_rest_mapping(widget).namespaced  # type: ignore[union-attr]
    _rescope(cluster)
    mapper.invalidate_group("a.example.com")
    assert mapper.cached_rest_mapping(widget) is None
    assert mapper.cached_resolve("wd") is None
    for _ in range(ASKS):
        assert not mapper.rest_mapping(widget).namespaced
        assert not mapper.resolve("wd").namespaced
    assert mapper.cached_rest_mapping(widget) == mapper.rest_mapping(widget)
    assert mapper.cached_resolve("wd") == mapper.resolve("wd")


def test_an_invalidated_group_nobody_loaded_is_read_before_an_answer_from_any_group_is_reused() -> None:
    """A group the server lists but nobody loaded: invalidating it makes a reload due before any answer from any
    group is reused (its content may claim the name); later calls find the group that claims ``gz`` first, as a
    client that was not warm does."""
    cluster, clock = FakeCluster.embedded(mode="legacy"), ManualClock()
    cluster.add_crd(crd_manifest("a.example.com", "Widget", short_names=("wd",)))
    cluster.add_crd(crd_manifest("b.example.com", "Gizmo", short_names=("gz",)))
    mapper = _mapper(cluster, clock, miss_refresh_interval=0)
    for _ in range(ASKS):
        assert mapper.resolve("gz").resource.group == "b.example.com"
    cluster.add_crd(crd_manifest("ab.example.com", "Gadget", short_names=("gz",)))
    with pytest.raises(NoKindMatchError):  # a miss about a named group: /apis read again, ab listed, not loaded
        mapper.rest_mapping(GroupKind("zzz.example.com", "Nope"))
    assert "ab.example.com" in mapper.cache.listing()
    assert mapper.resolve("gz").resource.group == "b.example.com"  # memoized, and no reload is due
    mapper.invalidate_group("ab.example.com")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ab.example.com and b.example.com both claim gz: kubectl warns
        got = [mapper.resolve("gz").resource.group for _ in range(ASKS)]
        expected = _mapper(cluster, clock).resolve("gz").resource.group
    assert expected == "ab.example.com"
    assert got == [expected] * ASKS


class _LikeStr:
    """Not a str, but hashes and compares as one: a wrong-type argument a held answer's key would match."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        return other == self.value


def test_a_wrong_type_is_refused_warm_as_cold() -> None:
    """The held answers are read only for arguments of the types the memo path accepts."""
    cluster, clock = _cluster(), ManualClock()
    mapper = _mapper(cluster, clock)
    widget = GroupKind("a.example.com", "Widget")
    for _ in range(ASKS):
        mapper.expand_category("stuff")
        mapper.rest_mapping(widget, "v1")
        mapper.cached_rest_mapping(widget, "v1")
    with pytest.raises(TypeError):
        mapper.expand_category(_LikeStr("stuff"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mapper.cached_rest_mapping(widget, _LikeStr("v1"))  # type: ignore[arg-type]


# --- differential: a warm client answers what the memo path alone answers ----------------------------------------

_GROUPS = ("a.example.com", "b.example.com", "c.example.com")
_DIFF_QUESTIONS: tuple[Callable[[LazyRESTMapper], Any], ...] = (
    lambda m: m.rest_mapping(GroupKind("a.example.com", "Widget")),
    lambda m: m.rest_mapping(GroupKind("a.example.com", "Widget"), "v1"),
    lambda m: m.rest_mapping(GroupKind("b.example.com", "Gizmo")),
    lambda m: m.cached_rest_mapping(GroupKind("a.example.com", "Widget")),
    lambda m: m.resolve("widgets"),
    lambda m: m.resolve("wd"),
    lambda m: m.resolve("gz"),
    lambda m: m.resolve("Widget"),
    lambda m: m.cached_resolve("wd"),
    lambda m: m.kind_for(GVR("", "", "widgets")),
    lambda m: m.resource_for(GVR("", "", "gizmos")),
    lambda m: m.kinds_for(GVR("", "", "widget")),
    lambda m: m.expand_category("stuff"),
    lambda m: m.resolve_all("stuff,wd"),
)


def _random_crd(rng: Any, group: str, kind: str) -> dict[str, Any]:
    return crd_manifest(group, kind, versions=rng.choice([("v1",), ("v2", "v1"), ("v2",)]),
                        scope=rng.choice(["Namespaced", "Cluster"]), short_names=(rng.choice(["wd", "gz", "xx"]),),
                        categories=(rng.choice(["stuff", "other"]),))


def _outcome(ask: Callable[[LazyRESTMapper], Any], mapper: LazyRESTMapper) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = ask(mapper)
            value: Any = ([(repr(x), getattr(x, "namespaced", None)) for x in got] if isinstance(got, list)
                          else (repr(got), getattr(got, "namespaced", None)))
        except Exception as exc:  # the outcome is compared, whatever it is
            value = ("error", type(exc).__name__, str(exc))
    return value, sorted(str(w.message) for w in caught)


_DIFF_DROPIN: tuple[Callable[[Any], Any], ...] = (
    lambda d: d.get(api_version="a.example.com/v1", kind="Widget"),
    lambda d: d.get(api_version="a.example.com/v2", kind="Widget"),
    lambda d: d.get(kind="Widget"),
    lambda d: d.get(kind="Gizmo", group="b.example.com"),
    lambda d: d.get(short_names=["wd"]),
    lambda d: d.get(name="widgets"),
    lambda d: d.search(kind="Widget"),
    lambda d: d.search(categories=["stuff"]),
    lambda d: d.get(api_version="v1", kind="Pod"),
)


def _dropin_outcome(ask: Callable[[Any], Any], dropin: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = ask(dropin)
            value: Any = [(r.group, r.api_version, r.kind, r.name, r.namespaced)
                          for r in (got if isinstance(got, list) else [got])]
        except Exception as exc:  # the outcome is compared, whatever it is
            value = ("error", type(exc).__name__, str(exc))
    return value, sorted(str(w.message) for w in caught)


def _pair(client: str, cluster: FakeCluster, clock: ManualClock, options: dict[str, Any]
          ) -> tuple[Any, Any, Callable[[Any], LazyRESTMapper]]:
    """Two clients over ``cluster`` (the second holding nothing) and how to reach each one's mapper."""
    if client == "mapper":
        # The mapper holds nothing beside its memo any more: two equal clients (the memo itself is checked against
        # answers computed from scratch by the differential suite).
        warm, plain = _mapper(cluster, clock, **options), _mapper(cluster, clock, **options)
        return warm, plain, lambda c: c  # type: ignore[no-any-return]
    warm, plain = make_dropin(cluster, clock, **options), make_dropin(cluster, clock, **options)
    plain._current_memo = lambda: type(plain._memo)(-1)  # every answer computed: its memo is never the current one
    return warm, plain, lambda c: c.mapper  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("client", ["mapper", "dropin"])
def test_a_warm_client_answers_as_one_that_holds_nothing(client: str, seed: int) -> None:
    """Random sequences over one cluster and clock: questions asked 1-3 times in batches, time passing past TTLs and
    miss intervals, CRDs added, removed and rescoped, invalidations and 404 reports, 503 faults. Two clients over
    the same sequence give the same outcomes, warnings included (for the drop-in, one whose memo holds nothing)."""
    import random

    rng = random.Random(seed)
    cluster, clock = FakeCluster.embedded(), ManualClock()
    present: dict[tuple[str, str], str] = {}
    for group in _GROUPS:
        for kind in ("Widget", "Gizmo"):
            if rng.random() < 0.5:
                present[(group, kind)] = cluster.add_crd(_random_crd(rng, group, kind))
    options = {"ttl": rng.choice([None, 0, 5, 30]), "miss_refresh_interval": rng.choice([0, 1, 5])}
    warm, plain, mapper_of = _pair(client, cluster, clock, options)
    questions, outcome = ((_DIFF_QUESTIONS, _outcome) if client == "mapper" else (_DIFF_DROPIN, _dropin_outcome))
    for step in range(70):
        op = rng.random()
        if op < 0.6:
            batch = [q for q in rng.choices(questions, k=rng.randint(1, 6)) for _ in range(rng.randint(1, 3))]
            assert [outcome(q, warm) for q in batch] == [outcome(q, plain) for q in batch], f"step {step}"
        elif op < 0.7:
            clock.advance(rng.choice([0.5, 1, 3, 6, 31]))
        elif op < 0.8:
            group, kind = rng.choice(_GROUPS), rng.choice(["Widget", "Gizmo"])
            if (group, kind) in present:
                cluster.remove_crd(present.pop((group, kind)))
            else:
                present[(group, kind)] = cluster.add_crd(_random_crd(rng, group, kind))
        elif op < 0.9:
            group, how = rng.choice(_GROUPS), rng.random()
            for mapper in (mapper_of(warm), mapper_of(plain)):
                if how < 0.4:
                    mapper.invalidate_group(group)
                elif how < 0.6:
                    mapper.invalidate_all()
                else:
                    mapper.report_not_found(GroupVersion(group, "v1"))
        elif rng.random() < 0.5:
            cluster.clear_faults()
        else:
            cluster.inject(rng.choice(["/apis", "/apis/a.example.com*", "/apis/b.example.com*", "/api*"]), status=503)
