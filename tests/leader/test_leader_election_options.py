"""An elector's options are checked up front: a clear InvalidArgumentError, never a failure at the first turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers.leader import NAME, NAMESPACE, mapper_for

from restmapper.errors import InvalidArgumentError
from restmapper.leader import AsyncLeaderElector, LeaderElector
from restmapper.testing import FakeCluster

BAD_OPTIONS = [
    ({"identity": "   "}, "identity"),
    ({"identity": "a/b"}, "identity"),
    ({"identity": "a\nb"}, "identity"),
    ({"identity": 7}, "identity"),
    ({"release_on_cancel": "no"}, "release_on_cancel"),
    ({"on_started_leading": "start"}, "on_started_leading"),
    ({"on_stopped_leading": 1}, "on_stopped_leading"),
    ({"on_new_leader": object()}, "on_new_leader"),
    ({"clock": 0.0}, "clock"),
    ({"retry_period": 1e-9}, "retry_period"),
]


@pytest.mark.parametrize("elector_type", [LeaderElector, AsyncLeaderElector])
@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS)
def test_bad_options_are_refused(elector_type: type[Any], options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        elector_type(mapper_for(FakeCluster.embedded()), NAME, NAMESPACE, **options)


@pytest.mark.parametrize(("name", "namespace"), [
    ("Controller", NAMESPACE), ("a/b", NAMESPACE), ("x" * 254, NAMESPACE), ("ctl-", NAMESPACE),
    (NAME, "kube.system"), (NAME, "n" * 64), (NAME, ""), (NAME, "../x")])
def test_a_lease_name_or_namespace_that_is_not_dns_1123_is_refused(name: str, namespace: str) -> None:
    with pytest.raises(InvalidArgumentError, match="DNS-1123"):
        LeaderElector(mapper_for(FakeCluster.embedded()), name, namespace)


def test_a_dotted_lease_name_is_accepted() -> None:
    assert LeaderElector(mapper_for(FakeCluster.embedded()), "my.controller-1", "kube-system").name == "my.controller-1"


def test_start_after_a_stop_of_a_never_started_elector_says_so() -> None:
    elector = LeaderElector(mapper_for(FakeCluster.embedded()), NAME, NAMESPACE, identity="a")
    elector.stop()
    with pytest.raises(InvalidArgumentError, match="stopped before it was started"):
        elector.start()

    async def scenario() -> None:
        async_elector = AsyncLeaderElector(mapper_for(FakeCluster.embedded()), NAME, NAMESPACE, identity="a")
        await async_elector.stop()
        with pytest.raises(InvalidArgumentError, match="stopped before it was started"):
            await async_elector.start()

    asyncio.run(scenario())
