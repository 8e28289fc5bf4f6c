"""Builders of group indexes for the mapper tests: hand-written groups and the real discovery fixtures.

The fixture loaders read JSON directly into model objects, so these tests do not depend on the wire parser.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from restmapper.mapper import GroupIndex, StaticRESTMapper, unsafe_guess_kind_to_resource
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion


def res(
    name: str,
    kind: str,
    *,
    singular: str | None = None,
    namespaced: bool = True,
    short: Sequence[str] = (),
    categories: Sequence[str] = (),
) -> APIResource:
    """An APIResource; ``singular`` defaults to the lowercased kind."""
    return APIResource(
        name=name,
        singular_name=kind.lower() if singular is None else singular,
        namespaced=namespaced,
        kind=kind,
        verbs=("get", "list"),
        short_names=tuple(short),
        categories=tuple(categories),
    )


def guessed(kind: str, *, namespaced: bool = True) -> APIResource:
    """What apimachinery ``DefaultRESTMapper.Add(kind)`` registers: guessed plural, singular left to the guess."""
    plural, _ = unsafe_guess_kind_to_resource(kind)
    return APIResource(name=plural, singular_name="", namespaced=namespaced, kind=kind)


def group(name: str, versions: dict[str, list[APIResource]], preferred: str | None = None,
          *, listed: Sequence[str] | None = None) -> GroupIndex:
    """A GroupIndex; versions listed in dict order unless ``listed`` says otherwise."""
    order = tuple(listed) if listed is not None else tuple(versions)
    api_group = APIGroup(name, order, preferred if preferred is not None else (order[0] if order else None))
    lists = {GroupVersion(name, v): APIResourceList(GroupVersion(name, v), tuple(rs)) for v, rs in versions.items()}
    return GroupIndex(api_group, lists)


def mapper(*indexes: GroupIndex, prioritized: bool = True) -> StaticRESTMapper:
    """A StaticRESTMapper; ``prioritized=False`` gives plain MultiRESTMapper behaviour (no narrowing)."""
    if prioritized:
        return StaticRESTMapper(indexes)
    return StaticRESTMapper(indexes, resource_priority=(), kind_priority=())


# --- real discovery fixtures ------------------------------------------------------------------------------


def _legacy_resource(raw: dict[str, Any]) -> APIResource:
    return APIResource(
        name=raw["name"],
        singular_name=raw.get("singularName", ""),
        namespaced=bool(raw.get("namespaced", False)),
        kind=raw.get("kind", ""),
        verbs=tuple(raw.get("verbs", ())),
        short_names=tuple(raw.get("shortNames", ())),
        categories=tuple(raw.get("categories", ())),
        group=raw.get("group"),
        version=raw.get("version"),
    )


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def legacy_indexes(fixtures_dir: Path) -> list[GroupIndex]:
    """Core plus every group of ``apis.json`` whose group-version files exist, in server order."""
    disc = fixtures_dir / "discovery"
    core_list = _load(disc / "api__v1.json")
    gv = GroupVersion("", "v1")
    out = [GroupIndex(APIGroup("", ("v1",), "v1"),
                      {gv: APIResourceList(gv, tuple(_legacy_resource(r) for r in core_list["resources"]))})]
    for raw in _load(disc / "apis.json")["groups"]:
        name = raw["name"]
        versions = tuple(v["version"] for v in raw["versions"])
        lists: dict[GroupVersion, APIResourceList] = {}
        for version in versions:
            path = disc / f"apis__{name}__{version}.json"
            if path.exists():
                gv = GroupVersion(name, version)
                lists[gv] = APIResourceList(gv, tuple(_legacy_resource(r) for r in _load(path)["resources"]))
        out.append(GroupIndex(APIGroup(name, versions, raw["preferredVersion"]["version"]), lists))
    return out


def aggregated_indexes(fixtures_dir: Path) -> list[GroupIndex]:
    """Core (legacy file) plus every group of ``aggregated_v2.json``; the first version is preferred."""
    disc = fixtures_dir / "discovery"
    out = legacy_indexes(fixtures_dir)[:1]
    for item in _load(disc / "aggregated_v2.json")["items"]:
        name = item["metadata"]["name"]
        versions = tuple(v["version"] for v in item["versions"])
        lists: dict[GroupVersion, APIResourceList] = {}
        for v in item["versions"]:
            gv = GroupVersion(name, v["version"])
            resources = []
            for r in v.get("resources", ()):
                resources.append(APIResource(
                    name=r["resource"],
                    singular_name=r.get("singularResource", ""),
                    namespaced=r.get("scope") == "Namespaced",
                    kind=(r.get("responseKind") or {}).get("kind", ""),
                    verbs=tuple(r.get("verbs", ())),
                    short_names=tuple(r.get("shortNames", ())),
                    categories=tuple(r.get("categories", ())),
                ))
                for sub in r.get("subresources", ()):
                    resources.append(APIResource(
                        name=f"{r['resource']}/{sub['subresource']}", singular_name="",
                        namespaced=r.get("scope") == "Namespaced",
                        kind=(sub.get("responseKind") or {}).get("kind", ""),
                    ))
            lists[gv] = APIResourceList(gv, tuple(resources))
        out.append(GroupIndex(APIGroup(name, versions, versions[0] if versions else None), lists))
    return out
