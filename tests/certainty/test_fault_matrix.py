"""Property-style fault matrix: every discovery endpoint x every fault, for every kind of lookup (DESIGN 5.10).

The rule asserted in every cell (DESIGN 5.10, "an answer is never confidently wrong"):

    Whatever one discovery endpoint does (connection refused, read timeout, 404, 403, 429, 500, 503 text/plain,
    a malformed body, a stale aggregated group version, ``{}``, a core document listing no v1 or no resources), on
    a cold mapper or on a warm one whose entries expired, each of ``kind_for``, ``resource_for``, ``rest_mapping``,
    ``resolve``, the ``kubernetes.dynamic`` drop-in's ``resources.get`` and ``restmapper resolve`` gives either

    1. the answer a healthy server gives (the same GVK, GVR, mapping, Resource or table row), or
    2. a typed "could not find out" error: a ``DiscoveryError``/``TransportError`` with ``is_no_match`` False that
       names what was asked (the CLI: exit 1 with an ``error:`` line naming the argument);

    and a no-match (``NoKindMatchError``/``NoResourceMatchError``, the drop-in's ``ResourceNotFoundError``, the
    CLI's "the server doesn't have a resource type") only when a healthy server also says no-match *and* every
    document the lookup needs was read: the fault is on a document the lookup never reads, or it is a 404 on a
    named group version (the server saying that version is gone: still 404 after a re-list, as in the upgrade race
    of DESIGN 8.1, so a lookup in that group may say no-match too). Never another answer, never an untyped
    exception. A fault on an unrelated, lower-priority group version never fails a lookup, and the drop-in's
    ``resources.get`` answers whenever the faulted group version is another group's, ranked below its answer
    (``get(kind="Deployment")`` while ``cert-manager.io/v1`` is down: ``apps/v1``), with a
    ``PartialDiscoveryWarning`` naming exactly that group version when it could hold a second match.

Rule 2 is in the cells too: the cluster serves ``pods`` and ``nodes`` in metrics.k8s.io and a namespaced ``nodes``
in longhorn.io, so an unreadable core group that let another group answer would show as a wrong answer.
Places in the code that can break the rule, and where each is guarded: ``mapper/_certainty.py`` (module docstring).
"""

from __future__ import annotations

import functools
import io
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from kubernetes import client as kclient
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from restmapper import (
    APIResource,
    DiscoveryError,
    GroupKind,
    GroupVersionResource,
    MappingError,
    PartialDiscoveryWarning,
    TransportError,
    is_no_match,
)
from restmapper.cli import Session, run
from restmapper.discovery import DiscoveryClient
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

METRICS = [APIResource("pods", "pod", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "node", False, "NodeMetrics", ("get", "list"))]

FAULTS: dict[str, dict[str, Any]] = {
    "refused": dict(reset=True),
    "timeout": dict(latency=1.0),  # the cluster's sleep raises a read timeout instead of sleeping
    "404": dict(status=404, body="404 page not found"),
    "403": dict(status=403, body='{"kind":"Status","message":"forbidden","code":403}',
                content_type="application/json"),
    "429": dict(status=429, body="slow down", headers={"Retry-After": "1"}),
    "500": dict(status=500, body="etcdserver: request timed out"),
    "503": dict(status=503, body="the server is currently unable to handle the request", content_type="text/plain"),
    "malformed": dict(status=200, body='{"kind": "APIResourceList", "resources": [', content_type="application/json"),
    "stale": {},  # aggregated group versions only: marked Stale in the aggregated document
    "no-kind": dict(status=200, body="{}", content_type="application/json"),  # says nothing: not "nothing served"
    "empty": {},  # core documents only: the document's own kind listing nothing (see EMPTY)
}
_AGGREGATED_CT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
# A 200 for core that lists no v1 or no resources: core always exists and serves resources, so it is a failure of
# core. (An empty /apis or named group version is the server saying so: not a fault, not in the matrix.)
EMPTY = {
    ("legacy", "/api"): ('{"kind": "APIVersions", "versions": []}', "application/json"),
    ("legacy", "/api/v1"): ('{"kind": "APIResourceList", "groupVersion": "v1", "resources": null}', "application/json"),
    ("aggregated", "/api"): ('{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": []}',
                             _AGGREGATED_CT),
}
ENDPOINTS = {
    "aggregated": ["/api", "/apis", "/apis/cert-manager.io/v1", "/apis/metrics.k8s.io/v1beta1"],
    "legacy": ["/api", "/api/v1", "/apis", "/apis/cert-manager.io/v1", "/apis/metrics.k8s.io/v1beta1"],
}
UNRELATED = "/apis/metrics.k8s.io/v1beta1"  # lower priority than every target's group
TTL = 10.0


