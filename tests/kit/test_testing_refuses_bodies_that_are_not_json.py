"""The kit answers 400 for a request body that is not JSON, as kube-apiserver's strict decoder does: ``NaN`` and
``Infinity`` (which Python's ``json`` reads) and a document nested too deeply, for every verb with a JSON body;
nothing is stored, so watches and lists never carry a value no JSON reader parses."""

from __future__ import annotations

import pytest
import requests

from restmapper.testing import FakeCluster

CMS = "/api/v1/namespaces/default/configmaps"
CM = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n","namespace":"default"},"data":{"k":%s}}'
PUT = CM.replace('"n"', '"a"')
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("method", "path", "body", "content_type"), [
    ("POST", CMS, CM % "NaN", "application/json"),
    ("POST", CMS, CM % "Infinity", "application/json"),
    ("PUT", CMS + "/a", PUT % "-Infinity", "application/json"),
    ("PATCH", CMS + "/a", '{"data":{"k":NaN}}', "application/merge-patch+json"),
    ("PATCH", CMS + "/a", '[{"op":"add","path":"/data/k","value":NaN}]', "application/json-patch+json"),
    ("PATCH", CMS + "/a", '{"data":{"k":' + DEEP + "}}", "application/merge-patch+json"),
    ("POST", CMS, DEEP, "application/json"),
    ("DELETE", CMS + "/a", '{"gracePeriodSeconds":NaN}', "application/json"),
], ids=["create-nan", "create-inf", "update-inf", "merge-nan", "json-patch-nan", "patch-deep", "create-deep",
        "delete-options-nan"])
def test_a_body_that_is_not_json_is_400_and_stores_nothing(method: str, path: str, body: str,
                                                           content_type: str) -> None:
    cluster = FakeCluster.embedded()
    cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "a", "namespace": "default"}, "data": {"k": "1"}})
    with cluster.mock():
        reply = requests.request(method, cluster.base_url + path, data=body,
                                 headers={"Content-Type": content_type}, timeout=5)
    assert reply.status_code == 400, reply.text
    assert reply.json()["reason"] == "BadRequest"
    assert cluster.get_object("configmaps", "a", "default")["data"] == {"k": "1"}
    assert cluster.get_object("configmaps", "n", "default") is None
