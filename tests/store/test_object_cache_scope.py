"""ObjectCache scoped by the server: per-namespace reflectors, selectors on list and watch, metadata-only objects,
per-kind overrides, ready transforms, no surprise informers (DESIGN 5.9). The kit's recorded requests show what
reached the server; handlers are checked with the Mirror (no duplicate add, no unknown delete)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.store import WIDGETS, Mirror, cm, key, object_cache, widget_cluster, widget_obj

from restmapper.errors import (
    APIStatusError,
    ForbiddenError,
    InformerNotStartedError,
    InvalidArgumentError,
    OutsideScopeError,
)
from restmapper.model import GroupKind
from restmapper.store import strip_last_applied, strip_managed_fields
from restmapper.testing import FakeCluster, ServedCluster

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
META_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def labelled(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    obj = cm(name, namespace, x="1")
    obj["metadata"]["labels"] = labels
    return obj


def requests_to(cluster: FakeCluster, path: str) -> list[dict[str, str]]:
    """The query of every GET of ``path`` (lists and watches)."""
    return [r.query for r in cluster.requests if r.path == path and r.method == "GET"]


def accepts(cluster: FakeCluster, path: str) -> set[tuple[bool, str]]:
    """``(is a watch, Accept)`` of every GET of ``path``."""
    return {("watch" in r.query, r.headers.get("Accept", "")) for r in cluster.requests
            if r.path == path and r.method == "GET"}


# --- namespaces --------------------------------------------------------------------------------------------------

def test_namespaces_list_and_watch_per_namespace_and_reads_merge(served: ServedCluster, watch_list: bool) -> None:
    cluster = served.cluster
    for name, ns in (("a1", "a"), ("b1", "b"), ("c1", "c")):
        cluster.apply_object(cm(name, ns))
    with object_cache(served, namespaces=["a", "b"], watch_list=watch_list) as cache:
        assert [o["metadata"]["name"] for o in cache.list("cm")] == ["a1", "b1"]
        assert cache.get("cm", "b1", "b")["metadata"]["namespace"] == "b"
        assert cluster.wait_for_watchers(2, 10)
        for ns in ("a", "b"):
            queries = requests_to(cluster, f"/api/v1/namespaces/{ns}/configmaps")
            syncs = [q for q in queries if "watch" not in q or q.get("sendInitialEvents") == "true"]
            assert syncs and all(("watch" in q) == watch_list for q in syncs)
            assert any("watch" in q and "sendInitialEvents" not in q for q in queries) != watch_list
        assert requests_to(cluster, "/api/v1/configmaps") == []
        assert requests_to(cluster, "/api/v1/namespaces/c/configmaps") == []
        with pytest.raises(OutsideScopeError) as caught:
            cache.get("cm", "c1", "c")
        assert caught.value.kind == "ConfigMap" and "namespace 'c'" in str(caught.value)
        with pytest.raises(OutsideScopeError):
            cache.list("cm", "c")
        with pytest.raises(InvalidArgumentError, match="give a namespace"):
            cache.get("cm", "a1")
        # Cluster-scoped kinds ignore the namespaces.
        assert "default" in {o["metadata"]["name"] for o in cache.list("namespaces")}
        assert requests_to(cluster, "/api/v1/namespaces")
        mirror = Mirror()
        mirror.attach(cache.informer("cm"))
        cluster.apply_object(cm("a2", "a"))
        cluster.apply_object(cm("c2", "c"))
        cluster.delete_object("configmaps", "b1", "b")
        mirror.wait(lambda m: sorted(m.state) == ["a/a1", "a/a2"])  # each namespace's watch in its own order
        assert sorted(e[:2] for e in mirror.log[2:]) == [("ADDED", "a/a2"), ("DELETED", "b/b1")]
        assert not mirror.errors


def test_one_namespace_form_reads_without_a_namespace(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a1", "a"))
    with object_cache(served, namespace="a") as cache:
        assert cache.get("cm", "a1")["metadata"]["namespace"] == "a"
        assert requests_to(served.cluster, "/api/v1/namespaces/a/configmaps")
        with pytest.raises(OutsideScopeError):
            cache.get("cm", "x", "b")


def test_a_forbidden_namespace_fails_alone_and_heals(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a1", "a"))
    cluster.apply_object(cm("b1", "b"))
    cluster.forbid_namespace("b", user="system:serviceaccount:ops:ctrl")
    with object_cache(served, namespaces=["a", "b"]) as cache:
        assert cache.get("cm", "a1", "a")["metadata"]["name"] == "a1"
        informer = cache.informer("cm")
        assert informer.wait_until(lambda i: i.namespaces_state == {"a": "synced", "b": "failing"}, timeout=10)
        assert informer.state == "failing"
        with pytest.raises(APIStatusError) as caught:
            cache.get("cm", "b1", "b")
        assert caught.value.status == 403
        assert 'cannot list resource "configmaps" in API group "" in the namespace "b"' in str(caught.value)
        # A read of every namespace would be partial: it raises the refused namespace's error instead.
        with pytest.raises(ForbiddenError, match='namespace "b"'):
            cache.list("cm")
        assert [o["metadata"]["name"] for o in cache.list("cm", "a")] == ["a1"]
        cluster.allow_namespace("b")
        assert informer.wait_until(lambda i: i.namespaces_state == {"a": "synced", "b": "synced"}, timeout=10)
        assert cache.get("cm", "b1", "b")["metadata"]["name"] == "b1"
        assert [o["metadata"]["name"] for o in cache.list("cm")] == ["a1", "b1"]
        assert informer.wait_for_state("synced", timeout=10)


# --- selectors -----------------------------------------------------------------------------------------------------

def test_label_selector_reaches_list_and_watch_and_transitions_are_delete_then_add(served: ServedCluster,
                                                                                   watch_list: bool) -> None:
    cluster = served.cluster
    cluster.apply_object(labelled("in", tier="gold"))
    cluster.apply_object(labelled("out", tier="silver"))
    with object_cache(served, label_selector="tier=gold", watch_list=watch_list) as cache:
        assert [o["metadata"]["name"] for o in cache.list("cm")] == ["in"]
        mirror = Mirror()
        mirror.attach(cache.informer("cm"))
        assert cluster.wait_for_watchers(1, 10)
        queries = requests_to(cluster, "/api/v1/configmaps")
        assert {("watch" in q, q.get("labelSelector")) for q in queries} == \
            {(True, "tier=gold")} | (set() if watch_list else {(False, "tier=gold")})
        cluster.apply_object(labelled("in", tier="silver"))   # leaves the selection
        cluster.apply_object(labelled("out", tier="gold"))    # enters it
        cluster.apply_object(labelled("in", tier="gold"))     # comes back
        mirror.wait(lambda m: len(m.log) == 4)
        assert [e[:2] for e in mirror.log] == [("ADDED", "default/in"), ("DELETED", "default/in"),
                                               ("ADDED", "default/out"), ("ADDED", "default/in")]
        assert not mirror.errors
        assert sorted(o["metadata"]["name"] for o in cache.list("cm")) == ["in", "out"]


def test_reads_narrower_than_the_selector_filter_locally_broader_ones_are_refused(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(labelled("a", tier="gold", app="web"))
    cluster.apply_object(labelled("b", tier="gold", app="db"))
    with object_cache(served, label_selector="tier=gold") as cache:
        assert [o["metadata"]["name"] for o in cache.list("cm", label_selector="tier = gold,app=web")] == ["a"]
        assert len(cache.list("cm", label_selector="tier==gold")) == 2
        with pytest.raises(OutsideScopeError, match="label selector 'app=web'"):
            cache.list("cm", label_selector="app=web")
        assert len(cache.list("cm")) == 2  # no selector: what the informer holds


def test_field_selector_reaches_list_and_watch(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a"))
    cluster.apply_object(cm("b"))
    with object_cache(served, field_selector="metadata.name=a") as cache:
        assert [o["metadata"]["name"] for o in cache.list("cm")] == ["a"]
        assert cluster.wait_for_watchers(1, 10)
        assert {q.get("fieldSelector") for q in requests_to(cluster, "/api/v1/configmaps")} == {"metadata.name=a"}
        with pytest.raises(OutsideScopeError):
            cache.list("cm", field_selector="metadata.namespace=default")


def test_a_field_selector_the_server_refuses_is_its_400(served: ServedCluster) -> None:
    with object_cache(served, field_selector="data.x=1", sync_timeout=0.5) as cache:
        informer = cache.informer("cm")
        assert informer.wait_for_state("failing", timeout=10)
        assert "field label not supported: data.x" in str(informer.last_error)


# --- metadata only -------------------------------------------------------------------------------------------------

def test_metadata_only_asks_for_partial_object_metadata_on_list_and_watch(served: ServedCluster,
                                                                          watch_list: bool) -> None:
    cluster = served.cluster
    cluster.apply_object(labelled("a", app="web"))
    with object_cache(served, metadata_only=True, watch_list=watch_list) as cache:
        obj = cache.get("cm", "a", "default")
        assert obj["kind"] == "PartialObjectMetadata" and obj["apiVersion"] == "meta.k8s.io/v1"
        assert set(obj) == {"kind", "apiVersion", "metadata"} and obj["metadata"]["labels"] == {"app": "web"}
        assert cluster.wait_for_watchers(1, 10)
        assert accepts(cluster, "/api/v1/configmaps") == {(True, META_ONE)} | (set() if watch_list
                                                                              else {(False, META_LIST)})
        cluster.apply_object(labelled("b", app="db"))
        got = cache.wait_for("cm", "b", "default", timeout=10)
        assert got["kind"] == "PartialObjectMetadata" and "data" not in got


def test_metadata_only_falls_back_to_full_objects_on_406(served: ServedCluster, caplog: pytest.LogCaptureFixture,
                                                         watch_list: bool) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a", x="1"))
    body = ('{"kind":"Status","apiVersion":"v1","status":"Failure","message":"only the following media types are '
            'accepted: application/json","reason":"NotAcceptable","code":406}')
    cluster.inject("/api/v1/configmaps", status=406, body=body, content_type="application/json", times=1)
    with caplog.at_level(logging.WARNING, logger="restmapper.watch"), \
            object_cache(served, metadata_only=True, watch_list=watch_list) as cache:
        assert cache.get("cm", "a", "default")["data"] == {"x": "1"}
        assert cluster.wait_for_watchers(1, 10)
    assert any("refused metadata-only" in r.getMessage() and "406" in r.getMessage() for r in caplog.records)
    last_sync = [r for r in cluster.requests if r.path == "/api/v1/configmaps" and
                 ("watch" not in r.query or r.query.get("sendInitialEvents") == "true")][-1]
    assert last_sync.headers["Accept"] == "application/json" and ("watch" in last_sync.query) == watch_list


# --- transforms, by_kind -------------------------------------------------------------------------------------------

def test_strip_transforms_compose(served: ServedCluster) -> None:
    obj = cm("a")
    obj["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "keep": "1"}
    obj["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Apply"}]
    served.cluster.apply_object(obj)
    with object_cache(served, transform=[strip_managed_fields, strip_last_applied], metadata_only=True) as cache:
        meta = cache.get("cm", "a", "default")["metadata"]
        assert "managedFields" not in meta and meta["annotations"] == {"keep": "1"}
    assert strip_last_applied({"metadata": {"annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": "{}"}}}) == {"metadata": {}}
    with pytest.raises(TypeError):
        object_cache(served, transform=["not callable"]).__enter__()


def test_by_kind_overrides_the_cache_scope(served: ServedCluster) -> None:
    cluster = served.cluster
    cluster.apply_object(cm("a1", "a"))
    cluster.apply_object(widget_obj("w", "b"))
    by_kind = {"widgets.example.com": {"namespaces": ["b"], "metadata_only": True}}
    with object_cache(served, namespaces=["a"], by_kind=by_kind) as cache:
        assert cache.get("cm", "a1", "a")["kind"] == "ConfigMap"
        assert cache.get(WIDGETS, "w", "b")["kind"] == "PartialObjectMetadata"
        assert requests_to(cluster, "/apis/example.com/v1/namespaces/b/widgets")
        assert requests_to(cluster, "/api/v1/namespaces/a/configmaps")
        infos = {str(i.kind): i for i in cache.informers()}
        assert infos["Widget.example.com"].scope == "namespace 'b'; metadata only"
        assert infos["ConfigMap"].scope == "namespace 'a'"
        assert infos["ConfigMap"].objects == 1 and infos["ConfigMap"].state == "synced"
        assert infos["ConfigMap"].namespaces_state == {"a": "synced"}
    with pytest.raises(InvalidArgumentError, match="unknown scope option"):
        object_cache(served, by_kind={"cm": {"namespace_list": ["a"]}}).__enter__()


# --- no surprise informers -----------------------------------------------------------------------------------------

def test_lazy_false_refuses_kinds_not_started(served: ServedCluster) -> None:
    served.cluster.apply_object(cm("a"))
    with object_cache(served, lazy=False) as cache:
        for read in (lambda: cache.get("cm", "a", "default"), lambda: cache.list("cm"),
                     lambda: cache.add_handler("cm", on_add=print)):
            with pytest.raises(InformerNotStartedError) as caught:
                read()
            assert caught.value.kind == "ConfigMap" and "cache.start(kinds=[...])" in str(caught.value)
        assert cache.informers() == []
        cache.start(kinds=["cm"])
        assert cache.get("cm", "a", "default")["metadata"]["name"] == "a"
        cache.informer(GroupKind("example.com", "Widget"))
        assert cache.list(WIDGETS) == []


def test_lazy_start_logs_each_informer_and_its_scope_once(served: ServedCluster,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    served.cluster.apply_object(cm("a", "a"))
    with caplog.at_level(logging.INFO, logger="restmapper.store"), \
            object_cache(served, namespaces=["a"], label_selector="x!=y") as cache:
        cache.get("cm", "a", "a")
        cache.list("cm")
        cache.list("nodes")
    started = [r.getMessage() for r in caplog.records if r.getMessage().startswith("started the")]
    assert started == ["started the ConfigMap informer: namespace 'a'; label selector 'x!=y' (v1 configmaps)",
                       "started the Node informer: the cluster scope; label selector 'x!=y' (v1 nodes)"]


def test_options_are_checked_before_anything_runs(served: ServedCluster) -> None:
    for options, error in (({"namespaces": []}, InvalidArgumentError), ({"namespaces": "a"}, TypeError),
                           ({"namespace": "a", "namespaces": ["b"]}, InvalidArgumentError),
                           ({"label_selector": "a in (b"}, InvalidArgumentError),
                           ({"metadata_only": "yes"}, TypeError), ({"by_kind": {"cm": 1}}, TypeError),
                           ({"lazy": 0}, TypeError)):
        with pytest.raises(error):
            object_cache(served, **options).__enter__()
    assert key(cm("a")) == "default/a"


def test_a_transform_runs_on_each_list_page_as_it_arrives(served: ServedCluster) -> None:
    """The raw list is never held whole: page one's objects are transformed before page two is asked for (what
    a transform saves is then saved while the list is received, not only once it is stored)."""
    cluster = served.cluster
    for i in range(6):
        cluster.apply_object(cm(f"c{i}"))
    pages_asked: list[int] = []

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        pages_asked.append(sum(1 for r in cluster.requests
                               if r.path == "/api/v1/configmaps" and "watch" not in r.query))
        return strip_managed_fields(obj)

    with object_cache(served, transform=transform, page_size=2, watch_list=False) as cache:  # pages: a list's
        assert len(cache.list("cm")) == 6
    assert pages_asked == [1, 1, 2, 2, 3, 3]
