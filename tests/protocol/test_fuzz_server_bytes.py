"""Fuzz every path that reads server bytes: any answer yields a value or a typed error (DESIGN section 6).

Three families, each with hypothesis:

- success bodies of every discovery document (``/api``, ``/apis``, ``/api/v1``, ``/apis/<g>/<v>``, ``/version``,
  aggregated and legacy): random bytes, random JSON, and real documents from the kit with one subtree replaced,
  removed or retyped;
- error answers on every path: any status with text bodies, HTML, random bytes and ``Status`` objects whose fields
  have the wrong types;
- watch event streams: random lines, random JSON and mutated real events, plus error statuses on the watch.

Anything but a :class:`~restmapper.errors.RestMapperError` (or a correct answer) is a defect. The suite runs a
bounded number of examples; ``RESTMAPPER_FUZZ_EXAMPLES=5000 pytest tests/protocol/test_fuzz_server_bytes.py``
(or the suite's long-run flag, ``HYPOTHESIS_PROFILE=explore``) runs longer.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from helpers.properties import EXPLORE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from restmapper import LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.errors import PartialDiscoveryWarning, RestMapperError, ShortNameConflictWarning
from restmapper.model import GroupKind, GroupVersion, GroupVersionResource
from restmapper.testing import FakeCluster
from restmapper.testing.transport import InProcessTransport
from restmapper.transport import Response
from restmapper.watch import Watcher
from restmapper.wire import ACCEPT_AGGREGATED, ACCEPT_JSON

# 20 derandomized examples per path and family by default (the whole file ran 4 minutes on a loaded CI machine at 40);
# HYPOTHESIS_PROFILE=explore runs the profile's number, RESTMAPPER_FUZZ_EXAMPLES=N exactly N (random each run).
EXAMPLES = int(os.environ.get("RESTMAPPER_FUZZ_EXAMPLES", settings.default.max_examples if EXPLORE else 20))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize="RESTMAPPER_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
SAFETY = 10.0


def _serving(mode: str, path: str, status: int, headers: dict[str, str], body: bytes) -> InProcessTransport:
    """The kit's in-process transport to a cluster whose answer on ``path`` is replaced by the fuzzed one."""
    cluster = FakeCluster(mode=mode)
    cluster.inject(path, status=status, body=body, headers=headers)
    return InProcessTransport(cluster)


# --- strategies ------------------------------------------------------------------------------------------------

_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=24)
            | st.sampled_from(["", "v1", "apps/v1", "Namespaced", "Cluster", "a/b/c", "Deployment", "Stale",
                               "Current", "APIGroupDiscoveryList", "Status", "apidiscovery.k8s.io/v2"]))
json_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=24)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _paths(value, (*prefix, i))


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> bytes:
    """``doc`` with one subtree replaced by random JSON, deleted, or turned into a wrong type; JSON-encoded."""
    doc = copy.deepcopy(doc)
    paths = list(_paths(doc))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        if not path:
            doc = draw(json_values)
            break
        parent: Any = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["replace", "delete", "retype"]))
            if action == "delete":
                del parent[path[-1]]
            elif action == "retype":
                value = parent[path[-1]]
                parent[path[-1]] = [value] if not isinstance(value, list) else {"x": value}
            else:
                parent[path[-1]] = draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or retyped the way there
    return json.dumps(doc).encode()


def _documents() -> dict[tuple[str, str], tuple[dict[str, str], Any]]:
    """Real answers of the kit: (mode, path) -> (headers, decoded body)."""
    out: dict[tuple[str, str], tuple[dict[str, str], Any]] = {}
    for mode, accept in (("aggregated", ACCEPT_AGGREGATED), ("legacy", ACCEPT_JSON)):
        cluster = FakeCluster(mode=mode)
        for path in ("/api", "/apis", "/api/v1", "/apis/apps/v1", "/version"):
            status, headers, body = cluster.handle("GET", path, {}, {"Accept": accept})
            assert status == 200
            out[(mode, path)] = (headers, json.loads(body))
    return out


