"""The object store holds objects compact and out of the cyclic GC's reach, and every read, handler and index
still sees the objects exactly as the server sent them. Pure: no HTTP."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.properties import examples
from hypothesis import given
from hypothesis import strategies as st

from bench.scope_bench import pod
from restmapper.store._compact import Codec
from restmapper.store._labels import labels_matcher
from restmapper.store._objects import ObjectStore
from restmapper.testing import ManualClock

JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
                | st.floats(allow_nan=False) | st.text())
JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=25)


def obj(name: str, ns: str = "default", rv: str = "1", uid: str = "u1", **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "uid": uid, "resourceVersion": rv}, **extra}


def wire(o: Any) -> str:
    """The exact text of ``o`` (keys in order; ``true`` is not ``1``; floats by repr)."""
    return json.dumps(o)


@examples(75)
@given(body=st.dictionaries(st.text(max_size=10).filter(lambda k: k != "metadata"), JSON, max_size=5),
       labels=st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3),
       extra_meta=st.dictionaries(st.sampled_from(["generation", "annotations", "finalizers", "x"]), JSON,
                                  max_size=3))
def test_every_field_reads_back_as_the_server_sent_it(body: dict[str, Any], labels: dict[str, str],
                                                       extra_meta: dict[str, Any]) -> None:
    sent = {"apiVersion": "v1", "kind": "Thing",
            "metadata": {"name": "a", "namespace": "default", "uid": "u1", "resourceVersion": "5",
                         "labels": labels, **extra_meta}, **body}
    text = wire(sent)
    for write in ("list", "event"):
        store = ObjectStore()
        changes = store.replace([json.loads(text)]) if write == "list" else store.upsert(json.loads(text))
        assert [wire(c[2]) for c in changes] == [text]  # what the handler gets
        assert wire(store.get("default", "a")) == text
        assert [wire(o) for o in store.snapshot()] == [text]
        assert [wire(o) for o in store.select(None)] == [text]


def test_reads_of_an_updated_object_never_return_the_old_version() -> None:
    store = ObjectStore(hot_bytes=10_000)
    store.upsert(obj("a", rv="1", data="one"))
    assert store.get("default", "a")["data"] == "one"  # type: ignore[index]  # now kept decoded
    store.upsert(obj("a", rv="2", data="two"))
    assert store.get("default", "a")["data"] == "two"  # type: ignore[index]
    store.replace([obj("a", rv="3", data="three")])
    assert store.get("default", "a")["data"] == "three"  # type: ignore[index]
    store.replace([obj("a", rv="1", data="one")])  # a relist may go back (a restore): the read follows it
    assert store.get("default", "a")["data"] == "one"  # type: ignore[index]


def test_handlers_get_the_old_object_as_it_was_and_the_new_one() -> None:
    store = ObjectStore(hot_bytes=1)
    store.replace([obj("a", rv="1", data="one"), obj("b", uid="ub")])
    update = store.upsert(obj("a", rv="2", data="two"))
    for i in range(5):  # the recently read set turns over before the handler thread gets to the update
        store.upsert(obj(f"x{i}", uid=f"x{i}"))
        store.get("default", f"x{i}")
    relist = store.replace([obj("a", rv="3", data="three")])
    assert [(t, o and o["data"], n and n["data"]) for t, o, n in update] == [("MODIFIED", "one", "two")]
    assert [(t, (o or n)["metadata"]["name"], o and o.get("data"), n and n.get("data"))  # type: ignore[index]
            for t, o, n in relist][:2] == [("DELETED", "b", None, None), ("DELETED", "x0", None, None)]
    assert ("MODIFIED", "a", "two", "three") in [(t, (o or n)["metadata"]["name"], o and o.get("data"),  # type: ignore[index]
                                                  n and n.get("data")) for t, o, n in relist]
    deleted = obj("a", rv="4", data="final")
    assert list(store.delete(deleted)) == [("DELETED", deleted, None)]  # the event's object: the final state


def test_a_label_selector_or_index_read_decodes_only_what_it_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    store = ObjectStore()
    store.add_indexer("node", lambda o: [o["spec"]["nodeName"]])
    store.replace([pod(i) for i in range(400)])
    decoded: list[bytes] = []
    real = Codec.decode
    monkeypatch.setattr(Codec, "decode", lambda codec, blob: decoded.append(blob) or real(codec, blob))
    found = store.select(None, labels_matcher("app=web-008"))
    assert sorted(o["metadata"]["name"] for o in found) == sorted(pod(i)["metadata"]["name"]
                                                                  for i in (8, 208))
    assert len(decoded) == 2
    decoded.clear()
    on_node = store.by_index("node", "node-007", labels_matcher("shard=7"), "team-07")
    assert [o["metadata"]["name"] for o in on_node] == [pod(i)["metadata"]["name"] for i in (7, 307)]
    assert len(decoded) == 2


def test_a_working_set_of_realistic_pods_read_in_turn_stays_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A controller reading the same few hundred ~8 KB Pods over and over (in turn: the worst order for a two-
    generation set) decodes each once, not on every read."""
    store = ObjectStore()
    pods = [pod(i) for i in range(300)]
    store.replace(pods)
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
    for ns, name in keys:
        store.get(ns, name)
    decoded: list[bytes] = []
    real = Codec.decode
    monkeypatch.setattr(Codec, "decode", lambda codec, blob: decoded.append(blob) or real(codec, blob))
    for _ in range(3):
        for ns, name in keys:
            store.get(ns, name)
    assert decoded == []


