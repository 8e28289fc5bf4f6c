"""kubectl-style resolution (``mapping_for``/``resolve``) and category expansion, on hand-built groups and on the
real discovery fixtures (legacy per-group-version documents and the aggregated document)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.mapper import aggregated_indexes, group, legacy_indexes, mapper, res

from restmapper.errors import (
    AmbiguousResourceError,
    InvalidArgumentError,
    NoResourceMatchError,
    is_no_match,
)
from restmapper.mapper import (
    GroupIndex,
    ResourceTypeNotFoundError,
    ShortNameConflictWarning,
    StaticRESTMapper,
    expand_category,
    mapping_for,
    resolve,
)
from restmapper.model import GroupResource, GroupVersionKind, GroupVersionResource

GVR = GroupVersionResource
GVK = GroupVersionKind


def _small() -> StaticRESTMapper:
    return mapper(
        group("", {"v1": [res("pods", "Pod", short=["po"], categories=["all"]), res("events", "Event", short=["ev"])]}),
        group("apps", {"v1": [res("deployments", "Deployment", short=["deploy"], categories=["all"])]}),
        group("events.k8s.io", {"v1": [res("events", "Event", short=["ev"])]}),
        group("autoscaling", {
            "v2": [res("horizontalpodautoscalers", "HorizontalPodAutoscaler", short=["hpa"], categories=["all"])],
            "v1": [res("horizontalpodautoscalers", "HorizontalPodAutoscaler", short=["hpa"], categories=["all"])],
        }, "v2"),
        group("example.com", {"v1": [res("foos", "Foo", singular="foo-item")]}),
        group("stable.example.com", {"v1": [res("crontabs", "CronTab", short=["ct"])]}),
    )


@pytest.mark.parametrize(
    ("arg", "resource", "kind"),
    [
        ("po", GVR("", "v1", "pods"), "Pod"),
        ("pods", GVR("", "v1", "pods"), "Pod"),
        ("Pod", GVR("", "v1", "pods"), "Pod"),
        ("PODS", GVR("", "v1", "pods"), "Pod"),
        ("deploy", GVR("apps", "v1", "deployments"), "Deployment"),
        ("deployments.apps", GVR("apps", "v1", "deployments"), "Deployment"),
        ("deployment.apps", GVR("apps", "v1", "deployments"), "Deployment"),
        ("deployments.v1.apps", GVR("apps", "v1", "deployments"), "Deployment"),
        ("Deployment.apps", GVR("apps", "v1", "deployments"), "Deployment"),
        ("hpa", GVR("autoscaling", "v2", "horizontalpodautoscalers"), "HorizontalPodAutoscaler"),
        ("horizontalpodautoscalers.v1.autoscaling", GVR("autoscaling", "v1", "horizontalpodautoscalers"),
         "HorizontalPodAutoscaler"),
        ("hpa.autoscal", GVR("autoscaling", "v2", "horizontalpodautoscalers"), "HorizontalPodAutoscaler"),
        ("events", GVR("", "v1", "events"), "Event"),
        ("events.events.k8s.io", GVR("events.k8s.io", "v1", "events"), "Event"),
        ("ct", GVR("stable.example.com", "v1", "crontabs"), "CronTab"),
        ("crontabs.stable.example.com", GVR("stable.example.com", "v1", "crontabs"), "CronTab"),
        ("crontabs.stable", GVR("stable.example.com", "v1", "crontabs"), "CronTab"),
        # Kind readings: "Foo" lowercased is no resource name (singular is foo-item), so the kind fallback finds it.
        ("Foo", None, "Foo"),
        ("Foo.example.com", GVR("example.com", "v1", "foos"), "Foo"),
        ("Foo.v1.example.com", GVR("example.com", "v1", "foos"), "Foo"),
        ("foo-item.example.com", GVR("example.com", "v1", "foos"), "Foo"),
    ],
)
def test_mapping_for_readings(arg: str, resource: GVR | None, kind: str) -> None:
    m = _small()
    if resource is None:
        with pytest.raises(ResourceTypeNotFoundError, match='doesn\'t have a resource type "Foo"'):
            mapping_for(arg, m)  # core kind Foo does not exist: a group-less kind means the core group
        return
    mapping, warnings = mapping_for(arg, m)
    assert mapping.resource == resource
    assert mapping.group_version_kind == GVK(resource.group, resource.version, kind)
    assert warnings == ()


def test_short_name_conflict_is_reported_once() -> None:
    result = resolve("ev", _small())
    assert result.mapping.resource == GVR("", "v1", "events")
    assert result.warnings == ('short name "ev" could also match lower priority resource events.events.k8s.io',)
    assert issubclass(ShortNameConflictWarning, UserWarning)


@pytest.mark.parametrize("arg", ["DEPLOY", "nope", "deployments.v9.apps", "nope.apps", "Nope.v1.apps"])
def test_unknown_arguments(arg: str) -> None:
    with pytest.raises(ResourceTypeNotFoundError) as info:
        resolve(arg, _small())
    assert is_no_match(info.value)
    assert isinstance(info.value, NoResourceMatchError)
    assert str(info.value) == f'the server doesn\'t have a resource type "{arg.split(".")[0]}"'
    assert info.value.argument == arg


def test_empty_argument() -> None:
    with pytest.raises(InvalidArgumentError):
        resolve("", _small())


def test_resource_ambiguity_is_reported_instead_of_not_found() -> None:
    """Decision: kubectl swallows a resource ambiguity and says "no resource type"; we raise the ambiguity."""
    m = mapper(group("x.io", {"v1": [res("things", "Thing"), res("thingies", "Thingy", singular="things")]}))
    with pytest.raises(AmbiguousResourceError, match="matches multiple kinds"):
        resolve("things", m)


def test_version_of_a_short_name_is_dropped_as_upstream() -> None:
    assert resolve("hpa.v1.autoscaling", _small()).mapping.resource.version == "v2"


def test_category_expansion_comes_first_and_is_deduplicated() -> None:
    m = _small()
    assert expand_category("all", m) == [
        GroupResource("", "pods"), GroupResource("apps", "deployments"),
        GroupResource("autoscaling", "horizontalpodautoscalers"),
    ]
    assert expand_category("all", m.indexes) == expand_category("all", m)
    result = resolve("all", m)
    assert result.category == "all"
    assert [x.resource for x in result.mappings] == [
        GVR("", "v1", "pods"), GVR("apps", "v1", "deployments"), GVR("autoscaling", "v2", "horizontalpodautoscalers"),
    ]
    assert expand_category("nothing", m) == []
    with pytest.raises(ResourceTypeNotFoundError):
        resolve("all", m, expand_categories=False)


def test_core_real_names_are_final_on_a_core_only_subset() -> None:
    """What the module docstring promises a lazy caller: a real core v1 name resolves the same on core alone."""
    full = _small()
    core_only = StaticRESTMapper([i for i in full.indexes if i.name == ""])
    for arg in ("pods", "pod", "Pod", "events"):
        assert resolve(arg, core_only).mapping == resolve(arg, full).mapping
    # A core short name is not final: on the full set it gains a warning.
    assert resolve("ev", core_only).warnings == ()
    assert resolve("ev", full).warnings != ()


def test_crd_real_name_beats_core_short_name() -> None:
    m = mapper(group("", {"v1": [res("pods", "Pod", short=["po"])]}),
               group("acme.com", {"v1": [res("po", "Po", singular="po")]}))
    assert resolve("po", m).mapping.resource == GVR("acme.com", "v1", "po")


# --- real discovery data ----------------------------------------------------------------------------------

Loader = Callable[[Path], list[GroupIndex]]


@pytest.fixture(params=[legacy_indexes, aggregated_indexes], ids=["legacy", "aggregated"])
def real(request: pytest.FixtureRequest, fixtures_dir: Path) -> StaticRESTMapper:
    load: Loader = request.param
    return StaticRESTMapper(load(fixtures_dir))


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("deploy", GVR("apps", "v1", "deployments")),
        ("hpa", GVR("autoscaling", "v2", "horizontalpodautoscalers")),
        ("po", GVR("", "v1", "pods")),
        ("svc", GVR("", "v1", "services")),
        ("netpol", GVR("networking.k8s.io", "v1", "networkpolicies")),
        ("pvc", GVR("", "v1", "persistentvolumeclaims")),
        ("csr", GVR("certificates.k8s.io", "v1", "certificatesigningrequests")),
        ("Deployment", GVR("apps", "v1", "deployments")),
        ("deployments.apps", GVR("apps", "v1", "deployments")),
        ("deployments.v1.apps", GVR("apps", "v1", "deployments")),
        ("deployment.apps", GVR("apps", "v1", "deployments")),
        ("jobs.batch", GVR("batch", "v1", "jobs")),
        ("ing", GVR("networking.k8s.io", "v1", "ingresses")),
        ("ev", GVR("", "v1", "events")),
        ("events.events.k8s.io", GVR("events.k8s.io", "v1", "events")),
        ("HorizontalPodAutoscaler", GVR("autoscaling", "v2", "horizontalpodautoscalers")),
        ("horizontalpodautoscalers.v1.autoscaling", GVR("autoscaling", "v1", "horizontalpodautoscalers")),
        ("crd", GVR("apiextensions.k8s.io", "v1", "customresourcedefinitions")),
        ("sc", GVR("storage.k8s.io", "v1", "storageclasses")),
        ("ep", GVR("", "v1", "endpoints")),
        ("Endpoints", GVR("", "v1", "endpoints")),
    ],
)
def test_real_discovery_matches_kubectl(real: StaticRESTMapper, arg: str, expected: GVR) -> None:
    result = resolve(arg, real)
    assert result.mapping.resource == expected
    api_resource = result.mapping.api_resource
    assert api_resource is not None and api_resource.name == expected.resource
    if arg == "ev":
        assert result.warnings == ('short name "ev" could also match lower priority resource events.events.k8s.io',)
    else:
        assert result.warnings == ()


def test_real_scopes(real: StaticRESTMapper) -> None:
    assert resolve("csr", real).mapping.namespaced is False
    assert resolve("deploy", real).mapping.namespaced is True
    assert not real.is_namespaced(GVK("", "v1", "Node"))


def test_real_all_category(real: StaticRESTMapper) -> None:
    assert [str(gr) for gr in expand_category("all", real)] == [
        "pods", "replicationcontrollers", "services", "daemonsets.apps", "deployments.apps", "replicasets.apps",
        "statefulsets.apps", "horizontalpodautoscalers.autoscaling", "cronjobs.batch", "jobs.batch",
    ]
    mappings = resolve("all", real).mappings
    assert len(mappings) == 10
    assert mappings[7].resource == GVR("autoscaling", "v2", "horizontalpodautoscalers")


def test_real_every_resource_round_trips(real: StaticRESTMapper) -> None:
    for index in real.indexes:
        for vindex in index.version_indexes:
            for entry in vindex.entries:
                gvr = vindex.gvr(entry)
                assert real.rest_mapping(real.kind_for(gvr).group_kind, gvr.version).resource == gvr
                dotted = f"{gvr.resource}.{gvr.version}.{gvr.group}" if gvr.group else gvr.resource
                if gvr.group:
                    assert resolve(dotted, real).mapping.resource == gvr
