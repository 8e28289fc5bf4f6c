"""A controller loop written for ``kubernetes.dynamic``, switched to self-healing discovery with one line.

The loop looks up ``Widget`` (group ``example.com``) by kind and lists it, as controllers do every reconcile.
Half-way, the CRD is upgraded: ``v1`` is added and ``v1alpha1`` stops being served (the Cluster API upgrade
race of docs/design.md §1.2). Upstream's LazyDiscoverer keeps answering from its cache and lists the removed
version forever; with ``discoverer=SelfHealingDiscoverer`` the 404 evicts the group and the next reconcile
uses ``v1``. Runs against the embedded cluster served on loopback; exits 0 when ours recovered.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from kubernetes import client as kclient
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient, LazyDiscoverer

from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.testing import FakeCluster


def widget_crd(versions: dict[str, bool], storage: str) -> dict[str, Any]:
    """The ``widgets.example.com`` CRD with the given ``{version: served}`` flags."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [{"name": v, "served": served, "storage": v == storage,
                          "schema": {"openAPIV3Schema": {"type": "object",
                                                         "x-kubernetes-preserve-unknown-fields": True}}}
                         for v, served in versions.items()],
        },
    }


def reconcile_loop(dyn: DynamicClient, cluster: FakeCluster, label: str, rounds: int = 4) -> str:
    """Run ``rounds`` reconciles, upgrading the CRD after the first; return the last version listed."""
    last = ""
    for i in range(rounds):
        if i == 1:
            cluster.add_crd(widget_crd({"v1alpha1": False, "v1": True}, storage="v1"))
            print(f"[{label}] -- CRD upgraded: v1 served, v1alpha1 no longer served")
        widgets = dyn.resources.get(group="example.com", kind="Widget")
        try:
            listed = widgets.get(namespace="default")
        except ApiException as exc:
            print(f"[{label}] reconcile {i}: {widgets.group_version} -> HTTP {exc.status}, will retry")
            continue
        last = widgets.group_version
        print(f"[{label}] reconcile {i}: listed {len(listed.items)} widgets via {last}")
    return last


def main() -> int:
    """Run the loop with upstream's discoverer and with ours; return 0 when ours ended on v1."""
    results = {}
    for label, discoverer in (("upstream LazyDiscoverer", LazyDiscoverer), ("SelfHealingDiscoverer", None)):
        cluster = FakeCluster.embedded()
        cluster.add_crd(widget_crd({"v1alpha1": True}, storage="v1alpha1"))
        with tempfile.TemporaryDirectory(prefix="restmapper-example-") as tmp, cluster.serve(
                kubeconfig_path=Path(tmp) / "kubeconfig") as served:
            api = kclient.ApiClient(kclient.Configuration(host=served.url))
            if discoverer is LazyDiscoverer:
                dyn = DynamicClient(api, cache_file=str(Path(tmp) / "cache.json"), discoverer=LazyDiscoverer)
            else:
                # The one-line switch:
                dyn = DynamicClient(api, discoverer=SelfHealingDiscoverer)
            results[label] = reconcile_loop(dyn, cluster, label)
    print()
    for label, version in results.items():
        print(f"{label:24} last successful list: {version or 'none'}")
    ok = results["SelfHealingDiscoverer"] == "example.com/v1"
    print("self-healing discoverer recovered" if ok else "self-healing discoverer did NOT recover")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
