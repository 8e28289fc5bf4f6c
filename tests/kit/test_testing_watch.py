"""FakeCluster watches: events after a resourceVersion, bookmarks, 410 after compaction, drops and restarts."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import requests

from restmapper.testing import FakeCluster

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CMS = "/api/v1/namespaces/default/configmaps"


def crd(plural: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": plural, "kind": plural.title()},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def mock_watch(cluster: FakeCluster, path: str, **query: str) -> list[dict[str, Any]]:
    with cluster.mock():
        reply = requests.get(cluster.base_url + path, params={"watch": "true", **query}, timeout=5)
    assert reply.status_code == 200
    return [json.loads(line) for line in reply.text.splitlines()]


def test_list_then_watch_from_its_resource_version() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("widgets"))
    with cluster.mock():
        listed = requests.get(cluster.base_url + CRDS, timeout=5).json()
    rv = listed["metadata"]["resourceVersion"]
    cluster.add_crd(crd("gizmos"))
    cluster.set_accepted_names("gizmos.example.com", short_names=["gz"])
    cluster.delete_crd("widgets.example.com")
    events = mock_watch(cluster, CRDS, resourceVersion=rv)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "gizmos.example.com"), ("MODIFIED", "gizmos.example.com"), ("DELETED", "widgets.example.com")]
    assert all(e["object"]["kind"] == "CustomResourceDefinition" for e in events)
    assert int(events[-1]["object"]["metadata"]["resourceVersion"]) > int(rv)


def test_watch_without_resource_version_starts_with_current_state_and_bookmark() -> None:
    cluster = FakeCluster.embedded()
    cluster.apply_object(cm("a"))
    cluster.apply_object({**cm("b"), "metadata": {"name": "b", "namespace": "other"}})
    events = mock_watch(cluster, CMS, allowWatchBookmarks="true", sendInitialEvents="true",
                        resourceVersionMatch="NotOlderThan")
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert events[2]["object"] == {"kind": "ConfigMap", "apiVersion": "v1",
                                   "metadata": {"resourceVersion": cluster.resource_version}}
    everywhere = mock_watch(cluster, "/api/v1/configmaps", resourceVersion="0")
    assert sorted(e["object"]["metadata"]["name"] for e in everywhere) == ["a", "b"]


def test_watch_filters_by_resource_namespace_and_name() -> None:
    cluster = FakeCluster.embedded()
    rv = cluster.resource_version
    cluster.apply_object(cm("a"))
    cluster.apply_object(cm("b"))
    cluster.apply_object({**cm("a"), "metadata": {"name": "a", "namespace": "other"}})
    cluster.apply_object({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}})
    assert len(mock_watch(cluster, CMS, resourceVersion=rv)) == 2
    named = mock_watch(cluster, CMS, resourceVersion=rv, fieldSelector="metadata.name=a")
    assert [e["object"]["metadata"]["namespace"] for e in named] == ["default"]


@pytest.mark.parametrize("how", ["compact", "history_limit", "restart"])
def test_too_old_resource_version_is_410_expired(how: str) -> None:
    cluster = FakeCluster.empty(history_limit=2)
    cluster.add_crd(crd("firsts"))  # resourceVersion "0" would mean "current state", not "from the start"
    rv = cluster.resource_version
    cluster.add_crd(crd("widgets"))
    if how == "compact":
        cluster.compact()
    elif how == "restart":
        cluster.restart()
        assert cluster.get_crd("widgets.example.com") is not None
    else:
        cluster.add_crd(crd("gizmos"))
        cluster.add_crd(crd("doohickeys"))
    events = mock_watch(cluster, CRDS, resourceVersion=rv)
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith("too old resource version")
    assert mock_watch(cluster, CRDS, resourceVersion=cluster.resource_version) == []


def test_restart_can_forget_objects() -> None:
    cluster = FakeCluster.embedded()
    cluster.apply_object(cm("a"))
    cluster.restart(keep_objects=False)
    assert cluster.list_objects("configmaps") == []
    assert cluster.crds()


def test_apiservice_watch_sees_availability_changes() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("widgets"))
    rv = mock_watch(cluster, "/apis/apiregistration.k8s.io/v1/apiservices", allowWatchBookmarks="1")[-1][
        "object"]["metadata"]["resourceVersion"]
    cluster.set_available("v1.example.com", False, reason="ServiceNotFound")
    cluster.set_available("v1.example.com", True)
    events = mock_watch(cluster, "/apis/apiregistration.k8s.io/v1/apiservices", resourceVersion=rv)
    assert [(e["type"], e["object"]["status"]["conditions"][0]["status"]) for e in events] == [
        ("MODIFIED", "False"), ("MODIFIED", "True")]


def test_mock_watch_can_wait_for_a_first_event() -> None:
    cluster = FakeCluster.empty()
    cluster.mock_watch_wait = None  # until timeoutSeconds
    cluster.add_crd(crd("firsts"))
    rv = cluster.resource_version
    result: list[list[dict[str, Any]]] = []
    thread = threading.Thread(target=lambda: result.append(mock_watch(cluster, CRDS, resourceVersion=rv,
                                                                      timeoutSeconds="30")))
    thread.start()
    assert cluster.wait_for_watchers(1)
    cluster.add_crd(crd("widgets"))
    thread.join(10)
    assert [e["type"] for e in result[0]] == ["ADDED"]


# --- loopback streaming ---------------------------------------------------------------------------------------


class Streamer:
    """Reads a loopback watch on a thread, handing each event to the test through a condition."""

    def __init__(self, url: str, **query: str) -> None:
        self.events: list[dict[str, Any]] = []
        self.ended = threading.Event()
        self._cond = threading.Condition()
        self._reply = requests.get(url, params={"watch": "1", **query}, stream=True, timeout=10)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for line in self._reply.iter_lines():
                if line:
                    with self._cond:
                        self.events.append(json.loads(line))
                        self._cond.notify_all()
        finally:
            self.ended.set()

    def wait_for(self, n: int) -> list[dict[str, Any]]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.events) >= n, 10), self.events
            return list(self.events)


def test_loopback_streams_in_real_time_and_drop_ends_streams() -> None:
    cluster = FakeCluster.embedded()
    rv = cluster.resource_version
    with cluster.serve() as served:
        crds = Streamer(served.url + CRDS, resourceVersion=rv)
        cms = Streamer(served.url + CMS, resourceVersion=rv)
        assert cluster.wait_for_watchers(2)
        assert cluster.open_watches == 2
        cluster.add_crd(crd("widgets"))
        assert crd_event(crds.wait_for(1)[0]) == ("ADDED", "widgets.example.com")
        cluster.apply_object(cm("a", k="1"))
        cluster.apply_object(cm("a", k="2"))
        assert [e["type"] for e in cms.wait_for(2)] == ["ADDED", "MODIFIED"]
        assert not crds.ended.is_set()
        cluster.drop_watches()
        assert crds.ended.wait(10) and cms.ended.wait(10)
        assert len(crds.events) == 1 and len(cms.events) == 2
        restarted = Streamer(served.url + CMS, resourceVersion=rv)
        assert cluster.wait_for_watchers(1)
        cluster.restart()
        assert restarted.ended.wait(10)
        assert [e["type"] for e in Streamer(served.url + CMS, resourceVersion=rv).wait_for(1)] == ["ERROR"]


def test_loopback_timeout_ends_with_a_bookmark_and_server_stop_ends_streams() -> None:
    cluster = FakeCluster.empty()
    cluster.add_crd(crd("firsts"))
    with cluster.serve() as served:
        timed = Streamer(served.url + CRDS, resourceVersion=cluster.resource_version, timeoutSeconds="0",
                         allowWatchBookmarks="true")
        assert timed.ended.wait(10)
        assert [e["type"] for e in timed.events] == ["BOOKMARK"]
        open_stream = Streamer(served.url + CRDS, resourceVersion=cluster.resource_version)
        assert cluster.wait_for_watchers(1)
    assert open_stream.ended.wait(10)
    assert cluster.wait_for_watchers(1, timeout=0) is False


def crd_event(event: dict[str, Any]) -> tuple[str, str]:
    return event["type"], event["object"]["metadata"]["name"]


@pytest.mark.parametrize("spelling", ["1", "t", "T", "TRUE", "true", "True"])
def test_watch_parameter_takes_every_spelling_of_true_the_api_server_takes(spelling: str) -> None:
    # kube-apiserver parses ``watch`` with Go's strconv.ParseBool; kubernetes_asyncio sends ``watch=True``.
    cluster = FakeCluster.embedded()
    cluster.apply_object(cm("a"))
    with cluster.mock():
        reply = requests.get(cluster.base_url + CMS, params={"watch": spelling, "timeoutSeconds": "1"}, timeout=5)
    first = json.loads(reply.text.splitlines()[0])
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "a")
