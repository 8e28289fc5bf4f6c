"""A failure replayed from the retry backoff says so.

For about a second after a discovery fault ends (the retry backoff, 1 s after a first failure), lookups answer
with the failure without asking the server, even with ``ttl=0``. The backoff stays; what changes is that such an
error, like a remembered no-match, says that it is a replay, how old it is and when the next request is allowed,
with the same type. A failure this very call received from the server is told exactly as it came.
"""

from __future__ import annotations

import io
import pickle
import re
import warnings
from typing import Any

import pytest
from helpers.dynamic import crd
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient

from restmapper import GroupDiscoveryError, LazyRESTMapper, is_no_match
from restmapper.cache import DiscoveryCache
from restmapper.cli import run
from restmapper.cli._app import Session
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.errors import APIStatusError, PartialDiscoveryWarning, RestMapperError
from restmapper.model import GroupKind, GroupVersionResource
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

MODES = ["legacy", "aggregated"]
NOTE = re.compile(r"\(failed (\d+\.\d) s ago, not asked again yet: the retry backoff allows the next request "
                  r"in (\d+\.\d) s\)")


def _mapper(cluster: FakeCluster, clock: ManualClock, **options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, **options)


def _note(text: str) -> tuple[float, float]:
    found = NOTE.findall(text)
    assert found, text
    age, retry_in = found[0]
    return float(age), float(retry_in)


def _fails(call: Any) -> GroupDiscoveryError:
    with pytest.raises(GroupDiscoveryError) as info:
        call()
    return info.value


def _leaves(exc: GroupDiscoveryError) -> list[BaseException]:
    return [*exc.failed.values(), *exc.documents.values()]


ROOT_FAULTS = [("/apis", GroupKind("apps", "Deployment")), ("/api", GroupKind("", "Pod")),
               ("/apis", GroupKind("nope.example.com", "Widget"))]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("path", "kind"), ROOT_FAULTS)
@pytest.mark.parametrize("ttl", [0, 300])
def test_a_root_document_failure_replayed_says_how_old_and_when_the_next_request_is(
        mode: str, path: str, kind: GroupKind, ttl: float) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    mapper = _mapper(cluster, clock, ttl=ttl)
    fault = cluster.inject(path, status=503, body="down")
    first = _fails(lambda: mapper.rest_mapping(kind))
    assert "not asked again" not in str(first) and first.replayed_age is None, str(first)
    fault.remove()
    clock.advance(0.3)
    before = cluster.request_count()
    again = _fails(lambda: mapper.rest_mapping(kind))
    assert cluster.request_count() == before  # the backoff stands: no request within it
    assert type(again) is GroupDiscoveryError and not is_no_match(again)
    assert _note(str(again)) == (0.3, 0.7), str(again)
    assert again.replayed_age == pytest.approx(0.3) and again.retry_in == pytest.approx(0.7)
    assert str(again).startswith(f"cannot tell whether the server has kind \"{kind.kind}\""), str(again)
    leaf = again.documents[path]
    assert isinstance(leaf, APIStatusError) and leaf.status == 503 and leaf.replayed_age == pytest.approx(0.3)
    assert str(leaf).startswith(f"{path}: HTTP 503: down (failed 0.3 s ago"), str(leaf)
    revived = pickle.loads(pickle.dumps(again))
    assert str(revived) == str(again) and revived.replayed_age == pytest.approx(0.3)
    clock.advance(0.7)  # the backoff ends: asked again, and answered
    mapper.rest_mapping(kind) if kind.group != "nope.example.com" else None


