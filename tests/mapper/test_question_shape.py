"""A question no server can answer is an InvalidArgumentError, never a no-match (DESIGN 5.10): an apiVersion where a
version belongs (``rest_mapping(GroupKind("apps", "Deployment"), "apps/v1")``) or as the group
(``GroupKind("apps/v1", ...)``), an upper-case group or version. A controller reads a no-match as "the CRD is not
installed"; these are mistakes in the call, and the message says what to pass, naming the Python call.

The same holds for kubectl's argument forms that are not one resource type (``deploy,svc``, ``all``,
``deploy/web``, ``apps/v1 Deployment``: ``resolve`` names the call that takes them), for empty and space-padded
types (refused as a whole with kubectl's message, before any request), and for calls given the wrong kind of value
(``report_not_found`` of a mapping's resource, ``invalidate_group`` of what cannot be a group).

Every valid shape still answers as before (empty parts of a GVR match anything; a group prefix still matches).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient

from restmapper import (
    GroupKind,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    LazyRESTMapper,
    NoKindMatchError,
    is_no_match,
)
from restmapper.cli import run
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.errors import InvalidArgumentError, RestMapperError
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock

DEPLOY = GroupKind("apps", "Deployment")
BAD: list[tuple[str, Callable[[LazyRESTMapper], Any], str]] = [
    ("apiVersion as version", lambda m: m.rest_mapping(DEPLOY, "apps/v1"),
     'rest_mapping(GroupKind("apps", ...), "v1")'),
    ("apiVersion as group", lambda m: m.rest_mapping(GroupKind("apps/v1", "Deployment")), '"apps"'),
    ("apiVersion in GVK group", lambda m: m.rest_mapping(GroupVersionKind("apps/v1", "v1", "Deployment")), '"apps"'),
    ("upper-case group", lambda m: m.rest_mapping(GroupKind("Apps", "Deployment")), '"apps"'),
    ("upper-case version", lambda m: m.rest_mapping(DEPLOY, "V1"), '"v1"'),
    ("rest_mappings", lambda m: m.rest_mappings(DEPLOY, "apps/v1"), '"v1"'),
    ("kind_for", lambda m: m.kind_for(GroupVersionResource("apps", "apps/v1", "deployments")), '"v1"'),
    ("resource_for", lambda m: m.resource_for(GroupVersionResource("apps/v1", "", "deployments")), '"apps"'),
    ("resources_for", lambda m: m.resources_for(GroupVersionResource("Apps", "", "deployments")), '"apps"'),
    ("kinds_for", lambda m: m.kinds_for(GroupVersionResource("", "apps/v1", "deployments")), '"v1"'),
    ("is_namespaced", lambda m: m.is_namespaced(GroupVersionKind("apps", "apps/v1", "Deployment")), '"v1"'),
]


@pytest.fixture(params=["aggregated", "legacy"])
def mapper(request: pytest.FixtureRequest) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded(mode=request.param))),
                          clock=ManualClock())


@pytest.mark.parametrize(("name", "ask", "hint"), BAD, ids=[b[0] for b in BAD])
def test_a_question_no_server_can_answer_is_an_invalid_argument(mapper: LazyRESTMapper, name: str,
                                                                 ask: Callable[[LazyRESTMapper], Any],
                                                                 hint: str) -> None:
    for _ in range(2):  # never memoized as a no-match either
        with pytest.raises(InvalidArgumentError) as info:
            ask(mapper)
        assert not is_no_match(info.value)
        assert hint in str(info.value), str(info.value)


def test_valid_shapes_still_answer(mapper: LazyRESTMapper) -> None:
    assert mapper.rest_mapping(DEPLOY, "v1").resource.version == "v1"
    assert mapper.rest_mapping(DEPLOY, "", "v1").resource.version == "v1"  # an empty version is skipped
    assert mapper.kind_for(GroupVersionResource("", "", "deployments")).group == "apps"
    assert mapper.resource_for(GroupVersionResource("app", "", "deployments")).group == "apps"  # a group prefix
    assert mapper.rest_mapping(GroupKind("", "pod")).resource.resource == "pods"  # kinds: exact or lower case
    with pytest.raises(NoKindMatchError):
        mapper.rest_mapping(DEPLOY, "v9")  # well formed, not served: the server's word


@pytest.mark.parametrize("method", ["get", "search"])
def test_the_drop_in_refuses_an_api_version_with_two_slashes(method: str) -> None:
    """Upstream fails such a call with a ValueError; ours answered ``ResourceNotFoundError`` ("not installed")."""


    cluster = FakeCluster.embedded()
    config = kclient.Configuration(host="https://kube.restmapper.test")
    resources = DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(cluster), observe_requests=False, clock=ManualClock())).resources
    for _ in range(2):
        with pytest.raises(InvalidArgumentError, match="apps/v1/x") as info:
            getattr(resources, method)(api_version="apps/v1/x", kind="Deployment")
        assert isinstance(info.value, ValueError)  # as upstream's
    assert resources.get(api_version="apps/v1", kind="Deployment").kind == "Deployment"


def test_the_table_of_checked_names_stays_bounded_and_never_admits_a_bad_one(mapper: LazyRESTMapper) -> None:
    """The shape check remembers the names it passed (a hot path reads that table instead of checking again):
    however many distinct names are asked, the table stays bounded and a bad name is still refused after it
    was emptied."""
    from restmapper.mapper import _args

    for i in range(_args._SERVABLE_LIMIT + 10):
        _args.require_question_shape("rest_mapping", f"g{i}.example.com", (f"v{i % 7 + 1}",))
    assert len(_args.SERVABLE_GROUPS) <= _args._SERVABLE_LIMIT
    assert "" in _args.SERVABLE_GROUPS and "__internal" in _args.SERVABLE_VERSIONS  # kept when emptied
    for _ in range(2):  # refused, and not remembered as servable by the refusal
        with pytest.raises(InvalidArgumentError, match='"apps"'):
            mapper.rest_mapping(GroupKind("Apps", "Deployment"))
        with pytest.raises(InvalidArgumentError, match='"v1"'):
            mapper.rest_mapping(DEPLOY, "V1")
    assert "Apps" not in _args.SERVABLE_GROUPS and "V1" not in _args.SERVABLE_VERSIONS
    assert mapper.rest_mapping(DEPLOY, "v1").resource.resource == "deployments"


class _Claims(str):
    """A str whose content is one name but whose hash and equality claim another (and everything)."""

    def __init__(self, content: str, claimed: str) -> None:
        self.claimed = claimed

    def __new__(cls, content: str, claimed: str) -> _Claims:
        return super().__new__(cls, content)

    def __hash__(self) -> int:
        return hash(self.claimed)

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False


def test_a_str_subclass_cannot_make_an_upper_case_group_servable() -> None:
    """The table of names found servable is process-wide: were the caller's own object its key, a str subclass
    with servable content ("apps") whose hash and equality claim "APPS" would be recorded, and from then on the
    plain "APPS" of any mapper of the process would pass the table read and skip the check (a caller's mistake
    answered as a no-match). Only exact str names are recorded."""
    from restmapper.mapper import _args

    tables = [(table, dict(table)) for table in (_args.SERVABLE_GROUPS, _args.SERVABLE_VERSIONS)]
    cluster = FakeCluster.embedded()
    try:
        first = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
        with contextlib.suppress(RestMapperError):  # whatever it answers a caller that lies about its names
            first.rest_mapping(GroupKind(_Claims("apps", "APPS"), "Deployment"), _Claims("v1", "V1"))
        other = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=ManualClock())
        with pytest.raises(InvalidArgumentError, match='"apps"'):
            other.rest_mapping(GroupKind("APPS", "Deployment"))
        with pytest.raises(InvalidArgumentError, match='"v1"'):
            other.rest_mapping(DEPLOY, "V1")
        assert all(type(name) is str for table, _ in tables for name in table)
    finally:
        for table, saved in tables:
            table.clear()
            table.update(saved)


EMBEDDED = FakeCluster.embedded()


def _embedded_mapper() -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(EMBEDDED)))


def _cli_resolve(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["resolve", "--embedded", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("arg", "kubectl"), [
    ("deploy ", "deploy "), (" deploy", " deploy"), ("svc,,cm", ""), ("svc,", ""), (",svc", ""), (",", ""),
    ("svc, cm", " cm"), ("deploy , svc", "deploy "),
])
def test_empty_or_padded_types_fail_as_a_whole_with_kubectls_message(arg: str, kubectl: str) -> None:
    # kubectl 1.32 (kubectl get ARG -A against restmapper serve): error: the server doesn't have a resource type "X"
    message = f'the server doesn\'t have a resource type "{kubectl}"'
    code, out, err = _cli_resolve("--no-headers", arg)
    assert code == 1 and out == "", out
    assert err.startswith(f"error: {message}"), err
    for method in ("resolve_all", "resolve"):
        if method == "resolve" and "," in arg:
            continue
        with pytest.raises(InvalidArgumentError) as info:
            getattr(_embedded_mapper(), method)(arg)
        assert str(info.value).startswith(message) and not is_no_match(info.value), str(info.value)


def test_an_empty_element_is_refused_before_any_request() -> None:
    cluster = FakeCluster.embedded()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    with pytest.raises(InvalidArgumentError, match=r'resolve_all\("svc,cm"\)'):
        mapper.resolve_all("svc,,cm")
    assert cluster.requests == []


def test_library_message_for_type_name_keeps_naming_the_python_call() -> None:
    with pytest.raises(InvalidArgumentError, match=r'resolve\("deploy"\)'):
        _embedded_mapper().resolve("deploy/web")


def test_manifest_pair_message_has_an_apostrophe_not_a_quote() -> None:
    with pytest.raises(InvalidArgumentError) as info:
        _embedded_mapper().resolve("apps/v1 Deployment")
    assert "manifest's apiVersion" in str(info.value), str(info.value)
    assert 'from_api_version_and_kind("apps/v1", "Deployment")' in str(info.value)


def test_report_not_found_points_at_group_version_of_what_a_mapping_holds() -> None:
    mapper = _embedded_mapper()
    mapping = mapper.resolve("deploy")
    for wrong in (mapping.resource, mapping.group_version_kind):
        with pytest.raises(TypeError, match=r"\.group_version"):
            mapper.report_not_found(wrong)  # type: ignore[arg-type]
    mapper.report_not_found(mapping.resource.group_version)


@pytest.mark.parametrize("wrong", ["example.com/v1", "Example.com", "apps/", " apps", "example.com/v1/widgets"])
def test_invalidate_group_refuses_what_cannot_be_a_group(wrong: str) -> None:
    with pytest.raises(InvalidArgumentError, match="group"):
        _embedded_mapper().invalidate_group(wrong)


@pytest.fixture
def embedded_mapper() -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), clock=ManualClock())


@pytest.mark.parametrize("arg, words", [
    ("deploy,svc", r'resolve_all\("deploy,svc"\)'),
    ("all", r'resolve_all\("all"\)'),
    ("deployments/scale", r'resolve\("deployments"\)'),
    ("deploy/web", r'resolve\("deploy"\)'),
    ("apps/v1 Deployment", r'from_api_version_and_kind\("apps/v1", "Deployment"\)'),
])
def test_resolve_refuses_forms_that_are_not_one_resource_type(embedded_mapper: LazyRESTMapper, arg: str,
                                                              words: str) -> None:
    with pytest.raises(InvalidArgumentError, match=words) as info:
        embedded_mapper.resolve(arg)
    assert isinstance(info.value, ValueError) and not is_no_match(info.value)


def test_kubectl_forms_resolve_where_kubectl_resolves_them(embedded_mapper: LazyRESTMapper) -> None:
    """``kubectl get deploy,svc`` and ``kubectl get all`` work: through resolve_all / expand_category."""
    assert [m.resource.resource for m in embedded_mapper.resolve_all("deploy,svc")] == ["deployments", "services"]
    assert "pods" in [m.resource.resource for m in embedded_mapper.resolve_all("all")]
    gvk = GroupVersionKind.from_api_version_and_kind("apps/v1", "Deployment")
    assert embedded_mapper.rest_mapping(gvk).path(namespace="default") == \
        "/apis/apps/v1/namespaces/default/deployments"


def test_a_missing_type_that_is_no_category_is_still_a_no_match(embedded_mapper: LazyRESTMapper) -> None:
    with pytest.raises(LookupError) as info:
        embedded_mapper.resolve("xyzzy")
    assert is_no_match(info.value)


def test_resolve_all_refuses_type_name_forms(embedded_mapper: LazyRESTMapper) -> None:
    with pytest.raises(InvalidArgumentError, match=r'resolve_all\("deploy"\)'):
        embedded_mapper.resolve_all("deploy/web")


@pytest.mark.parametrize("arg", [["deploy"], {"deploy"}, ("deploy",)])
def test_resolve_of_a_collection_names_the_type_expected(arg: object) -> None:
    mapper = _embedded_mapper()
    mapper.resolve("deploy")
    with pytest.raises(TypeError, match=r"resolve\(\) takes a resource type argument as str, not"):
        mapper.resolve(arg)  # type: ignore[arg-type]


@pytest.mark.parametrize("api_version, kind", [(None, "Deployment"), (3, "Deployment"), ("apps/v1", None)])
def test_a_manifest_without_api_version_or_kind_is_a_type_error(api_version: object, kind: object) -> None:
    with pytest.raises(TypeError, match=r"from_api_version_and_kind.* as str, not .*a manifest without"):
        GroupVersionKind.from_api_version_and_kind(api_version, kind)  # type: ignore[arg-type]


def test_invalidate_group_version_hints_at_what_a_string_names() -> None:
    mapper = _embedded_mapper()
    with pytest.raises(TypeError, match=r"'example.com' is a group: call invalidate_group\('example.com'\)"):
        mapper.invalidate_group_version("example.com")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pass GroupVersion.parse\('example.com/v1'\)"):
        mapper.invalidate_group_version("example.com/v1")  # type: ignore[arg-type]
    assert GroupVersion.parse("example.com/v1") == GroupVersion("example.com", "v1")
