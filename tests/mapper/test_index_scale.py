"""The merged index at scale: 20,000 distinct questions over 1,000 groups, then one group refreshes.

Refreshing one group must rebuild only that group's index and recompute only the answers that read it; every
answer must equal the one a :class:`StaticRESTMapper` over the whole snapshot gives (the mapper whose answers the
kubectl parity tests check), before and after the refresh.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from restmapper import GroupKind, GroupVersionResource, RestMapperError
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import GroupIndex, LazyRESTMapper, StaticRESTMapper
from restmapper.mapper.merged import MergedIndex
from restmapper.mapper.resolve import resolve
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, ManualClock
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.wire import LazyResourceLists

GROUPS = 1000
KINDS = 2
_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(i: int, k: int, *, short: str | None = None) -> dict[str, Any]:
    group, kind = f"g{i}.scale.example.com", f"Item{i}x{k}"
    plural = kind.lower() + "s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List",
                           "shortNames": [short or f"i{i}x{k}"], "categories": ["all"]},
                 "versions": [{"name": v, "served": True, "storage": v == "v1", "schema": _SCHEMA}
                              for v in ("v1", "v1beta1")]},
    }


Question = tuple[str, str, tuple[Any, ...]]
"""(group the answer comes from, mapper method, arguments)."""


def _questions() -> list[Question]:
    """20,000 distinct questions of every shape, each answerable by one group."""
    out: list[Question] = []
    for i in range(GROUPS):
        group = f"g{i}.scale.example.com"
        for k in range(KINDS):
            kind = f"Item{i}x{k}"
            plural, singular = kind.lower() + "s", kind.lower()
            out += [
                (group, "kind_for", (GroupVersionResource("", "", plural),)),
                (group, "resource_for", (GroupVersionResource("", "", singular),)),
                (group, "kind_for", (GroupVersionResource(group, "", plural),)),
                (group, "resource_for", (GroupVersionResource(group, "v1beta1", plural),)),
                (group, "kinds_for", (GroupVersionResource("", "", kind),)),
                (group, "rest_mapping", (GroupKind(group, kind),)),
                (group, "rest_mapping", (GroupKind(group, kind), "v1beta1")),
                (group, "rest_mappings", (GroupKind(group, singular),)),
                (group, "resolve", (f"i{i}x{k}",)),
                (group, "resolve", (f"{plural}.{group}",)),
            ]
    return out


def _static(cluster: FakeCluster) -> StaticRESTMapper:
    """The reference: a StaticRESTMapper over every group of the cluster as it is now."""
    groups, resources = DiscoveryClient(RequestsTransport(cluster.base_url)).server_groups_and_resources()
    return StaticRESTMapper(GroupIndex(g, resources) for g in groups)


class _Reference:
    """The same questions asked of a StaticRESTMapper (resolve through kubectl's resolution on it)."""

    def __init__(self, static: StaticRESTMapper) -> None:
        self._static = static

    def __getattr__(self, name: str) -> Any:
        return getattr(self._static, name)

    def resolve(self, arg: str) -> Any:
        return resolve(arg, self._static, expand_categories=False).mapping


def _answer(question: Question, mapper: Any) -> Any:
    _, method, args = question
    try:
        value = getattr(mapper, method)(*args)
    except RestMapperError as exc:
        return type(exc).__name__
    return list(value) if isinstance(value, (list, tuple)) else value


def _count_cache_calls(mapper: LazyRESTMapper) -> dict[str, int]:
    """Count, from now on, the mapper's calls into its cache that may load or revalidate groups."""
    calls = {"groups": 0, "ensure_all": 0}
    cache = mapper.cache

    def counting(name: str) -> Any:
        method = getattr(cache, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return method(*args, **kwargs)

        return call

    for name in calls:
        setattr(cache, name, counting(name))
    return calls


@pytest.fixture(scope="module")
def cluster() -> Iterator[FakeCluster]:
    cluster = FakeCluster(builtin=True)
    for i in range(GROUPS):
        for k in range(KINDS):
            cluster.add_crd(_crd(i, k))
    yield cluster


def test_refreshing_one_group_recomputes_only_answers_that_read_it(cluster: FakeCluster) -> None:
    questions = _questions()
    assert len(questions) == 20_000
    with cluster.mock():
        # A clock that does not move: on the real clock a loaded machine lets remembered misses (1 s) expire
        # mid-run, and the recomputation count below would measure the machine, not the index.
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(cluster.base_url,
                                                                  retry=RetryPolicy(max_attempts=1))),
                                clock=ManualClock())
        reference = _Reference(_static(cluster))
        mapper.expand_category("all")  # loads and indexes every group
        asked = _count_cache_calls(mapper)
        first = [_answer(q, mapper) for q in questions]
        assert first == [_answer(q, reference) for q in questions]
        assert asked == {"groups": 0, "ensure_all": 0}, (
            f"first-time questions over a loaded, fresh index are answered from the group indexes alone: {asked}")
        index: MergedIndex = mapper._groups.index
        builds = index.builds
        assert builds <= GROUPS + 100  # every group indexed once (plus the built-in groups)

        computed: list[int] = [0]
        compute = mapper._compute

        def counting(*args: Any, **kwargs: Any) -> Any:
            computed[0] += 1
            return compute(*args, **kwargs)

        mapper._compute = counting  # type: ignore[method-assign]
        assert [_answer(q, mapper) for q in questions] == first
        assert computed[0] == 0, "a warm working set of 20,000 questions is answered from the memo"

        # One group changes (a new short name), as a CRD update does; the watcher would invalidate it.
        changed = "g500.scale.example.com"
        cluster.update_crd(_crd(500, 0, short="renamed"))
        mapper.invalidate_group(changed)
        for key in asked:
            asked[key] = 0
        # What each memoized answer read, and the shared cells of absent names, before the change shows.
        memo = mapper._memo
        read_before = [memo_entry.reads() for memo_entry in (*memo._old.values(), *memo.values())]
        absent_before = [cell.version for cell in index._absent]
        after = [_answer(q, mapper) for q in questions]
        assert index.builds == builds + 1, "only the refreshed group's index is rebuilt"
        reading_changed = sum(1 for group, _, _ in questions if group == changed)
        # The refreshed group is loaded again by the first questions of each path that need it; the answers
        # recomputed after that come straight from the group indexes (fewer cache calls than recomputed answers).
        assert asked["groups"] + asked["ensure_all"] <= reading_changed // 2 + 2, asked
        # Answers that read a name no group serves share 1,024 cells (by hash, so which answers share a cell with
        # the re-indexed group's keys differs from run to run): those answers are recomputed too, and only those,
        # with the answers that read the refreshed group itself (about it, or a category or name it serves).
        moved = {id(cell) for cell, version in zip(index._absent, absent_before, strict=True)
                 if cell.version != version}
        assert len(moved) <= 16, "re-indexing one group moves the cells of that group's own keys only"
        changed_cell = index.cell(changed)
        explained = sum(1 for deps in read_before
                        if any(id(cell) in moved or cell is changed_cell for cell, _ in deps))
        assert computed[0] <= explained, (
            f"{computed[0]} answers recomputed; only {explained} read {changed} or shared an absent name's cell")
        assert explained <= reading_changed + len(questions) // 200, f"{explained} answers read one group of 1,000"
        reference = _Reference(_static(cluster))
        assert after == [_answer(q, reference) for q in questions]
        assert mapper.resolve("renamed").resource.group == changed


