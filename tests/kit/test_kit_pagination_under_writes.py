"""A paginated list from the kit reads one consistent state, whatever is written between its pages.

API concepts, "Retrieving large results sets in chunks" (https://kubernetes.io/docs/reference/using-api/api-concepts/):
every chunk is served at the first chunk's resourceVersion, so the pages together are exactly the list a single
request would have returned then: no object skipped or repeated, none written later, every deleted one still
there; ``remainingItemCount`` (without selectors) counts what the later pages hold. The same holds for a
namespaced list, a selector, and after the server's state is replaced (an etcd restore, a restart that forgets
objects), and a watch-list's initial events are the state when the watch starts.
"""

from __future__ import annotations

import contextlib
from typing import Any

import requests
from helpers.properties import examples
from hypothesis import given
from hypothesis import strategies as st

from restmapper.testing import FakeCluster

NAMESPACES = ("a", "b")
NAMES = tuple(f"cm{i:02d}" for i in range(12))

# A write between two pages: ("put", ns, name, label) creates or updates, ("delete", ns, name), ("other",) writes
# another resource (the resourceVersion moves on, the configmaps do not change).
_WRITE = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(NAMESPACES), st.sampled_from(NAMES), st.sampled_from("xy")),
    st.tuples(st.just("delete"), st.sampled_from(NAMESPACES), st.sampled_from(NAMES)),
    st.tuples(st.just("other")),
)


def cm(namespace: str, name: str, label: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace,
                                                                 "labels": {"app": label}}, "data": {"v": label}}


def apply(cluster: FakeCluster, write: tuple[str, ...], step: int) -> None:
    if write[0] == "put":
        cluster.apply_object(cm(write[1], write[2], write[3]))
    elif write[0] == "delete":
        with contextlib.suppress(KeyError):  # deleting what is not there changes nothing
            cluster.delete_object("configmaps", write[2], write[1])
    else:
        cluster.apply_object({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "a"},
                              "data": {"step": str(step)}})


def get(cluster: FakeCluster, path: str, **query: str) -> dict[str, Any]:
    with cluster.mock():
        reply = requests.get(cluster.base_url + path, params=query, timeout=5)
    assert reply.status_code == 200, reply.text
    doc: dict[str, Any] = reply.json()
    return doc