@pytest.mark.parametrize("mode", MODES)
def test_a_replay_at_the_same_clock_reading_still_says_so(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    mapper = _mapper(cluster, clock, ttl=0)
    fault = cluster.inject("/apis", status=503, body="down")
    first = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert first.replayed_age is None
    fault.remove()
    again = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert _note(str(again)) == (0.0, 1.0) and again.replayed_age == 0.0


@pytest.mark.parametrize("mode", MODES)
def test_a_group_version_failure_replayed_from_a_fresh_group_says_so(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    mapper = _mapper(cluster, clock, ttl=300)
    if mode == "legacy":
        fault = cluster.inject("/apis/apps/v1", status=503, body="down")
    else:
        cluster.set_stale("apps/v1")
    first = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert "not asked again" not in str(first) and first.replayed_age is None, str(first)
    if mode == "legacy":
        fault.remove()
    else:
        cluster.set_stale("apps/v1", False)
    clock.advance(0.3)
    before = cluster.request_count()
    again = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert cluster.request_count() == before
    age, retry_in = _note(str(again))
    assert age == 0.3 and retry_in in (0.7, 1.7), str(again)  # 1 s after one failure, 2 s after two
    assert again.replayed_age == pytest.approx(0.3) and again.retry_in == pytest.approx(retry_in)
    [leaf] = again.failed.values()
    assert leaf.replayed_age == pytest.approx(0.3)  # type: ignore[attr-defined]
    clock.advance(retry_in)  # asked, and answered, once the backoff allows it
    assert mapper.rest_mapping(GroupKind("apps", "Deployment")).resource.resource == "deployments"


def test_a_failed_miss_revalidation_replayed_says_so() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    clock = ManualClock()
    mapper = _mapper(cluster, clock)
    mapper.rest_mapping(GroupKind("apps", "Deployment"))
    cluster.inject("/apis", status=503, body="down")
    first = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Nothing")))  # the miss cannot be confirmed
    assert first.replayed_age is None, str(first)
    clock.advance(0.4)
    again = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Nothing")))
    assert again.replayed_age == pytest.approx(0.4) and _note(str(again))[0] == 0.4, str(again)


def test_the_cache_itself_says_so_when_it_replays() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    clock = ManualClock()
    cache = DiscoveryCache(DiscoveryClient(InProcessTransport(cluster)), ttl=0, clock=clock)
    fault = cluster.inject("/apis", status=503, body="down")
    first = _fails(lambda: cache.groups({"apps"}))
    assert first.replayed_age is None and "not asked again" not in str(first)
    fault.remove()
    clock.advance(0.5)
    again = _fails(lambda: cache.groups({"apps"}))
    assert _note(str(again)) == (0.5, 0.5) and type(again.documents["/apis"]) is APIStatusError


def _drop_in(cluster: FakeCluster, clock: ManualClock) -> Any:
    config = kclient.Configuration(host="https://kube.restmapper.test")
    return DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=clock, ttl=0)).resources