def _cells() -> Iterator[Any]:
    for mode, endpoints in ENDPOINTS.items():
        for endpoint in endpoints:
            for fault in FAULTS:
                is_gv = endpoint.count("/") == 3
                if fault == "stale" and not (mode == "aggregated" and is_gv):
                    continue
                if fault == "empty" and (mode, endpoint) not in EMPTY:
                    continue
                yield pytest.param(mode, endpoint, fault, id=f"{mode}-{endpoint}-{fault}")


@dataclass(frozen=True)
class Target:
    """What is looked up, in each lookup's terms."""

    arg: str  # resolve / CLI argument
    resource: GroupVersionResource  # kind_for / resource_for
    group_kind: GroupKind  # rest_mapping
    get: dict[str, str]  # the drop-in's resources.get keywords
    needs_only_apis: bool = False  # rest_mapping of a named group not listed reads /apis only


TARGETS = {
    "core": Target("pods", GroupVersionResource("", "", "pods"), GroupKind("", "Pod"),
                   dict(api_version="v1", kind="Pod")),
    "core-contested": Target("node", GroupVersionResource("", "", "nodes"), GroupKind("", "Node"),
                             dict(kind="Node", api_version="v1")),
    "named": Target("certificates", GroupVersionResource("", "", "certificates"),
                    GroupKind("cert-manager.io", "Certificate"),
                    dict(api_version="cert-manager.io/v1", kind="Certificate")),
    "kind-only": Target("Deployment", GroupVersionResource("", "", "deployments"), GroupKind("apps", "Deployment"),
                        dict(kind="Deployment")),
    "absent": Target("xyzzy", GroupVersionResource("", "", "xyzzies"), GroupKind("example.com", "Xyzzy"),
                     dict(kind="Xyzzy"), needs_only_apis=True),
}


class ReadTimeout:
    """The kit's ``sleep``: a read timeout where the injected latency would be (no real waiting)."""

    def __call__(self, seconds: float) -> None:
        raise requests.exceptions.ReadTimeout(f"injected read timeout after {seconds}s")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _crd(group: str, kind: str, plural: str, version: str, scope: str = "Namespaced") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": scope,
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"},
                 "versions": [{"name": version, "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]},
    }


def make_cluster(mode: str) -> FakeCluster:
    """A small cluster (few groups keep the legacy cells cheap) with every competitor the rules are about."""
    cluster = FakeCluster.empty(mode=mode, sleep=ReadTimeout())
    cluster.add_api_resources("v1", [APIResource("pods", "pod", True, "Pod", ("get", "list"), ("po",)),
                                     APIResource("nodes", "node", False, "Node", ("get", "list"), ("no",))])
    cluster.add_api_resources("apps/v1", [APIResource("deployments", "deployment", True, "Deployment",
                                                      ("get", "list"), ("deploy",))])
    cluster.add_crd(_crd("cert-manager.io", "Certificate", "certificates", "v1"))
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    cluster.add_crd(_crd("longhorn.io", "Node", "nodes", "v1beta2"))
    return cluster


def discovery(cluster: FakeCluster) -> DiscoveryClient:
    return DiscoveryClient(transport(cluster), max_workers=1)


def transport(cluster: FakeCluster) -> RequestsTransport:
    return RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))


