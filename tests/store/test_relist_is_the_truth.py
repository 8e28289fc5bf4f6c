"""A relist is the truth: after ``ObjectStore.replace`` the store holds exactly what was listed, whatever the
resourceVersions and generations say (after an etcd restore they go back), and the changes it returns, applied
to what was held, give the list: an update for every object that differs, a delete plus an add for a new UID,
nothing for an unchanged object. Within a watch stream an older object still never replaces a newer one."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from restmapper.store._objects import ObjectStore

NAMES = st.sampled_from(["a", "b", "c", "d"])
OBJECT = st.fixed_dictionaries({
    "name": NAMES, "uid": st.sampled_from(["u1", "u2"]), "rv": st.integers(1, 30), "gen": st.integers(1, 5),
    "data": st.sampled_from(["x", "y"])})


def _obj(spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": spec["name"], "namespace": "ns", "uid": f"{spec['name']}-{spec['uid']}",
                         "resourceVersion": str(spec["rv"]), "generation": spec["gen"]}, "data": spec["data"]}


def _unique(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({s["name"]: s for s in specs}.values())


@given(held=st.lists(OBJECT, max_size=6).map(_unique), listed=st.lists(OBJECT, max_size=6).map(_unique))
def test_replace_makes_the_store_hold_exactly_the_list(held: list[dict[str, Any]],
                                                       listed: list[dict[str, Any]]) -> None:
    store = ObjectStore()
    store.replace([_obj(s) for s in held])
    before = {o["metadata"]["name"]: o for o in store.snapshot()}
    changes = store.replace([_obj(s) for s in listed])
    expected = {s["name"]: _obj(s) for s in listed}
    assert {o["metadata"]["name"]: o for o in store.snapshot()} == expected
    assert store.stale_drops == 0
    # Replaying the changes on what was held gives the list, and every change is a real difference.
    state = dict(before)
    for change_type, old, new in changes:
        if change_type == "DELETED":
            assert old is not None and state.pop(old["metadata"]["name"]) is not None
        elif change_type == "ADDED":
            assert new is not None and new["metadata"]["name"] not in state
            state[new["metadata"]["name"]] = new
        else:
            assert old is not None and new is not None and old != new
            assert old["metadata"]["uid"] == new["metadata"]["uid"]
            state[new["metadata"]["name"]] = new
    assert state == expected


def test_an_older_object_from_a_watch_event_is_still_refused() -> None:
    store = ObjectStore()
    store.upsert(_obj({"name": "a", "uid": "u1", "rv": 9, "gen": 2, "data": "x"}))
    assert store.upsert(_obj({"name": "a", "uid": "u1", "rv": 5, "gen": 1, "data": "y"})) == []
    assert store.stale_drops == 1
    assert store.replace([_obj({"name": "a", "uid": "u1", "rv": 5, "gen": 1, "data": "y"})])[0][0] == "MODIFIED"


def test_a_list_in_another_version_with_the_same_content_changes_nothing() -> None:
    """A kind that moved lists its objects in the new version: the same object (apiVersion aside) is no change,
    but it is held in the new version's form."""
    store = ObjectStore()
    held = dict(_obj({"name": "a", "uid": "u1", "rv": 9, "gen": 2, "data": "x"}), apiVersion="example.com/v1")
    store.replace([held])
    moved = dict(held, apiVersion="example.com/v1beta1")
    assert store.replace([moved], representation_changed=True) == []
    assert store.get("ns", "a") == moved


def test_a_list_in_another_version_reports_a_content_change_under_the_same_resource_version() -> None:
    """After an etcd restore that reuses resourceVersions, the relist of a moved kind may carry other content
    under the same resourceVersion: that is a change, as in any relist."""
    store = ObjectStore()
    held = _obj({"name": "a", "uid": "u1", "rv": 9, "gen": 2, "data": "x"})
    store.replace([held])
    moved = dict(held, apiVersion="example.com/v1beta1", data="y")
    assert store.replace([moved], representation_changed=True) == [("MODIFIED", held, moved)]
    assert store.get("ns", "a") == moved
