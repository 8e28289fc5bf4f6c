"""Bounded memory (DESIGN 6), and errors that travel.

- An oversized or malformed body is refused, and neither the error nor the cache that keeps it for its backoff keeps
  the body alive: errors hold at most a short, scrubbed excerpt.
- Every exception restmapper raises survives ``pickle`` with its fields (checked over the whole hierarchy, so a new
  error class is covered the day it is added), and a lookup failing in a ``ProcessPoolExecutor`` worker reaches
  the parent as the same typed error instead of breaking the pool.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import inspect
import multiprocessing
import pickle
import pkgutil
import socket
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pytest

import restmapper
from restmapper import LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.errors import (
    AmbiguousKindError,
    AmbiguousResourceError,
    APIStatusError,
    DiscoveryError,
    GroupDiscoveryError,
    MalformedDiscoveryError,
    MappingChangedError,
    NoKindMatchError,
    NoResourceMatchError,
    RequestTimeoutError,
    ResponseTooLargeError,
    RestMapperError,
    ShutDown,
    TransportError,
    WaitTimeoutError,
    WorkQueueTimeoutError,
    WriteNotObservedError,
)
from restmapper.model import (
    GroupKind,
    GroupResource,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    RESTMapping,
    Scope,
)
from restmapper.store import CacheSyncTimeoutError, ObjectWaitTimeoutError
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

BIG = 4 * 1024 * 1024
LARGE = 64 * 1024  # nothing this big may stay reachable from an error


def _module_dicts() -> set[int]:
    return {id(vars(m)) for m in list(sys.modules.values()) if m is not None}


def large_buffers(root: object) -> list[int]:
    """Sizes of the bytes/bytearray/str objects of at least LARGE reachable from ``root`` (modules not followed)."""
    skip = _module_dicts()
    seen: set[int] = set()
    stack: list[object] = [root]
    found: list[int] = []
    while stack:
        obj = stack.pop()
        if id(obj) in seen or id(obj) in skip:
            continue
        seen.add(id(obj))
        if isinstance(obj, (bytes, bytearray, str, memoryview)):
            size = obj.nbytes if isinstance(obj, memoryview) else len(obj)
            if size >= LARGE:
                found.append(size)
            continue
        if isinstance(obj, (types.ModuleType, type)):
            continue
        stack.extend(gc.get_referents(obj))
    return found


@contextlib.contextmanager
def injected(cluster: FakeCluster, path: str, **fault: Any) -> Iterator[None]:
    handle = cluster.inject(path, **fault)
    try:
        yield
    finally:
        handle.remove()


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[FakeCluster, str]]:
    cluster = FakeCluster(mode="legacy")
    with cluster.serve() as s:
        yield cluster, s.url


@contextlib.contextmanager
def unsized_server(body: bytes) -> Iterator[str]:
    """A server answering every request with ``body`` and no Content-Length: the cap must stop the reading."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn, contextlib.suppress(OSError):
                conn.settimeout(10)
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
                conn.sendall(body)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(10)
        listener.close()


def test_an_oversized_body_read_to_the_cap_is_not_kept_alive() -> None:
    """The cap is hit while reading (no Content-Length to refuse early): what was read must not outlive the error."""
    payload = b'{"kind":"APIResourceList","x":"' + b"a" * (2 * BIG) + b'"}'
    with unsized_server(payload) as url:
        transport = RequestsTransport(url, max_body_bytes=BIG, retry=RetryPolicy.no_retry())
        client = DiscoveryClient(transport)
        with pytest.raises(ResponseTooLargeError) as info:
            client.server_resources_for_group_version("apps/v1")
        error = info.value
        del info
        mapper = LazyRESTMapper(DiscoveryClient(transport))
        with pytest.raises(RestMapperError) as lookup:
            mapper.rest_mapping(GroupKind("apps", "Deployment"))
        looked_up = lookup.value
        del lookup
    gc.collect()
    assert large_buffers(error) == []
    assert large_buffers(looked_up) == []
    assert large_buffers(mapper) == []


