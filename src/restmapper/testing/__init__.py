"""Testing kit: an in-memory cluster that serves discovery exactly like kube-apiserver.

:class:`FakeCluster` models the served API (a recent release's built-in groups, CRDs from manifests,
aggregated APIs), failure modes (stale group versions, the listed-but-gone upgrade race), injected faults and a
request log. Use it through ``cluster.mock()`` (``responses``, for ``requests``-based code) or
``cluster.serve()`` (a loopback HTTP server with a kubeconfig, for kubectl and urllib3 clients; ``tls=True`` for
HTTPS) or :class:`InProcessTransport` (no socket at all). :class:`ServiceAccount` simulates a pod;
:func:`crd_manifest` and :class:`ManualClock` are what tests keep re-writing. The pytest plugin
(:mod:`restmapper.testing.pytest_plugin`) is registered on install: fixtures ``fake_cluster``,
``fake_cluster_server``, ``mapper``, ``manual_clock`` and ``restmapper_cluster``.

``EMBEDDED_CRD_NAMES`` (the CRDs :meth:`FakeCluster.embedded` installs) is computed on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from restmapper.testing._leases import LeasePartition
from restmapper.testing._pod import ServiceAccount
from restmapper.testing.builders import ManualClock, crd_manifest
from restmapper.testing.cluster import FakeCluster, Fault, RecordedRequest
from restmapper.testing.crd import InvalidCRDError
from restmapper.testing.profile import APIProfile, embedded_crd_manifests, load_builtin_profile
from restmapper.testing.transport import InProcessTransport

if TYPE_CHECKING:
    from restmapper.testing.server import ServedCluster

__all__ = [
    "EMBEDDED_CRD_NAMES",
    "APIProfile",
    "FakeCluster",
    "Fault",
    "InProcessTransport",
    "InvalidCRDError",
    "LeasePartition",
    "ManualClock",
    "RecordedRequest",
    "ServedCluster",
    "ServiceAccount",
    "crd_manifest",
    "embedded_crd_manifests",
    "load_builtin_profile",
]


def __getattr__(name: str) -> Any:
    # Lazy so that importing the kit does not read the data files (import time matters).
    if name == "EMBEDDED_CRD_NAMES":
        from restmapper.testing.profile import embedded_crd_names

        return embedded_crd_names()
    if name == "ServedCluster":
        from restmapper.testing.server import ServedCluster

        return ServedCluster
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
