"""kubectl parity: ``restmapper api-resources`` and ``resolve`` against kubectl on the same served cluster."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from restmapper.cli import run
from restmapper.cli._api_resources import ResourceRow, discover
from restmapper.discovery import DiscoveryClient
from restmapper.model import APIResource
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (it is the oracle here)")

# A list request, as kubectl get logs it at -v=6: "GET http://127.0.0.1:PORT/apis/...?limit=500 200 OK in 1 ms".
LIST_LINE = re.compile(r"\bGET (http://\S+\?\S*limit=500\S*) (\d{3})")
METRICS = [APIResource("pods", "pod", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "node", False, "NodeMetrics", ("get", "list"))]


@dataclass
class Served:
    kubeconfig: Path
    cache_dir: Path


@pytest.fixture(scope="module", params=["aggregated", "legacy"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    cluster = FakeCluster.embedded(mode=request.param)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    with cluster.serve() as s:
        yield Served(s.kubeconfig_path, tmp_path_factory.mktemp(f"kubectl-cache-{request.param}"))


def _kubectl(served: Served, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, *args, "--kubeconfig", str(served.kubeconfig), "--cache-dir",
                           str(served.cache_dir)], capture_output=True, text=True, timeout=60, check=False)


def _ours(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _rows(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


@pytest.mark.parametrize("flags", [[], ["-o", "wide"], ["-o", "name"], ["--sort-by", "kind"], ["--sort-by", "name"],
                                   ["--namespaced=false", "--no-headers"], ["--verbs", "list,watch"],
                                   ["--api-group", "cert-manager.io", "-o", "wide"]])
def test_api_resources_same_rows_and_order(served: Served, flags: list[str]) -> None:
    theirs = _kubectl(served, "api-resources", *flags)
    code, out, err = _ours("api-resources", *flags, "--kubeconfig", str(served.kubeconfig))
    assert theirs.returncode == code == 0, (theirs.stderr, err)
    assert _rows(out) == _rows(theirs.stdout)
    # Same layout too: kubectl's tab writer.
    assert out == theirs.stdout


def _arguments(rows: list[ResourceRow]) -> list[str]:
    """One comma list per listable resource naming it every way (plural, singular, kind, short names, dotted),
    plus single arguments for mixed case, prefixes, categories and errors.

    kubectl requests a resource named twice in one list once, so a list whose forms all resolve to the same
    resource costs one GET, and any form resolving elsewhere shows up as an extra GET: one kubectl process
    checks every form of a resource.
    """
    args: dict[str, None] = {}
    for row in rows:
        r = row.resource
        if "list" not in r.verbs:
            continue  # kubectl get cannot list it
        forms = [r.name, r.singular_name, r.kind, *r.short_names]
        if row.group:
            forms += [f"{r.name}.{row.group}", f"{r.name}.{row.group_version.version}.{row.group}"]
        args.setdefault(",".join(dict.fromkeys(f for f in forms if f)), None)
    args.update(dict.fromkeys(["all", "svc,deploy", "deployments.apps", "deployments.v1.apps", "Deployment",
                               "DEPLOYMENTS", "deployment", "Deployment.apps", "pods.v1.", "hpa.autoscal", "ev",
                               "no-such-thing"]))
    return list(args)


def _kubectl_paths(served: Served, arg: str) -> tuple[list[str], bool]:
    proc = _kubectl(served, "get", arg, "-v=6")
    paths = [urlsplit(m.group(1)).path for m in LIST_LINE.finditer(proc.stderr)]
    return paths, proc.returncode == 0


def test_resolve_agrees_with_kubectl_get(served: Served) -> None:
    transport = RequestsTransport(_server_url(served))
    rows, failed = discover(DiscoveryClient(transport))
    assert failed is None
    args = _arguments(rows)
    assert len(args) > 90
    # Each element once, so that every JSON object's input names one element.
    parts = list(dict.fromkeys(part for arg in args for part in arg.split(",")))

    code, out, err = _ours("resolve", "-o", "json", *parts, "--kubeconfig", str(served.kubeconfig))
    assert code == 1  # no-such-thing
    ours: dict[str, list[str]] = {}
    errors: set[str] = set()
    for item in json.loads(out):
        if "error" in item:
            errors.add(item["input"])
            continue
        mapping_path = ("/api/" if not item["group"] else f"/apis/{item['group']}/") + item["version"]
        if item["namespaced"]:
            mapping_path += "/namespaces/default"
        ours.setdefault(item["input"], []).append(f"{mapping_path}/{item['resource']}")

    _kubectl(served, "api-resources")  # warm kubectl's discovery cache before the parallel runs
    with ThreadPoolExecutor(max_workers=4) as pool:
        theirs = dict(zip(args, pool.map(lambda a: _kubectl_paths(served, a), args), strict=True))

    # kubectl resolves the whole list before requesting anything: one unknown element fails it all.
    expected: dict[str, tuple[list[str], bool]] = {}
    for arg in args:
        parts = arg.split(",")
        if errors.intersection(parts):
            expected[arg] = ([], False)
        else:
            expected[arg] = (list(dict.fromkeys(p for part in parts for p in ours[part])), True)
    mismatches = {a: (theirs[a], expected[a]) for a in args if theirs[a] != expected[a]}
    assert not mismatches
    assert "no-such-thing" in errors
    assert sum(1 for a in args if expected[a][1]) > 80
    assert 'Warning: short name "ev" could also match lower priority resource events.events.k8s.io' in err


def _server_url(served: Served) -> str:
    import yaml

    doc = yaml.safe_load(served.kubeconfig.read_text())
    return str(doc["clusters"][0]["cluster"]["server"])
