"""A handler added while the informer is not yet readable still gets a synthetic add for every object the store
holds at registration, in the order of later events (as client-go's shared informer ``AddEventHandler``).

Two namespaces listed separately: team-a lists, team-b's list keeps answering 503, so the store holds team-a's
objects while the informer is not readable. The handler is added then; team-b's list is let through afterwards.
"""

from __future__ import annotations

import threading
from typing import Any

from helpers.kit import wait_until
from helpers.leader import candidate
from helpers.store import cm, object_cache

from restmapper.store import object_key
from restmapper.testing import FakeCluster, ManualClock

TEAM_B_LIST = "/api/v1/namespaces/team-b/configmaps"


def test_handler_added_while_one_namespace_fails_gets_the_other_namespaces_objects_once() -> None:
    cluster = FakeCluster()
    for ns in ("team-a", "team-b"):
        cluster.apply_object(cm("one", ns))
    fault = cluster.inject(TEAM_B_LIST, status=503, body="unavailable")
    seen: list[tuple[str, str]] = []
    lock = threading.Lock()

    def record(event: str, obj: dict[str, Any]) -> None:
        with lock:
            seen.append((event, object_key(obj)))

    def events() -> list[tuple[str, str]]:
        with lock:
            return list(seen)

    with cluster.serve() as served, object_cache(served, namespaces=["team-a", "team-b"]) as cache:
        informer = cache.informer("configmaps")
        assert informer.wait_until(lambda i: i.namespaces_state.get("team-a") == "synced", 10)
        assert not informer.has_synced
        cache.add_handler("configmaps", on_add=lambda o: record("add", o),
                          on_update=lambda old, new: record("update", new),
                          on_delete=lambda o: record("delete", o))
        assert wait_until(lambda: ("add", "team-a/one") in events(), 10), events()
        fault.remove()
        assert cache.wait_for_sync("configmaps", timeout=10)
        cluster.apply_object(cm("two", "team-a"))
        assert wait_until(lambda: ("add", "team-a/two") in events(), 10), events()
        assert events() == [("add", "team-a/one"), ("add", "team-b/one"), ("add", "team-a/two")]


def test_handler_bound_to_leadership_that_starts_during_the_initial_sync_gets_every_object_once() -> None:
    cluster, clock = FakeCluster(), ManualClock()
    for ns in ("team-a", "team-b"):
        cluster.apply_object(cm("one", ns))
    fault = cluster.inject(TEAM_B_LIST, status=503, body="unavailable")
    elector = candidate(cluster, clock, "me")
    seen: list[str] = []
    lock = threading.Lock()

    def record(obj: dict[str, Any]) -> None:
        with lock:
            seen.append(object_key(obj))

    def added() -> list[str]:
        with lock:
            return list(seen)

    with cluster.serve() as served, object_cache(served, namespaces=["team-a", "team-b"]) as cache:
        binding = cache.add_handler("configmaps", on_add=record, while_leading=elector.elector)
        informer = cache.informer("configmaps")
        assert informer.wait_until(lambda i: i.namespaces_state.get("team-a") == "synced", 10)
        assert not informer.has_synced
        elector.elector.tick()  # starts leading now: the handlers are attached to an informer not yet readable
        assert binding.attached
        assert wait_until(lambda: "team-a/one" in added(), 10), added()
        fault.remove()
        assert cache.wait_for_sync("configmaps", timeout=10)
        cluster.apply_object(cm("two", "team-a"))
        assert wait_until(lambda: "team-a/two" in added(), 10), added()
        assert added() == ["team-a/one", "team-b/one", "team-a/two"]
