"""The kit serves WatchList (``sendInitialEvents``, KEP-3157) or refuses it exactly as an older kube-apiserver does,
so a client's fallback to a paginated list can be tested.

Expected answers come from apimachinery's ``ValidateListOptions``: 1.27+ ``validateWatchOptions`` adds
``sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`` when the gate is off (the
gate: alpha off in 1.27-1.31, on in 1.32, off in 1.33, on from 1.34); before 1.27 ``ListOptions`` has no
``sendInitialEvents`` (ignored) and a watch with any ``resourceVersionMatch`` is "forbidden for watch".
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster

CMS = "/api/v1/namespaces/default/configmaps"
WATCH_LIST = {"watch": "true", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
              "allowWatchBookmarks": "true", "resourceVersion": ""}  # what client-go's reflector sends first


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def get(cluster: FakeCluster, path: str, **query: str) -> requests.Response:
    with cluster.mock():
        return requests.get(cluster.base_url + path, params=query, timeout=5)


def events(reply: requests.Response) -> list[dict[str, Any]]:
    assert reply.status_code == 200, reply.text
    return [json.loads(line) for line in reply.text.splitlines()]


def with_objects(**kwargs: Any) -> FakeCluster:
    cluster = FakeCluster(**kwargs)
    for name in ("a", "b"):
        cluster.apply_object(cm(name))
    return cluster


def test_a_current_server_streams_the_list_and_ends_it_with_the_initial_events_bookmark() -> None:
    cluster = with_objects()
    assert cluster.watch_list is True
    seen = events(get(cluster, CMS, **WATCH_LIST))
    assert [e["type"] for e in seen[:3]] == ["ADDED", "ADDED", "BOOKMARK"]
    assert seen[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


@pytest.mark.parametrize("kwargs", [{"watch_list": False}, {"release": "1.27"}])
def test_a_server_with_the_watch_list_gate_off_refuses_send_initial_events_with_422(kwargs: dict[str, Any]) -> None:
    cluster = with_objects(**kwargs)
    assert cluster.watch_list is False
    reply = get(cluster, CMS, **WATCH_LIST)
    body = reply.json()
    assert (reply.status_code, body["kind"], body["reason"], body["code"]) == (422, "Status", "Invalid", 422)
    assert body["message"] == ('ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: '
                               "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled")
    assert body["details"] == {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [{
        "reason": "FieldValueForbidden", "field": "sendInitialEvents",
        "message": "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}]}


def test_with_the_gate_off_every_other_read_still_works() -> None:
    """What a client falls back to: a paginated list, then a watch from its resourceVersion."""
    cluster = with_objects(watch_list=False)
    first = get(cluster, CMS, limit="1").json()
    rest = get(cluster, CMS, limit="1", **{"continue": first["metadata"]["continue"]}).json()
    assert [o["metadata"]["name"] for o in first["items"] + rest["items"]] == ["a", "b"]
    rv = rest["metadata"]["resourceVersion"]
    cluster.apply_object(cm("c"))
    assert [e["object"]["metadata"]["name"] for e in events(get(cluster, CMS, watch="true", resourceVersion=rv))] \
        == ["c"]
    refused = get(cluster, CMS, watch="true", sendInitialEvents="false", resourceVersionMatch="NotOlderThan")
    assert refused.status_code == 422  # any sendInitialEvents (the Go field is set), not only "true"


def test_the_gate_can_be_switched_on_a_running_cluster() -> None:
    cluster = with_objects(release="1.27", watch_list=True)
    assert get(cluster, CMS, **WATCH_LIST).status_code == 200
    cluster.watch_list = False
    assert get(cluster, CMS, **WATCH_LIST).status_code == 422


def test_a_server_before_1_27_refuses_the_resource_version_match_of_a_watch_list_request() -> None:
    cluster = with_objects(release="1.20")
    assert cluster.watch_list is False
    body = get(cluster, CMS, **WATCH_LIST).json()
    assert body["code"] == 422
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
        "for watch, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
        "provided]")
    assert [c["field"] for c in body["details"]["causes"]] == ["resourceVersionMatch"] * 2
    with_rv = get(cluster, CMS, **{**WATCH_LIST, "resourceVersion": "0"}).json()
    assert with_rv["message"].endswith("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch")


def test_a_server_before_1_27_ignores_send_initial_events() -> None:
    """Without ``resourceVersionMatch`` the unknown parameter is dropped: a plain watch from the current state,
    with no initial-events-end bookmark (a client waiting for one must give up and list); lists ignore it too."""
    cluster = with_objects(release="1.20")
    seen = events(get(cluster, CMS, watch="true", sendInitialEvents="true", allowWatchBookmarks="true"))
    assert [e["type"] for e in seen] == ["ADDED", "ADDED", "BOOKMARK"]
    assert "annotations" not in seen[2]["object"]["metadata"]
    listed = get(cluster, CMS, sendInitialEvents="true")
    assert listed.status_code == 200 and len(listed.json()["items"]) == 2
    assert get(FakeCluster(), CMS, sendInitialEvents="true").status_code == 422  # 1.27+: forbidden for list


def test_watch_list_cannot_be_served_by_a_release_that_predates_it() -> None:
    with pytest.raises(InvalidArgumentError, match="predates WatchList") as refused:
        FakeCluster(release="1.20", watch_list=True)
    assert "watch_list=False" in str(refused.value) and "1.27" in str(refused.value)
    FakeCluster(release="1.20", watch_list=False)


def test_watch_list_cannot_be_switched_on_at_run_time_for_a_release_that_predates_it() -> None:
    cluster = with_objects(release="1.20")
    with pytest.raises(InvalidArgumentError, match="predates WatchList"):
        cluster.watch_list = True
    assert get(cluster, CMS, **WATCH_LIST).status_code == 422  # still the 1.20 answer


def test_watch_list_takes_only_a_bool_at_run_time() -> None:
    cluster = with_objects(release="1.35")
    with pytest.raises(TypeError, match="watch_list must be True or False, not str"):
        cluster.watch_list = "false"  # type: ignore[assignment]
    assert cluster.watch_list is True
    cluster.watch_list = False
    assert get(cluster, CMS, **WATCH_LIST).status_code == 422