def test_aggregated_resources_are_converted_only_for_the_groups_a_lookup_reads(cluster: FakeCluster) -> None:
    with cluster.mock():
        root = DiscoveryClient(RequestsTransport(cluster.base_url)).fetch_named()
    lists = root.resources
    assert isinstance(lists, LazyResourceLists)
    assert lists.converted() == 0 and len(lists) > 2 * GROUPS
    group = next(g for g in root.groups if g.name == "g7.scale.example.com")
    index = GroupIndex(group, lists)
    assert lists.converted() == len(group.versions) == 2
    assert index.short_names == {"i7x0": ("item7x0s",), "i7x1": ("item7x1s",)}
    assert lists[GroupVersion(group.name, "v1")] is lists[GroupVersion(group.name, "v1")]  # converted once


def test_drop_in_get_by_kind_or_short_name_builds_only_the_groups_that_serve_it(cluster: FakeCluster) -> None:
    """The drop-in's kind-only and short-name lookups read the groups the merged index names, not all 1,000."""
    from kubernetes import client as kclient
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import ResourceNotFoundError

    from restmapper.dynamic import SelfHealingDiscoverer

    with cluster.serve() as server:
        api = kclient.ApiClient(kclient.Configuration(host=server.url))
        dc = DynamicClient(api, discoverer=lambda c, f: SelfHealingDiscoverer(c, f))
        disc = dc.resources
        assert disc.get(kind="Item321x1").group_version == "g321.scale.example.com/v1"
        assert disc.get(short_names=["i654x0"]).name == "item654x0s"
        assert disc.get(short_names=["deploy"]).group_version == "apps/v1"
        assert disc.get(kind="deployment", api_version="apps/v1").kind == "Deployment"
        built = set(disc._groups)
        assert {"g321.scale.example.com", "g654.scale.example.com", "apps"} <= built
        assert len(built) < 10, f"built {len(built)} groups' Resource objects for four lookups"
        # Misses still revalidate and say so.
        with pytest.raises(ResourceNotFoundError, match="No matches found"):
            disc.get(short_names=["no-such-short-name"])