def test_a_malformed_body_is_not_kept_alive_by_the_error_or_the_cache(served: tuple[FakeCluster, str]) -> None:
    """The decoder's own exception holds the whole text (``doc``): it must not be chained into the typed error."""
    cluster, url = served
    payload = b'{"kind":"APIResourceList","groupVersion":"apps/v1","x":"' + b"a" * BIG + b'" oops'
    transport = RequestsTransport(url, max_body_bytes=4 * BIG, retry=RetryPolicy.no_retry())
    mapper = LazyRESTMapper(DiscoveryClient(transport))
    with injected(cluster, "/apis/apps/v1", status=200, body=payload, content_type="application/json"), \
            pytest.raises(RestMapperError) as info:
        mapper.rest_mapping(GroupKind("apps", "Deployment"))
    error = info.value
    assert MalformedDiscoveryError in {type(e) for e in _chain(error)}
    del info
    gc.collect()
    assert large_buffers(error) == []
    assert large_buffers(mapper) == []
    assert all(len(str(e)) < 2000 for e in _chain(error))


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    stack = [exc]
    while stack:
        e = stack.pop()
        if any(e is o for o in out):
            continue
        out.append(e)
        stack.extend(x for x in (e.__cause__, e.__context__) if x is not None)
        stack.extend(getattr(e, "failed", {}).values())
    return out


# --- pickle ----------------------------------------------------------------------------------------------------

GV = GroupVersion("apps", "v1")
GVR = GroupVersionResource("apps", "v1", "deployments")
GVK = GroupVersionKind("apps", "v1", "Deployment")
STATUS = APIStatusError("/apis/apps/v1", 503, "service unavailable", retry_after=2.0)
SAMPLES: dict[type[BaseException], BaseException] = {
    RestMapperError: RestMapperError("plain"),
    TransportError: TransportError("GET /apis: connection refused", path="/apis", transient=True),
    ResponseTooLargeError: ResponseTooLargeError("/apis", 1024),
    RequestTimeoutError: RequestTimeoutError("/apis", 32.0),
    APIStatusError: STATUS,
    DiscoveryError: DiscoveryError(failed={GV: STATUS}, partial=([], {})),
    GroupDiscoveryError: GroupDiscoveryError("apps", {GV: STATUS}),
    MalformedDiscoveryError: MalformedDiscoveryError("/apis/apps/v1", "resources[0].kind", "must be a string"),
    NoKindMatchError: NoKindMatchError(GroupKind("example.com", "Widget"), ["v1", "v2"]),
    NoResourceMatchError: NoResourceMatchError(GVR),
    AmbiguousResourceError: AmbiguousResourceError(GVR, [GVR, GroupVersionResource("x", "v1", "deployments")], [GVK]),
    AmbiguousKindError: AmbiguousKindError(GVK, [GVR], [GVK, GroupVersionKind("x", "v1", "Deployment")]),
    WaitTimeoutError: WaitTimeoutError(GroupKind("example.com", "Widget"), 5.0,
                                       NoKindMatchError(GroupKind("example.com", "Widget"))),
    CacheSyncTimeoutError: CacheSyncTimeoutError("Widget.example.com", 30.0, STATUS),
    ObjectWaitTimeoutError: ObjectWaitTimeoutError("Widget.example.com", "default", "w1", 10.0, "42", 3),
    WriteNotObservedError: WriteNotObservedError("Widget.example.com", "default", "w1", 10.0, "42",
                                                 {"metadata": {"name": "w1", "resourceVersion": "42"}}),
    MappingChangedError: MappingChangedError(
        "create", RESTMapping(GroupVersionResource("example.com", "v1alpha1", "widgets"),
                            GroupVersionKind("example.com", "v1alpha1", "Widget"), Scope.NAMESPACED),
        RESTMapping(GroupVersionResource("example.com", "v1", "widgets"),
                    GroupVersionKind("example.com", "v1", "Widget"), Scope.CLUSTER)),
    ShutDown: ShutDown("widgets"),
    WorkQueueTimeoutError: WorkQueueTimeoutError("widgets", 0.5),
}


