#!/usr/bin/env python3
"""Generate the embedded cluster's data files from the shared discovery and CRD fixtures.

Usage (from the repository root, with ``../shared/fixtures`` present)::

    python scripts/gen_profile.py            # rewrite src/restmapper/testing/data/
    python scripts/gen_profile.py --check    # exit 1 if the committed files differ from a fresh generation

Each release profile (``data/profiles/<release>.json``) holds real discovery documents, in the legacy form the
``restmapper.wire`` parsers read: ``api`` (``APIVersions``), ``apis`` (``APIGroupList``: group order and version
order, preferred first) and ``resources`` (one ``APIResourceList`` per group version, ``v1`` for core), plus
``release``, ``gitVersion`` and the discovery ``modes`` that release serves (the first is its default).
Documents are parsed with ``restmapper.wire`` and written back with its encoders, so the data is exactly what
the parsers accept.

Sources, per release:

- ``1.35`` (aggregated v2, v2beta1 and legacy): named groups from ``discovery/aggregated_v2.json`` (the newest
  document describing the whole server at one instant; ``apis.json`` is a slightly different snapshot and is not
  used, so that legacy and aggregated discovery agree as on a real server); core ``v1`` from ``api__v1.json``;
  ``storageVersionHash`` from the per-group-version legacy files where they list it.
- ``1.27`` (the aggregated ``v2beta1`` era, 1.26-1.32: v2beta1 and legacy): named groups from
  ``discovery/aggregated_v2beta1.json`` (an older snapshot served as v2beta1), core ``v1`` from ``api__v1.json``.
- ``1.20`` (legacy discovery only): the complete legacy tree of a real v1.20.4 server
  (``captures/cben-kubernetes-discovery-samples/k0s-v0.11.0``), without its two CRD groups (``*.projectcalico.org``,
  ``*.k0sproject.io``), which are not built in.

Embedded CRDs (``data/embedded-crds.json``) are minimal ``apiextensions.k8s.io/v1`` manifests (names, scope,
per-version served/storage/deprecated/subresources; no schemas) built from the ``*.names.json`` summaries next
to the CRD manifests in ``crds/``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from restmapper.model import APIGroup, APIResourceList, GroupVersion  # noqa: E402
from restmapper.wire import (  # noqa: E402
    DocumentFormat,
    encode_api_group_list,
    encode_api_resource_list,
    encode_api_versions,
    parse_aggregated,
    parse_api_group_list,
    parse_api_resource_list,
)

DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures"
DATA = REPO / "src" / "restmapper" / "testing" / "data"
K0S = Path("discovery") / "captures" / "cben-kubernetes-discovery-samples" / "k0s-v0.11.0"
NOT_BUILT_IN = (".projectcalico.org", ".k0sproject.io")

# Which CRD manifests the embedded cluster installs (directory under crds/, in this order).
EMBEDDED_CRD_DIRS = ("cert-manager", "cluster-api/v1.6.0", "argo-cd", "gateway-api", "external-snapshotter")


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _legacy_hashes(discovery: Path, gv: GroupVersion) -> dict[str, str]:
    path = discovery / f"apis__{gv.group}__{gv.version}.json"
    if not path.exists():
        return {}
    doc = json.loads(_read(path))
    return {r["name"]: r["storageVersionHash"] for r in doc.get("resources", []) if r.get("storageVersionHash")}


def _with_hashes(lst: APIResourceList, hashes: dict[str, str]) -> APIResourceList:
    return replace(lst, resources=tuple(replace(r, storage_version_hash=hashes.get(r.name) or r.storage_version_hash)
                                        for r in lst.resources))


def _document(release: str, git_version: str, modes: list[str], groups: list[APIGroup],
              resources: dict[GroupVersion, APIResourceList]) -> dict[str, Any]:
    core = [gv for gv in resources if gv.group == ""]
    return {
        "release": release,
        "gitVersion": git_version,
        "modes": modes,
        "api": encode_api_versions([gv.version for gv in core]),
        "apis": encode_api_group_list(groups),
        "resources": {str(gv): encode_api_resource_list(lst) for gv, lst in resources.items()},
    }


def _core(discovery: Path) -> dict[GroupVersion, APIResourceList]:
    gv = GroupVersion("", "v1")
    return {gv: parse_api_resource_list(_read(discovery / "api__v1.json"), document="/api/v1", expected=gv)}


def build_aggregated_profile(fixtures: Path, source: str, fmt: DocumentFormat, release: str, git_version: str,
                             modes: list[str]) -> dict[str, Any]:
    """Return a profile whose named groups come from an aggregated discovery fixture."""
    discovery = fixtures / "discovery"
    parsed = parse_aggregated(_read(discovery / source), document="/apis", format=fmt)
    if parsed.stale:
        raise SystemExit(f"{source}: stale group versions {parsed.stale}")
    resources = _core(discovery)
    for gv, lst in parsed.resources.items():
        resources[gv] = _with_hashes(lst, _legacy_hashes(discovery, gv))
    return _document(release, git_version, modes, list(parsed.groups), resources)


def build_legacy_profile(fixtures: Path) -> dict[str, Any]:
    """Return the legacy-only 1.20 profile from the k0s capture (CRD groups left out)."""
    root = fixtures / K0S

    def body(*parts: str) -> bytes:
        text = (root.joinpath(*parts) / "index.json").read_text(encoding="utf-8")
        return text.encode("utf-8")

    version = json.loads(body("version"))
    groups = [g for g in parse_api_group_list(body("apis"), document="/apis")
              if not g.name.endswith(NOT_BUILT_IN)]
    resources = {GroupVersion("", "v1"): parse_api_resource_list(body("api", "v1"), document="/api/v1",
                                                                  expected=GroupVersion("", "v1"))}
    for group in groups:
        for v in group.versions:
            gv = GroupVersion(group.name, v)
            resources[gv] = parse_api_resource_list(body("apis", group.name, v), document=f"/apis/{gv}",
                                                    expected=gv)
    return _document("1.20", version["gitVersion"], ["legacy"], groups, resources)


def build_embedded_crds(fixtures: Path) -> list[dict[str, Any]]:
    """Return the embedded CRD manifests built from ``fixtures/crds/<dir>/*.names.json``."""
    manifests = []
    for directory in EMBEDDED_CRD_DIRS:
        for path in sorted((fixtures / "crds" / directory).glob("*.names.json")):
            doc = json.loads(_read(path))
            for names in doc if isinstance(doc, list) else [doc]:
                manifests.append(_crd_manifest(names))
    return manifests


def _crd_manifest(summary: dict[str, Any]) -> dict[str, Any]:
    n = summary["names"]
    names: dict[str, Any] = {"plural": n["plural"], "kind": n["kind"]}
    for key in ("singular", "listKind", "shortNames", "categories"):
        if n.get(key):
            names[key] = n[key]
    versions = []
    for v in summary["versions"]:
        version: dict[str, Any] = {"name": v["name"], "served": bool(v.get("served")),
                                   "storage": bool(v.get("storage"))}
        if v.get("deprecated"):
            version["deprecated"] = True
        sub = v.get("subresources") or {}
        subresources: dict[str, Any] = {}
        if sub.get("status"):
            subresources["status"] = {}
        if sub.get("scale"):
            subresources["scale"] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
        if subresources:
            version["subresources"] = subresources
        versions.append(version)
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{n['plural']}.{summary['group']}"},
        "spec": {"group": summary["group"], "names": names, "scope": summary["scope"], "versions": versions},
    }


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def outputs(fixtures: Path) -> dict[str, str]:
    """Return ``{path under data/: text}`` for every generated data file."""
    profiles = [
        build_aggregated_profile(fixtures, "aggregated_v2.json", DocumentFormat.AGGREGATED_V2, "1.35", "v1.35.0",
                                 ["aggregated", "aggregated-v2beta1", "legacy"]),
        build_aggregated_profile(fixtures, "aggregated_v2beta1.json", DocumentFormat.AGGREGATED_V2BETA1, "1.27",
                                 "v1.27.0", ["aggregated-v2beta1", "legacy"]),
        build_legacy_profile(fixtures),
    ]
    out = {f"profiles/{p['release']}.json": _dump(p) for p in profiles}
    out["embedded-crds.json"] = _dump(build_embedded_crds(fixtures))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="the shared fixtures folder")
    parser.add_argument("--check", action="store_true", help="only compare with the committed files")
    args = parser.parse_args(argv)
    if not (args.fixtures / "discovery").is_dir():
        print(f"fixtures not found at {args.fixtures}", file=sys.stderr)
        return 2
    stale = []
    for name, text in outputs(args.fixtures).items():
        target = DATA / name
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
