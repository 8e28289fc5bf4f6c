"""The questions a controller or a kubectl user asks, in every shape, for ours and for the peer.

Each :class:`Question` knows how our :class:`~restmapper.mapper.LazyRESTMapper` (or our drop-in discoverer) asks
it and how ``kubernetes.dynamic`` asks the same thing in its fairest form, and how to reduce either answer to
comparable tuples, so the benchmark can check that both sides answered the same before comparing times.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from operator import methodcaller
from typing import Any

from bench.shapes import GroupShape
from restmapper.model import GroupKind, GroupVersionResource

__all__ = ["DROPIN_SHAPES", "MAPPER_SHAPES", "Question", "Shape", "all_questions", "answer_key", "working_set"]


@dataclass(frozen=True)
class Shape:
    """A question shape: its key, how ours asks it, how the peer asks it (None: the peer has no such form)."""

    key: str
    ours: str
    peer: str | None
    dropin: bool = False


MAPPER_SHAPES = (
    Shape("gvk", "GVK `rest_mapping(GroupKind, version)`", "`get(api_version, kind)`"),
    Shape("groupkind", "GroupKind `rest_mapping(GroupKind)`", "`search(group, kind)`, preferred version picked"),
    Shape("kind", "kind only `resolve('Kind')`", "`search(kind=...)` (walks every group), preferred picked"),
    Shape("kind.group", "kind and group `resolve('Kind.group')`", "`search(group, kind)`, preferred version picked"),
    Shape("resource", "resource only `resolve(plural|singular)`, `resource_for(GVR)`",
          "`search(name=...)` (walks every group), preferred picked"),
    Shape("resource.group", "`resolve(plural.group|singular.group)`, `resource_for(GVR)`",
          "`search(group, name=...)`, preferred picked"),
    Shape("resource.version.group", "`resolve(plural.version.group)`, `resource_for(GVR)`",
          "`get(api_version, name=...)`"),
    Shape("shortname", "short name `resolve('sn')`", "`search(short_names=[every short name of it])`: upstream "
          "has no short-name index (walks every group, matches the whole list); the drop-in row is the fair one"),
    Shape("category", "category `expand_category('cat')`", "a walk of `search()` filtering `categories`: "
          "upstream has no category lookup"),
)
DROPIN_SHAPES = (
    Shape("dropin.gvk", "drop-in `get(api_version, kind)`", "the same call", dropin=True),
    Shape("dropin.kind", "drop-in `get(kind=...)`", "the same call", dropin=True),
    Shape("dropin.search.kind", "drop-in `search(kind=...)`", "the same call", dropin=True),
    Shape("dropin.name", "drop-in `get(name=...)`", "the same call", dropin=True),
    Shape("dropin.shortname", "drop-in `get(short_names=[...])`", "the same call", dropin=True),
)
SHAPES = {s.key: s for s in (*MAPPER_SHAPES, *DROPIN_SHAPES)}


@dataclass(frozen=True)
class Question:
    """One question: its shape, a readable form, how ours and the peer ask it (each takes its client)."""

    shape: str
    text: str
    group: str
    ours: Callable[[Any], Any]
    peer: Callable[[Any], Any] | None


def _pick(results: Sequence[Any]) -> Any:
    """The peer's fair answer from a search: the preferred version's resource, else the first (priority order)."""
    for r in results:
        if getattr(r, "preferred", False):
            return r
    if not results:
        raise LookupError("no match")
    return results[0]


def _in_category(resources: Any, category: str) -> list[Any]:
    return [r for r in resources.search() if category in (getattr(r, "categories", None) or ())]


def answer_key(answer: Any) -> Any:
    """Reduce an answer of either side to comparable data: (group, version, plural) or a sorted tuple of them.

    A category's answer (a list of GroupResource, or the peer's resources in that category) becomes the sorted
    set of (group, plural), without versions.
    """
    if isinstance(answer, list):
        return tuple(sorted({answer_key(a) for a in answer}, key=repr))
    resource = getattr(answer, "resource", None)
    if resource is not None and hasattr(resource, "resource"):  # our RESTMapping
        return (resource.group, resource.version, resource.resource)
    if isinstance(answer, GroupVersionResource):
        return (answer.group, answer.version, answer.resource)
    if hasattr(answer, "api_version") and hasattr(answer, "name") and isinstance(answer.name, str):
        return (answer.group or "", answer.api_version, answer.name)  # the peer's (or the drop-in's) Resource
    if hasattr(answer, "group") and hasattr(answer, "resource"):  # our GroupResource
        return (answer.group, answer.resource)
    return repr(answer)


def category_key(answer: Any) -> tuple[tuple[str, str], ...]:
    """The (group, plural) set of a category answer of either side."""
    out = set()
    for a in answer:
        if hasattr(a, "api_version"):
            out.add((a.group or "", a.name))
        else:
            out.add((a.group, a.resource))
    return tuple(sorted(out))


def _picked(**criteria: Any) -> Callable[[Any], Any]:
    """How the peer asks a search question fairly: ``search(**criteria)``, then :func:`_pick` its answer."""
    return lambda peer: _pick(peer.search(**criteria))


def _kind_questions(g: GroupShape) -> list[Question]:
    out: list[Question] = []
    name = g.name
    for k in g.kinds:
        gk = GroupKind(name, k.kind)
        for v in k.versions:
            gv = f"{name}/{v}"
            out.append(Question("gvk", f"rest_mapping({gk}, {v!r})", name,
                                methodcaller("rest_mapping", gk, v),
                                methodcaller("get", api_version=gv, kind=k.kind)))
            out.append(Question("resource.version.group", f"resolve('{k.plural}.{v}.{name}')", name,
                                methodcaller("resolve", f"{k.plural}.{v}.{name}"),
                                methodcaller("get", api_version=gv, name=k.plural)))
            gvr = GroupVersionResource(name, v, k.plural)
            out.append(Question("resource.version.group", f"resource_for({gvr})", name,
                                methodcaller("resource_for", gvr),
                                methodcaller("get", api_version=gv, name=k.plural)))
            out.append(Question("dropin.gvk", f"get(api_version={gv!r}, kind={k.kind!r})", name,
                                methodcaller("get", api_version=gv, kind=k.kind),
                                methodcaller("get", api_version=gv, kind=k.kind)))
        out.append(Question("groupkind", f"rest_mapping({gk})", name, methodcaller("rest_mapping", gk),
                            _picked(group=name, kind=k.kind)))
        out.append(Question("kind", f"resolve({k.kind!r})", name, methodcaller("resolve", k.kind),
                            _picked(kind=k.kind)))
        out.append(Question("kind.group", f"resolve('{k.kind}.{name}')", name,
                            methodcaller("resolve", f"{k.kind}.{name}"),
                            _picked(group=name, kind=k.kind)))
        out.append(Question("resource", f"resolve({k.plural!r})", name, methodcaller("resolve", k.plural),
                            _picked(name=k.plural)))
        for gvr in (GroupVersionResource("", "", k.plural), GroupVersionResource("", "", k.singular)):
            out.append(Question("resource", f"resource_for({gvr})", name, methodcaller("resource_for", gvr),
                                _picked(name=k.plural)))
        out.append(Question("resource", f"resolve({k.singular!r})", name, methodcaller("resolve", k.singular),
                            _picked(name=k.plural)))
        gvr = GroupVersionResource(name, "", k.plural)
        out.append(Question("resource.group", f"resource_for({gvr})", name, methodcaller("resource_for", gvr),
                            _picked(group=name, name=k.plural)))
        out.append(Question("resource.group", f"resolve('{k.singular}.{name}')", name,
                            methodcaller("resolve", f"{k.singular}.{name}"),
                            _picked(group=name, name=k.plural)))
        out.append(Question("resource.group", f"resolve('{k.plural}.{name}')", name,
                            methodcaller("resolve", f"{k.plural}.{name}"),
                            _picked(group=name, name=k.plural)))
        for sn in k.short_names:
            out.append(Question("shortname", f"resolve({sn!r})", name, methodcaller("resolve", sn),
                                _picked(short_names=list(k.short_names))))
        out.append(Question("dropin.search.kind", f"search(kind={k.kind!r})", name,
                            methodcaller("search", kind=k.kind), methodcaller("search", kind=k.kind)))
        if len(k.versions) == 1:  # get() raises ResourceNotUniqueError for a kind served in several versions
            out.append(Question("dropin.kind", f"get(kind={k.kind!r})", name, methodcaller("get", kind=k.kind),
                                methodcaller("get", kind=k.kind)))
            out.append(Question("dropin.name", f"get(name={k.plural!r})", name, methodcaller("get", name=k.plural),
                                methodcaller("get", name=k.plural)))
            if k.short_names:
                sns = list(k.short_names)
                out.append(Question("dropin.shortname", f"get(short_names={sns!r})", name,
                                    methodcaller("get", short_names=sns), methodcaller("get", short_names=sns)))
    for cat in sorted({c for k in g.kinds for c in k.categories if c != "all"}):
        out.append(Question("category", f"expand_category({cat!r})", name, methodcaller("expand_category", cat),
                            partial(_in_category, category=cat)))
    return out


def all_questions(shapes: Sequence[GroupShape]) -> list[Question]:
    """Every distinct question of every shape the cluster ``shapes`` supports."""
    out: list[Question] = []
    for g in shapes:
        out.extend(_kind_questions(g))
    return out


def working_set(shapes: Sequence[GroupShape], size: int, seed: int = 13) -> list[Question]:
    """``size`` distinct questions drawn at random (seeded) from :func:`all_questions` (all when fewer)."""
    questions = all_questions(shapes)
    random.Random(seed).shuffle(questions)
    return questions[:size]