KUBECTL = shutil.which("kubectl")
# A list request as kubectl get logs it at -v=6: "GET http://127.0.0.1:PORT/apis/...?limit=500 200 OK in 1 ms".
_LIST_LINE = re.compile(r"\bGET (http://\S+\?\S*limit=500\S*) (\d{3})")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (it is the oracle here)")
def test_answers_after_a_refresh_agree_with_kubectl_get(cluster: FakeCluster, tmp_path: Path) -> None:
    """kubectl itself, on the same 1,000-group cluster after one group changed, lists what we resolve: one kubectl
    process checks a sample of every argument shape (the whole working set is checked against the reference
    mapper above, whose kubectl parity tests/cli/test_cli_kubectl.py checks)."""
    assert KUBECTL is not None
    changed = "g777.scale.example.com"
    with cluster.serve() as served:
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1))))
        mapper.expand_category("all")  # every group loaded and indexed, first-time answers come from the indexes
        cluster.update_crd(_crd(777, 1, short="refreshed777"))
        mapper.invalidate_group(changed)  # as the watcher does on the CRD event
        args = ["refreshed777", "i777x0", f"item777x1s.{changed}", f"Item777x0.v1beta1.{changed}", "item12x1",
                "Item13x0", "i14x1", "item15x0s.v1beta1.g15.scale.example.com", "deploy", "Pod"]
        ours = [mapper.resolve(arg).path(namespace="default") for arg in args]
        proc = subprocess.run([KUBECTL, "get", ",".join(args), "-v=6", "--kubeconfig", str(served.kubeconfig_path),
                               "--cache-dir", str(tmp_path)], capture_output=True, text=True, timeout=120,
                              check=False)
    theirs = [urlsplit(m.group(1)).path for m in _LIST_LINE.finditer(proc.stderr)]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert theirs == list(dict.fromkeys(ours))


def test_prefix_lookups_follow_a_new_listing_and_cost_nothing_until_asked() -> None:
    """The by-head table of :meth:`MergedIndex.with_prefix` is built on the first prefix question (a lookup about
    one listed group never pays for it) and never answers from an earlier listing."""
    from restmapper.mapper.merged import MergedIndex

    index = MergedIndex()
    index.set_listing(["", "apps", "gadgets.example.com", "gadgetry.example.org"])
    assert index._sorted_by_head is None
    assert index.with_prefix("gadget") == ["gadgetry.example.org", "gadgets.example.com"]
    assert index.with_prefix("gadgets") == ["gadgets.example.com"]
    assert index.with_prefix("app") == ["apps"]  # shorter than the head: bisected
    index.set_listing(["", "gadgets.example.com", "gadgeteer.io"])
    assert index.with_prefix("gadget") == ["gadgeteer.io", "gadgets.example.com"]
    assert index.with_prefix("gadgetry") == []