Lookup = Callable[[Any, Target], Any]


def _cli(session: Session, target: Target) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["resolve", target.arg, "--no-headers"], session=session, stdout=out, stderr=err)
    return code, out.getvalue().strip(), err.getvalue().strip()


LOOKUPS: dict[str, Lookup] = {
    "kind_for": lambda m, t: m.kind_for(t.resource),
    "resource_for": lambda m, t: m.resource_for(t.resource),
    "rest_mapping": lambda m, t: m.rest_mapping(t.group_kind),
    "resolve": lambda m, t: m.resolve(t.arg),
}


@dataclass
class Clients:
    """Everything under test, over one cluster, sharing one clock."""

    mapper: LazyRESTMapper
    dropin: Any
    session: Session


def make_clients(cluster: FakeCluster, clock: Clock) -> Clients:
    mapper = LazyRESTMapper(discovery(cluster), ttl=TTL, clock=clock)
    api = kclient.ApiClient(kclient.Configuration(host=cluster.base_url))
    dropin = DynamicClient(api, discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, ttl=TTL, clock=clock, transport=transport(cluster))).resources
    session = Session(discovery(cluster))
    return Clients(mapper, dropin, session)


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "value", call()
    except ResourceNotFoundError as exc:
        return "no-match", exc
    except (MappingError, DiscoveryError, TransportError) as exc:
        return ("no-match" if is_no_match(exc) else "error"), exc


def _dropin_outcome(call: Callable[[], Any], endpoint: str | None = None) -> tuple[str, Any]:
    """The drop-in's outcome; a PartialDiscoveryWarning it emits must come with an answer and name only the
    faulted group version (``endpoint``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kind, value = _outcome(call)
    for warning in caught:
        if isinstance(warning.message, PartialDiscoveryWarning):
            assert kind == "value", (kind, value, warning.message)
            named = {f"/apis/{gv}" for gv in warning.message.failed}
            assert endpoint is not None and named == {endpoint}, (endpoint, warning.message)
    return kind, value


# Discovery priority of make_cluster's groups: core, then /apis in the kit's order (its CRD groups come first).
RANKS = {"": 0, "cert-manager.io": 1, "longhorn.io": 2, "apps": 3, "metrics.k8s.io": 4}


def _below_the_answer(endpoint: str, target: Target) -> bool:
    """Whether ``endpoint`` is a version of another named group, ranked below the target's group."""
    if endpoint.count("/") != 3:
        return False
    group, mine = endpoint.split("/")[2], target.group_kind.group
    return mine in RANKS and RANKS[group] > RANKS[mine]


def _dropin_value(resource: Any) -> tuple[str, str, bool]:
    return resource.group_version, resource.name, resource.namespaced


@functools.cache
def healthy(mode: str) -> dict[tuple[str, str], tuple[str, Any]]:
    """What a healthy server answers, per (target, lookup); errors as their kind only."""
    cluster = make_cluster(mode)
    answers: dict[tuple[str, str], tuple[str, Any]] = {}
    with cluster.mock():
        clients = make_clients(cluster, Clock())
        for tname, target in TARGETS.items():
            for lname, lookup in LOOKUPS.items():
                kind, value = _outcome(functools.partial(lookup, clients.mapper, target))
                answers[(tname, lname)] = (kind, value if kind == "value" else None)
            kind, value = _dropin_outcome(functools.partial(clients.dropin.get, **target.get))
            answers[(tname, "get")] = (kind, _dropin_value(value) if kind == "value" else None)
            answers[(tname, "cli")] = ("cli", _cli(clients.session, target))
    return answers


def _reads(mode: str, endpoint: str, fault: str, target: Target, lookup: str) -> bool:
    """Whether the lookup needs the faulted document to confirm a no-match."""
    if mode == "aggregated" and endpoint.count("/") == 3 and fault != "stale":
        return False  # an aggregated server's group version documents are never read
    if mode == "aggregated" and endpoint == "/api/v1":
        return False
    if lookup == "rest_mapping" and target.needs_only_apis:
        return endpoint == "/apis"
    return True