def seen(items: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(o["metadata"]["namespace"], o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in items]


def page_through(cluster: FakeCluster, path: str, limit: int, writes: list[tuple[str, ...]],
                 **query: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Read ``path`` in pages of ``limit``, applying one write after each page; return the pages' items and the
    metadata of each page."""
    items: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    params = {"limit": str(limit), **query}
    step = 0
    while True:
        doc = get(cluster, path, **params)
        items += doc["items"]
        metas.append(doc["metadata"])
        if "continue" not in doc["metadata"]:
            return items, metas
        apply(cluster, writes[step % len(writes)], step)
        step += 1
        params = {"limit": str(limit), "continue": doc["metadata"]["continue"], **query}


def seeded(initial: list[tuple[str, str, str]]) -> FakeCluster:
    cluster = FakeCluster(history_limit=10_000)
    for namespace in NAMESPACES:
        cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for namespace, name, label in initial:
        cluster.apply_object(cm(namespace, name, label))
    return cluster


@examples(30)
@given(initial=st.lists(st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES), st.sampled_from("xy")),
                        max_size=20),
       writes=st.lists(_WRITE, min_size=1, max_size=8), limit=st.integers(1, 5),
       where=st.sampled_from(["/api/v1/configmaps", "/api/v1/namespaces/a/configmaps"]),
       selector=st.sampled_from(["", "app=x"]))
def test_pages_are_the_single_list_at_the_first_pages_resource_version(
        initial: list[tuple[str, str, str]], writes: list[tuple[str, ...]], limit: int, where: str,
        selector: str) -> None:
    cluster = seeded(initial)
    query = {"labelSelector": selector} if selector else {}
    whole = get(cluster, where, **query)
    items, metas = page_through(cluster, where, limit, writes, **query)
    assert seen(items) == seen(whole["items"])
    assert {m["resourceVersion"] for m in metas} == {whole["metadata"]["resourceVersion"]}
    read = 0
    for meta, count in zip(metas, _page_sizes(metas, items, limit), strict=True):
        read += count
        if selector or "continue" not in meta:
            assert "remainingItemCount" not in meta
        else:
            assert meta["remainingItemCount"] == len(items) - read


def _page_sizes(metas: list[dict[str, Any]], items: list[dict[str, Any]], limit: int) -> list[int]:
    """Every page but the last is full."""
    full = [limit] * (len(metas) - 1)
    return [*full, len(items) - sum(full)]


def test_a_list_after_a_restore_reads_the_restored_objects() -> None:
    """``FakeCluster.restore`` replaces every object without an event: a list started after it, and the pages
    of one started before it, read the restored state, never the state an earlier list read."""
    cluster = seeded([("a", "cm00", "x"), ("a", "cm01", "x")])
    saved = cluster.snapshot()
    cluster.apply_object(cm("a", "cm02", "x"))
    before = get(cluster, "/api/v1/namespaces/a/configmaps", limit="1")
    assert [o["metadata"]["name"] for o in before["items"]] == ["cm00"]
    cluster.restore(saved)
    assert [o["metadata"]["name"] for o in get(cluster, "/api/v1/namespaces/a/configmaps")["items"]] == [
        "cm00", "cm01"]
    rest = get(cluster, "/api/v1/namespaces/a/configmaps", **{"continue": before["metadata"]["continue"]})
    assert [o["metadata"]["name"] for o in rest["items"]] == ["cm01"]  # the restored state: cm02 never existed


def test_a_restart_that_forgets_objects_is_seen_by_the_next_list() -> None:
    cluster = seeded([("a", "cm00", "x")])
    assert len(get(cluster, "/api/v1/namespaces/a/configmaps")["items"]) == 1
    cluster.restart(keep_objects=False)
    cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    assert get(cluster, "/api/v1/namespaces/a/configmaps")["items"] == []


def test_a_watch_lists_initial_events_are_the_state_when_it_starts() -> None:
    """A list read the state first; objects written after it are in a later watch-list's initial events, in key
    order, and a list of the past still reads the past."""
    cluster = seeded([("a", "cm05", "x")])
    listed = get(cluster, "/api/v1/namespaces/a/configmaps", limit="1")
    cluster.apply_object(cm("a", "cm01", "y"))
    cluster.delete_object("configmaps", "cm05", "a")
    with cluster.mock():
        reply = requests.get(cluster.base_url + "/api/v1/namespaces/a/configmaps", timeout=5, params={
            "watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
            "allowWatchBookmarks": "true"})
    lines = [line for line in reply.text.splitlines() if '"ADDED"' in line]
    assert len(lines) == 1 and '"cm01"' in lines[0]
    past = get(cluster, "/api/v1/namespaces/a/configmaps", resourceVersion=listed["metadata"]["resourceVersion"],
               resourceVersionMatch="Exact")
    assert [o["metadata"]["name"] for o in past["items"]] == ["cm05"]


def test_a_continue_token_holds_the_key_relative_to_the_listed_namespace() -> None:
    cluster = seeded([(namespace, name, "x") for namespace in NAMESPACES for name in NAMES[:4]])
    first = get(cluster, "/api/v1/namespaces/a/configmaps", limit="2")
    assert [o["metadata"]["name"] for o in first["items"]] == ["cm00", "cm01"]
    token = first["metadata"]["continue"]
    elsewhere = get(cluster, "/api/v1/namespaces/b/configmaps", limit="2", **{"continue": token})
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in elsewhere["items"]] == [("b", "cm02"),
                                                                                               ("b", "cm03")]