DROP_IN_CALLS = [lambda r: r.get(api_version="example.com/v1", kind="Widget"), lambda r: r.search(kind="Widget"),
                 lambda r: r.get(kind="Widget")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("call", DROP_IN_CALLS)
def test_the_drop_in_says_so(mode: str, call: Any) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_crd(crd("example.com", "Widget"))
    clock = ManualClock()
    resources = _drop_in(cluster, clock)
    cluster.inject("/apis", status=503, body="down", times=1)
    first = _fails(lambda: call(resources))
    assert first.replayed_age is None and "not asked again" not in str(first), str(first)
    clock.advance(0.6)
    before = cluster.request_count("/apis")
    for again_call in DROP_IN_CALLS:
        again = _fails(lambda: again_call(resources))  # noqa: B023 (called at once)
        assert _note(str(again)) == (0.6, 0.4) and again.replayed_age == pytest.approx(0.6), str(again)
    assert cluster.request_count("/apis") == before
    clock.advance(0.4)
    assert call(resources)


def test_a_partial_category_answer_replayed_says_so_in_its_warning_and_failures() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    clock = ManualClock()
    mapper = _mapper(cluster, clock, ttl=300)
    cluster.inject("/apis/apps/v1", status=503, body="down", times=2)
    with pytest.warns(PartialDiscoveryWarning) as caught:
        first = mapper.resolve_all("all")
    assert first.failed and "not asked again" not in str(caught[0].message)
    assert all(getattr(e, "replayed_age", None) is None for e in first.failed.values())
    clock.advance(0.5)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        again = mapper.resolve_all("all")
    assert again.failed and all(getattr(e, "replayed_age", None) == pytest.approx(0.5)
                                for e in again.failed.values())
    texts = [str(w.message) for w in seen if issubclass(w.category, PartialDiscoveryWarning)]
    assert all(_note(t)[0] == 0.5 for t in texts), texts  # (a memoized answer is not warned about again)


def test_the_cli_says_so_for_an_argument_answered_by_a_replay() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    clock = ManualClock()
    session = Session(DiscoveryClient(InProcessTransport(cluster)))
    session.mapper = _mapper(cluster, clock, ttl=0)
    cluster.inject("/apis", status=503, body="down", times=1)
    out, err = io.StringIO(), io.StringIO()
    assert run(["resolve", "deploy", "deploy"], session=session, stdout=out, stderr=err) == 1
    lines = [line for line in err.getvalue().splitlines() if line.startswith("error")]
    assert len(lines) == 2, err.getvalue()
    assert "not asked again" not in lines[0] and _note(lines[1]) == (0.0, 1.0), lines


def test_failures_this_call_received_are_never_called_replays() -> None:
    """Within one lookup the same failure is read several times (core first, the preferred version, the whole
    group, the miss revalidation): it is one request's answer, never a replay."""
    calls = [lambda m: m.resolve("deploy"), lambda m: m.rest_mapping(GroupKind("", "Widget")),
             lambda m: m.kinds_for(GroupVersionResource("", "", "pods")), lambda m: m.resolve("widgets.example.com"),
             lambda m: m.resolve_all("all")]
    for mode in MODES:
        cluster = FakeCluster.embedded(mode=mode)
        cluster.inject("/apis/*", status=503, body="down")
        clock = ManualClock()
        mapper = _mapper(cluster, clock, ttl=0)
        for call in calls:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                try:
                    call(mapper)
                except RestMapperError as exc:
                    assert "not asked again" not in str(exc) and exc.replayed_age is None, str(exc)
            assert not any("not asked again" in str(w.message) for w in seen)
            clock.advance(100.0)  # every backoff ends: each call asks first-hand


# --- a replay's age and retry time are computed at each replay -------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_replayed_age_moves_with_the_clock(mode: str) -> None:
    """A failed miss revalidation replayed twice, 0.6 s apart, is 0.6 s older the second time and its next request
    0.6 s nearer: the second replay is computed from the original failure, not copied from the first (whose
    age and retry time were frozen when it was made)."""
    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock)
    mapper.rest_mapping(GroupKind("apps", "Deployment"))
    cluster.inject("/apis", status=503, body="down")
    replays = 0
    previous: tuple[float, float, float] | None = None  # the last replay since the last request
    for _ in range(8):
        before = cluster.request_count()
        exc = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Nothing")))
        if cluster.request_count() != before:  # a new failure, first-hand
            assert exc.replayed_age is None, str(exc)
            previous = None
        else:
            assert exc.replayed_age is not None and exc.retry_in is not None, str(exc)
            text = str(exc)
            assert text.count("not asked again yet") == 1, text  # never stacked
            assert _note(text) == pytest.approx((exc.replayed_age, exc.retry_in), abs=0.051), text
            if previous is not None:
                t1, a1, r1 = previous
                assert exc.replayed_age == pytest.approx(a1 + clock() - t1), text
                assert exc.retry_in == pytest.approx(max(0.0, r1 - (clock() - t1))), text
                replays += 1
            previous = clock(), exc.replayed_age, exc.retry_in
        clock.advance(0.6)
    assert replays >= 2


@pytest.mark.parametrize("mode", MODES)
def test_replayed_retry_in_is_when_the_next_request_really_is(mode: str) -> None:
    """"The retry backoff allows the next request in X s" holds: no request before X s, and one at X s. A lookup
    that fails twice (its first try, then its miss revalidation) is backed off from for 2 s, but the miss
    revalidation of the next call is allowed after 1 s: the replay names the earlier of the two."""
    cluster = FakeCluster.embedded(mode=mode)
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, ttl=300)
    cluster.inject("/apis/apps/v1", status=503, body="down")
    _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    clock.advance(0.7)
    replay = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert replay.replayed_age is not None and replay.retry_in is not None
    promised = replay.retry_in
    clock.advance(promised / 2)  # before the promised time: no request
    before = cluster.request_count()
    again = _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert cluster.request_count() == before, f"promised {promised:.2f} s, sent at {promised / 2:.2f} s: {again}"
    assert again.retry_in == pytest.approx(promised / 2)
    clock.advance(promised / 2)  # at the promised time: the request is sent
    before = cluster.request_count()
    _fails(lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")))
    assert cluster.request_count() > before, "the promised request was not sent"
