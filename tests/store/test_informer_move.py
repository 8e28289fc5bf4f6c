"""Invariant: after an informer moves to another version, it never answers with objects of the old version.

Between the move and the first successful list at the new version the store still holds the old version's
objects (kept so the relist can diff them: no event storm). Until that list lands, reads must wait (and time
out with ``CacheSyncTimeoutError``) and the state must not say ``synced``: answering with the old apiVersion while
``mapping`` names the new one is confidently wrong (DESIGN 5.10).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from helpers.store import WIDGETS, object_cache, widget_cluster, widget_obj
from helpers.watch import BackoffRecorder, widget

from restmapper.errors import NoKindMatchError
from restmapper.store import CacheSyncTimeoutError, Informer
from restmapper.testing import ServedCluster
from restmapper.transport import RequestsTransport, RetryPolicy


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def test_after_a_move_old_version_objects_are_never_served(served: ServedCluster) -> None:
    served.cluster.apply_object(widget_obj("w1"))
    with object_cache(served, sync_timeout=0.3) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)
        assert cache.get(WIDGETS, "w1", "default")["apiVersion"] == "example.com/v1"
        assert served.cluster.wait_for_watchers(1, 10)
        # The new version's list fails until we lift the fault: the move is made, its relist cannot land.
        fault = served.cluster.inject("/apis/example.com/v1beta1/widgets*", status=500, body="boom")
        served.cluster.set_served(WIDGETS, False, version="v1")
        assert informer.wait_until(lambda i: i.mapping is not None and i.mapping.resource.version == "v1beta1",
                                   timeout=10)
        assert informer.state != "synced"
        assert not informer.has_synced
        with pytest.raises(CacheSyncTimeoutError):
            informer.get("w1", "default")
        with pytest.raises(CacheSyncTimeoutError):
            cache.list(WIDGETS, "default")
        fault.remove()
        assert informer.wait_for_sync(10)
        assert cache.get(WIDGETS, "w1", "default")["apiVersion"] == "example.com/v1beta1"
        assert [o["apiVersion"] for o in cache.list(WIDGETS, "default")] == ["example.com/v1beta1"]


class HeldLists:
    """A transport whose collection lists (not watches) wait while ``held`` is clear: a list in flight, for as
    long as the test wants, without failing the watch (an injected fault would fail both: one path). A WatchList
    (``sendInitialEvents``) is that sync mode's list and waits too."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.held = inner, threading.Event()
        self.held.set()

    def get(self, path: str, headers: Any = None, **kwargs: Any) -> Any:
        if path.endswith("/widgets"):
            assert self.held.wait(20)
        return self.inner.get(path, headers, **kwargs)

    def stream(self, path: str, headers: Any = None, **kwargs: Any) -> Any:
        if path.endswith("/widgets") and "sendInitialEvents" in (kwargs.get("params") or {}):
            assert self.held.wait(20)
        return self.inner.stream(path, headers, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class PausedRead:
    """Pause the next read of ``informer`` on another thread where it turns the namespace asked into the store's
    key (``_ns``): the read has found the informer readable; the test moves the informer (on its own thread) and
    lets the read go on. A read that decided on one state and reads another answers for neither."""

    def __init__(self, informer: Informer) -> None:
        self.paused, self.release = threading.Event(), threading.Event()
        self.result: list[object] = []
        original = informer._ns
        first = [True]

        def ns(namespace: str | None) -> str:
            if first[0] and threading.current_thread() is not threading.main_thread():
                first[0] = False
                self.paused.set()
                assert self.release.wait(10)
            return original(namespace)

        informer._ns = ns  # type: ignore[method-assign]

    def start(self, read: Callable[[], object]) -> threading.Thread:
        def target() -> None:
            try:
                self.result.append(read())
            except Exception as exc:
                self.result.append(exc)

        thread = threading.Thread(target=target)
        thread.start()
        return thread


def test_a_read_racing_a_scope_move_never_answers_for_neither_scope(served: ServedCluster) -> None:
    """A get that waited for the first list, then saw the scope change under it, looked up the old objects with
    the new scope: ObjectNotFoundError for an object the server has in both worlds. The move: the CRD deleted and
    recreated cluster-scoped while the watch of a one-namespace cache was down (it never saw the deletes), so
    the store still holds the namespaced object when the watch's 404 moves the informer. The read must answer
    from one state or wait for the new list."""
    served.cluster.apply_object(widget_obj("w1"))
    transport = HeldLists(RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1)))
    with object_cache(served, transport=transport, namespace="default") as cache:
        transport.held.clear()
        informer = cache.informer(WIDGETS)
        paused = PausedRead(informer)
        thread = paused.start(lambda: informer.get("w1", "default"))  # waits for the first list
        transport.held.set()
        assert paused.paused.wait(10)  # synced at Namespaced, the read decided to answer: paused before the key
        assert served.cluster.wait_for_watchers(1, 10)
        watch = served.cluster.inject("/apis/example.com/v1/namespaces/default/widgets*", status=500, body="boom")
        served.cluster.drop_watches()
        assert informer.wait_for_state("failing", timeout=10)
        served.cluster.delete_crd(WIDGETS)
        served.cluster.add_crd(widget(scope="Cluster"))
        served.cluster.apply_object(widget_obj("w1", namespace=None))
        transport.held.clear()  # the move's list stays in flight
        watch.remove()  # the watch of the namespaced path now 404s: the informer moves, holding default/w1
        assert informer.wait_until(lambda i: i.mapping is not None and not i.mapping.namespaced, timeout=10)
        paused.release.set()
        transport.held.set()
        thread.join(20)
        got = paused.result[0]
        # The old state's answer (the read began before the move), or the new one: never "no such object".
        assert isinstance(got, dict) and got["metadata"]["name"] == "w1", repr(got)
        assert informer.wait_for_sync(10)
        assert cache.get(WIDGETS, "w1")["metadata"].get("namespace") is None


