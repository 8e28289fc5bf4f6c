"""The kit's server misbehaviour: etcd snapshot restore (with and without a revision bump), "Too large resource
version", watches that end at once, continue tokens that always expire, trickled bodies."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests

from restmapper.errors import InvalidArgumentError
from restmapper.testing import FakeCluster

PATH = "/api/v1/configmaps"


def _cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": dict(data)}


def _events(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line]


def _watch(cluster: FakeCluster, rv: str) -> list[dict[str, Any]]:
    status, _, body = cluster.handle("GET", PATH, {"watch": "1", "resourceVersion": rv}, {})
    assert status == 200
    return _events(body)


def test_restore_without_bump_goes_back_and_answers_too_large() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_cm("a", v="0"))
    snap = cluster.snapshot()
    at_snapshot = cluster.resource_version
    cluster.apply_object(_cm("a", v="1"))
    cluster.apply_object(_cm("b"))
    seen = cluster.resource_version
    cluster.restore(snap)
    assert cluster.resource_version == at_snapshot
    assert [o["metadata"]["name"] for o in cluster.list_objects("configmaps")] == ["a"]
    assert cluster.get_object("configmaps", "a", "default")["data"] == {"v": "0"}  # type: ignore[index]
    [error] = _watch(cluster, seen)
    assert error["type"] == "ERROR" and error["object"]["code"] == 504
    assert error["object"]["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    written = cluster.apply_object(_cm("c"))  # reuses a resourceVersion clients saw before the restore
    assert int(written["metadata"]["resourceVersion"]) <= int(seen)


def test_restore_with_bump_and_mark_compacted_answers_every_held_version_410() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_cm("a"))
    snap = cluster.snapshot()
    cluster.apply_object(_cm("b"))
    seen = cluster.resource_version
    cluster.restore(snap, bump_revision=1000, mark_compacted=True)
    assert int(cluster.resource_version) == int(snap.resource_version) + 1000
    [error] = _watch(cluster, seen)
    assert error["type"] == "ERROR" and error["object"]["code"] == 410
    status, _, body = cluster.handle("GET", PATH, {}, {})
    assert status == 200 and json.loads(body)["metadata"]["resourceVersion"] == cluster.resource_version


def test_restore_ends_open_watches_and_checks_its_arguments() -> None:
    cluster = FakeCluster()
    snap = cluster.snapshot()
    with cluster.serve() as served:
        answer = requests.get(served.url + PATH, params={"watch": "1", "timeoutSeconds": "60"}, stream=True,
                              timeout=10)
        assert cluster.wait_for_watchers(1, 10)
        cluster.restore(snap)
        assert [line for line in answer.iter_lines() if line] == []  # it ends (a read timeout would raise)
        answer.close()
    with pytest.raises(InvalidArgumentError):
        cluster.restore(snap, bump_revision=-1)
    with pytest.raises(InvalidArgumentError):
        cluster.restore("snapshot")  # type: ignore[arg-type]


def test_watches_end_at_once_per_resource() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_cm("a"))
    cluster.end_watches_at_once("configmaps")
    assert _watch(cluster, "") == []
    status, _, body = cluster.handle("GET", "/api/v1/namespaces", {"watch": "1"}, {})
    assert status == 200 and _events(body)  # other resources still watch
    cluster.end_watches_at_once("configmaps", on=False)
    assert [e["type"] for e in _watch(cluster, "")] == ["ADDED"]


def test_every_continue_token_expires() -> None:
    cluster = FakeCluster()
    for name in "abc":
        cluster.apply_object(_cm(name))
    cluster.expire_continue_tokens()
    status, _, body = cluster.handle("GET", PATH, {"limit": "1"}, {})
    token = json.loads(body)["metadata"]["continue"]
    status, _, body = cluster.handle("GET", PATH, {"limit": "1", "continue": token}, {})
    assert status == 410 and json.loads(body)["reason"] == "Expired"
    status, _, body = cluster.handle("GET", PATH, {}, {})
    assert status == 200 and len(json.loads(body)["items"]) == 3


def test_trickled_body_arrives_slowly_but_whole() -> None:
    cluster = FakeCluster()
    cluster.apply_object(_cm("a"))
    cluster.inject(PATH, trickle=0.01)
    with cluster.serve() as served:
        started = time.monotonic()
        answer = requests.get(served.url + PATH, timeout=30)
        took = time.monotonic() - started
    assert answer.status_code == 200 and answer.json()["items"][0]["metadata"]["name"] == "a"
    assert took >= 0.01 * len(answer.content) / 8 * 0.5
    with pytest.raises(InvalidArgumentError):
        cluster.inject(PATH, trickle=-1)


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"status": "503"}, TypeError, "status"),
    ({"status": 503.0}, TypeError, "status"),
    ({"status": True}, TypeError, "status"),
    ({"status": 42}, InvalidArgumentError, "status"),
    ({"status": 600}, InvalidArgumentError, "status"),
])
def test_inject_refuses_a_status_that_is_no_http_status(options: dict[str, Any], error: type[Exception],
                                                        match: str) -> None:
    cluster = FakeCluster()
    with pytest.raises(error, match=match):
        cluster.inject(PATH, **options)
    assert cluster.handle("GET", PATH, {}, {})[0] == 200


@pytest.mark.parametrize(("path", "error"), [("api/v1/configmaps", InvalidArgumentError),
                                             ("", InvalidArgumentError), (None, TypeError),
                                             (b"/api", TypeError)])
def test_inject_refuses_a_path_without_its_leading_slash(path: Any, error: type[Exception]) -> None:
    cluster = FakeCluster()
    with pytest.raises(error, match="path"):
        cluster.inject(path, status=503)
