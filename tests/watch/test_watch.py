"""The CRD/APIService watcher against a served FakeCluster (real HTTP streaming): DESIGN.md 5.5 and seed 3."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.watch import WIDGET, Recorder, make_mapper, running, until, widget

from restmapper.errors import NoKindMatchError, RestMapperError
from restmapper.model import APIResource, GroupKind, GroupVersionResource
from restmapper.store import GenerationCache
from restmapper.testing import FakeCluster, ManualClock, ServedCluster
from restmapper.watch import WaitTimeoutError, Watcher, wait_for

CRD = "CustomResourceDefinition"
WIDGET_GK = GroupKind("example.com", "Widget")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    with cluster.serve() as s:
        yield s


def _gc() -> GenerationCache[Any, tuple[int, str, tuple[str, ...]]]:
    def build(crd: Any) -> tuple[int, str, tuple[str, ...]]:
        served = tuple(sorted(v["name"] for v in crd["spec"]["versions"] if v["served"]))
        return crd["metadata"]["generation"], crd["status"]["acceptedNames"]["kind"], served

    return GenerationCache.for_crds(build)


def test_crd_added_invalidates_group_and_new_kind_resolves_without_miss_revalidation(served: ServedCluster) -> None:
    """A CRD created while the mapper is warm: the watcher's invalidation makes the next lookup find it directly."""
    mapper = make_mapper(served.url)
    mapper.resolve("pods")
    rec = Recorder()
    watcher = Watcher(mapper)
    watcher.add_handler(rec)
    with running(watcher):
        served.cluster.add_crd(WIDGET)
        rec.wait(("ADDED", CRD, "widgets.example.com"))
        misses = mapper.stats.misses
        mapping = mapper.rest_mapping(WIDGET_GK)
        assert mapping.resource == GroupVersionResource("example.com", "v1", "widgets")
        assert mapper.stats.misses == misses  # found without a miss revalidation
        assert watcher.stats.invalidations >= 1


@pytest.mark.parametrize("change, check", [
    pytest.param(lambda c: c.update_crd(widget(scope="Cluster")),
                 lambda m, v: not m.rest_mapping(WIDGET_GK).namespaced and v[0] == 2, id="spec-update"),
    pytest.param(lambda c: c.set_accepted_names("widgets.example.com", kind="Gadget", plural="gadgets"),
                 lambda m, v: m.resolve("gadgets").group_version_kind.kind == "Gadget" and v == (1, "Gadget",
                                                                                                 ("v1", "v1beta1")),
                 id="accepted-names-only"),
    pytest.param(lambda c: c.set_served("widgets.example.com", False, version="v1beta1"),
                 lambda m, v: [x.resource.version for x in m.rest_mappings(WIDGET_GK)] == ["v1"] and v[2] == ("v1",),
                 id="served-flip"),
])
def test_crd_change_invalidates_and_refreshes_generation_cache(served: ServedCluster, change: Any,
                                                               check: Any) -> None:
    """Spec update, acceptedNames-only change (no generation bump: seed 1), served flip: the mapper and the
    generation-aware cache both see the new CRD after the MODIFIED event."""
    served.cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    assert mapper.rest_mapping(WIDGET_GK).namespaced
    gc = _gc()
    rec = Recorder()
    watcher = Watcher(mapper, generation_cache=gc)
    watcher.add_handler(rec)
    with running(watcher):
        uid = served.cluster.get_crd("widgets.example.com")["metadata"]["uid"]  # type: ignore[index]
        assert gc.peek(uid) == (1, "Widget", ("v1", "v1beta1"))
        before = watcher.stats.invalidations
        change(served.cluster)
        rec.wait(("MODIFIED", CRD, "widgets.example.com"))
        assert watcher.stats.invalidations > before
        assert check(mapper, gc.peek(uid))


def test_crd_delete_invalidates_and_forgets(served: ServedCluster) -> None:
    served.cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    mapper.rest_mapping(WIDGET_GK)
    gc = _gc()
    rec = Recorder()
    watcher = Watcher(mapper, generation_cache=gc)
    watcher.add_handler(rec)
    with running(watcher):
        uid = served.cluster.get_crd("widgets.example.com")["metadata"]["uid"]  # type: ignore[index]
        assert uid in gc
        served.cluster.delete_crd("widgets.example.com")
        rec.wait(("DELETED", CRD, "widgets.example.com"))
        assert uid not in gc
        with pytest.raises(NoKindMatchError):
            mapper.rest_mapping(WIDGET_GK)


