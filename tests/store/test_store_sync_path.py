"""The initial-sync path of the object cache: a relist staged without a container an object, its changes queued as
one batch, the list page checked against the mapping in one pass. Pure: no HTTP."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from restmapper.model import GroupVersionKind
from restmapper.store._handlers import Dispatcher, HandlerHandle
from restmapper.store._objects import ObjectStore, disagrees, first_disagreeing


def obj(name: str, ns: str = "default", rv: str = "1", uid: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "uid": uid or f"u-{ns}-{name}", "resourceVersion": rv},
            **extra}


def names(changes: list[Any]) -> list[tuple[str, str]]:
    return [(t, (n or o)["metadata"]["namespace"] + "/" + (n or o)["metadata"]["name"]) for t, o, n in changes]


def test_replace_into_an_empty_store_keeps_list_order_across_interleaved_namespaces() -> None:
    store = ObjectStore()
    listed = [obj("b", "ns2"), obj("a", "ns1"), obj("c", "ns2"), obj("d", "ns1")]
    changes = store.replace(listed)
    assert names(changes) == [("ADDED", "ns2/b"), ("ADDED", "ns1/a"), ("ADDED", "ns2/c"), ("ADDED", "ns1/d")]
    assert len(store) == 4 and store.get("ns1", "d") == listed[3]
    assert store.snapshot() == [listed[1], listed[3], listed[0], listed[2]]


@pytest.mark.parametrize("held", [[], [obj("z")]], ids=["empty store", "held objects"])
def test_a_key_listed_twice_is_one_change_at_its_first_place_with_its_last_object(held: list[Any]) -> None:
    store = ObjectStore()
    store.replace(held)
    first, other, last = obj("a", rv="1"), obj("b"), obj("a", rv="2")
    changes = store.replace([first, other, last])
    assert [c[2] for c in changes if c[0] == "ADDED"] == [last, other]
    assert store.get("default", "a") == last and len(store) == 2


def test_replace_entries_give_the_changes_in_order() -> None:
    store = ObjectStore()
    a, b = obj("a"), obj("b")
    assert store.replace_entries([a, b]) == [("ADDED", None, a), ("ADDED", None, b)]
    a2, c = obj("a", rv="2"), obj("c")
    entries = store.replace_entries([a2, c])
    assert entries == [("DELETED", b, None), ("MODIFIED", a, a2), ("ADDED", None, c)]


def test_replace_into_an_empty_store_with_an_indexer_indexes_every_object() -> None:
    store = ObjectStore()
    store.add_indexer("by-ns", lambda o: [o["metadata"]["namespace"]])
    store.replace([obj("a", "x"), obj("b", "y"), obj("c", "x")])
    assert [o["metadata"]["name"] for o in store.by_index("by-ns", "x")] == ["a", "c"]


def test_a_relist_stages_no_container_an_object() -> None:
    listed = [obj(f"o{i}", f"ns{i % 3}") for i in range(3000)]
    store = ObjectStore()
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects(0))
        entries = store.replace_entries(listed)
        grown = len(gc.get_objects(0)) - before
    finally:
        gc.enable()
    assert entries == [("ADDED", None, o) for o in listed]
    assert grown < 50  # the store's namespace dicts and the entries list, not one tuple an object


GVK = GroupVersionKind("apps", "v1", "Deployment")


@pytest.mark.parametrize("items, namespaced, index", [
    ([obj("a"), {"apiVersion": "apps/v1", "kind": "Deployment", **obj("b")}], True, None),
    ([obj("a"), {"apiVersion": "apps/v2", **obj("b")}, {"kind": "Other", **obj("c")}], True, 1),
    ([obj("a"), {"kind": "Other", **obj("c")}], True, 1),
    ([obj("a")], False, 0),
    ([{"metadata": {"name": "a"}}, obj("b")], True, 0),
    (["not an object", obj("a", ns="")], True, 1),
    ([{"apiVersion": 1, **obj("a")}], True, 0),
])
def test_first_disagreeing_is_the_first_item_disagrees_refuses(items: list[Any], namespaced: bool,
                                                               index: int | None) -> None:
    expected = next((o for o in items if disagrees(o, GVK, namespaced)), None)
    assert first_disagreeing(items, GVK, namespaced) is expected
    assert expected is (items[index] if index is not None else None)


def test_core_group_api_version_agrees() -> None:
    core = GroupVersionKind("", "v1", "ConfigMap")
    assert first_disagreeing([{"apiVersion": "v1", "kind": "ConfigMap", **obj("a")}], core, True) is None
    assert disagrees({"apiVersion": "/v1", **obj("a")}, core, True)


def _dispatcher() -> Dispatcher:
    return Dispatcher("test", count=lambda name: None, resync=None, resync_snapshot=lambda: None, daemon=True)


def _drain(d: Dispatcher, done: threading.Event) -> None:
    d.thread.start()
    assert done.wait(10)
    d.stop()
    d.thread.join(10)


def test_a_batch_reaches_the_handlers_registered_before_it_in_order_and_is_counted_in_the_backlog() -> None:
    d, seen, done = _dispatcher(), [], threading.Event()
    early = HandlerHandle(lambda o: seen.append(("add", o["metadata"]["name"])),
                          lambda old, new: seen.append(("update", new["metadata"]["name"])),
                          lambda o: seen.append(("delete", o["metadata"]["name"])), d.seq + 1)
    d.add(early, [])
    a, b, c = obj("a"), obj("b"), obj("c")
    d.broadcast_entries([a, ("MODIFIED", b, b), ("DELETED", c, None)])
    late_seen: list[Any] = []

    def late_add(o: dict[str, Any]) -> None:
        late_seen.append(o["metadata"]["name"])
        done.set()

    late = HandlerHandle(late_add, None, None, d.seq + 1)
    d.add(late, [])
    d.broadcast_entries([])
    assert d.seq == 3 and d.backlog == 3
    d.broadcast_entries([obj("d")])
    assert d.seq == 4 and d.backlog == 4
    _drain(d, done)
    assert seen == [("add", "a"), ("update", "b"), ("delete", "c"), ("add", "d")]
    assert late_seen == ["d"] and d.backlog == 0


def test_synthetic_adds_of_a_late_handler_are_one_batch_for_it_alone() -> None:
    d, seen, done = _dispatcher(), [], threading.Event()
    first = HandlerHandle(lambda o: seen.append(("first", o["metadata"]["name"])), None, None, 1)
    d.add(first, [])
    d.broadcast_entries([obj("a")])

    def second_add(o: dict[str, Any]) -> None:
        seen.append(("second", o["metadata"]["name"]))
        if o["metadata"]["name"] == "b":
            done.set()

    second = HandlerHandle(second_add, None, None, d.seq + 1)
    d.add(second, [obj("a"), obj("b")])
    assert d.backlog == 3
    _drain(d, done)
    assert seen == [("first", "a"), ("second", "a"), ("second", "b")]


def test_a_handler_removed_during_a_batch_is_not_called_again() -> None:
    d, seen, done = _dispatcher(), [], threading.Event()
    handle = HandlerHandle(None, None, None, 1)

    def on_add(o: dict[str, Any]) -> None:
        seen.append(o["metadata"]["name"])
        d.remove(handle)

    handle.on_add = on_add
    d.add(handle, [])
    d.add(HandlerHandle(lambda o: done.set() if o["metadata"]["name"] == "b" else None, None, None, 1), [])
    d.broadcast_entries([obj("a"), obj("b")])
    _drain(d, done)
    assert seen == ["a"]


def test_listed_objects_without_identity_are_skipped_with_their_reason(caplog: pytest.LogCaptureFixture) -> None:
    store = ObjectStore()
    good = obj("a")
    bad: list[Any] = ["text", {"metadata": {}}, {"metadata": {"name": "b", "namespace": 3}},
                      {"metadata": {"name": "c", "uid": 7}}, {"kind": "X"}]
    with caplog.at_level("WARNING", logger="restmapper.store"):
        assert store.replace([bad[0], good, *bad[1:]]) == [("ADDED", None, good)]
    assert len(store) == 1
    reasons = [r.getMessage() for r in caplog.records]
    assert len(reasons) == 5 and all(m.startswith("ignoring a listed object: ") for m in reasons)
    assert "metadata.name" in reasons[1] and "must be strings" in reasons[2]
