"""A lookup that starts after ``invalidate_group`` / ``report_not_found`` returned never installs a fetch that
began before it (legacy discovery: a group version's document; aggregated: ``/apis``): it may share an in-flight
fetch (single flight) whose responses predate what it was told; then it asks once more.
The transport holds one response (computed from the old cluster state) until the second lookup has joined."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from restmapper import GroupKind
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.model import GroupVersion
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest

W = GroupKind("a.example.com", "Widget")


class HeldTransport(InProcessTransport):
    """Holds the next response of ``hold_path`` (already computed) until ``release`` is set."""

    def __init__(self, cluster: FakeCluster) -> None:
        super().__init__(cluster)
        self.hold_path: str | None = None
        self.read = threading.Event()
        self.release = threading.Event()

    def get(self, path: str, headers: Any = None, **kw: Any) -> Any:
        response = super().get(path, headers, **kw)
        if self.hold_path is not None and path == self.hold_path:
            self.hold_path: str | None = None
            self.read.set()
            self.release.wait(10)
        return response


def _scenario(tell: str, mode: str = "legacy") -> tuple[list[tuple[str, str]], float | None]:
    cluster = FakeCluster(builtin=True, mode=mode)
    cluster.add_crd(crd_manifest("a.example.com", "Widget", scope="Namespaced"))
    transport = HeldTransport(cluster)
    m = LazyRESTMapper(DiscoveryClient(transport), clock=ManualClock())
    for _ in range(4):
        assert m.rest_mapping(W).scope.value == "Namespaced"
    # Thread 1 refreshes group a; its fetch of /apis/a.example.com/v1 reads the old cluster and is held.
    transport.hold_path = "/apis/a.example.com/v1" if mode == "legacy" else "/apis"
    m.invalidate_group("a.example.com")
    out: list[tuple[str, str]] = []
    t1 = threading.Thread(target=lambda: out.append(("thread1", m.rest_mapping(W).scope.value)))
    t1.start()
    assert transport.read.wait(10)
    # The CRD is recreated cluster-scoped, and the mapper is told.
    cluster.delete_crd("widgets.a.example.com")
    cluster.add_crd(crd_manifest("a.example.com", "Widget", scope="Cluster"))
    if tell == "invalidate_group":
        m.invalidate_group("a.example.com")
    else:
        m.report_not_found(GroupVersion("a.example.com", "v1"))
    # Returned. A call that starts now, while thread 1's fetch is still in flight:
    t2 = threading.Thread(target=lambda: out.append(("thread2 (after the tell)", m.rest_mapping(W).scope.value)))
    t2.start()
    _until(lambda: m.cache._flight.waiting() >= 1 or not t2.is_alive())  # thread 2 shares thread 1's fetch
    transport.release.set()
    t1.join()
    t2.join()
    out += [("later", m.rest_mapping(W).scope.value) for _ in range(3)]
    entry = m.cache.entry("a.example.com")
    return out, entry.fetched_at if entry else None




def _until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for a condition another thread makes true (bounded), not for a race."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.001)


@pytest.mark.parametrize("mode", ["legacy", "aggregated"])  # a group version's document, or /apis
@pytest.mark.parametrize("tell", ["invalidate_group", "report_not_found"])
def test_a_lookup_after_the_tell_does_not_install_a_fetch_that_began_before_it(tell: str, mode: str) -> None:
    out, _fetched_at = _scenario(tell, mode)
    assert out[0][0] == "thread1"  # began before the change: either answer is allowed
    assert [scope for _who, scope in out[1:]] == ["Cluster"] * 4, out