def test_crd_deleted_and_recreated_is_usable_on_next_lookup(served: ServedCluster) -> None:
    """Scenario 8.2 via the watcher: the recreated CRD (new UID, other scope) answers the next lookup."""
    served.cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    assert mapper.rest_mapping(WIDGET_GK).namespaced
    gc = _gc()
    rec = Recorder()
    watcher = Watcher(mapper, generation_cache=gc)
    watcher.add_handler(rec)
    with running(watcher):
        old_uid = served.cluster.get_crd("widgets.example.com")["metadata"]["uid"]  # type: ignore[index]
        served.cluster.delete_crd("widgets.example.com")
        served.cluster.add_crd(widget(scope="Cluster"))
        rec.wait(("DELETED", CRD, "widgets.example.com"))
        rec.wait(("ADDED", CRD, "widgets.example.com"))
        assert not mapper.rest_mapping(WIDGET_GK).namespaced
        new_uid = served.cluster.get_crd("widgets.example.com")["metadata"]["uid"]  # type: ignore[index]
        assert new_uid != old_uid and old_uid not in gc and new_uid in gc


def test_stop_and_start_again_relists_and_drops_handlers(served: ServedCluster) -> None:
    """Seed 3: a stopped watcher (leadership lost) removes its handlers, is never called after stop() returns,
    and a restart serves nothing from before the stop."""
    served.cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    old = Recorder()
    watcher = Watcher(mapper)
    watcher.add_handler(old)
    with running(watcher):
        old.wait(("ADDED", CRD, "widgets.example.com"))
    assert not watcher.running and not watcher.healthy
    old.clear()
    assert mapper.rest_mapping(WIDGET_GK).namespaced  # cached while stopped
    # While stopped: deleted and recreated cluster-scoped. No event reaches anyone.
    served.cluster.delete_crd("widgets.example.com")
    served.cluster.add_crd(widget(scope="Cluster"))
    new = Recorder()
    watcher.add_handler(new)
    with running(watcher):
        # Fresh state: the restart relisted and invalidated, so the answer is the recreated CRD's.
        assert not mapper.rest_mapping(WIDGET_GK).namespaced
        new.wait(("ADDED", CRD, "widgets.example.com"))
        served.cluster.set_accepted_names("widgets.example.com", short_names=["wg"])
        new.wait(("MODIFIED", CRD, "widgets.example.com"))
    assert old.events == []  # removed on the first stop: never called again


def test_no_handler_runs_after_stop_returns(served: ServedCluster) -> None:
    mapper = make_mapper(served.url)
    watcher = Watcher(mapper)
    inside = threading.Event()
    release = threading.Event()
    calls: list[str] = []

    def slow(event_type: str, kind: str, obj: Any) -> None:
        calls.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "widgets.example.com":
            inside.set()
            release.wait(10)

    watcher.add_handler(slow)
    watcher.start()
    assert watcher.wait_until_healthy(10)
    served.cluster.add_crd(WIDGET)
    assert inside.wait(10)
    stopper = threading.Thread(target=watcher.stop)
    stopper.start()
    served.cluster.add_crd(widget(scope="Cluster"))  # an event that must not be delivered
    release.set()
    stopper.join(10)
    assert not stopper.is_alive()
    count = len(calls)
    served.cluster.delete_crd("widgets.example.com")
    assert len(calls) == count and "widgets.example.com" in calls


def test_removed_handler_is_never_called_again(served: ServedCluster) -> None:
    mapper = make_mapper(served.url)
    watcher = Watcher(mapper)
    gone, kept = Recorder(), Recorder()
    watcher.add_handler(gone)
    watcher.add_handler(kept)
    with running(watcher):
        assert watcher.remove_handler(gone) and not watcher.remove_handler(gone)
        served.cluster.add_crd(WIDGET)
        kept.wait(("ADDED", CRD, "widgets.example.com"))
    assert ("ADDED", CRD, "widgets.example.com") not in gone.events