@pytest.mark.parametrize("scope", ["Cluster", "Namespaced"])
def test_a_scope_change_while_the_watch_was_down_is_not_stored_under_the_old_mapping(served: ServedCluster,
                                                                                   scope: str) -> None:
    """The CRD is deleted and recreated with the other scope while list and watch fail (no early end, no 404:
    both scopes list at one path). The informer resumed at its old mapping and stored the new objects under it:
    a Namespaced mapping holding cluster-scoped objects answers "not found" (or "give a namespace") for an
    object the server has. Objects that disagree with the mapping's scope must make it ask discovery again."""
    old = "Namespaced" if scope == "Cluster" else "Cluster"
    served.cluster.delete_crd(WIDGETS)
    served.cluster.add_crd(widget(scope=old))
    served.cluster.apply_object(widget_obj("w1", namespace="default" if old == "Namespaced" else None))
    with object_cache(served) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)
        assert served.cluster.wait_for_watchers(1, 10)
        fault = served.cluster.inject("/apis/example.com/v1/widgets*", status=500, body="boom")
        served.cluster.drop_watches()
        assert informer.wait_for_state("failing", timeout=10)
        served.cluster.delete_crd(WIDGETS)
        served.cluster.add_crd(widget(scope=scope))
        served.cluster.apply_object(widget_obj("w1", namespace="default" if scope == "Namespaced" else None))
        wrong: list[str] = []

        def settled(i: Informer) -> bool:
            if i.has_synced and i.mapping is not None:
                wrong.extend(o["metadata"]["name"] for o in i._store.snapshot()
                             if bool(o["metadata"].get("namespace")) != i.mapping.namespaced)
            return bool(wrong) or (i.has_synced and i.mapping is not None and i.mapping.scope.value == scope)

        fault.remove()
        assert informer.wait_until(settled, timeout=10)
        assert not wrong, f"objects of the other scope held under {informer.mapping}: {wrong}"
        got = cache.get(WIDGETS, "w1", "default")
        assert got["metadata"].get("namespace") == ("default" if scope == "Namespaced" else None)


