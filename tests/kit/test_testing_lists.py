"""FakeCluster lists and watches behave as kube-apiserver's: pagination, resourceVersion semantics, bookmarks,
compaction, storage teardown on CRD changes, the system namespaces, and the loopback server's shutdown.

Every expected value comes from the API server's documented behaviour, cited per test:
API concepts = https://kubernetes.io/docs/reference/using-api/api-concepts/
"""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
from helpers.kit import wait_until

from restmapper.testing import FakeCluster
from restmapper.testing.server import LoopbackHTTPServer

CMS = "/api/v1/namespaces/default/configmaps"
WIDGETS = "/apis/example.com/v1/widgets"


def cm(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace,
                                                                 "labels": labels}, "data": {"k": name}}


def crd(*versions: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": v, "served": True, "storage": i == 0} for i, v in enumerate(versions)]}}


def get(cluster: FakeCluster, path: str, **query: str) -> requests.Response:
    with cluster.mock():
        return requests.get(cluster.base_url + path, params=query, timeout=5)


def names(reply: requests.Response) -> list[str]:
    return [o["metadata"]["name"] for o in reply.json()["items"]]


def watch(cluster: FakeCluster, path: str, **query: str) -> list[dict[str, Any]]:
    reply = get(cluster, path, watch="true", **query)
    assert reply.status_code == 200, reply.text
    return [json.loads(line) for line in reply.text.splitlines()]


@pytest.fixture
def cluster() -> FakeCluster:
    c = FakeCluster.embedded()
    for i in range(5):
        c.apply_object(cm(f"cm{i}", app="a" if i % 2 else "b"))
    return c


# --- pagination ---------------------------------------------------------------------------------------------


def test_limit_and_continue_page_through_one_snapshot(cluster: FakeCluster) -> None:
    """API concepts, "Retrieving large results sets in chunks": each chunk carries ``continue`` until the last;
    every chunk is served at the first chunk's resourceVersion (a consistent snapshot), ``remainingItemCount``
    counts what is left."""
    first = get(cluster, CMS, limit="2")
    meta = first.json()["metadata"]
    assert names(first) == ["cm0", "cm1"] and meta["remainingItemCount"] == 3
    listed_rv = meta["resourceVersion"]
    cluster.apply_object(cm("cm9"))  # written after the first chunk: not in this list
    cluster.delete_object("configmaps", "cm3", "default")  # deleted after: still in this list
    second = get(cluster, CMS, limit="2", **{"continue": meta["continue"]}).json()
    assert [o["metadata"]["name"] for o in second["items"]] == ["cm2", "cm3"]
    assert second["metadata"]["resourceVersion"] == listed_rv
    third = get(cluster, CMS, limit="2", **{"continue": second["metadata"]["continue"]}).json()
    assert [o["metadata"]["name"] for o in third["items"]] == ["cm4"]
    assert "continue" not in third["metadata"] and "remainingItemCount" not in third["metadata"]


def test_continue_token_looks_like_the_api_servers(cluster: FakeCluster) -> None:
    """apiserver storage ``EncodeContinue``: URL-safe base64 of ``{"v": "meta.k8s.io/v1", "rv", "start"}``."""
    token = get(cluster, CMS, limit="1").json()["metadata"]["continue"]
    doc = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert doc["v"] == "meta.k8s.io/v1" and doc["rv"] == int(cluster.resource_version)


def test_expired_continue_token_is_410_with_an_inconsistent_continuation(cluster: FakeCluster) -> None:
    """API concepts, chunks: "if the continue token has expired ... the server responds with 410 Gone"; the Status
    carries a new token (``metadata.continue``) that continues at the latest state (apiserver etcd3 errors.go)."""
    token = get(cluster, CMS, limit="2").json()["metadata"]["continue"]
    cluster.apply_object(cm("cm10"))
    cluster.compact()
    expired = get(cluster, CMS, limit="2", **{"continue": token})
    body = expired.json()
    assert (expired.status_code, body["reason"], body["code"]) == (410, "Expired", 410)
    assert body["message"].startswith("The provided continue parameter is too old")
    rest = get(cluster, CMS, **{"continue": body["metadata"]["continue"]})
    assert names(rest) == ["cm10", "cm2", "cm3", "cm4"]  # the latest state after cm1, in key order


def test_remaining_item_count_is_omitted_with_selectors(cluster: FakeCluster) -> None:
    """API concepts, chunks: ``remainingItemCount`` is unset when the list uses a label or field selector."""
    page = get(cluster, CMS, limit="1", labelSelector="app=b").json()
    assert [o["metadata"]["name"] for o in page["items"]] == ["cm0"]
    assert "remainingItemCount" not in page["metadata"] and page["metadata"]["continue"]


@pytest.mark.parametrize(("query", "status", "fragment"), [
    ({"continue": "not a token"}, 400, "invalid continue token: continue key is not valid: illegal base64 data"),
    ({"continue": "not-a-token"}, 400, "invalid continue token: continue key is not valid: invalid JSON"),
    ({"continue": "TOKEN", "resourceVersion": "3"}, 400, "specifying resource version is not allowed"),
    ({"resourceVersionMatch": "Exact"}, 422, "resourceVersionMatch is forbidden unless resourceVersion"),
    ({"resourceVersionMatch": "Exact", "resourceVersion": "0"}, 422, 'forbidden for resourceVersion "0"'),
    ({"resourceVersionMatch": "Sometimes", "resourceVersion": "1"}, 422, "Unsupported value"),
    ({"sendInitialEvents": "true"}, 422, "sendInitialEvents is forbidden for list"),
])
def test_invalid_list_options_are_refused_as_the_api_server(cluster: FakeCluster, query: dict[str, str],
                                                           status: int, fragment: str) -> None:
    """apimachinery ``ValidateListOptions`` (422 Invalid ListOptions) and apiserver storage
    ``ValidateListOptions`` (400 for a bad continue token or a resourceVersion sent with one)."""
    if query.get("continue") == "TOKEN":
        query["continue"] = get(cluster, CMS, limit="1").json()["metadata"]["continue"]
    reply = get(cluster, CMS, **query)
    assert reply.status_code == status and fragment in reply.json()["message"]



@pytest.mark.parametrize(("start", "fragment"), [
    ("", "continue key is not valid: encoded start key empty"),
    ("../kube-system/cm0\x00", "continue key is not valid: ../kube-system/cm0"),
    ("a//b\x00", "continue key is not valid: a//b"),
])
def test_a_continue_token_cannot_start_outside_the_listed_namespace(cluster: FakeCluster, start: str,
                                                                   fragment: str) -> None:
    """apiserver ``storage.DecodeContinue``: the start key is relative to the list's key prefix and must be a clean
    path (``path.Clean`` leaves it unchanged), so a crafted token cannot range over another namespace (400)."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": int(cluster.resource_version), "start": start}).encode()
    token = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    reply = get(cluster, CMS, limit="2", **{"continue": token})
    assert reply.status_code == 400 and fragment in reply.json()["message"], reply.text


# --- list resourceVersion semantics ----------------------------------------------------------------------------


def test_exact_list_reads_the_past_and_is_410_once_compacted(cluster: FakeCluster) -> None:
    """API concepts, "Semantics for get and list": ``resourceVersionMatch=Exact`` returns data at exactly that
    resourceVersion; "if the provided resourceVersion is unavailable, the server responds with 410 Gone"."""
    then = cluster.resource_version
    cluster.apply_object(cm("cm0", app="changed"))
    cluster.delete_object("configmaps", "cm1", "default")
    past = get(cluster, CMS, resourceVersion=then, resourceVersionMatch="Exact").json()
    assert past["metadata"]["resourceVersion"] == then
    assert [o["metadata"]["name"] for o in past["items"]] == ["cm0", "cm1", "cm2", "cm3", "cm4"]
    assert past["items"][0]["metadata"]["labels"] == {"app": "b"}
    legacy = get(cluster, CMS, resourceVersion=then, limit="10").json()  # unset match + limit: exact (legacy)
    assert legacy["metadata"]["resourceVersion"] == then and len(legacy["items"]) == 5
    cluster.compact()
    gone = get(cluster, CMS, resourceVersion=then, resourceVersionMatch="Exact")
    assert gone.status_code == 410 and gone.json()["reason"] == "Expired"


def test_not_older_than_and_any_serve_the_latest_state(cluster: FakeCluster) -> None:
    """API concepts, "Semantics for get and list": NotOlderThan (and the legacy unset match without limit) returns
    data at least as new as X; ``resourceVersion="0"`` any data; unset the most recent."""
    then = cluster.resource_version
    cluster.apply_object(cm("cm7"))
    for query in ({"resourceVersion": then, "resourceVersionMatch": "NotOlderThan"}, {"resourceVersion": then},
                  {"resourceVersion": "0"}, {}):
        reply = get(cluster, CMS, **query).json()
        assert reply["metadata"]["resourceVersion"] == cluster.resource_version and "cm7" in names_of(reply)


def names_of(doc: dict[str, Any]) -> list[str]:
    return [o["metadata"]["name"] for o in doc["items"]]


def test_a_resource_version_from_the_future_is_504_too_large(cluster: FakeCluster) -> None:
    """apiserver ``storage.NewTooLargeResourceVersionError``: 504 Timeout, cause ``ResourceVersionTooLarge``,
    ``retryAfterSeconds`` 1 (what the watch cache answers when it cannot catch up)."""
    future = str(int(cluster.resource_version) + 100)
    reply = get(cluster, CMS, resourceVersion=future, resourceVersionMatch="NotOlderThan")
    body = reply.json()
    assert (reply.status_code, body["reason"]) == (504, "Timeout")
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    assert body["message"] == f"Too large resource version: {future}, current: {cluster.resource_version}"


# --- watch semantics ------------------------------------------------------------------------------------------


def test_watch_start_points(cluster: FakeCluster) -> None:
    """API concepts, "Semantics for watch": unset/"0" start with synthetic ADDED events for the current state; an
    exact resourceVersion starts with the changes after it; ``sendInitialEvents=false`` starts at most recent."""
    then = cluster.resource_version
    cluster.apply_object(cm("cm8"))
    assert len(watch(cluster, CMS)) == 6 and len(watch(cluster, CMS, resourceVersion="0")) == 6
    assert [e["object"]["metadata"]["name"] for e in watch(cluster, CMS, resourceVersion=then)] == ["cm8"]
    assert watch(cluster, CMS, sendInitialEvents="false", resourceVersionMatch="NotOlderThan") == []
    after = watch(cluster, CMS, sendInitialEvents="false", resourceVersionMatch="NotOlderThan", resourceVersion=then)
    assert [e["type"] for e in after] == ["ADDED"]


def test_send_initial_events_ends_with_the_initial_events_end_bookmark(cluster: FakeCluster) -> None:
    """API concepts, "Streaming lists": with ``sendInitialEvents=true`` the server sends the state as ADDED events,
    then a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` at the state's resourceVersion."""
    events = watch(cluster, CMS, sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                   allowWatchBookmarks="true")
    assert [e["type"] for e in events[:6]] == ["ADDED"] * 5 + ["BOOKMARK"]
    marker = events[5]["object"]["metadata"]
    assert marker == {"resourceVersion": cluster.resource_version,
                      "annotations": {"k8s.io/initial-events-end": "true"}}


@pytest.mark.parametrize(("query", "fragment"), [
    ({"sendInitialEvents": "true"}, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
    ({"resourceVersionMatch": "NotOlderThan"}, "resourceVersionMatch is forbidden for watch unless"),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "Exact"}, "Unsupported value"),
])
def test_invalid_watch_options_are_422(cluster: FakeCluster, query: dict[str, str], fragment: str) -> None:
    """apimachinery ``validateWatchOptions``."""
    reply = get(cluster, CMS, watch="true", **query)
    assert reply.status_code == 422 and fragment in reply.json()["message"]


def test_compacted_watch_is_410_with_the_oldest_available_version(cluster: FakeCluster) -> None:
    """API concepts, "410 Gone responses": a watch from a compacted resourceVersion gets an ERROR event with a
    410 Expired Status "too old resource version: X (Y)" (the watch cache's message)."""
    then = cluster.resource_version
    cluster.apply_object(cm("cm8"))
    compacted = cluster.resource_version
    cluster.compact(compacted)
    [event] = watch(cluster, CMS, resourceVersion=then)
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    assert event["object"]["message"] == f"too old resource version: {then} ({compacted})"


def test_partial_compaction_keeps_later_history(cluster: FakeCluster) -> None:
    """etcd compaction at a revision: watches from at or after it still work."""
    then = cluster.resource_version
    cluster.apply_object(cm("cm8"))
    cluster.compact(then)
    assert [e["object"]["metadata"]["name"] for e in watch(cluster, CMS, resourceVersion=then)] == ["cm8"]


def loopback_watch(url: str, path: str, seen: list[dict[str, Any]], ready: threading.Event, **query: str) -> None:
    with requests.get(url + path, params={"watch": "true", **query}, stream=True, timeout=10) as reply:
        ready.set()
        for line in reply.iter_lines():
            if line:
                seen.append(json.loads(line))


def test_bookmarks_on_demand_and_periodically() -> None:
    """API concepts, "Watch bookmarks": with ``allowWatchBookmarks`` the server sends BOOKMARK events carrying
    only the current resourceVersion (the cacher about every minute); never without it."""
    cluster = FakeCluster.embedded(bookmark_interval=None)
    with cluster.serve() as served:
        with_bm: list[dict[str, Any]] = []
        without: list[dict[str, Any]] = []
        threads = [threading.Thread(target=loopback_watch, args=(served.url, CMS, seen, threading.Event()),
                                    kwargs={"resourceVersion": cluster.resource_version, "timeoutSeconds": "3",
                                            **extra}, daemon=True)
                   for seen, extra in ((with_bm, {"allowWatchBookmarks": "true"}), (without, {}))]
        for t in threads:
            t.start()
        assert cluster.wait_for_watchers(2)
        bm_rv = cluster.resource_version
        cluster.send_bookmarks()
        assert wait_until(lambda: len(with_bm) == 1)
        cluster.apply_object(cm("after"))
        cluster.drop_watches()
        for t in threads:
            t.join(10)
    assert [e["type"] for e in with_bm] == ["BOOKMARK", "ADDED"]
    assert with_bm[0]["object"] == {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": bm_rv}}
    assert [e["type"] for e in without] == ["ADDED"]
    periodic = FakeCluster.embedded(bookmark_interval=0.05)
    with periodic.serve() as served:
        seen: list[dict[str, Any]] = []
        t = threading.Thread(target=loopback_watch, args=(served.url, CMS, seen, threading.Event()),
                             kwargs={"resourceVersion": "1", "timeoutSeconds": "30", "allowWatchBookmarks": "1"},
                             daemon=True)
        t.start()
        assert wait_until(lambda: sum(e["type"] == "BOOKMARK" for e in seen) >= 3)
        periodic.drop_watches()
        t.join(10)


def test_crd_change_or_delete_ends_watches_on_its_resources() -> None:
    """apiextensions-apiserver ``crdHandler.updateCustomResourceDefinition``/``removeStorage_locked``: a CRD whose
    spec or accepted names change, or that is deleted, has its storage torn down, which ends open watches on
    its resources (after the DELETED events of its objects, for a delete)."""
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("v1", "v2"))
    cluster.apply_object({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    with cluster.serve() as served:
        for change in ("unserve", "delete"):
            seen: list[dict[str, Any]] = []
            t = threading.Thread(target=loopback_watch, args=(served.url, WIDGETS, seen, threading.Event()),
                                 kwargs={"resourceVersion": cluster.resource_version, "timeoutSeconds": "30"},
                                 daemon=True)
            t.start()
            assert cluster.wait_for_watchers(1)
            if change == "unserve":
                cluster.set_served("widgets.example.com", False, version="v2")
            else:
                cluster.delete_crd("widgets.example.com")
            t.join(10)
            assert not t.is_alive(), f"the watch did not end on {change}"
            assert [e["type"] for e in seen] == ([] if change == "unserve" else ["DELETED"])
            assert cluster.wait_for_watchers(0) or cluster.open_watches == 0


def test_status_only_crd_changes_keep_watches_open() -> None:
    """``updateCustomResourceDefinition`` ignores updates where neither spec nor accepted names changed."""
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("v1"), established_after=1000)
    with cluster.serve() as served:
        seen: list[dict[str, Any]] = []
        t = threading.Thread(target=loopback_watch, args=(served.url, "/apis/apiextensions.k8s.io/v1/"
                                                          "customresourcedefinitions", seen, threading.Event()),
                             kwargs={"resourceVersion": cluster.resource_version, "timeoutSeconds": "30"}, daemon=True)
        t.start()
        assert cluster.wait_for_watchers(1)
        cluster.establish("widgets.example.com")
        cluster.apply_object({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
        assert cluster.open_watches == 1
        cluster.drop_watches()
        t.join(10)
    assert [e["type"] for e in seen] == ["MODIFIED"]


# --- namespaces and the server ---------------------------------------------------------------------------------


def test_system_namespaces_exist_in_every_new_cluster() -> None:
    """kube-apiserver's system namespaces controller creates default, kube-system, kube-public and
    kube-node-lease (Namespaces docs, "Initial namespaces")."""
    for c in (FakeCluster(), FakeCluster.embedded(mode="legacy")):
        assert names(get(c, "/api/v1/namespaces")) == ["default", "kube-node-lease", "kube-public", "kube-system"]
        ns = c.get_object("namespaces", "kube-system")
        assert ns is not None and ns["status"] == {"phase": "Active"}
        assert ns["metadata"]["labels"] == {"kubernetes.io/metadata.name": "kube-system"}
    wiped = FakeCluster()
    wiped.restart(keep_objects=False)
    assert wiped.get_object("namespaces", "default") is not None


def test_serve_exit_closes_keep_alive_connections() -> None:
    cluster = FakeCluster.embedded()
    with cluster.serve() as served:
        parts = urlsplit(served.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
        conn.request("GET", "/version")
        first = conn.getresponse()
        assert first.status == 200 and first.getheader("Connection") != "close"
        first.read()
    before = cluster.request_count()
    with pytest.raises((http.client.HTTPException, ConnectionError)):
        conn.request("GET", "/version")
        conn.getresponse()
    conn.close()
    assert cluster.request_count() == before


@pytest.mark.parametrize("error", [BrokenPipeError, ConnectionResetError, ConnectionAbortedError])
def test_a_client_that_went_away_prints_no_traceback(error: type[OSError], capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    server = LoopbackHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler, threading.Event())
    try:
        try:
            raise error("client went away")
        except OSError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise RuntimeError("a real bug")
        except RuntimeError:
            server.handle_error(None, ("127.0.0.1", 1))
        assert "RuntimeError" in capsys.readouterr().err
    finally:
        server.server_close()

