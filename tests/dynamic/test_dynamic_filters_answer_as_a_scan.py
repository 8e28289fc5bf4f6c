"""The drop-in's per-version trait tables give exactly what a scan of every Resource object with the filters gives.

``search``/``get`` by ``name``, ``singular_name``, ``short_names`` or ``categories`` read candidates from
:attr:`VersionResources.by_trait` instead of scanning every object: the answers must not change, for
every filter form (any case, one string, the whole list), for ResourceList objects too (their attributes are
their resource's), and in the asyncio libraries' flavour (whose ResourceList has none of them).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from helpers.dynamic import crd, matches
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient

from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.model import APIResource
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock


def _discoverer() -> SelfHealingDiscoverer:
    cluster = FakeCluster.embedded(mode="aggregated")
    # Mixed-case traits: an aggregated API may serve them (kube-apiserver refuses them in a CRD).
    cluster.add_api_resources("t.example.com/v1", [APIResource(
        "things", "thing", True, "Thing", ("create", "delete", "get", "list", "patch", "update", "watch"),
        ("th", "TH2"), ("all", "Stuff"))])
    cluster.add_crd(crd("u.example.com", "Unsung"))  # no singular given: upstream's guess "unsung"
    config = kclient.Configuration(host="https://kube.restmapper.test")
    client = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock()))
    found = client.resources
    assert isinstance(found, SelfHealingDiscoverer)
    return found


def _questions(resources: SelfHealingDiscoverer) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry, group in resources._entries(None):
        del entry
        for version in group.versions:
            for obj in version.all:
                if obj.__dict__.get("name") is None:
                    continue
                for term in ("name", "singular_name"):
                    value = obj.__dict__[term]
                    out += [{term: value}, {term: value.upper()}, {term: value, "namespaced": obj.namespaced}]
                for term in ("short_names", "categories"):
                    values = obj.__dict__[term] or []
                    if values:
                        out += [{term: values}, {term: values[-1]}, {term: [v.upper() for v in values]},
                                {term: values[:1]}]
    return out


def _scan(resources: SelfHealingDiscoverer, kwargs: dict[str, Any]) -> list[Any]:
    filters = tuple(kwargs.items())
    return [obj for _, group in resources._entries(None) for version in group.versions for obj in version.all
            if matches(obj, filters)]


def test_trait_tables_answer_as_a_scan_does() -> None:
    resources = _discoverer()
    questions = _questions(resources)
    assert len(questions) > 500
    for kwargs in questions:
        assert list(resources.search(**kwargs)) == _scan(resources, kwargs), kwargs
    assert [r.kind for r in resources.search(singular_name="unsung")] == ["Unsung", "UnsungList"]
    assert [r.kind for r in resources.search(short_names="Th2")] == ["Thing", "ThingList"]
    assert [r.kind for r in resources.search(categories=["all", "stuff"])] == ["Thing", "ThingList"]
    assert resources.get(short_names=["th", "th2"]).kind == "Thing"


@pytest.mark.parametrize("package", ["kubernetes.aio.dynamic", "kubernetes_asyncio.dynamic"])
def test_the_asyncio_flavours_never_index_a_resource_list(package: str) -> None:
    pytest.importorskip(package)
    from restmapper.dynamic._async import library_flavour
    from restmapper.dynamic._index import BASE_RESOURCE, build_group

    flavour, _ = library_flavour(package)
    resources = _discoverer()
    for entry, _ in resources._entries(None):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no coroutine is made (and never awaited) while building
            group = build_group(resources.client, entry, flavour)
        for version in group.versions:
            listed = [o for objs in version.by_trait.values() for o in objs]
            assert listed and all(BASE_RESOURCE not in o.__dict__ for o in listed)
