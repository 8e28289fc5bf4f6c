"""Rule: the kit keeps no object version that no request can read any more.

A list reads the state of its resource at one resourceVersion; the kit keeps recent states sorted so that later
pages cost their size. Once a state's revision is compacted away (older than the watch history, see
``history_limit``) and it is not its resource's latest state, no request can read it (410 Expired): the object
versions only it holds must be freed, as they were before states were kept, or a long test that rewrites a
collection and lists it holds many copies of the collection.
"""

from __future__ import annotations

import gc
from typing import Any, ClassVar

import requests

from restmapper.testing import FakeCluster


class Payload(str):
    """A ConfigMap value that counts its live copies per write round (the kit deep-copies what it stores)."""

    live: ClassVar[dict[int, int]] = {}
    round: int

    def __new__(cls, text: str, round: int = 0) -> Payload:
        self = super().__new__(cls, text)
        self.round = round
        cls.live[round] = cls.live.get(round, 0) + 1
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Payload:
        return Payload(str(self), self.round)

    def __del__(self) -> None:
        Payload.live[self.round] -= 1


def test_object_versions_of_compacted_states_are_freed_once_no_list_can_read_them() -> None:
    cluster = FakeCluster(history_limit=5)
    for round in range(20):  # each round rewrites the collection, then lists it
        for i in range(10):
            cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"cm{i}", "namespace": "default"},
                                  "data": {"v": Payload(f"round {round}", round)}})
        with cluster.mock():
            assert requests.get(cluster.base_url + "/api/v1/namespaces/default/configmaps", timeout=5).ok
    with cluster.mock():
        listed = requests.get(cluster.base_url + "/api/v1/namespaces/default/configmaps", timeout=5).json()
    assert {item["data"]["v"] for item in listed["items"]} == {"round 19"}
    gc.collect()
    kept = {r: n for r, n in Payload.live.items() if n}
    # Readable now: the latest round (the bucket) and the versions the 5 events of the watch history replaced.
    assert set(kept) <= {18, 19}, kept
