"""Entries a test adds to ``FakeCluster.mock()``'s ``responses`` mock win over the cluster's routes.

The cluster answers every request no entry matches, for the whole block: an entry never uses up a route of the
cluster (with ``responses``' default registry the first of two matches is removed after one use, so the cluster's
route answered once instead of the entry and then vanished for every later request of that method).
"""

from __future__ import annotations

import pytest
import requests
import responses

from restmapper.discovery import DiscoveryClient
from restmapper.errors import APIStatusError
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy


def test_an_entry_of_the_test_answers_instead_of_the_cluster_every_time() -> None:
    cluster = FakeCluster()
    with cluster.mock() as rsps:
        rsps.get(f"{cluster.base_url}/api", json={"from": "the test"}, status=500)
        for _ in range(3):
            reply = requests.get(f"{cluster.base_url}/api")
            assert (reply.status_code, reply.json()) == (500, {"from": "the test"})
            assert requests.get(f"{cluster.base_url}/version").status_code == 200  # the cluster, still there
    assert cluster.request_count("/api") == 0


def test_the_cluster_answers_everything_no_entry_matches() -> None:
    cluster = FakeCluster()
    with cluster.mock() as rsps:
        rsps.post(f"{cluster.base_url}/api/v1/namespaces/default/configmaps", json={"refused": True}, status=403)
        assert requests.post(f"{cluster.base_url}/api/v1/namespaces/default/configmaps",
                             json={"metadata": {"name": "c"}}).status_code == 403
        created = requests.post(f"{cluster.base_url}/api/v1/namespaces/default/secrets",
                                json={"metadata": {"name": "s"}})
        assert created.status_code == 201
        assert requests.get(f"{cluster.base_url}/api/v1/namespaces/default/secrets/s").json()["metadata"]["name"] == "s"
    assert cluster.get_object("configmaps", "c", "default") is None


def test_library_code_sees_the_entry() -> None:
    cluster = FakeCluster()
    client = DiscoveryClient(RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1)))
    with cluster.mock() as rsps:
        rsps.get(f"{cluster.base_url}/apis", body="unavailable", status=503, content_type="text/plain")
        assert client.fetch_core().groups[0].name == ""
        with pytest.raises(APIStatusError) as info:
            client.fetch_named()
        assert info.value.status == 503


def test_assert_all_requests_are_fired_counts_the_tests_entries_only() -> None:
    cluster = FakeCluster()
    with cluster.mock(assert_all_requests_are_fired=True) as rsps:
        rsps.get(f"{cluster.base_url}/version", json={"gitVersion": "v9.9.9"})
        assert requests.get(f"{cluster.base_url}/version").json() == {"gitVersion": "v9.9.9"}
    with pytest.raises(AssertionError), cluster.mock(assert_all_requests_are_fired=True) as rsps:
        rsps.get(f"{cluster.base_url}/never-asked", status=200)
    with cluster.mock(assert_all_requests_are_fired=True):
        assert requests.get(f"{cluster.base_url}/api").status_code == 200


def test_entries_follow_responses_rules_among_themselves() -> None:
    cluster = FakeCluster()
    with cluster.mock() as rsps:
        rsps.add(responses.GET, f"{cluster.base_url}/api", status=500)
        rsps.add(responses.GET, f"{cluster.base_url}/api", status=502)
        assert [requests.get(f"{cluster.base_url}/api").status_code for _ in range(3)] == [500, 502, 502]
