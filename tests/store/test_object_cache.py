"""ObjectCache and Informer over a served FakeCluster (real HTTP list/watch): DESIGN.md section 5.9, seed 004.

Every wait is on a condition (the Mirror handler, ``wait_for_state``, ``wait_for``), never a sleep.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.kit import wait_until
from helpers.store import WIDGETS, Mirror, cm, converged, key, object_cache, widget_cluster, widget_obj
from helpers.watch import WIDGET, make_mapper, widget

from restmapper.errors import ForbiddenError, InvalidArgumentError, NoKindMatchError, is_no_match
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource
from restmapper.store import (
    CacheSyncTimeoutError,
    InformerStoppedError,
    ObjectCache,
    ObjectNotFoundError,
    ObjectWaitTimeoutError,
    is_not_found,
)
from restmapper.testing import ServedCluster
from restmapper.watch import Watcher

WIDGET_GK = GroupKind("example.com", "Widget")


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


@pytest.mark.parametrize("kind", ["cm", "configmaps", "ConfigMap", GroupKind("", "ConfigMap"),
                                  GroupVersionKind("", "v1", "ConfigMap"),
                                  GroupVersionResource("", "v1", "configmaps")])
def test_get_and_list_by_any_kind_name(served: ServedCluster, kind: Any) -> None:
    served.cluster.apply_object(cm("a", x="1"))
    served.cluster.apply_object(cm("b", "other", x="2"))
    with object_cache(served) as cache:
        assert cache.get(kind, "a", "default")["data"] == {"x": "1"}
        assert sorted(key(o) for o in cache.list(kind)) == ["default/a", "other/b"]
        assert [key(o) for o in cache.list(kind, namespace="other")] == ["other/b"]
        assert len(cache.informers()) == 1  # every spelling shares one informer


def test_missing_object_is_a_typed_not_found(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        with pytest.raises(ObjectNotFoundError) as info:
            cache.get("cm", "nope", "default")
        assert is_not_found(info.value) and not is_no_match(info.value)
        with pytest.raises(InvalidArgumentError):
            cache.get("cm", "nope")  # a namespaced kind needs a namespace
        with pytest.raises(TypeError):
            cache.get(42, "x")  # type: ignore[arg-type]


def test_unknown_kind_raises_the_mappers_no_match(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        with pytest.raises(Exception) as info:
            cache.get("gizmos", "x", "default")
        assert is_no_match(info.value)


def test_selectors_and_indexers(served: ServedCluster) -> None:
    for name, tier, ns in (("a", "gold", "default"), ("b", "silver", "default"), ("c", "gold", "other")):
        obj = cm(name, ns)
        obj["metadata"]["labels"] = {"tier": tier}
        served.cluster.apply_object(obj)
    with object_cache(served) as cache:
        assert [key(o) for o in cache.list("cm", label_selector="tier=gold")] == ["default/a", "other/c"]
        assert [key(o) for o in cache.list("cm", label_selector="tier in (silver),!missing")] == ["default/b"]
        assert [key(o) for o in cache.list("cm", field_selector="metadata.name!=a",
                                           namespace="default")] == ["default/b"]
        informer = cache.informer("cm")
        informer.add_indexer("tier", lambda o: [o["metadata"].get("labels", {}).get("tier", "")])
        assert [key(o) for o in informer.by_index("tier", "gold")] == ["default/a", "other/c"]
        served.cluster.apply_object({**cm("d"), "metadata": {"name": "d", "namespace": "default",
                                                             "labels": {"tier": "gold"}}})
        cache.wait_for("cm", "d", "default", timeout=10)
        assert [key(o) for o in cache.list("cm", index="tier", value="gold")] == ["default/a", "default/d",
                                                                                  "other/c"]
        with pytest.raises(InvalidArgumentError):
            cache.list("cm", label_selector="tier in (gold")
        with pytest.raises(InvalidArgumentError):
            cache.list("cm", index="nope", value="x")


def test_handlers_get_synthetic_adds_run_off_the_watch_thread_and_survive_a_raising_handler(
        served: ServedCluster, watch_list: bool) -> None:
    served.cluster.apply_object(cm("a"))
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(10)
        boom = informer.add_handler(on_add=lambda o: 1 / 0)
        mirror = Mirror()
        mirror.attach(informer)  # added after sync: a synthetic add for "a"
        mirror.wait(lambda m: "default/a" in m.state)
        served.cluster.apply_object(cm("b"))
        served.cluster.apply_object(cm("a", x="2"))
        served.cluster.delete_object("configmaps", "b", "default")
        converged(mirror, served.cluster, "configmaps")
        assert [e[:2] for e in mirror.log] == [("ADDED", "default/a"), ("ADDED", "default/b"),
                                               ("MODIFIED", "default/a"), ("DELETED", "default/b")]
        assert not mirror.errors
        assert mirror.threads == {"restmapper-informer-ConfigMap-handlers"}
        assert informer.stats.handler_errors >= 2 and informer.state == "synced"
        assert informer.remove_handler(boom) and not informer.remove_handler(boom)


def test_read_your_writes(served: ServedCluster, watch_list: bool) -> None:
    """wait_for(resource_version=...) returns once the cache holds that version; get then returns it."""
    served.cluster.apply_object(widget_obj("w", size=1))
    with object_cache(served, watch_list=watch_list) as cache:
        assert cache.get(WIDGETS, "w", "default")["spec"] == {"size": 1}
        updated = served.cluster.apply_object(widget_obj("w", size=2))
        rv = updated["metadata"]["resourceVersion"]
        held = cache.wait_for(WIDGETS, "w", "default", resource_version=rv, timeout=10)
        assert held["metadata"]["resourceVersion"] == rv
        assert cache.get(WIDGETS, "w", "default")["spec"] == {"size": 2}
        assert cache.wait_for(WIDGETS, "w", "default", generation=2, timeout=10)["metadata"]["generation"] == 2
        with pytest.raises(ObjectWaitTimeoutError):
            cache.wait_for(WIDGETS, "w", "default", generation=99, timeout=0.05)
        deleted = served.cluster.delete_object(WIDGETS, "w", "default")
        served.cluster.apply_object(widget_obj("later"))  # moves the observed version past the delete
        with pytest.raises(ObjectNotFoundError):
            cache.wait_for(WIDGETS, "w", "default", resource_version=deleted["metadata"]["resourceVersion"],
                           timeout=10)


def test_transform_runs_before_storing(served: ServedCluster) -> None:
    obj = cm("a")
    obj["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    served.cluster.apply_object(obj)

    def drop_managed_fields(o: dict[str, Any]) -> dict[str, Any]:
        o["metadata"].pop("managedFields", None)
        return o

    with object_cache(served, transform=drop_managed_fields) as cache:
        assert "managedFields" not in cache.get("cm", "a", "default")["metadata"]


def test_namespace_restricted_cache(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a"))
    served.cluster.apply_object(cm("b", "other"))
    with object_cache(served, namespace="other") as cache:
        assert [key(o) for o in cache.list("cm")] == ["other/b"]
        assert cache.get("cm", "b")["metadata"]["namespace"] == "other"
        with pytest.raises(InvalidArgumentError):
            cache.get("cm", "a", "default")
        assert served.cluster.requests[-1].path.startswith("/api/v1/namespaces/other/configmaps")


def test_derived_cache_is_pruned_on_delete_and_rebuilt_on_generation_change(served: ServedCluster) -> None:
    served.cluster.apply_object(widget_obj("w", size=1))
    builds: list[int] = []
    disposed: list[int] = []
    with object_cache(served) as cache:
        derived = cache.derived(WIDGETS, lambda o: builds.append(o["spec"]["size"]) or o["spec"]["size"],
                                dispose=disposed.append)
        assert derived.get(cache.get(WIDGETS, "w", "default")) == 1
        rv = served.cluster.apply_object(widget_obj("w", size=2))["metadata"]["resourceVersion"]
        assert derived.get(cache.wait_for(WIDGETS, "w", "default", resource_version=rv, timeout=10)) == 2
        assert builds == [1, 2] and disposed == [1]
        mirror = Mirror()
        mirror.attach(cache.informer(WIDGETS))
        served.cluster.delete_object(WIDGETS, "w", "default")
        mirror.wait(lambda m: any(e[0] == "DELETED" for e in m.log))
        informer = cache.informer(WIDGETS)
        done = threading.Event()
        informer.add_handler(on_add=lambda o: done.set())  # queued after the delete: the forget ran before it
        served.cluster.apply_object(widget_obj("x"))
        assert done.wait(10)
        assert len(derived) == 0 and disposed == [1, 2]


def test_resync_redelivers_every_object_as_an_update(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a"))
    seen = threading.Event()
    with object_cache(served, resync=0.05) as cache:
        informer = cache.informer("cm")
        informer.add_handler(on_update=lambda old, new: seen.set() if old is new else None)
        assert seen.wait(10)
        assert informer.stats.resyncs >= 1


def test_resync_reaches_a_handler_registered_after_the_last_change(served: ServedCluster) -> None:
    """A handler added once the informer has synced (no change since) gets the resyncs too, as in client-go:
    resyncs were numbered as the last change, which predates the handler, so they were skipped until the next
    change (a flake of the test above whenever the list landed before the handler)."""
    served.cluster.apply_object(cm("a"))
    seen = threading.Event()
    with object_cache(served, resync=0.05) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_sync(30)
        added = threading.Event()
        informer.add_handler(on_add=lambda obj: added.set(),
                             on_update=lambda old, new: seen.set() if old is new else None)
        assert added.wait(10)  # the synthetic add: the handler is registered after the list
        assert seen.wait(10)


def test_kind_moves_to_another_version_with_one_relist_and_no_event_storm(served: ServedCluster,
                                                                          watch_list: bool) -> None:
    """Seed 003: the version the informer watches stops being served; it follows the kind to v1beta1."""
    for i in range(3):
        served.cluster.apply_object(widget_obj(f"w{i}"))
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer(WIDGETS)
        mirror = Mirror()
        mirror.attach(informer)
        converged(mirror, served.cluster, WIDGETS)
        assert informer.mapping is not None and informer.mapping.resource.version == "v1"
        mirror.clear_log()
        lists = informer.stats.lists
        assert served.cluster.wait_for_watchers(1, 10)  # the informer's v1 watch is open
        served.cluster.set_served(WIDGETS, False, version="v1")  # the kit ends the v1 watch, as the API server
        assert informer.wait_for_state("synced", timeout=10)
        assert informer.wait_until(lambda i: i.mapping is not None and i.mapping.resource.version == "v1beta1",
                                   timeout=10)
        # The relist at v1beta1 replaces each object's representation silently (same UID and resourceVersion).
        assert informer.wait_until(lambda i: i.get("w1", "default")["apiVersion"] == "example.com/v1beta1", 10)
        assert informer.stats.lists == lists + 1 and informer.stats.moves == 1
        changed = served.cluster.apply_object(widget_obj("w1", version="v1beta1", size=3))
        cache.wait_for(WIDGETS, "w1", "default", resource_version=changed["metadata"]["resourceVersion"], timeout=10)
        converged(mirror, served.cluster, WIDGETS)
        assert [e[:2] for e in mirror.log] == [("MODIFIED", "default/w1")] and not mirror.errors


def test_crd_deleted_then_recreated_with_another_scope(served: ServedCluster, watch_list: bool) -> None:
    """Seed 004: not_served while the CRD is gone (reads raise the no-match, handlers see deletes, are kept),
    then the recreated cluster-scoped CRD's objects appear on its own, backoff reset."""
    served.cluster.apply_object(widget_obj("w"))
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer(WIDGETS)
        mirror = Mirror()
        mirror.attach(informer)
        converged(mirror, served.cluster, WIDGETS)
        assert served.cluster.wait_for_watchers(1, 10)
        served.cluster.delete_crd(WIDGETS)
        assert informer.wait_for_state("not_served", timeout=10)
        with pytest.raises(NoKindMatchError):
            cache.get(WIDGET_GK, "w", "default")
        mirror.wait(lambda m: not m.state)
        served.cluster.add_crd(widget(scope="Cluster"))
        served.cluster.apply_object(widget_obj("c", namespace=None))
        converged(mirror, served.cluster, WIDGETS)
        assert informer.wait_for_sync(10) and informer.state == "synced"
        assert cache.get(WIDGET_GK, "c")["metadata"].get("namespace") is None
        assert cache.get(WIDGET_GK, "c", "ignored-for-cluster-scope")["metadata"]["name"] == "c"
        assert informer.stats.restarts == 1 and not mirror.errors
        assert [e[:2] for e in mirror.log] == [("ADDED", "default/w"), ("DELETED", "default/w"), ("ADDED", "/c")]