def test_the_store_holds_nothing_the_garbage_collector_walks() -> None:
    store = ObjectStore()
    gc.collect()
    gc.disable()  # no collection may untrack anything behind our back: what is tracked is tracked from the start
    try:
        before = len(gc.get_objects())
        store.replace(pod(i) for i in range(2000))  # 50 namespaces
        grown = len(gc.get_objects()) - before
        records = [r for objects in store.objects_by_namespace.values() for r in objects.values()]
        assert len(records) == 2000 and not any(gc.is_tracked(r) for r in records)
        store.upsert(dict(pod(3), metadata=dict(pod(3)["metadata"], resourceVersion="99")))
    finally:
        gc.enable()
    assert grown < 100  # the namespace dicts, not one container a Pod (a decoded Pod is ~400 containers)
    assert not gc.is_tracked(store.objects_by_namespace["team-03"][pod(3)["metadata"]["name"]])


def _listed(n: int) -> Iterator[dict[str, Any]]:
    for i in range(n):
        yield {"metadata": {"name": f"o{i}", "namespace": f"ns{i % 3}", "uid": f"u{i}", "resourceVersion": "1"},
               "spec": {"items": [{"a": i}, {"b": [i, i]}], "nested": {"x": {"y": {}}}}}


@pytest.mark.parametrize("held", [0, 3000], ids=["initial sync", "relist"])
def test_a_sync_keeps_no_decoded_object_until_the_handlers_ran(held: int) -> None:
    store = ObjectStore()
    store.replace(_listed(held))
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        changes = store.replace_entries(o for o in _listed(3000) if o["metadata"].update(resourceVersion="2") or 1)
        grown = len(gc.get_objects()) - before
    finally:
        gc.enable()
    assert len(changes) == 3000 and grown < 100  # each object is ~7 containers decoded
    assert [c[0] for c in changes][:2] == (["MODIFIED"] * 2 if held else ["ADDED"] * 2)


def _counting_decodes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    decoded: list[bytes] = []
    real = Codec.decode
    monkeypatch.setattr(Codec, "decode", lambda codec, blob: decoded.append(blob) or real(codec, blob))
    return decoded


def _updated(i: int, rv: str) -> dict[str, Any]:
    updated = pod(i)
    updated["metadata"]["resourceVersion"] = rv
    return updated


