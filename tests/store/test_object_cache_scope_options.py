"""The cache's scope options are checked up front and its by_kind entries resolved faithfully: namespace names are
DNS-1123 labels, by_kind keys are kinds (typed errors otherwise), two keys naming one kind are refused, a key
naming no served kind yet is logged once and applies when the kind appears (never the cache's scope for good)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import WIDGETS, cm, key, object_cache, widget_cluster, widget_obj
from helpers.watch import WIDGET, make_mapper

from restmapper.errors import InvalidArgumentError
from restmapper.model import GroupKind
from restmapper.store import ObjectCache
from restmapper.testing import ServedCluster

WIDGET_KIND = GroupKind("example.com", "Widget")


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


@pytest.mark.parametrize("namespaces", [[".."], ["a/../b"], ["a/b"], ["A_B"], ["a?labelSelector=x"], [""],
                                        ["-a"], ["a" * 64]])
def test_namespace_names_must_be_dns_labels(served: ServedCluster, namespaces: list[str]) -> None:
    with pytest.raises(InvalidArgumentError, match="not a valid namespace name"):
        ObjectCache(make_mapper(served.url), namespaces=namespaces)
    assert not served.cluster.requests


@pytest.mark.parametrize("options", [{"namespaces": {"a": 1}}, {"namespaces": iter(["a"])}, {"namespaces": "a"},
                                     {"namespaces": ["a", None]}, {"namespace": 1},
                                     {"by_kind": {"cm": {"namespaces": "a"}}}])
def test_namespaces_of_the_wrong_type_are_a_type_error(served: ServedCluster, options: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        ObjectCache(make_mapper(served.url), **options)


@pytest.mark.parametrize(("by_kind", "error"), [({123: {}}, TypeError), ({None: {}}, TypeError),
                                                ({"": {}}, InvalidArgumentError),
                                                ({"v1/ConfigMap": {}}, InvalidArgumentError),
                                                ({"cm,secrets": {}}, InvalidArgumentError)])
def test_by_kind_keys_are_checked_up_front(served: ServedCluster, by_kind: dict[Any, Any],
                                          error: type[Exception]) -> None:
    with pytest.raises(error, match="by_kind key"):
        ObjectCache(make_mapper(served.url), by_kind=by_kind)


@pytest.mark.parametrize("by_kind", [{"cm": {"namespaces": ["a"]}, "configmaps": {"namespaces": ["b"]}},
                                     {GroupKind("", "ConfigMap"): {"namespaces": ["a"]}, "cm": {}}])
def test_two_by_kind_keys_for_one_kind_are_refused(served: ServedCluster, by_kind: dict[Any, Any]) -> None:
    with object_cache(served, by_kind=by_kind) as cache, pytest.raises(InvalidArgumentError, match="twice"):
        cache.list("secrets", "a")


def test_a_by_kind_key_naming_nothing_yet_is_logged_once(served: ServedCluster,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    served.cluster.apply_object(cm("a1", "a"))
    with caplog.at_level(logging.WARNING, logger="restmapper.store"), \
            object_cache(served, by_kind={"confgmaps": {"namespaces": ["a"]}}) as cache:
        cache.list("cm", "a")
        cache.list("secrets", "a")
    warned = [r.getMessage() for r in caplog.records if "confgmaps" in r.getMessage()]
    assert len(warned) == 1 and "names no kind" in warned[0]


def test_a_by_kind_entry_applies_once_its_crd_is_installed(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.delete_crd(WIDGETS)
    with object_cache(served, by_kind={"widgets": {"namespaces": ["a"]}}) as cache:
        informer = cache.informer(WIDGET_KIND)  # a GroupKind: an informer while the kind is not served
        assert informer.wait_for_state("not_served", timeout=10)
        cluster.add_crd(WIDGET)
        cluster.apply_object(widget_obj("w1", "a"))
        cluster.apply_object(widget_obj("w2", "zzz"))
        assert informer.wait_until(lambda i: i.state == "synced", timeout=10)
        assert [key(o) for o in cache.list(WIDGET_KIND)] == ["a/w1"]
        assert [i.scope for i in cache.informers()] == ["namespace 'a'"]
        assert not [r for r in cluster.requests if r.path == "/apis/example.com/v1/widgets"]


def test_start_takes_a_list_of_kinds_not_a_string(served: ServedCluster) -> None:
    with object_cache(served, lazy=False) as cache, pytest.raises(TypeError, match=r"start\(kinds=\['cm'\]\)"):
        cache.start(kinds="cm")