def test_not_served_informer_restarts_on_the_watchers_crd_event(served: ServedCluster) -> None:
    mapper = make_mapper(served.url, miss_refresh_interval=0.0)
    with Watcher(mapper, watch_apiservices=False) as watcher:
        assert watcher.wait_until_healthy(30)
        # A probe period (60 s) beyond the test's patience (30 s safety nets, generous for a loaded machine):
        # only the watcher's event can restart it in time.
        cache = ObjectCache(mapper, watcher=watcher, probe_initial=60, probe_max=60, sync_timeout=30)
        try:
            served.cluster.delete_crd(WIDGETS)
            informer = cache.informer(WIDGET_GK)
            assert informer.wait_for_state("not_served", timeout=30)
            served.cluster.add_crd(WIDGET)
            served.cluster.apply_object(widget_obj("w"))
            assert cache.wait_for(WIDGET_GK, "w", "default", timeout=30)["metadata"]["name"] == "w"
            assert [h for h in watcher._handlers if h == cache._crds.on_event] == [cache._crds.on_event]  # once
        finally:
            assert cache.stop(30)
        assert watcher._handlers == []  # the cache's stop removed its handler


def test_a_crd_created_as_its_informer_turns_not_served_restarts_it(served: ServedCluster) -> None:
    """The ObjectCache listened for CRD events only once an informer, having found its kind not served, asked
    whether a watcher would wake it, and dropped its handler for a moment each time it asked: a CRD created in
    between (here: exactly when the informer announces ``not_served``, the moment a caller waiting for that state
    creates it) was never heard of, and the informer slept a whole probe period (60 s here). Flaky under load in
    the test above; deterministic here: the CRD and its watch event land at that moment."""
    mapper = make_mapper(served.url, miss_refresh_interval=0.0)
    with Watcher(mapper, watch_apiservices=False) as watcher:
        assert watcher.wait_until_healthy(30)
        cache = ObjectCache(mapper, watcher=watcher, probe_initial=60, probe_max=60, sync_timeout=30)
        served.cluster.delete_crd(WIDGETS)
        events = threading.Event()
        watcher.add_handler(lambda event_type, kind, obj: events.set() if event_type == "DELETED" else None)
        assert events.wait(30)  # the watcher heard of the deletion before the informer starts
        from restmapper.store._informer import Informer

        original = Informer._enter_not_served
        fired: list[bool] = []

        def created_then(self: Informer, exc: Any) -> None:
            original(self, exc)
            if not fired:  # once: the restart below enters this method again only if the kind goes away
                fired.append(True)
                served.cluster.add_crd(WIDGET)
                served.cluster.apply_object(widget_obj("w"))
                # The watcher delivers ADDED on its own thread, now, while this informer has not yet asked
                # ``_watched()``: give it the time it needs by waiting for the event itself.
                added = threading.Event()
                watcher.add_handler(lambda event_type, kind, obj: added.set() if event_type == "ADDED" else None)
                assert added.wait(30)

        try:
            Informer._enter_not_served = created_then  # type: ignore[method-assign]
            assert cache.wait_for(WIDGET_GK, "w", "default", timeout=30)["metadata"]["name"] == "w"
        finally:
            Informer._enter_not_served = original  # type: ignore[method-assign]
            assert cache.stop(30)


