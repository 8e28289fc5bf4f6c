"""``Client.patch(patch_type="strategic")`` sends a strategic merge patch (``application/strategic-merge-patch+json``,
what kubectl and controller-runtime send for built-in kinds): lists with a merge key (containers by ``name``) are
merged item by item. kube-apiserver serves it for built-in kinds only: a custom resource answers 415, which the
client raises as the server's APIStatusError."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.client import served as served  # a fixture, used by name
from helpers.store import object_cache, widget_obj

from restmapper.client import Client
from restmapper.errors import APIStatusError, InvalidArgumentError
from restmapper.testing import ServedCluster


def _deployment() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:1"},
                                                          {"name": "sidecar", "image": "side:1"}]}}}}


def test_a_strategic_patch_merges_containers_by_name(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        client = Client(cache)
        client.create(_deployment())
        patch = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}}
        patched = client.patch("deploy", "web", patch, "default", patch_type="strategic")
        containers = patched["spec"]["template"]["spec"]["containers"]
        assert containers == [{"name": "app", "image": "app:2"}, {"name": "sidecar", "image": "side:1"}]
        patches = [r for r in served.cluster.requests if r.method == "PATCH"]
        assert [r.headers["Content-Type"] for r in patches] == ["application/strategic-merge-patch+json"]
        assert cache.get("deploy", "web", "default")["spec"]["template"]["spec"]["containers"] == containers


def test_a_custom_resource_answers_415(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        client = Client(cache)
        client.create(widget_obj("w", size=1))
        with pytest.raises(APIStatusError) as caught:
            client.patch("widgets", "w", {"spec": {"size": 2}}, "default", patch_type="strategic")
        assert caught.value.status == 415


def test_a_strategic_patch_is_a_mapping(served: ServedCluster) -> None:
    with object_cache(served) as cache:
        with pytest.raises(TypeError, match="strategic merge patch is a mapping"):
            Client(cache).patch("deploy", "web", [{"op": "remove", "path": "/spec"}], patch_type="strategic")
        with pytest.raises(InvalidArgumentError, match="'strategic'"):
            Client(cache).patch("deploy", "web", {}, patch_type="smp")
