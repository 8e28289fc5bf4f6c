"""A group known to have changed, while its current content cannot be read, may outrank any-group answers.

Group g0 outranks g4; the mapper read g0 before g0 gained the kind ``Thing`` that g4 also serves.
The mapper is told g0 changed (``invalidate_group``/``invalidate_all``), and ``/apis`` then fails transiently: the
cache brings g0 back from its earlier content (flagged stale) or reads its version documents with the earlier
listing's version list. That content lacks ``Thing``, so the merged answer was g4's: confidently wrong, since the
server answers g0. DESIGN 5.10: a match is given only when no group version in scope that could hold a better
answer is unreadable. A group brought back that way cannot vouch for what it lacks, so a lower-ranked match is a
GroupDiscoveryError until the group is read again; the group's own earlier answers are still served (stale).

Every test talks HTTP to a FakeCluster through ``responses``; time is an injected clock; nothing sleeps.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

import pytest
from test_restored_stale import mapper_for

from restmapper import (
    GroupDiscoveryError,
    GroupKind,
    GroupVersionResource,
    PartialDiscoveryWarning,
    ShortNameConflictWarning,
)
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, ManualClock, crd_manifest

THINGS = GroupVersionResource("", "", "things")
Ask = Callable[[LazyRESTMapper], object]
QUESTIONS: dict[str, Ask] = {
    "resource_for": lambda m: m.resource_for(THINGS).group,
    "kind_for": lambda m: m.kind_for(THINGS).group,
    "resolve plural": lambda m: m.resolve("things").resource.group,
    "resolve kind": lambda m: m.resolve("Thing").resource.group,
    "resolve short name": lambda m: m.resolve("thg").resource.group,
    "resources_for": lambda m: sorted(r.group for r in m.resources_for(THINGS)),
    "kinds_for": lambda m: sorted(k.group for k in m.kinds_for(THINGS)),
}


@pytest.fixture(params=["aggregated", "legacy"])
def cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    c = FakeCluster.embedded(mode=request.param)
    with c.mock():
        yield c


def _outcome(ask: Ask, mapper: LazyRESTMapper) -> tuple[str, object]:
    """The answer or the error's type; the warnings that go with an answer (two groups both call Things ``thg``,
    a group version is unreadable) are the library's typed ones, whatever else the outcome is."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return "ok", ask(mapper)
        except Exception as exc:  # the outcome is compared, whatever it is
            return "error", type(exc).__name__
        finally:
            assert all(issubclass(w.category, (ShortNameConflictWarning, PartialDiscoveryWarning))
                       for w in caught), [str(w.message) for w in caught]


@contextlib.contextmanager
def judged_across_an_apis_outage(cluster: FakeCluster, mapper: LazyRESTMapper, clock: ManualClock,
                                 ask: Ask) -> Iterator[None]:
    """Ask ``ask`` while ``/apis`` fails (the body runs then): never a confidently wrong answer, only the server's
    answer (a fresh mapper's, asked before the fault) or a discovery error; once the fault is over, the server's."""
    oracle = _outcome(ask, mapper_for(cluster, ManualClock()))
    fault = cluster.inject("/apis", status=503, body="unavailable")
    got = _outcome(ask, mapper)
    assert got == oracle or got == ("error", GroupDiscoveryError.__name__), (got, oracle)
    yield
    fault.remove()
    clock.advance(2)
    assert _outcome(ask, mapper) == oracle


@pytest.mark.parametrize("question", list(QUESTIONS))
@pytest.mark.parametrize("start", ["one group", "any group"])
@pytest.mark.parametrize("how", ["invalidate_group", "invalidate_all"])
@pytest.mark.parametrize("new_version", [False, True], ids=["same version", "new version"])
def test_a_changed_group_read_during_an_outage_is_not_outranked_by_a_lower_group(
        cluster: FakeCluster, question: str, start: str, how: str, new_version: bool) -> None:
    ask = QUESTIONS[question]
    cluster.add_crd(crd_manifest("g4.example.com", "Thing", versions=("v1",), short_names=("thg",)))
    cluster.add_crd(crd_manifest("g0.example.com", "Gizmo", versions=("v1",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    if start == "one group":
        assert mapper.rest_mapping(GroupKind("g0.example.com", "Gizmo")).resource.version == "v1"
    assert _outcome(ask, mapper)[0] == "ok"
    clock.advance(5)
    versions = ("v2", "v1") if new_version else ("v1",)
    cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=versions, short_names=("thg",)))
    if new_version:
        cluster.add_crd(crd_manifest("g0.example.com", "Gizmo", versions=versions))
    if how == "invalidate_all":
        mapper.invalidate_all()
    else:
        mapper.invalidate_group("g0.example.com")
    clock.advance(2)
    with judged_across_an_apis_outage(cluster, mapper, clock, ask):
        pass


DROPIN_QUESTIONS: dict[str, dict[str, object]] = {
    "get kind": {"kind": "Thing"},
    "get name": {"name": "things"},
    "get short name": {"short_names": ["thg"]},
    "search kind": {"kind": "Thing"},
}


def _dropin_outcome(resources: object, question: str) -> tuple[str, object]:
    kwargs = DROPIN_QUESTIONS[question]
    try:
        if question.startswith("search"):
            found = resources.search(**kwargs)  # type: ignore[attr-defined]
            return "partial" if found.partial else "ok", sorted(r.group for r in found)
        return "ok", resources.get(**kwargs).group  # type: ignore[attr-defined]
    except Exception as exc:  # the outcome is compared, whatever it is
        return "error", type(exc).__name__


def _dropin(cluster: FakeCluster, clock: ManualClock) -> object:
    from kubernetes import client as kclient
    from kubernetes.dynamic import DynamicClient

    from restmapper.dynamic import SelfHealingDiscoverer
    from restmapper.testing import InProcessTransport

    config = kclient.Configuration(host="https://kube.restmapper.test")
    return DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=clock)).resources