def test_sync_timeout_is_typed_and_chains_the_last_error(served: ServedCluster) -> None:
    served.cluster.inject("/api/v1/configmaps", status=500, body="boom")
    with object_cache(served, sync_timeout=0.3) as cache:
        # The precondition first, waited for (bounded): the first list failed. Under load it may take longer
        # than the sync timeout, which then expires before there is an error to chain.
        informer = cache.informer("cm")
        assert wait_until(lambda: informer.state == "failing" and informer.last_error is not None)
        with pytest.raises(CacheSyncTimeoutError) as info:
            cache.get("cm", "a", "default")
        assert info.value.last_error is not None
        assert cache.informer("cm").state == "failing"
        served.cluster.clear_faults()
        assert cache.wait_for_sync("cm", 10)


def test_a_stopped_informer_is_never_handed_out(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a"))
    with object_cache(served) as cache:
        old = cache.informer("cm")
        assert old.wait_for_sync(10)
        assert cache.stop(10)
        assert old.state == "stopped"
        with pytest.raises(InformerStoppedError):
            old.add_handler(on_add=print)
        with pytest.raises(InformerStoppedError):  # a stopped cache hands out nothing until started again
            cache.informer("cm")
        fresh = cache.start().informer("cm")
        assert fresh is not old and fresh.state != "stopped"
        assert cache.get("cm", "a", "default")["metadata"]["name"] == "a"


def test_seed_004_lease_lost_and_regained_crd_recreated_and_version_removed(served: ServedCluster,
                                                                            watch_list: bool) -> None:
    """The whole seed-004 story on one cache: handlers removed and re-added (lease lost and regained), the CRD
    deleted and recreated, a version removed in an upgrade. After each step the handlers saw exactly the right
    events and get returns the right object; the only error a caller sees is the no-match while not served."""
    cluster = served.cluster
    cluster.apply_object(widget_obj("a", size=1))
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)

        term1 = Mirror()
        handle = term1.attach(informer)
        converged(term1, cluster, WIDGETS)
        assert [e[:2] for e in term1.log] == [("ADDED", "default/a")]

        # Lease lost: the controller removes its handlers; the informer keeps running.
        assert cache.remove_handler(handle) and not cache.remove_handler(handle)
        cluster.apply_object(widget_obj("b"))
        assert cache.wait_for(WIDGETS, "b", "default", timeout=10)
        # Lease regained: a new term's handlers get synthetic adds for everything, then live events.
        term2 = Mirror()
        term2.attach(informer)
        converged(term2, cluster, WIDGETS)
        assert sorted(e[:2] for e in term2.log) == [("ADDED", "default/a"), ("ADDED", "default/b")]
        assert len(term1.log) == 1  # term 1 heard nothing after its removal
        term2.clear_log()

        # CRD deleted and recreated (new UID): deletes, the no-match while gone, then the new objects.
        old_uid = cache.get(WIDGETS, "a", "default")["metadata"]["uid"]
        assert cluster.wait_for_watchers(1, 10)
        cluster.delete_crd(WIDGETS)
        assert informer.wait_for_state("not_served", timeout=10)
        with pytest.raises(NoKindMatchError):
            cache.get(WIDGET_GK, "a", "default")
        cluster.add_crd(WIDGET)
        cluster.apply_object(widget_obj("a", size=5))
        converged(term2, cluster, WIDGETS)
        assert sorted(e[:2] for e in term2.log) == [("ADDED", "default/a"), ("DELETED", "default/a"),
                                                    ("DELETED", "default/b")]
        assert cache.get(WIDGETS, "a", "default")["metadata"]["uid"] != old_uid
        term2.clear_log()

        # Upgrade: v1 stops being served; the informer moves to v1beta1 without events for unchanged objects.
        assert cluster.wait_for_watchers(1, 10)  # the informer's v1 watch is open
        cluster.set_served(WIDGETS, False, version="v1")  # the storage teardown ends the v1 watch
        assert informer.wait_until(lambda i: i.mapping is not None and i.mapping.resource.version == "v1beta1",
                                   timeout=10)
        assert informer.wait_for_sync(10)
        updated = cluster.apply_object(widget_obj("a", version="v1beta1", size=6))
        got = cache.wait_for(WIDGETS, "a", "default", resource_version=updated["metadata"]["resourceVersion"],
                             timeout=10)
        assert got["spec"] == {"size": 6} and got["apiVersion"] == "example.com/v1beta1"
        converged(term2, cluster, WIDGETS)
        assert [e[:2] for e in term2.log] == [("MODIFIED", "default/a")]
        assert not term1.errors and not term2.errors


