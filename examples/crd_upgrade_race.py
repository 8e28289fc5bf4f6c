"""A Cluster API upgrade stops serving v1alpha4 while a controller runs (docs/design.md §1.2).

Legacy discovery lists cluster.x-k8s.io/v1beta1 and v1alpha4. The upgrade first leaves v1alpha4 listed but 404 on
its own path (the race), then marks it ``served: false``. Our mapper evicts the group on the 404 and heals; then the
same situation is shown to ``kubernetes.dynamic.DynamicClient`` (LazyDiscoverer, file cache in a temp dir).

Run: python examples/crd_upgrade_race.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from restmapper.discovery import DiscoveryClient
from restmapper.errors import RestMapperError
from restmapper.mapper import LazyRESTMapper
from restmapper.model import GroupKind, GroupVersion
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.watch import Watcher

GROUP = "cluster.x-k8s.io"
OLD = f"{GROUP}/v1alpha4"
KINDS = ("Cluster", "Machine", "MachineDeployment")


def controller_pass(mapper: LazyRESTMapper, transport: RequestsTransport) -> list[str]:
    """One reconcile pass: map each kind at every served version and GET the collection, as a controller would."""
    out = []
    for kind in KINDS:
        try:
            for mapping in mapper.rest_mappings(GroupKind(GROUP, kind)):
                gvr = mapping.resource
                status = transport.get(f"/apis/{gvr.group}/{gvr.version}/{gvr.resource}").status
                if status == 404:
                    mapper.report_not_found(GroupVersion(gvr.group, gvr.version))  # evicts the whole group
                out.append(f"{kind}@{gvr.version}:{status}")
        except RestMapperError as exc:
            out.append(f"{kind}:ERROR {type(exc).__name__}")
    return out


def dynamic_client_view(url: str, cache_dir: str, transport: RequestsTransport) -> None:
    from kubernetes import client, dynamic

    config = client.Configuration()
    config.host = url
    dyn = dynamic.DynamicClient(client.ApiClient(config),  # type: ignore[no-untyped-call]
                                cache_file=str(Path(cache_dir) / "discovery.json"))
    for version in ("v1alpha4", "v1beta1"):
        try:
            res = dyn.resources.get(api_version=f"{GROUP}/{version}", kind="Machine")
            status = transport.get(f"/apis/{res.group_version}/{res.name}").status
            print(f"  dynamic: Machine {version} -> {res.group_version}/{res.name} (GET there: {status})")
        except Exception as exc:  # print whatever it does, honestly
            print(f"  dynamic: Machine {version} -> {type(exc).__name__}: {str(exc).splitlines()[0][:100]}")


def main() -> None:
    cluster = FakeCluster.embedded(mode="legacy")
    cluster.set_served(OLD, True)  # before the upgrade both versions are served
    with cluster.serve() as served, tempfile.TemporaryDirectory() as cache_dir:
        transport = RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1))
        mapper = LazyRESTMapper(DiscoveryClient(transport))
        with Watcher(mapper) as watcher:
            assert watcher.wait_until_healthy(10)
            print("before upgrade:", " ".join(controller_pass(mapper, transport)))
            print("kubernetes.dynamic before the upgrade (warms its cache file):")
            dynamic_client_view(served.url, cache_dir, transport)

            cluster.set_listed_but_gone(OLD)  # upgrade race: still listed, 404 on its path
            print("race (listed but gone):", " ".join(controller_pass(mapper, transport)))
            print("kubernetes.dynamic during the race:")
            dynamic_client_view(served.url, cache_dir, transport)

            cluster.set_served(OLD, False)  # the upgrade completes: the watcher invalidates the group
            cluster.set_listed_but_gone(OLD, False)
            passes = [controller_pass(mapper, transport) for _ in range(2)]
            print("after upgrade:", " ".join(passes[-1]))
            healed = all(p.endswith(":200") for p in passes[-1]) and not any("v1alpha4" in p for p in passes[-1])
            print("ours healed:", healed)
            print("kubernetes.dynamic after the upgrade (same cache file, no restart):")
            dynamic_client_view(served.url, cache_dir, transport)
        if not healed:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