@pytest.mark.parametrize("question", list(DROPIN_QUESTIONS))
@pytest.mark.parametrize("new_version", [False, True], ids=["same version", "new version"])
@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_the_drop_in_is_not_outranked_either(mode: str, question: str, new_version: bool) -> None:
    """The drop-in's ``get`` answers one group only when no other could match; an outdated group could."""
    import warnings

    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd_manifest("g4.example.com", "Thing", versions=("v1",), short_names=("thg",)))
    cluster.add_crd(crd_manifest("g0.example.com", "Gizmo", versions=("v1",)))
    clock = ManualClock()
    resources = _dropin(cluster, clock)
    assert _dropin_outcome(resources, question)[0] == "ok"
    clock.advance(5)
    versions = ("v2", "v1") if new_version else ("v1",)
    cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=versions, short_names=("thg",)))
    if new_version:
        cluster.add_crd(crd_manifest("g0.example.com", "Gizmo", versions=versions))
    resources.mapper.invalidate_group("g0.example.com")  # type: ignore[attr-defined]
    clock.advance(2)
    oracle = _dropin_outcome(_dropin(cluster, ManualClock()), question)
    fault = cluster.inject("/apis", status=503, body="unavailable")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a partial search warns
        got = _dropin_outcome(resources, question)
    # The server's answer, a discovery error, or a search's partial list (it carries ``failed`` and warns).
    assert got == oracle or got == ("error", GroupDiscoveryError.__name__) or got[0] == "partial", (got, oracle)
    fault.remove()
    clock.advance(2)
    assert _dropin_outcome(resources, question) == oracle


UNLISTED_QUESTIONS: dict[str, Ask] = {
    **{name: ask for name, ask in QUESTIONS.items() if name != "kinds_for"},
    "expand_category": lambda m: sorted(str(gr) for gr in m.expand_category("all") if "example" in gr.group),
}


@pytest.mark.parametrize("question", list(UNLISTED_QUESTIONS))
def test_an_invalidated_group_the_stale_listing_lacks_is_not_outranked(cluster: FakeCluster, question: str) -> None:
    """Model-based test finding (test_model_never_wrong.py): a watcher tells the mapper of a CRD in a *new*
    group (``invalidate_group``), and ``/apis`` then fails transiently. The listing served stale was read before
    the group existed, so nothing brings the group back and lower-ranked g4 answered as if g0 did not exist (or a
    category list left g0 out). The stale listing cannot vouch for a group it was told changed: such answers are
    a GroupDiscoveryError until ``/apis`` is read again."""
    ask = UNLISTED_QUESTIONS[question]
    cluster.add_crd(crd_manifest("g4.example.com", "Thing", versions=("v1",), short_names=("thg",),
                                 categories=("all",)))
    clock = ManualClock()
    mapper = mapper_for(cluster, clock)
    assert _outcome(ask, mapper)[0] == "ok"
    cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=("v1",), short_names=("thg",),
                                 categories=("all",)))
    mapper.invalidate_group("g0.example.com")
    clock.advance(2)
    with judged_across_an_apis_outage(cluster, mapper, clock, ask):
        assert mapper.rest_mapping(GroupKind("", "Pod")).resource.resource == "pods"  # core does not need /apis


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_the_drop_in_is_not_outranked_by_a_group_the_stale_listing_lacks(mode: str) -> None:
    import warnings

    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd_manifest("g4.example.com", "Thing", versions=("v1",), short_names=("thg",)))
    clock = ManualClock()
    resources = _dropin(cluster, clock)
    questions = ("get kind", "get name", "get short name", "search kind")
    assert all(_dropin_outcome(resources, q)[0] == "ok" for q in questions)
    cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=("v1",), short_names=("thg",)))
    resources.mapper.invalidate_group("g0.example.com")  # type: ignore[attr-defined]
    clock.advance(2)
    fault = cluster.inject("/apis", status=503, body="unavailable")
    for question in questions:
        oracle = _dropin_outcome(_dropin(cluster, ManualClock()), question)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a partial search warns
            got = _dropin_outcome(resources, question)
        assert got == oracle or got == ("error", GroupDiscoveryError.__name__) or got[0] == "partial", (got, oracle)
    fault.remove()


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_an_outdated_group_may_have_moved_up_the_legacy_listing(question: str) -> None:
    """Model-based test finding: the legacy ``/apis`` lists groups by their best APIService name
    (``<version>.<group>``), so a group's rank changes with its versions. g0 served only v2 when ``/apis`` was read
    (ranked after g5's ``v1.g5``); it then gained v1 (now ranked first) and the mapper was told. During an
    ``/apis`` outage g0 is outdated, but it was ranked where the stale listing put it, below g5: g5's Thing was
    answered although the server answers g0's. An outdated group's rank is unknown: it may outrank any named group."""
    ask = QUESTIONS[question]
    cluster = FakeCluster.embedded(mode="legacy")
    with cluster.mock():
        cluster.add_crd(crd_manifest("g5.example.com", "Thing", versions=("v2", "v1"), short_names=("thg",)))
        cluster.add_crd(crd_manifest("g0.example.com", "Thing", versions=("v2",), short_names=("thg",)))
        clock = ManualClock()
        mapper = mapper_for(cluster, clock)
        assert _outcome(ask, mapper)[0] == "ok"
        cluster.add_crd(crd_manifest("g0.example.com", "Gizmo", versions=("v2", "v1")))
        mapper.invalidate_group("g0.example.com")
        clock.advance(2)
        with judged_across_an_apis_outage(cluster, mapper, clock, ask):
            pass