DOCUMENTS = _documents()
CONTENT_TYPES = st.sampled_from([
    "application/json",
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
    "application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList",
    "text/plain; charset=utf-8", "text/html", "application/vnd.kubernetes.protobuf", "", ";;;=",
])


def _status_objects() -> st.SearchStrategy[bytes]:
    field = st.one_of(json_values, st.text(max_size=300))
    status = st.fixed_dictionaries({}, optional={
        "kind": st.sampled_from(["Status", "Other"]) | field, "apiVersion": st.just("v1") | field,
        "status": st.just("Failure") | field, "message": field, "reason": field,
        "code": st.integers(-5, 1000) | field,
        "details": st.fixed_dictionaries({}, optional={"name": field, "group": field, "kind": field,
                                                       "causes": field, "retryAfterSeconds": field}) | field})
    return status.map(lambda d: json.dumps(d).encode())


ERROR_BODIES = st.one_of(
    st.binary(max_size=400), _status_objects(),
    st.text(max_size=400).map(str.encode),
    st.just(b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"),
    st.just(b"[" * 5000 + b"]" * 5000),
)
ERROR_STATUSES = st.sampled_from([201, 204, 301, 304, 400, 401, 403, 404, 406, 409, 410, 429, 500, 502, 503, 504])


def _read_everything(transport: InProcessTransport, path: str) -> None:
    """Every public reader of ``path``, through the client and a mapper (with one retry allowed by policy)."""
    client = DiscoveryClient(transport)
    calls = {
        "/api": [client.fetch_core, client.fetch_root],
        "/apis": [client.fetch_named, client.fetch_root, client.server_groups_and_resources],
        "/api/v1": [lambda: client.server_resources_for_group_version(GroupVersion("", "v1"))],
        "/apis/apps/v1": [lambda: client.server_resources_for_group_version("apps/v1"),
                          client.server_groups_and_resources],
        "/version": [client.server_version],
    }[path]
    for call in calls:
        with contextlib.suppress(RestMapperError):
            call()
    mapper = LazyRESTMapper(DiscoveryClient(transport))
    for lookup in (lambda: mapper.rest_mapping(GroupKind("apps", "Deployment")),
                   lambda: mapper.rest_mapping(GroupKind("", "Pod")),
                   lambda: mapper.resolve("deploy"), lambda: mapper.resolve("xyzzy"),
                   lambda: mapper.resolve_all("all"),
                   lambda: mapper.kind_for(mapper.resource_for(GroupVersionResource("", "", "pods")))):
        # An answer despite an unreadable document comes with the library's typed warning (kubectl warns too).
        with warnings.catch_warnings(record=True) as caught, contextlib.suppress(RestMapperError):
            warnings.simplefilter("always")
            lookup()
        assert all(issubclass(w.category, (PartialDiscoveryWarning, ShortNameConflictWarning)) for w in caught), \
            [f"{w.category.__name__}: {w.message}" for w in caught]


PATHS = ["/api", "/apis", "/api/v1", "/apis/apps/v1", "/version"]


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
@pytest.mark.parametrize("path", PATHS)
@FUZZ
@given(data=st.data())
def test_success_bodies_of_every_document_yield_a_value_or_a_typed_error(mode: str, path: str,
                                                                         data: st.DataObject) -> None:
    headers, doc = DOCUMENTS[(mode, path)]
    body = data.draw(st.one_of(mutated(doc), mutated(doc), st.binary(max_size=200),
                               json_values.map(lambda v: json.dumps(v).encode())), label="body")
    content_type = data.draw(st.just(headers.get("Content-Type", "application/json")) | CONTENT_TYPES,
                             label="content_type")
    _read_everything(_serving(mode, path, 200, {**headers, "Content-Type": content_type}, body), path)


@pytest.mark.parametrize("path", PATHS)
@FUZZ
@given(status=ERROR_STATUSES, body=ERROR_BODIES, content_type=CONTENT_TYPES,
       retry_after=st.none() | st.text(max_size=30), mode=st.sampled_from(["aggregated", "legacy"]))
def test_error_answers_and_status_objects_on_every_path_yield_typed_errors(
        path: str, status: int, body: bytes, content_type: str, retry_after: str | None, mode: str) -> None:
    headers = {"Content-Type": content_type}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    _read_everything(_serving(mode, path, status, headers, body), path)


# --- watch streams ---------------------------------------------------------------------------------------------

_LIST = json.dumps({"kind": "CustomResourceDefinitionList", "apiVersion": "apiextensions.k8s.io/v1",
                    "metadata": {"resourceVersion": "10"}, "items": []}).encode()
_CRD_EVENT = {"type": "ADDED", "object": {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com", "uid": "u-1", "resourceVersion": "11", "generation": 1},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True}]},
    "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"},
               "conditions": [{"type": "Established", "status": "True"}]}}}