def test_a_kind_renamed_while_the_watch_was_down_is_not_stored_as_the_old_kind(served: ServedCluster) -> None:
    """The CRD is deleted and recreated with the same plural but another kind while list and watch fail. The
    informer resumed at its old mapping (same path) and stored the new kind's objects as Widgets: ``get`` of a
    Widget answered with a Gadget. An object whose apiVersion or kind is not the mapping's must make it ask
    discovery again (here: Widget is not served any more)."""
    served.cluster.apply_object(widget_obj("w1"))
    with object_cache(served) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)
        assert served.cluster.wait_for_watchers(1, 10)
        fault = served.cluster.inject("/apis/example.com/v1/widgets*", status=500, body="boom")
        served.cluster.drop_watches()
        assert informer.wait_for_state("failing", timeout=10)
        served.cluster.delete_crd(WIDGETS)
        served.cluster.add_crd(widget(names={"plural": "widgets", "singular": "gadget", "kind": "Gadget",
                                             "listKind": "GadgetList"}))
        gadget = widget_obj("g1")
        gadget["kind"] = "Gadget"
        served.cluster.apply_object(gadget)
        wrong: list[str] = []

        def settled(i: Informer) -> bool:
            wrong.extend(o["metadata"]["name"] for o in i._store.snapshot() if o.get("kind") != "Widget")
            return bool(wrong) or i.state == "not_served"

        fault.remove()
        assert informer.wait_until(settled, timeout=10)
        assert not wrong, f"objects of another kind held by the Widget informer: {wrong}"
        with pytest.raises(NoKindMatchError):
            cache.get(informer.group_kind, "g1", "default")


def test_a_server_that_keeps_disagreeing_with_discovery_gets_backoff_and_no_answer(served: ServedCluster) -> None:
    """Discovery says Namespaced, every listed Widget comes without a namespace: the informer re-asks discovery,
    refuses the objects (reads time out, never "not found") and backs off, growing, instead of a tight loop."""
    served.cluster.apply_object(widget_obj("w1"))
    sleep = BackoffRecorder(4)

    class ClusterScopedLists(HeldLists):
        lists = 0

        def get(self, path: str, headers: Any = None, **kwargs: Any) -> Any:
            response = self.inner.get(path, headers, **kwargs)
            if not path.endswith("/widgets"):
                return response
            ClusterScopedLists.lists += 1
            doc = json.loads(response.body)
            for item in doc["items"]:
                item["metadata"].pop("namespace", None)
            return dataclasses.replace(response, body=json.dumps(doc).encode())

    transport = ClusterScopedLists(RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1)))
    with object_cache(served, transport=transport, sleep=sleep, backoff_initial=0.5, backoff_max=30.0,
                      sync_timeout=0.2, watch_list=False) as cache:  # the transport alters list answers
        informer = cache.informer(WIDGETS)
        assert sleep.enough.wait(10)
        assert ClusterScopedLists.lists <= len(sleep.delays) + 2
        assert sleep.delays[-1] > sleep.delays[0]
        assert not informer.has_synced and len(informer._store) == 0
        with pytest.raises(CacheSyncTimeoutError):
            informer.get("w1", "default")


def test_a_wake_up_racing_a_move_still_lists_the_new_version(served: ServedCluster) -> None:
    """The root of the earlier "objects reverted to the old version" race: a wake-up (``_poke``) landing between
    a move and its first list made that run return at once ("interrupted"); the next run, told not to relist, kept
    the old version's resourceVersion and watched the new path from it without listing, so the v1 objects stayed,
    as synced. A move now forgets the resourceVersion (082f799): whatever interrupts it, the new version is listed.
    The wake-up is injected exactly there, on the informer's own thread."""
    served.cluster.apply_object(widget_obj("w1"))
    with object_cache(served) as cache:
        informer = cache.informer(WIDGETS)
        assert informer.wait_for_sync(10)
        assert served.cluster.wait_for_watchers(1, 10)
        reflector = informer._group.lead
        run = reflector.run
        poked: list[str] = []

        def run_after_a_poke(*, relist: bool = True) -> Any:
            mapping = informer.mapping
            if not poked and mapping is not None and mapping.resource.version == "v1beta1":
                poked.append(reflector.path)
                informer._poke()  # what a CRD event does; it interrupts this run before it lists
            return run(relist=relist)

        reflector.run = run_after_a_poke  # type: ignore[method-assign]
        served.cluster.set_served(WIDGETS, False, version="v1")
        assert informer.wait_until(lambda i: i.has_synced and i.mapping is not None
                                   and i.mapping.resource.version == "v1beta1", timeout=10)
        assert poked, "the move did not happen through the patched run"
        assert cache.get(WIDGETS, "w1", "default")["apiVersion"] == "example.com/v1beta1"
        assert [o["apiVersion"] for o in cache.list(WIDGETS, "default")] == ["example.com/v1beta1"]
