"""Writes through every transport (POST, PUT, PATCH, DELETE) and which failed writes a transport resends.

A write is resent only after a 429 (the server did nothing with it); after a 5xx or a dropped connection it may
have been applied, so the answer (or the error) goes back to the caller after one attempt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from kubernetes import client as k8s_client

from restmapper.errors import TransportError
from restmapper.testing import FakeCluster, InProcessTransport, ServedCluster
from restmapper.transport import ApiClientTransport, RequestsTransport, RetryPolicy, WritingTransport

CMS = "/api/v1/namespaces/default/configmaps"
JSON = {"Content-Type": "application/json"}
_NO_WAIT = RetryPolicy(max_attempts=3, initial_backoff=0.0, max_backoff=0.0, sleep=lambda _s: None)


def _requests(served: ServedCluster) -> WritingTransport:
    return RequestsTransport(served.url, retry=_NO_WAIT)


def _apiclient(served: ServedCluster) -> WritingTransport:
    config = k8s_client.Configuration()
    config.host = served.url
    return ApiClientTransport(k8s_client.ApiClient(config), retry=_NO_WAIT)


def _in_process(served: ServedCluster) -> WritingTransport:
    return InProcessTransport(served.cluster)


@pytest.fixture(params=[_requests, _apiclient, _in_process], ids=["requests", "apiclient", "in-process"])
def transport(request: pytest.FixtureRequest) -> Iterator[WritingTransport]:
    make: Callable[[ServedCluster], WritingTransport] = request.param
    with FakeCluster().serve() as served:
        yield make(served)


def _cm(name: str, **data: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}).encode()


def test_every_transport_sends_the_write_methods(transport: WritingTransport) -> None:
    assert isinstance(transport, WritingTransport)
    created = transport.request("POST", CMS, JSON, _cm("a", k="1"))
    assert created.status == 201
    obj = json.loads(created.body)
    obj["data"] = {"k": "2"}
    replaced = transport.request("PUT", f"{CMS}/a", JSON, json.dumps(obj).encode())
    assert replaced.status == 200 and json.loads(replaced.body)["data"] == {"k": "2"}
    patched = transport.request("PATCH", f"{CMS}/a", {"Content-Type": "application/merge-patch+json"},
                                b'{"data": {"k": "3"}}')
    assert patched.status == 200 and json.loads(patched.body)["data"] == {"k": "3"}
    assert transport.request("DELETE", f"{CMS}/a").status == 200
    assert transport.get(f"{CMS}/a").status == 404


@pytest.mark.parametrize("make", [_requests, _apiclient], ids=["requests", "apiclient"])
def test_a_write_answered_5xx_is_not_resent(make: Callable[[ServedCluster], WritingTransport]) -> None:
    with FakeCluster().serve() as served:
        served.cluster.inject(CMS, status=503, body="overloaded")
        served.cluster.clear_requests()
        answer = make(served).request("POST", CMS, JSON, _cm("a"))
        assert answer.status == 503
        assert served.cluster.request_count(CMS) == 1


@pytest.mark.parametrize("make", [_requests, _apiclient], ids=["requests", "apiclient"])
def test_a_write_answered_429_is_resent(make: Callable[[ServedCluster], WritingTransport]) -> None:
    with FakeCluster().serve() as served:
        served.cluster.inject(CMS, status=429, headers={"Retry-After": "0"}, times=1)
        served.cluster.clear_requests()
        answer = make(served).request("POST", CMS, JSON, _cm("a"))
        assert answer.status == 201
        assert served.cluster.request_count(CMS) == 2


@pytest.mark.parametrize("make", [_requests, _apiclient], ids=["requests", "apiclient"])
def test_a_write_whose_connection_dropped_is_not_resent(make: Callable[[ServedCluster], WritingTransport]) -> None:
    with FakeCluster().serve() as served:
        served.cluster.inject(CMS, reset=True)
        served.cluster.clear_requests()
        with pytest.raises(TransportError):
            make(served).request("POST", CMS, JSON, _cm("a"))
        assert served.cluster.request_count(CMS) == 1
        # A GET of the same path is retried as before.
        with pytest.raises(TransportError):
            make(served).get(CMS)
        assert served.cluster.request_count(CMS) == 1 + _NO_WAIT.max_attempts