def test_410_gone_relists_and_answers_fresh(served: ServedCluster) -> None:
    """Events missed while disconnected and compacted away: the re-watch gets 410 Gone and the watcher relists,
    diffing the list against what it knew (the new CRD arrives as ADDED)."""
    cluster = served.cluster
    mapper = make_mapper(served.url)
    mapper.resolve("pods")

    def while_disconnected(stop: threading.Event, seconds: float) -> None:
        cluster.add_crd(WIDGET)
        cluster.compact()

    rec = Recorder()
    watcher = Watcher(mapper, sleep=while_disconnected, watch_apiservices=False)
    watcher.add_handler(rec)
    with running(watcher, cluster, 1):
        lists = watcher.stats.lists
        cluster.inject(CRD_PATH, reset=True, times=1)
        cluster.drop_watches()
        rec.wait(("ADDED", CRD, "widgets.example.com"))
        until(watcher, lambda: watcher.stats.relists >= 1 and watcher.healthy)
        assert watcher.stats.lists == lists + 1
        assert mapper.rest_mapping(WIDGET_GK).resource.version == "v1"


def test_dropped_connection_reconnects_without_backoff(served: ServedCluster) -> None:
    """A watch that ran a while and is dropped reconnects at once (one dropped under a second after it opened,
    without an event, would count as a failure: tests/watch/test_watch_ends_at_once.py)."""
    delays: list[float] = []
    mapper = make_mapper(served.url)
    clock = ManualClock()
    watcher = Watcher(mapper, sleep=lambda ev, s: delays.append(s), clock=clock)
    rec = Recorder()
    watcher.add_handler(rec)
    with running(watcher, served.cluster):
        connects = watcher.stats.connects
        clock.advance(5)
        served.cluster.drop_watches()
        until(watcher, lambda: watcher.stats.connects >= connects + 2 and watcher.healthy)
        served.cluster.add_crd(WIDGET)
        rec.wait(("ADDED", CRD, "widgets.example.com"))
        assert mapper.rest_mapping(WIDGET_GK)
    assert delays == []


def test_connection_errors_back_off_exponentially_and_reset_after_a_healthy_period(served: ServedCluster) -> None:
    """As client-go's backoff manager: the exponent resets after a healthy period (120 s without a failure), never
    by a mere connect (tests/watch/test_watch_ends_at_once.py shows a connect alone does not)."""
    delays: list[float] = []
    mapper = make_mapper(served.url)
    clock = ManualClock()
    watcher = Watcher(mapper, sleep=lambda ev, s: delays.append(s), backoff_initial=0.5, backoff_max=30.0,
                      watch_apiservices=False, clock=clock)
    served.cluster.inject(CRD_PATH, reset=True, times=3)
    with running(watcher, served.cluster, 1):
        # 0.5 s doubling, each with up to 10 % jitter (RetryPolicy.backoff)
        assert delays == [pytest.approx(0.525, abs=0.026), pytest.approx(1.05, abs=0.051),
                          pytest.approx(2.1, abs=0.101)]
        assert watcher.last_error is not None
        served.cluster.inject(CRD_PATH, reset=True, times=1)
        clock.advance(120)
        served.cluster.drop_watches()
        until(watcher, lambda: len(delays) == 4 and watcher.healthy)
        assert delays[3] == pytest.approx(0.525, abs=0.026)  # reset by the healthy period


def test_server_restart_recovers_with_fresh_answers(served: ServedCluster) -> None:
    served.cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    rec = Recorder()
    watcher = Watcher(mapper)
    watcher.add_handler(rec)
    with running(watcher, served.cluster):
        assert mapper.rest_mapping(WIDGET_GK).namespaced
        connects = watcher.stats.connects
        served.cluster.restart()
        served.cluster.update_crd(widget(scope="Cluster"))
        until(watcher, lambda: watcher.healthy and watcher.stats.connects >= connects + 2)
        rec.wait(("MODIFIED", CRD, "widgets.example.com"))
        assert not mapper.rest_mapping(WIDGET_GK).namespaced


