"""Field-selector values are parsed as kube-apiserver parses them (apimachinery fields.ParseSelector): a value may
hold '/', ':', '{}' and anything else but an unescaped ',' or '='; '\\\\', '\\,' and '\\=' are its escapes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import cm, key, object_cache, widget_cluster

from restmapper.errors import InvalidArgumentError
from restmapper.testing import ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def secret(name: str, type_: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "default"},
            "type": type_, "data": {}}


def test_values_with_slashes_colons_and_braces_select(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(secret("tls", "kubernetes.io/tls"))
    cluster.apply_object(secret("opaque", "Opaque"))
    with object_cache(served, field_selector="type=kubernetes.io/tls") as cache:
        assert [key(o) for o in cache.list("secrets")] == ["default/tls"]
    with object_cache(served) as cache:
        assert [key(o) for o in cache.list("secrets", field_selector="type=kubernetes.io/tls")] == ["default/tls"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "x"}]}, "status": {"podIP": "fd00::1"}}
        cluster.apply_object(pod)
        assert cache.informer("pods").wait_until(lambda i: i.stats.objects == 1, timeout=10)
        assert [key(o) for o in cache.list("pods", field_selector="status.podIP=fd00::1")] == ["default/p"]
        assert cache.list("pods", field_selector="metadata.name=spec.containers{app}") == []


def test_escaped_commas_and_equals_are_part_of_the_value(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a", "default", k="x=y,z"))
    with object_cache(served) as cache:
        assert [key(o) for o in cache.list("cm", field_selector=r"data.k=x\=y\,z")] == ["default/a"]
        assert cache.list("cm", field_selector=r"data.k!=x\=y\,z") == []


@pytest.mark.parametrize("selector", ["data.k=x=y", r"data.k=x\y", "data.k=x\\", "data.k", "=x", "a..b=c"])
def test_malformed_field_selectors_are_refused(served: ServedCluster, selector: str) -> None:
    with object_cache(served) as cache, pytest.raises(InvalidArgumentError, match="invalid field selector"):
        cache.list("cm", "default", field_selector=selector)