class _Lines:
    """A StreamResponse yielding scripted lines (then ending), or blocking until closed when ``lines`` is None."""

    def __init__(self, status: int, lines: list[bytes] | None, body: bytes = b"") -> None:
        self.status = status
        self.headers = {"Content-Type": "application/json"}
        self._lines = lines
        self._body = body
        self._closed = threading.Event()

    def iter_lines(self) -> Iterator[bytes]:
        if self._lines is None:
            self._closed.wait(SAFETY)
            return
        yield from self._lines

    def read(self) -> bytes:
        return self._body

    def close(self) -> None:
        self._closed.set()


class _WatchTransport(InProcessTransport):
    """Lists an empty CRD list; the first watch is the fuzzed one, the next ones block until closed."""

    def __init__(self, cluster: FakeCluster, first: _Lines) -> None:
        super().__init__(cluster)
        self.first = first
        self.opened = 0
        self.second = threading.Event()

    def get(self, path: str, headers: Mapping[str, str] | None = None, *, params: Mapping[str, str] | None = None,
            timeout: float | None = None) -> Response:
        if path.endswith("/customresourcedefinitions"):
            return Response(200, {"Content-Type": "application/json"}, _LIST, path)
        return super().get(path, headers, params=params, timeout=timeout)

    def stream(self, path: str, headers: Mapping[str, str] | None = None, *,
               params: Mapping[str, str] | None = None, timeout: float | None = None) -> Any:
        self.opened += 1
        if self.opened == 1:
            return self.first
        self.second.set()
        return _Lines(200, None)


WATCH_LINES = st.lists(st.one_of(
    st.binary(max_size=120),
    json_values.map(lambda v: json.dumps(v).encode()),
    mutated(_CRD_EVENT),
    mutated({"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old"}}),
    _status_objects().map(lambda s: b'{"type":"ERROR","object":' + s + b"}"),
    st.just(b"[" * 3000),
), min_size=1, max_size=6)


@FUZZ
@given(lines=WATCH_LINES, status=st.sampled_from([200, 200, 200, 403, 410, 500, 503]), body=ERROR_BODIES)
def test_watch_event_streams_yield_events_or_typed_errors(lines: list[bytes], status: int, body: bytes) -> None:
    transport = _WatchTransport(FakeCluster(), _Lines(status, lines, body))
    mapper = LazyRESTMapper(DiscoveryClient(transport))
    watcher = Watcher(mapper, transport=transport, watch_apiservices=False, sleep=lambda stop, seconds: None)
    seen: list[str] = []
    watcher.add_handler(lambda event_type, kind, obj: seen.append(event_type))
    watcher.start()
    try:
        if status == 403:
            # RBAC forbids the watch: the loop stops for good with the typed error.
            assert _wait(lambda: watcher.last_error is not None)
        else:
            assert transport.second.wait(SAFETY), "the loop never got past the fuzzed stream"
        error = watcher.last_error
    finally:
        assert watcher.stop(timeout=SAFETY)
    assert error is None or isinstance(error, RestMapperError), repr(error)
    assert all(t in ("ADDED", "MODIFIED", "DELETED") for t in seen)


def _wait(predicate: Any) -> bool:
    event = threading.Event()
    for _ in range(int(SAFETY / 0.01)):
        if predicate():
            return True
        event.wait(0.01)  # bounded polling of state: a safety net, not a race
    return bool(predicate())