def test_apiservice_unavailable_and_back(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.add_api_resources("metrics.k8s.io/v1beta1", [APIResource(
        name="pods", singular_name="", namespaced=True, kind="PodMetrics", verbs=("get", "list"))])
    mapper = make_mapper(served.url)
    gk = GroupKind("metrics.k8s.io", "PodMetrics")
    assert mapper.rest_mapping(gk).resource.resource == "pods"
    rec = Recorder()
    watcher = Watcher(mapper)
    watcher.add_handler(rec)
    with running(watcher):
        cluster.set_available("v1beta1.metrics.k8s.io", False)
        rec.wait(("MODIFIED", "APIService", "v1beta1.metrics.k8s.io"))
        with pytest.raises(RestMapperError):
            mapper.rest_mapping(gk)
        rec.clear()
        cluster.set_available("v1beta1.metrics.k8s.io", True)
        rec.wait(("MODIFIED", "APIService", "v1beta1.metrics.k8s.io"))
        assert mapper.rest_mapping(gk).resource.resource == "pods"


def test_forbidden_crd_watch_warns_once_and_keeps_apiservices(served: ServedCluster,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
              "message": 'customresourcedefinitions.apiextensions.k8s.io is forbidden: User "system:anonymous" '
                         'cannot list resource "customresourcedefinitions"'}
    served.cluster.inject(CRD_PATH, status=403, body=json.dumps(status), content_type="application/json")
    served.cluster.add_crd(WIDGET)
    mapper = make_mapper(served.url)
    watcher = Watcher(mapper)
    rec = Recorder()
    watcher.add_handler(rec)
    with caplog.at_level(logging.WARNING, logger="restmapper.watch"), running(watcher):
        until(watcher, lambda: watcher.disabled == {CRD})
        assert watcher.running and watcher.healthy and watcher.watching("APIService")
        assert not watcher.watching(CRD)
        assert mapper.rest_mapping(WIDGET_GK).resource.version == "v1"  # the mapper works on its own
        served.cluster.set_served("widgets.example.com", False, version="v1beta1")
        rec.wait(("DELETED", "APIService", "v1beta1.example.com"))  # APIServices still flow
    warnings = [r for r in caplog.records if "not allowed" in r.getMessage()]
    assert len(warnings) == 1 and "forbidden" in warnings[0].getMessage()


def test_wait_for_apply_crd_then_cr_in_one_run(served: ServedCluster) -> None:
    """``kubectl apply -f crd.yaml -f cr.yaml`` in one run: the CR's kind is waited for, event-driven."""
    mapper = make_mapper(served.url)
    mapper.resolve("pods")
    with running(Watcher(mapper)) as watcher:
        served.cluster.add_crd(WIDGET, established_after=1)  # not Established yet when first looked up
        # A poll interval beyond the timeout: only the watcher's wake-ups can make this return in time.
        mapping = wait_for(mapper, WIDGET_GK, timeout=10, watcher=watcher, poll_interval=60)
        assert mapping.resource == GroupVersionResource("example.com", "v1", "widgets")
        assert wait_for(mapper, "wdg", timeout=0, watcher=watcher).group_version_kind.kind == "Widget"


def test_mapper_wait_for_is_event_driven_with_a_watcher(served: ServedCluster) -> None:
    """``LazyRESTMapper.wait_for``: the same wait as a method, woken by the watcher's invalidations."""
    mapper = make_mapper(served.url)
    mapper.resolve("pods")
    with running(Watcher(mapper)) as watcher:
        served.cluster.add_crd(WIDGET, established_after=1)
        mapping = mapper.wait_for(WIDGET_GK, 10, watcher=watcher, poll_interval=60)
        assert mapping.resource == GroupVersionResource("example.com", "v1", "widgets")
    with pytest.raises(WaitTimeoutError):
        mapper.wait_for(GroupKind("nowhere.example.com", "Ghost"), 0)


def test_wait_for_polls_without_watcher(served: ServedCluster) -> None:
    now = [0.0]
    mapper = make_mapper(served.url, clock=lambda: now[0])
    established = threading.Event()
    served.cluster.add_crd(WIDGET, established_after=established.is_set)
    polls: list[float] = []

    def sleep(seconds: float) -> None:
        polls.append(seconds)
        now[0] += seconds
        if len(polls) == 3:
            established.set()

    mapping = wait_for(mapper, "widgets.example.com", timeout=30, poll_interval=1.0, clock=lambda: now[0],
                       sleep=sleep)
    assert mapping.group_version_kind.kind == "Widget"
    assert polls == [1.0, 1.0, 1.0]


def test_wait_for_times_out_with_the_last_no_match_chained(served: ServedCluster) -> None:
    now = [0.0]
    mapper = make_mapper(served.url, clock=lambda: now[0])

    def sleep(seconds: float) -> None:
        now[0] += seconds

    with pytest.raises(WaitTimeoutError) as info:
        wait_for(mapper, GroupKind("nowhere.example.com", "Ghost"), timeout=2.5, clock=lambda: now[0], sleep=sleep)
    assert isinstance(info.value, TimeoutError) and isinstance(info.value.__cause__, NoKindMatchError)
    assert 'no matches for kind "Ghost"' in str(info.value)
    # Polls went through the mapper's rate limit: at most one revalidation per miss interval.
    assert mapper.stats.misses <= 4
