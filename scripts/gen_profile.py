#!/usr/bin/env python3
"""Generate the embedded cluster's data files from the shared discovery and CRD fixtures.

Usage (from the repository root, with ``../shared/fixtures`` present)::

    python scripts/gen_profile.py            # rewrite src/restmapper/testing/data/*.txt
    python scripts/gen_profile.py --check    # exit 1 if the committed files differ from a fresh generation

Sources and which one wins:

- Named groups come from ``discovery/aggregated_v2.json``: it is the newest document that describes the whole
  server at one instant (group order, version order with the preferred version first, resources, subresources
  and their response kinds). ``apis.json`` is a slightly different snapshot (it lists ``lifecycle.k8s.io``,
  absent from the aggregated document); it is *not* used, so that ``/apis`` (legacy) and the aggregated
  documents served by the fake cluster always agree, as they do on a real server.
- The core group ``v1`` exists only in ``discovery/api__v1.json`` (the aggregated document is the ``/apis`` one).
- ``storageVersionHash`` values are not in aggregated documents; they are taken from the per-group-version legacy
  files (``apis__<group>__<version>.json``) when that file lists the resource with a hash, and left out otherwise.
- Embedded CRDs come from the ``*.names.json`` summaries next to the CRD manifests in ``crds/`` (names, scope,
  per-version served/storage/subresources: all discovery needs; schemas are not kept).

The output is our own line format, documented in ``src/restmapper/testing/profile.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures"
DATA = REPO / "src" / "restmapper" / "testing" / "data"

# One letter per verb, so a verb list keeps its server order in a few characters.
VERB_CODES = {
    "create": "c",
    "delete": "d",
    "deletecollection": "D",
    "get": "g",
    "list": "l",
    "patch": "p",
    "update": "u",
    "watch": "w",
    "proxy": "x",
}

# Which CRD manifests the embedded cluster installs (directory under crds/, in this order).
EMBEDDED_CRD_DIRS = ("cert-manager", "cluster-api/v1.6.0", "argo-cd", "gateway-api", "external-snapshotter")


def _verbs(verbs: list[str]) -> str:
    unknown = [v for v in verbs if v not in VERB_CODES]
    if unknown:
        raise SystemExit(f"unknown verbs {unknown}: extend VERB_CODES here and in profile.py")
    return "".join(VERB_CODES[v] for v in verbs) or "-"


def _opt(prefix: str, values: list[str] | None) -> list[str]:
    return [f"{prefix}={','.join(values)}"] if values else []


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def _legacy_hashes(discovery: Path, group: str, version: str) -> dict[str, str]:
    path = discovery / f"apis__{group}__{version}.json"
    if not path.exists():
        return {}
    doc = _load(path)
    return {r["name"]: r["storageVersionHash"] for r in doc.get("resources", []) if r.get("storageVersionHash")}


def _core_lines(discovery: Path) -> list[str]:
    doc = _load(discovery / "api__v1.json")
    lines = ["G - v1", "V v1"]
    parents: dict[str, dict[str, Any]] = {}
    for r in doc["resources"]:
        name = r["name"]
        if "/" not in name:
            parents[name] = r
            lines.append(" ".join([
                "R", name, r.get("singularName") or "-", r["kind"], "N" if r["namespaced"] else "C",
                _verbs(r.get("verbs", [])), *_opt("s", r.get("shortNames")), *_opt("c", r.get("categories")),
                *_opt("h", [r["storageVersionHash"]] if r.get("storageVersionHash") else None),
            ]))
            continue
        parent, sub = name.split("/", 1)
        p = parents.get(parent)
        if p is None or lines[-1].split()[0] not in ("R", "S") or r.get("singularName"):
            raise SystemExit(f"unexpected subresource layout at {name}")
        if r["namespaced"] != p["namespaced"]:
            raise SystemExit(f"subresource {name} scope differs from its parent")
        rk = f"{r['group']}/{r['version']}" if r.get("group") or r.get("version") else None
        lines.append(" ".join(["S", sub, r["kind"], _verbs(r.get("verbs", [])), *_opt("k", [rk] if rk else None)]))
    return lines


def _group_lines(discovery: Path) -> list[str]:
    doc = _load(discovery / "aggregated_v2.json")
    lines: list[str] = []
    for item in doc["items"]:
        group = item["metadata"]["name"]
        versions = item["versions"]
        lines.append(" ".join(["G", group, *(v["version"] for v in versions)]))
        for v in versions:
            if v.get("freshness", "Current") != "Current":
                raise SystemExit(f"{group}/{v['version']} is not Current in the fixture")
            lines.append(f"V {v['version']}")
            hashes = _legacy_hashes(discovery, group, v["version"])
            for r in v.get("resources", []):
                rk = r["responseKind"]
                if rk.get("group") or rk.get("version"):
                    raise SystemExit(f"unexpected responseKind group/version on {group} {r['resource']}")
                h = hashes.get(r["resource"])
                lines.append(" ".join([
                    "R", r["resource"], r.get("singularResource") or "-", rk["kind"],
                    "N" if r["scope"] == "Namespaced" else "C", _verbs(r.get("verbs", [])),
                    *_opt("s", r.get("shortNames")), *_opt("c", r.get("categories")), *_opt("h", [h] if h else None),
                ]))
                for s in r.get("subresources", []):
                    srk = s["responseKind"]
                    gv = f"{srk['group']}/{srk['version']}" if srk.get("group") or srk.get("version") else None
                    lines.append(" ".join(["S", s["subresource"], srk["kind"], _verbs(s.get("verbs", [])),
                                           *_opt("k", [gv] if gv else None)]))
    return lines


def build_profile(fixtures: Path) -> str:
    """Return the text of ``kube-profile.txt`` built from ``fixtures/discovery``."""
    discovery = fixtures / "discovery"
    lines = [
        "# kube-restmapper built-in API profile: generated by scripts/gen_profile.py, do not edit by hand.",
        "# Core v1 from api__v1.json; named groups, in server priority order, from aggregated_v2.json.",
        "# Format: see restmapper/testing/profile.py.",
        *_core_lines(discovery),
        *_group_lines(discovery),
    ]
    return "\n".join(lines) + "\n"


def _crd_line(names: dict[str, Any]) -> str:
    n = names["names"]
    tokens = [
        "crd", names["group"], n["plural"], n.get("singular") or "-", n["kind"], n.get("listKind") or "-",
        "N" if names["scope"] == "Namespaced" else "C",
    ]
    versions = []
    for v in names["versions"]:
        flags = ("+" if v.get("served") else "") + ("*" if v.get("storage") else "")
        sub = v.get("subresources") or {}
        flags += ("s" if sub.get("status") else "") + ("c" if sub.get("scale") else "")
        flags += "d" if v.get("deprecated") else ""
        versions.append(f"{v['name']}:{flags}")
    tokens.append("v=" + ",".join(versions))
    tokens += _opt("s", n.get("shortNames")) + _opt("c", n.get("categories"))
    return " ".join(tokens)


def build_embedded_crds(fixtures: Path) -> str:
    """Return the text of ``embedded-crds.txt`` built from ``fixtures/crds/<dir>/*.names.json``."""
    lines = [
        "# kube-restmapper embedded CRDs: generated by scripts/gen_profile.py, do not edit by hand.",
        "# crd <group> <plural> <singular> <Kind> <ListKind> <N|C> v=<version>:<flags>,... [s=shortNames] "
        "[c=categories]",
        "# version flags: + served, * storage, s status subresource, c scale subresource, d deprecated",
    ]
    for directory in EMBEDDED_CRD_DIRS:
        for path in sorted((fixtures / "crds" / directory).glob("*.names.json")):
            doc = _load(path)
            for names in doc if isinstance(doc, list) else [doc]:
                lines.append(_crd_line(names))
    return "\n".join(lines) + "\n"


def outputs(fixtures: Path) -> dict[str, str]:
    """Return ``{file name: text}`` for every generated data file."""
    return {"kube-profile.txt": build_profile(fixtures), "embedded-crds.txt": build_embedded_crds(fixtures)}


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
            target.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