def _all_error_classes() -> list[type[BaseException]]:
    for info in pkgutil.walk_packages(restmapper.__path__, "restmapper."):
        if info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)
    out: list[type[BaseException]] = []
    stack: list[type[BaseException]] = [RestMapperError]
    while stack:
        cls = stack.pop()
        if cls not in out:
            out.append(cls)
            stack.extend(cls.__subclasses__())
    return sorted(out, key=lambda c: f"{c.__module__}.{c.__qualname__}")


def _sample(cls: type[BaseException]) -> BaseException:
    """A sample instance: from the table, else built from the signature (plain and model-type parameters)."""
    if cls in SAMPLES:
        return SAMPLES[cls]
    if "__init__" not in {k for c in cls.__mro__ if issubclass(c, RestMapperError) for k in vars(c)}:
        return cls(f"sample {cls.__name__}")
    values: dict[str, Any] = {}
    for name, param in inspect.signature(cls).parameters.items():
        if param.default is not inspect.Parameter.empty or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = str(param.annotation)
        value = {"str": f"sample-{name}", "int": 7, "float": 1.5, "bool": True, "GroupVersion": GV,
                 "GroupKind": GroupKind("apps", "Deployment"), "GroupVersionKind": GVK,
                 "GroupVersionResource": GVR, "GroupResource": GroupResource("apps", "deployments")}.get(annotation)
        if value is None:
            pytest.fail(f"add a sample of {cls.__module__}.{cls.__qualname__} to SAMPLES (parameter {name}: "
                        f"{annotation})")
        values[name] = value
    return cls(**values)


def _same(a: object, b: object) -> bool:
    if isinstance(a, BaseException) and isinstance(b, BaseException):
        return type(a) is type(b) and str(a) == str(b) and a.args == b.args and _same(vars(a), vars(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("cls", _all_error_classes(), ids=lambda c: c.__qualname__)
def test_every_error_survives_pickle_with_its_fields(cls: type[BaseException]) -> None:
    original = _sample(cls)
    assert isinstance(original, cls)
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        copy = pickle.loads(pickle.dumps(original, protocol=protocol))
        assert _same(copy, original), (vars(copy), vars(original))


def test_pickled_errors_keep_what_the_helpers_look_at() -> None:
    wrapped = GroupDiscoveryError("example.com", {GroupVersion("example.com", "v1"): NoKindMatchError(
        GroupKind("example.com", "Widget"))})
    copy = pickle.loads(pickle.dumps(wrapped))
    assert copy.group == "example.com" and set(copy.failed) == {GroupVersion("example.com", "v1")}
    assert isinstance(copy.failed[GroupVersion("example.com", "v1")], NoKindMatchError)
    timeout = pickle.loads(pickle.dumps(RequestTimeoutError("/apis", 0.5)))
    assert isinstance(timeout, TimeoutError) and timeout.transient and timeout.timeout == 0.5


def _lookup_in_worker(url: str, group: str, kind: str) -> str:
    mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(url, retry=RetryPolicy.no_retry())))
    return str(mapper.rest_mapping(GroupKind(group, kind)).resource)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method")
def test_a_lookup_failing_in_a_process_pool_worker_reaches_the_parent_typed(served: tuple[FakeCluster, str]) -> None:
    cluster, url = served
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        with pytest.raises(NoKindMatchError) as info:
            pool.submit(_lookup_in_worker, url, "apps", "NoSuchKind").result(timeout=60)
        assert info.value.group_kind == GroupKind("apps", "NoSuchKind")
        with injected(cluster, "/apis/apps/v1", status=503, body="down"), \
                pytest.raises(RestMapperError) as failed:
            pool.submit(_lookup_in_worker, url, "apps", "Deployment").result(timeout=60)
        assert any(isinstance(e, APIStatusError) and e.status == 503 for e in _chain(failed.value))
        # The pool survived both: the next task runs.
        assert pool.submit(_lookup_in_worker, url, "apps", "Deployment").result(timeout=60) == str(
            GroupVersionResource("apps", "v1", "deployments"))
