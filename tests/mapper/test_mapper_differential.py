"""Differential property: the lazy mapper answers every question as a mapper built from scratch does.

Clusters, changes and questions are generated (``helpers.differential``): legacy and aggregated discovery, CRDs and
aggregated APIs, groups extending others (``apps.openshift.io`` next to ``apps``, ``ab.example.com`` next to
``a.example.com``), guessed singulars, short names and categories shared between groups; every question shape
(``kind_for``, ``kinds_for``, ``resource_for``, ``resources_for``, ``rest_mapping``, ``rest_mappings``,
``resolve``, ``resolve_all``, ``expand_category``) with partial names (no version, no group, a group prefix).

The answer compared is the value, or the error's class and the fields that say what it means (group kind,
candidates, failed group versions, partial answer), and the warning classes emitted (``PartialDiscoveryWarning``,
``ShortNameConflictWarning``); see ``helpers.differential.outcome``.

The references, computed from scratch for every question:

- **The snapshot** (healthy clusters only): a :class:`~restmapper.mapper.StaticRESTMapper` over the whole of
  discovery read in one go by a :class:`~restmapper.discovery.DiscoveryClient` (no cache, no lazy loading, no
  memo, no certainty rules: there is nothing unread), with kubectl's ``resolve`` and category expansion over it.
- **A cold mapper** (always, failing group versions included): a new :class:`~restmapper.mapper.LazyRESTMapper`
  over a new cache of the same cluster, asked that one question. It shares no state with the mapper under test,
  so memoized answers, ready tables and held entries cannot reach it; it is the only reference for the certainty
  rules (DESIGN 5.10: rule 1 a no-match only when every group version in scope was read, rule 2 no answer a
  failed group version could outrank, rule 3 a partial list marked, rule 5 a weaker reading warned), and is
  itself held to them: an answer it gives with no warning while some version fails is the snapshot's answer once
  the failure ends, and a no-match it gives is one there too.

The mapper under test lives through the whole example: asked each question twice (the second answer is the
memoized one), then told of each change as a running program is (``invalidate_group`` of the touched group, or
its TTL running out) and asked again. Its ``max_stale`` is 0, so it never masks a failure with an earlier answer;
with that, everything it holds is what a cold mapper reads, and the two must agree.

``HYPOTHESIS_PROFILE=explore`` runs the profile's examples (2,000) instead of the bounded default.
"""

from __future__ import annotations

import os

from helpers.differential import (
    Change,
    ClusterSpec,
    Outcome,
    Question,
    ask,
    changes,
    clusters,
    lazy_mapper,
    questions,
    reference,
    snapshot,
)
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from restmapper import GroupVersion, InvalidArgumentError
from restmapper.mapper import LazyRESTMapper, StaticRESTMapper
from restmapper.testing import FakeCluster, ManualClock

PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
"""No explain phase: on a failure it reran the test hundreds of times (minutes) to mark lines."""


def examples(bounded: int) -> int:
    """``bounded`` in the default profile (the suite stays fast), the profile's own count in any other."""
    if os.environ.get("HYPOTHESIS_PROFILE", "default") == "default":
        return bounded
    return settings.default.max_examples


def check_warm_and_cold(mapper: LazyRESTMapper, cluster: FakeCluster, asked: list[Question],
                        static: StaticRESTMapper | None, healthy_static: StaticRESTMapper, when: str) -> None:
    """Each question of ``asked``: the long-lived ``mapper`` twice, a cold mapper, and (``static`` given) the
    snapshot agree; the cold answer never contradicts ``healthy_static`` (the cluster once its failures end)."""
    for question in asked:
        cold = ask(lazy_mapper(cluster), question)
        first = ask(mapper, question)
        again = ask(mapper, question)
        context = f"{when}: {question}"
        assert first == cold, f"{context}: the mapper answered {first}, a cold mapper {cold}"
        assert again == cold, f"{context}: asked again, the mapper answered {again}, a cold mapper {cold}"
        if static is not None:
            want = reference(static, question)
            assert cold == want, f"{context}: a cold mapper answered {cold}, the snapshot {want}"
        else:
            never_confidently_wrong(cold, reference(healthy_static, question), context)


def never_confidently_wrong(got: Outcome, healthy: Outcome, context: str) -> None:
    """While some group version fails: a quiet answer is the healthy one; a no-match is one when healthy too."""
    if got.quiet:
        assert got.value == healthy.value, f"{context}: answered {got} quietly, healthy the answer is {healthy}"
    if got.no_match:
        assert healthy.no_match, f"{context}: said no match ({got}), healthy {healthy}"


def warmed(mapper: LazyRESTMapper, read_all: bool) -> LazyRESTMapper:
    """``mapper``, with every group read first when ``read_all`` (a mapper that has answered ``kubectl get all``
    and a question naming no group: then it answers from everything it holds, not from what one question read)."""
    if read_all:
        ask(mapper, Question("expand_category", ("all",)))
        ask(mapper, Question("resolve", ("pods",)))
    return mapper


@settings(max_examples=examples(50), phases=PHASES)
@given(spec=clusters(), read_all=st.booleans(), asked=st.lists(questions(), min_size=1, max_size=12))
def test_a_healthy_cluster_answers_as_its_discovery_snapshot(spec: ClusterSpec, read_all: bool,
                                                            asked: list[Question]) -> None:
    cluster = spec.build()
    static = snapshot(cluster)
    check_warm_and_cold(warmed(lazy_mapper(cluster), read_all), cluster, asked, static, static, "healthy")


@settings(max_examples=examples(50), phases=PHASES)
@given(spec=clusters(), read_all=st.booleans(), steps=st.lists(changes(), min_size=1, max_size=3),
       asked=st.lists(questions(), min_size=1, max_size=8))
def test_after_each_change_the_mapper_answers_as_a_cold_one(
        spec: ClusterSpec, read_all: bool, steps: list[Change], asked: list[Question]) -> None:
    cluster = spec.build()
    clock = ManualClock()
    mapper = warmed(lazy_mapper(cluster, clock), read_all)
    failing: set[GroupVersion] = set()
    static = snapshot(cluster)
    check_warm_and_cold(mapper, cluster, asked, static, static, "before any change")
    for n, change in enumerate(steps, 1):
        change.tell_mapper(mapper, clock, change.apply(cluster, failing))
        healthy = healthy_snapshot(cluster, failing)
        check_warm_and_cold(mapper, cluster, asked, None if failing else healthy, healthy, f"after change {n} {change}")


def healthy_snapshot(cluster: FakeCluster, failing: set[GroupVersion]) -> StaticRESTMapper:
    """The snapshot of ``cluster`` with the ``failing`` group versions serving again (they fail again after; one
    the cluster no longer defines, its CRD deleted, leaves ``failing``)."""
    for gv in failing:
        cluster.set_stale(str(gv), False)
    try:
        return snapshot(cluster)
    finally:
        for gv in list(failing):
            try:
                cluster.set_stale(str(gv))
            except InvalidArgumentError:
                failing.discard(gv)
