"""Operator-shaped CRD groups for the benchmark cluster, taken from the real CRD fixtures.

``<repo>/../shared/fixtures/crds/INDEX.json`` summarises 45 upstream CRD manifests (cert-manager, istio,
gateway-api, cluster-api, argo-cd, flux, knative, external-snapshotter): group, scope, names, short names,
categories and per version served/storage/deprecated and the status/scale subresources. They make 13 API groups
(a CRD that appears at two upstream tags is taken once, at the tag serving more versions). Group ``i`` of a
benchmark cluster copies template ``i % 13`` with every name made unique by the suffix ``i`` (kind
``Certificate7``, plural ``certificates7``, short name ``cert7``, group ``g7.cert-manager.io``), so lookups are
unambiguous and the index sizes grow with the cluster as they would with real operators; categories get the
suffix ``-i`` too, except ``all`` (flux joins it upstream, so about one group in 13 does here).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from restmapper.model import version_priority_key

__all__ = ["FIXTURES", "GroupShape", "KindShape", "crd_manifests", "group_shapes", "templates"]

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "crds"
"""The shared CRD fixtures (never copied into the repository)."""

_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


@dataclass(frozen=True)
class KindShape:
    """One kind of a benchmark group, as the questions need it.

    Attributes:
        kind, plural, singular: the names (already suffixed).
        short_names, categories: as served.
        versions: the served versions of this kind, in the group's priority order (preferred first).
        namespaced: the scope.
    """

    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    versions: tuple[str, ...]
    namespaced: bool


@dataclass(frozen=True)
class GroupShape:
    """One benchmark group: its name, its served versions (priority order) and its kinds."""

    name: str
    versions: tuple[str, ...]
    kinds: tuple[KindShape, ...]
    template: str


@lru_cache(maxsize=1)
def templates() -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    """Return the fixture groups: (group name, CRD summaries), in INDEX.json order of first appearance.

    Raises:
        FileNotFoundError: when the shared fixtures are not next to the repository.
    """
    index = FIXTURES / "INDEX.json"
    if not index.is_file():
        raise SystemExit(f"bench: the CRD fixtures are not at {FIXTURES}; the benchmark builds its clusters from "
                         "them (they sit next to the repository, in ../shared/fixtures)")
    records = json.loads(index.read_text(encoding="utf-8"))
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in records:
        key = (rec["group"], rec["kind"])
        served = sum(1 for v in rec["versions"] if v["served"])
        if key not in chosen or served > sum(1 for v in chosen[key]["versions"] if v["served"]):
            chosen[key] = rec
    groups: dict[str, list[dict[str, Any]]] = {}
    for (group, _), rec in chosen.items():
        groups.setdefault(group, []).append(rec)
    return tuple((g, tuple(recs)) for g, recs in groups.items())


def _priority(versions: set[str]) -> tuple[str, ...]:
    return tuple(sorted(versions, key=version_priority_key))


def _suffixed_categories(categories: list[str] | None, i: int) -> list[str]:
    return [c if c == "all" else f"{c}-{i}" for c in categories or ()]


def _manifest(rec: dict[str, Any], group: str, i: int) -> dict[str, Any]:
    kind = f"{rec['kind']}{i}"
    names: dict[str, Any] = {"plural": f"{rec['plural']}{i}", "singular": f"{rec['singular']}{i}", "kind": kind,
                             "listKind": f"{kind}List"}
    if rec.get("shortNames"):
        names["shortNames"] = [f"{s}{i}" for s in rec["shortNames"]]
    if rec.get("categories"):
        names["categories"] = _suffixed_categories(rec["categories"], i)
    versions = []
    for v in rec["versions"]:
        entry: dict[str, Any] = {"name": v["name"], "served": v["served"], "storage": v["storage"],
                                 "schema": _SCHEMA}
        if v.get("deprecated"):
            entry["deprecated"] = True
        sub: dict[str, Any] = {}
        if v.get("status"):
            sub["status"] = {}
        if v.get("scale"):
            sub["scale"] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
        if sub:
            entry["subresources"] = sub
        versions.append(entry)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{names['plural']}.{group}"},
        "spec": {"group": group, "scope": rec["scope"], "names": names, "versions": versions},
    }


def group_name(i: int) -> str:
    """Return the name of benchmark group ``i``."""
    tmpl = templates()
    return f"g{i}.{tmpl[i % len(tmpl)][0]}"


def crd_manifests(i: int) -> list[dict[str, Any]]:
    """Return the CRD manifests of benchmark group ``i`` (template ``i % 13``, names suffixed with ``i``)."""
    tmpl = templates()
    _, recs = tmpl[i % len(tmpl)]
    group = group_name(i)
    return [_manifest(rec, group, i) for rec in recs]


def group_shapes(count: int) -> list[GroupShape]:
    """Return the shapes of benchmark groups ``0 .. count-1`` (what :func:`crd_manifests` serves)."""
    tmpl = templates()
    out = []
    for i in range(count):
        template, recs = tmpl[i % len(tmpl)]
        kinds = []
        group_versions: set[str] = set()
        for rec in recs:
            served = {v["name"] for v in rec["versions"] if v["served"]}
            group_versions |= served
            kinds.append((rec, served))
        order = _priority(group_versions)
        out.append(GroupShape(
            name=group_name(i), versions=order, template=template,
            kinds=tuple(KindShape(
                kind=f"{rec['kind']}{i}", plural=f"{rec['plural']}{i}", singular=f"{rec['singular']}{i}",
                short_names=tuple(f"{s}{i}" for s in rec.get("shortNames") or ()),
                categories=tuple(_suffixed_categories(rec.get("categories"), i)),
                versions=tuple(v for v in order if v in served), namespaced=rec["scope"] == "Namespaced")
                for rec, served in kinds)))
    return out
