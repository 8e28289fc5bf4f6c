"""A kopf operator that resolves the kinds its custom resources name through restmapper, never blocking its loop.

A ``Bundle`` (``bundles.example.com/v1``) lists resource types as a user types them (``deploy``,
``certificates.cert-manager.io``, ``hpa``); the create handler resolves each to its group, version, plural and scope
with :class:`~restmapper.aio.AsyncRESTMapper` and stores them in the status (kopf writes a handler's return value
under ``status.<handler>``). Discovery I/O runs in worker threads, warm answers come inline: other handlers and
kopf's own watch streams keep running while a cold group is discovered.

Run it in a cluster: ``kopf run examples/kopf_operator.py`` (in a pod, the service account is used); the tests also
run it with ``kopf run`` against the kit's loopback cluster. Run it here:
``python examples/kopf_operator.py`` calls the handlers against the embedded cluster served on loopback with a slow
discovery endpoint, and prints how often the event loop ticked while the handler waited for discovery.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

import kopf

from restmapper.aio import AsyncRESTMapper

_state: dict[str, AsyncRESTMapper] = {}


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """kopf's own credential loaders in the order restmapper resolves settings: ``$KUBECONFIG``, the pod's service
    account, ``~/.kube/config`` (so the operator and its mapper talk to the same cluster)."""
    if os.environ.get("KUBECONFIG"):
        return kopf.login_with_kubeconfig(**kwargs)
    return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
async def connect(**_: Any) -> None:
    """Build the mapper once: ``$KUBECONFIG``, the pod's service account, then ``~/.kube/config``."""
    _state["mapper"] = await AsyncRESTMapper.from_kubeconfig()


@kopf.on.create("example.com", "v1", "bundles")
async def resolve_bundle(spec: kopf.Spec, logger: logging.Logger | logging.LoggerAdapter[Any],
                         **_: Any) -> dict[str, Any]:
    """Resolve ``spec.resources``; an unknown name is reported in the status instead of failing the handler."""
    mapper = _state["mapper"]
    resolved: list[dict[str, Any]] = []
    for name in spec.get("resources", []):
        try:
            m = await mapper.resolve(name)
        except Exception as exc:  # a typed RestMapperError: report it, as kubectl would print it
            logger.warning("cannot resolve %r: %s", name, exc)
            resolved.append({"name": name, "error": str(exc)})
            continue
        resolved.append({"name": name, "group": m.resource.group, "version": m.resource.version,
                         "resource": m.resource.resource, "kind": m.group_version_kind.kind,
                         "namespaced": m.namespaced})
    return {"resolved": resolved}


async def _demo() -> int:
    from restmapper.testing import FakeCluster

    cluster = FakeCluster.embedded()
    cluster.inject("/apis", latency=0.5, times=1)  # a slow aggregated discovery answer
    with cluster.serve() as served:
        os.environ["KUBECONFIG"] = str(served.kubeconfig_path)
        await connect()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        status = await resolve_bundle(spec={"resources": ["deploy", "certificates.cert-manager.io", "nope"]},
                                      logger=logging.getLogger("demo"))
        task.cancel()
        for row in status["resolved"]:
            print(row)
        print(f"loop ticks while discovering: {ticks}")
        return 0 if ticks >= 10 and status["resolved"][0]["resource"] == "deployments" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(_demo()))