def test_objects_are_shared_and_read_only_by_contract(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a", x="1"))
    with object_cache(served) as cache:
        first = cache.get("cm", "a", "default")
        assert cache.get("cm", "a", "default") is first  # no copy on the warm path
        mine = copy.deepcopy(first)
        mine["data"]["x"] = "2"
        assert cache.get("cm", "a", "default")["data"] == {"x": "1"}


def test_forbidden_list_backs_off_as_failing_then_recovers(served: ServedCluster, watch_list: bool) -> None:
    """RBAC (403) is not the end: reads raise ForbiddenError at once, the informer reports failing with the error
    and retries with backoff."""
    served.cluster.apply_object(cm("a"))
    fault = served.cluster.inject("/api/v1/configmaps", status=403, body='{"kind":"Status","code":403}')
    with object_cache(served, watch_list=watch_list, sync_timeout=30) as cache:
        with pytest.raises(ForbiddenError):
            cache.get("cm", "a", "default")
        informer = cache.informer("cm")
        assert informer.wait_for_state("failing", timeout=10)
        assert "403" in str(informer.last_error)
        fault.remove()
        assert informer.wait_until(lambda i: i.has_synced, 10)
        assert cache.get("cm", "a", "default")["metadata"]["name"] == "a"


def test_404_for_the_type_reports_to_the_mapper_backs_off_and_heals(served: ServedCluster, watch_list: bool) -> None:
    """The upgrade race (seed 002/003): v1 still listed by discovery but 404 on its own path. Every 404 is
    reported to the mapper (group evicted); while discovery still sends the informer there it backs off (state
    failing, data kept); once v1 is no longer listed it moves to v1beta1 by itself."""
    served.cluster.apply_object(widget_obj("w"))
    with object_cache(served, watch_list=watch_list) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10) and informer.mapping is not None
        assert informer.mapping.resource.version == "v1"
        evictions = cache.mapper.stats.evictions
        assert served.cluster.wait_for_watchers(1, 10)
        served.cluster.set_listed_but_gone("example.com/v1")
        served.cluster.drop_watches()
        assert informer.wait_until(lambda i: i.stats.not_found >= 2 and i.state == "failing", timeout=10)
        assert cache.get(WIDGETS, "w", "default")["metadata"]["name"] == "w"
        assert cache.mapper.stats.evictions > evictions
        served.cluster.set_served(WIDGETS, False, version="v1")
        served.cluster.set_listed_but_gone("example.com/v1", on=False)
        assert informer.wait_until(lambda i: i.mapping is not None and i.mapping.resource.version == "v1beta1"
                                   and i.state == "synced", timeout=10)
        assert cache.get(WIDGETS, "w", "default")["apiVersion"] == "example.com/v1beta1"


def test_from_kubeconfig_splits_cache_and_mapper_options(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a"))
    cache = ObjectCache.from_kubeconfig(str(served.kubeconfig_path), sync_timeout=7.0, namespace="default",
                                        ttl=12.0)
    try:
        assert cache.namespace == "default" and cache.mapper.cache.ttl == 12.0
        assert cache.get("cm", "a")["metadata"]["name"] == "a"
    finally:
        assert cache.stop(10)