def _gone(endpoint: str, fault: str) -> bool:
    """A 404 on a named group version: the server says the version is gone (the upgrade race)."""
    return fault == "404" and endpoint.startswith("/apis/")


def _check(cell: str, mode: str, endpoint: str, fault: str, tname: str, lname: str,
           got: tuple[str, Any]) -> None:
    target = TARGETS[tname]
    want_kind, want = healthy(mode)[(tname, lname)]
    kind, value = got
    where = f"{cell} {tname} {lname}: {kind} {value!r}"
    if lname == "cli":
        code, out, err = value
        hcode, hout, _ = want
        if code == 0:
            assert (code, out) == (hcode, hout), where
        elif "doesn't have a resource type" in err:
            if _gone(endpoint, fault) and endpoint.split("/")[2] == target.group_kind.group:
                return
            assert hcode != 0 and (not _reads(mode, endpoint, fault, target, lname) or _gone(endpoint, fault)), where
        else:
            assert code == 1 and err.startswith("error: ") and target.arg in err, where
        return
    if lname == "get" and want_kind == "value" and _below_the_answer(endpoint, target):
        assert kind == "value", f"a failure ranked below the answer failed the drop-in's get: {where}"
    if kind == "value":
        assert want_kind == "value", where
        assert (_dropin_value(value) if lname == "get" else value) == want, where
    elif kind == "no-match":
        if _gone(endpoint, fault) and endpoint.split("/")[2] == target.group_kind.group:
            return  # listed, but 404 also after a re-list: the server says this version is not served
        assert want_kind == "no-match", where
        assert not _reads(mode, endpoint, fault, target, lname) or _gone(endpoint, fault), where
    else:
        assert isinstance(value, DiscoveryError | TransportError) and not is_no_match(value), where
        if lname != "get":
            asked = target.arg if lname == "resolve" else (
                target.group_kind.kind if lname == "rest_mapping" else target.resource.resource)
            assert asked in str(value), where
        else:
            assert target.get["kind"] in str(value), where
        if endpoint == UNRELATED:
            assert want_kind != "value", f"an unrelated group's failure failed a lookup: {where}"


def _inject(cluster: FakeCluster, endpoint: str, fault: str) -> None:
    if fault == "stale":
        cluster.set_stale(endpoint.removeprefix("/apis/"))
    elif fault == "empty":
        body, content_type = EMPTY[(cluster.mode, endpoint)]
        cluster.inject(endpoint, status=200, body=body, content_type=content_type)
    else:
        cluster.inject(endpoint, **FAULTS[fault])


@pytest.mark.parametrize(("mode", "endpoint", "fault"), list(_cells()))
@pytest.mark.parametrize("state", ["cold", "warm"])
def test_fault_matrix(mode: str, endpoint: str, fault: str, state: str) -> None:
    cell = f"[{state} {mode} {endpoint} {fault}]"
    cluster = make_cluster(mode)
    clock = Clock()
    with cluster.mock():
        clients = make_clients(cluster, clock)
        if state == "warm":
            for target in TARGETS.values():
                for lookup in LOOKUPS.values():
                    _outcome(functools.partial(lookup, clients.mapper, target))
                _dropin_outcome(functools.partial(clients.dropin.get, **target.get))
            clock.now += TTL + 1
        _inject(cluster, endpoint, fault)
        for tname, target in TARGETS.items():
            for lname, lookup in LOOKUPS.items():
                got = _outcome(functools.partial(lookup, clients.mapper, target))
                _check(cell, mode, endpoint, fault, tname, lname, got)
            got = _dropin_outcome(functools.partial(clients.dropin.get, **target.get), endpoint)
            _check(cell, mode, endpoint, fault, tname, "get", got)
            _check(cell, mode, endpoint, fault, tname, "cli", ("cli", _cli(clients.session, target)))
