"""Per-CRD validators that follow the CRD, including an acceptedNames change without a generation bump (seed 1).

kube-apiserver once served requests with per-CRD state built from an older CRD, because it reused entries keyed by
UID alone. ``GenerationCache.for_crds`` rebuilds when the UID, ``metadata.generation`` *or* ``status.acceptedNames``
(and served versions) differ; the Watcher keeps it fresh from CRD events, and every request re-checks it anyway.

Run: python examples/generation_cache.py
"""

from __future__ import annotations

import threading
from typing import Any

from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.store import GenerationCache
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy
from restmapper.watch import Watcher

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object"}}}]},
}
builds: list[str] = []


class Validator:
    """What a controller derives from a CRD: the kind and versions it accepts."""

    def __init__(self, crd: Any) -> None:
        self.kind = crd["status"]["acceptedNames"]["kind"]
        self.versions = {f"{crd['spec']['group']}/{v['name']}" for v in crd["spec"]["versions"] if v["served"]}
        self.generation = crd["metadata"]["generation"]
        builds.append(f"{self.kind}@gen{self.generation}")

    def validate(self, obj: dict[str, Any]) -> str:
        ok = obj["kind"] == self.kind and obj["apiVersion"] in self.versions
        return "accepted" if ok else f"rejected (expects kind {self.kind})"


def main() -> None:
    cluster = FakeCluster(builtin=True)
    cluster.add_crd(CRD)
    validators: GenerationCache[Any, Validator] = GenerationCache.for_crds(Validator)
    with cluster.serve() as served:
        mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(served.url, retry=RetryPolicy(max_attempts=1))))
        renamed = threading.Event()
        watcher = Watcher(mapper, generation_cache=validators)
        watcher.add_handler(lambda t, k, o: renamed.set() if o.get("status", {}).get("acceptedNames", {})
                            .get("kind") == "Gadget" else None)
        with watcher:
            assert watcher.wait_until_healthy(10)

            def request(obj: dict[str, Any]) -> str:
                # Every request presents the CRD it is served for: a stale entry can never be used.
                crd = cluster.get_crd("widgets.example.com")
                return validators.get(crd).validate(obj)

            print("Widget request:", request({"apiVersion": "example.com/v1", "kind": "Widget"}))
            gen_before = cluster.get_crd("widgets.example.com")["metadata"]["generation"]  # type: ignore[index]
            cluster.set_accepted_names("widgets.example.com", kind="Gadget", plural="gadgets")
            gen_after = cluster.get_crd("widgets.example.com")["metadata"]["generation"]  # type: ignore[index]
            print(f"acceptedNames changed to Gadget; generation {gen_before} -> {gen_after} (no bump)")
            assert renamed.wait(10)
            print("watcher refreshed the validator on the event:", builds[-1])
            print("Gadget request:", request({"apiVersion": "example.com/v1", "kind": "Gadget"}))
            print("Widget request:", request({"apiVersion": "example.com/v1", "kind": "Widget"}))
            print("mapper serves:", mapper.resolve("gadgets").group_version_kind)
            print("builds:", ", ".join(builds))
            if builds != ["Widget@gen1", "Gadget@gen1"]:
                raise SystemExit(1)


if __name__ == "__main__":
    main()