def test_updates_of_objects_nobody_read_keep_nothing_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A watch update hands the handler the event's object and decodes only the old version (the handler's
    ``old``): the store keeps no decoded object for a write nobody reads, so the collector has nothing to walk."""
    store = ObjectStore()
    store.replace(pod(i) for i in range(200))
    decoded = _counting_decodes(monkeypatch)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for i in range(200):
            sent = _updated(i, "99")
            [(kind, old, new)] = store.upsert(sent)
            assert (kind, old, new) == ("MODIFIED", pod(i), sent) and new is sent
            del sent, old, new
        grown = len(gc.get_objects()) - before
    finally:
        gc.enable()
    assert len(decoded) == 200  # the olds, one each
    assert grown < 100


def test_an_update_of_a_recently_read_object_needs_no_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The new version of an object read recently takes the old one's place among the recently read: neither the
    handler's ``old`` nor the next read nor the next update decodes anything."""
    store = ObjectStore()
    store.replace(pod(i) for i in range(10))
    name, ns = pod(3)["metadata"]["name"], pod(3)["metadata"]["namespace"]
    read = store.get(ns, name)
    decoded = _counting_decodes(monkeypatch)
    first = _updated(3, "100")
    [(_, old, new)] = store.upsert(first)
    assert old is read and new is first
    assert store.get(ns, name) is first
    [(_, old, new)] = store.upsert(_updated(3, "101"))
    assert old is first and new["metadata"]["resourceVersion"] == "101"
    assert decoded == []


def test_an_unchanged_relist_stores_nothing_new() -> None:
    store = ObjectStore()
    store.replace(_listed(100))
    records = {n: r for objects in store.objects_by_namespace.values() for n, r in objects.items()}
    assert store.replace(_listed(100)) == []
    assert all(store.objects_by_namespace[f"ns{int(n[1:]) % 3}"][n] is r for n, r in records.items())


def test_an_object_marshal_cannot_encode_is_held_as_it_is() -> None:
    class Labels(dict[str, str]):
        pass

    store = ObjectStore()
    odd = obj("a", spec=("a", "tuple"))
    odd["metadata"]["labels"] = Labels(app="web")
    store.replace([odd, obj("b", uid="ub")])
    assert store.get("default", "a") is odd
    assert [o["metadata"]["name"] for o in store.select(None, labels_matcher("app=web"))] == ["a"]


def test_label_keys_the_store_reserves_cannot_collide_with_labels() -> None:
    store = ObjectStore()
    weird = obj("a")
    weird["metadata"]["labels"] = {"\x00b": "x", "app": "web"}
    store.replace([weird, dict(obj("b", uid="ub"), metadata=dict(obj("b")["metadata"], labels="not a map"))])
    assert store.get("default", "a") == weird
    assert [o["metadata"]["name"] for o in store.select(None, labels_matcher("app=web"))] == ["a"]
    assert [o["metadata"]["name"] for o in store.select(None, labels_matcher("!app"))] == ["b"]


def test_the_byte_estimate_is_within_a_fifth_of_tracemalloc_on_realistic_pods() -> None:
    # 500 realistic Pods (8 KB of JSON each, 4 MB) over 50 namespaces: the estimate is within 5% of tracemalloc at
    # this size as at 2,000 (which took four times as long under tracemalloc).
    listed = [json.dumps(pod(i)) for i in range(500)]
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        store = ObjectStore()
        store.replace(json.loads(text) for text in listed)
        for i in range(0, 500, 20):  # 25 read: kept decoded
            store.get(f"team-{i % 50:02d}", pod(i)["metadata"]["name"])
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    estimate = store.bytes_held()
    assert abs(estimate - traced) <= 0.2 * traced, (estimate, traced)


def test_the_age_of_the_last_word_from_the_server_follows_the_clock() -> None:
    clock = ManualClock()
    store = ObjectStore(clock=clock)
    assert store.seconds_since_heard() is None
    store.replace([obj("a")])
    clock.advance(5)
    assert store.seconds_since_heard() == 5
    store.heard()  # a bookmark
    clock.advance(2)
    assert store.seconds_since_heard() == 2
    store.upsert(obj("a", rv="2"))
    assert store.seconds_since_heard() == 0
