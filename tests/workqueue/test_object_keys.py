"""Work-queue keys: ``object_key`` / ``split_object_key`` round-trip every object a cache holds, namespaced or
cluster-scoped, and refuse what is not a key (as client-go's MetaNamespaceKeyFunc / SplitMetaNamespaceKey)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from restmapper.errors import InvalidArgumentError
from restmapper.store import ObjectCache, object_key, split_object_key
from restmapper.testing import FakeCluster

_NAME = st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,20}[a-z0-9])?", fullmatch=True)


@given(name=_NAME, namespace=st.none() | _NAME)
def test_a_key_splits_back_into_namespace_and_name(name: str, namespace: str | None) -> None:
    meta = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    key = object_key({"metadata": meta})
    assert key == (name if namespace is None else f"{namespace}/{name}")
    assert split_object_key(key) == (namespace, name)


def test_keys_of_cached_objects_read_them_back(object_cache: ObjectCache, restmapper_cluster: FakeCluster) -> None:
    restmapper_cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                     "metadata": {"name": "settings", "namespace": "default"}})
    restmapper_cluster.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    for kind, name in (("configmaps", "settings"), ("namespaces", "team-a")):
        obj = next(o for o in object_cache.list(kind) if o["metadata"]["name"] == name)
        namespace, got_name = split_object_key(object_key(obj))
        assert object_cache.get(kind, got_name, namespace)["metadata"]["uid"] == obj["metadata"]["uid"]


def test_an_empty_namespace_is_cluster_scoped() -> None:
    assert object_key({"metadata": {"name": "n", "namespace": ""}}) == "n"


@pytest.mark.parametrize("obj", [{}, {"metadata": {}}, {"metadata": {"name": ""}}, {"metadata": {"name": 3}},
                                 {"metadata": {"name": "a/b"}}, {"metadata": {"name": "a", "namespace": "x/y"}},
                                 {"metadata": {"name": "a", "namespace": 7}}])
def test_an_object_without_a_usable_name_has_no_key(obj: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentError):
        object_key(obj)


@pytest.mark.parametrize("key", ["", "/", "ns/", "/name", "a/b/c"])
def test_what_object_key_cannot_make_does_not_split(key: str) -> None:
    with pytest.raises(InvalidArgumentError, match="not a key made by object_key"):
        split_object_key(key)


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        object_key("default/a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        split_object_key(("default", "a"))  # type: ignore[arg-type]
