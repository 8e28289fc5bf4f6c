"""The generation-aware object store and the selectors (pure: no HTTP). DESIGN.md section 5.9."""

from __future__ import annotations

from typing import Any

import pytest

from restmapper.errors import InvalidArgumentError
from restmapper.store._labels import label_matcher
from restmapper.store._objects import ObjectStore, newer_resource_version
from restmapper.store._selector import field_matcher


def obj(name: str, uid: str = "u1", rv: str = "1", gen: int | None = 1, ns: str = "default",
        **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": uid, "resourceVersion": rv}
    if gen is not None:
        meta["generation"] = gen
    return {"metadata": meta, **extra}


def kinds(changes: list[Any]) -> list[tuple[str, str | None, str | None]]:
    return [(t, o["metadata"]["resourceVersion"] if o else None, n["metadata"]["resourceVersion"] if n else None)
            for t, o, n in changes]


@pytest.mark.parametrize("held, incoming, expected, kept_rv", [
    pytest.param(None, obj("a"), [("ADDED", None, "1")], "1", id="new key is an add"),
    pytest.param(obj("a", rv="5"), obj("a", rv="6"), [("MODIFIED", "5", "6")], "6", id="newer rv is an update"),
    pytest.param(obj("a", rv="5"), obj("a", rv="5"), [], "5", id="same rv: silent (another version's form)"),
    pytest.param(obj("a", rv="6"), obj("a", rv="5"), [], "6", id="older numeric rv never downgrades"),
    pytest.param(obj("a", rv="6", gen=3), obj("a", rv="7", gen=2), [], "6", id="lower generation never downgrades"),
    pytest.param(obj("a", rv="x9"), obj("a", rv="x1"), [("MODIFIED", "x9", "x1")], "x1",
                 id="opaque rvs: the latest event wins"),
    pytest.param(obj("a", uid="u1", rv="5"), obj("a", uid="u2", rv="9"),
                 [("DELETED", "5", None), ("ADDED", None, "9")], "9", id="new uid is a delete plus an add"),
    pytest.param(obj("a", gen=None, rv="5"), obj("a", gen=None, rv="6"), [("MODIFIED", "5", "6")], "6",
                 id="kinds without generation compare by rv"),
])
def test_upsert(held: Any, incoming: Any, expected: list[Any], kept_rv: str) -> None:
    store = ObjectStore()
    if held is not None:
        store.upsert(held)
    assert kinds(store.upsert(incoming)) == expected
    assert store.get("default", "a")["metadata"]["resourceVersion"] == kept_rv  # type: ignore[index]


def test_stale_drops_are_counted() -> None:
    store = ObjectStore()
    store.upsert(obj("a", rv="6"))
    store.upsert(obj("a", rv="5"))
    assert store.stale_drops == 1


def test_delete_of_an_earlier_incarnation_changes_nothing() -> None:
    store = ObjectStore()
    store.upsert(obj("a", uid="new", rv="9"))
    assert store.delete(obj("a", uid="old", rv="10")) == []
    assert store.get("default", "a") is not None
    assert kinds(store.delete(obj("a", uid="new", rv="11"))) == [("DELETED", "11", None)]
    assert store.delete(obj("a", uid="new", rv="12")) == [] and len(store) == 0


def test_replace_diffs_a_relist_without_duplicate_adds() -> None:
    store = ObjectStore()
    for name, rv in (("keep", "1"), ("change", "2"), ("gone", "3")):
        store.upsert(obj(name, uid=name, rv=rv))
    changes = store.replace([obj("keep", uid="keep", rv="1"), obj("change", uid="change", rv="7"),
                             obj("new", uid="new", rv="8"), {"metadata": {}}])
    assert [(t, (o or n)["metadata"]["name"]) for t, o, n in changes] == [  # type: ignore[index]
        ("DELETED", "gone"), ("MODIFIED", "change"), ("ADDED", "new")]
    assert [o["metadata"]["name"] for o in store.snapshot()] == ["change", "keep", "new"]


def test_indexes_follow_updates_and_deletes() -> None:
    store = ObjectStore()
    store.upsert(obj("a", node="n1"))
    store.add_indexer("node", lambda o: [o["node"]])
    store.upsert(obj("b", uid="b", node="n1"))
    assert [o["metadata"]["name"] for o in store.by_index("node", "n1")] == ["a", "b"]
    store.upsert(obj("a", rv="2", node="n2"))
    assert [o["metadata"]["name"] for o in store.by_index("node", "n1")] == ["b"]
    store.delete(obj("b", uid="b"))
    assert store.by_index("node", "n1") == [] and len(store.by_index("node", "n2")) == 1
    with pytest.raises(InvalidArgumentError):
        store.add_indexer("node", lambda o: [])
    with pytest.raises(KeyError):
        store.add_indexer("strict", lambda o: [o["missing"]])  # fails on a held object: not added
    store.add_indexer("picky", lambda o: [o["node"]] if o["node"] != "n3" else [1 / 0])  # type: ignore[misc]
    store.upsert(obj("c", uid="c", node="n3"))  # the indexer raises: stored, not indexed, counted
    assert store.index_errors == 1 and store.get("default", "c") is not None
    with pytest.raises(InvalidArgumentError):
        store.by_index("strict", "x")


@pytest.mark.parametrize("bad", [None, [], {"metadata": None}, {"metadata": {"name": ""}},
                                 {"metadata": {"name": "a", "uid": 5}}])
def test_objects_without_identity_are_refused(bad: Any) -> None:
    store = ObjectStore()
    with pytest.raises(InvalidArgumentError):
        store.upsert(bad)
    assert len(store) == 0


@pytest.mark.parametrize("a, b, expected", [("10", "9", True), ("9", "10", False), ("5", "5", False),
                                            ("abc", "1", None), ("", "1", None), ("\u0661", "1", None)])
def test_resource_version_comparison(a: str, b: str, expected: bool | None) -> None:
    assert newer_resource_version(a, b) is expected


LABELED = {"metadata": {"name": "x", "labels": {"app": "web", "tier": "gold"}}, "status": {"phase": "Running"}}


@pytest.mark.parametrize("selector, matches", [
    ("", True), ("app=web", True), ("app==web", True), ("app!=web", False), ("app!=db", True),
    ("missing!=x", True), ("app", True), ("!app", False), ("!missing", True), ("tier in (gold, silver)", True),
    ("tier notin (gold)", False), ("app=web,tier=silver", False), ("app=web, tier in (gold)", True),
])
def test_label_selectors(selector: str, matches: bool) -> None:
    assert label_matcher(selector)(LABELED) is matches


@pytest.mark.parametrize("selector, matches", [
    ("metadata.name=x", True), ("metadata.name!=x", False), ("status.phase==Running", True),
    ("spec.nodeName=", True), ("status.phase=Pending,metadata.name=x", False),
])
def test_field_selectors(selector: str, matches: bool) -> None:
    assert field_matcher(selector)(LABELED) is matches


@pytest.mark.parametrize("bad", ["app=(web", "a b c", "!tier in (x)"])
def test_bad_label_selectors_are_typed_errors(bad: str) -> None:
    with pytest.raises(InvalidArgumentError):
        label_matcher(bad)


@pytest.mark.parametrize("bad", ["name", ".a=b", "a in (b)"])
def test_bad_field_selectors_are_typed_errors(bad: str) -> None:
    with pytest.raises(InvalidArgumentError):
        field_matcher(bad)
