"""How the drop-in reads a ``resources.get``/``search`` call and matches it against one group's Resource objects.

:func:`parse` turns the keywords into a :class:`Query` once per computed answer (upstream's wildcards, the group
part of ``api_version``, unknown keywords); :func:`collect` gathers the matching ``Resource``/``ResourceList``
objects of the groups read, in discovery order, with the unreadable group versions in scope; :func:`choose`
applies ``get``'s tie-breaks. Candidates come from the per-version tables of :mod:`restmapper.dynamic._index`
(by kind, or by name, short name or category), so a question touches its matches, not every resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubernetes.dynamic.resource import Resource

from restmapper.cache import GroupEntry
from restmapper.dynamic._index import BASE_RESOURCE, Flavour, GroupResources, VersionResources, trait_key
from restmapper.mapper import unsafe_guess_kind_to_resource
from restmapper.model import GroupVersion

__all__ = ["FILTER_KEYWORDS", "Query", "asked", "choose", "collect", "parse", "passes"]

FILTER_KEYWORDS = frozenset({"name", "singular_name", "short_names", "categories", "namespaced", "verbs",
                             "preferred", "group_version"})
"""Resource attributes ``search``/``get`` accept as keyword filters, besides prefix, group, api_version, kind."""

_KEYWORDS = FILTER_KEYWORDS | {"prefix", "group", "api_version", "kind"}
_CASELESS = frozenset({"name", "singular_name"})
_LISTS = frozenset({"short_names", "categories", "verbs"})
_NARROWING = (("name", "n", "name"), ("singular_name", "n", "name"), ("short_names", "s", "short_name"),
              ("categories", "c", "category"))
"""Filters that narrow, most selective first: keyword, tag of its per-version table
(:func:`~restmapper.dynamic._index.trait_key`), keyword of ``groups_serving``."""
_MISSING = object()


def wild(value: Any) -> Any:
    """Upstream turns every falsy value and ``"*"`` into its wildcard (None)."""
    return None if not value or value == "*" else value


def _first(value: Any) -> str | None:
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) and value else None


@dataclass(slots=True)
class Query:
    """One ``get``/``search`` call, read once.

    Attributes:
        kwargs: the keywords as given.
        prefix: ``api``, ``apis`` or None.
        group: the group asked for (from ``group``, else the group part of ``api_version``), or None.
        version: the version asked for, or None.
        kind: the kind lowercased, or None (any).
        filters: the attribute filters given (not None), as ``(keyword, value)``.
        trait: the first of ``kind``'s traits a merged-index lookup can narrow by, as
            :meth:`~restmapper.mapper.LazyRESTMapper.groups_serving` keywords (empty: none narrows).
        key: the per-version table key of the most selective indexed filter (None: match by kind, or scan).
        tests: ``filters`` prepared once for :func:`passes` (the values lowercased where compared without case).
    """

    kwargs: dict[str, Any]
    prefix: str | None
    group: str | None
    version: str | None
    kind: str | None
    filters: tuple[tuple[str, Any], ...]
    trait: dict[str, str]
    key: str | None
    tests: tuple[tuple[str, int, Any, Any], ...] = ()

    def asked(self, method: str = "get") -> str:
        """The question in words (``the resource type of resources.get(kind='Node')``)."""
        return asked(self.kwargs, method)

    @property
    def kind_asked(self) -> Any:
        """The ``kind`` keyword as given, or None for a wildcard."""
        return wild(self.kwargs.get("kind"))


def parse(kwargs: dict[str, Any]) -> Query:
    """Read the keywords of a ``get``/``search`` call.

    Raises:
        TypeError: an unknown keyword; ``prefix``, ``group``, ``api_version`` or ``kind`` given as something other
            than a str (falsy values stay upstream's wildcards).
    """
    if not _KEYWORDS.issuperset(kwargs):
        unknown = sorted(set(kwargs) - _KEYWORDS)
        raise TypeError(f"resources.search()/get() got unexpected keyword argument(s) {', '.join(unknown)}; "
                        f"accepted: prefix, group, api_version, kind, {', '.join(sorted(FILTER_KEYWORDS))}")
    prefix = group = version = kind = None
    filters: list[tuple[str, Any]] = []
    for term, value in kwargs.items():  # upstream's wildcards (falsy values, "*") inlined: this runs per question
        if term in FILTER_KEYWORDS:
            if value is not None:
                filters.append((term, value))
        elif not value or value == "*":
            continue
        elif not isinstance(value, str):  # upstream fails on a list (unhashable) and never matches anything else
            raise TypeError(f"resources.search()/get() takes {term} as a str, not {type(value).__name__}: "
                            f"{term}={value!r} (one {term} per call; short_names, categories and verbs take lists)")
        elif term == "kind":
            kind = value
        elif term == "api_version":
            version = value
        elif term == "group":
            group = value
        else:
            prefix = value
    if group is None and isinstance(version, str) and "/" in version:
        group, _, version = version.partition("/")
    kind = kind if isinstance(kind, str) else None
    trait: dict[str, str] = {"kind": kind} if kind else {}
    key = None
    if filters:
        given = dict(filters)
        for term, tag, narrows in _NARROWING:
            if term in given:
                first = _first(given[term])
                if first is not None:
                    key = key or trait_key(tag, first)
                    if not trait:
                        trait[narrows] = first
    return Query(kwargs, prefix, group, version, kind.lower() if kind else None, tuple(filters), trait,
                 None if kind else key, _prepared(filters) if filters else ())


def asked(kwargs: dict[str, Any], method: str = "get") -> str:
    """The question of a ``resources.get(...)`` call, e.g. ``the resource type of resources.get(kind='Node')``."""
    return f"the resource type of resources.{method}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"


def _attribute(obj: Resource, term: str) -> Any:
    """``obj.term`` as upstream reads it, never through a ``ResourceList``'s ``__getattr__``: that calls
    ``base_resource()``, a coroutine in the asyncio libraries (left unawaited, it warns). Our lists carry their
    resource pre-resolved, so an attribute the list has not itself is read from the resource directly; the generic
    ``List`` has none (upstream's sync ``__getattr__`` then gives None, which no filter value equals)."""
    own = obj.__dict__
    if term in own:
        return own[term]
    if BASE_RESOURCE in own and not hasattr(type(obj), term):  # a ResourceList
        base = own[BASE_RESOURCE]
        return _MISSING if base is None else getattr(base, term, _MISSING)
    return getattr(obj, term, _MISSING)


_CASELESS_EQ, _MEMBER, _WHOLE, _EQUAL = range(4)


def _prepared(filters: list[tuple[str, Any]]) -> tuple[tuple[str, int, Any, Any], ...]:
    """``(keyword, how, value as given, value as compared)`` per filter: :func:`passes`'s branches chosen once
    per question (they depend on the value asked)."""
    out: list[tuple[str, int, Any, Any]] = []
    for term, wanted in filters:
        if term in _CASELESS and isinstance(wanted, str):
            out.append((term, _CASELESS_EQ, wanted, wanted.lower()))
        elif term in _LISTS and isinstance(wanted, str):
            out.append((term, _MEMBER, wanted, wanted.lower()))
        elif term in _LISTS and isinstance(wanted, (list, tuple)):
            out.append((term, _WHOLE, wanted, [str(w).lower() for w in wanted]))
        else:
            out.append((term, _EQUAL, wanted, wanted))
    return tuple(out)


def passes(obj: Resource, tests: tuple[tuple[str, int, Any, Any], ...]) -> bool:
    """True when ``obj`` has every attribute the filters :attr:`Query.tests` ask for (names without case; a string
    against a list attribute is membership, a list compares whole, as upstream); a ``ResourceList``'s are its
    resource's, as upstream's ``__getattr__`` gives them. Each asked value is lowercased once per question."""
    own = obj.__dict__
    for term, how, wanted, compared in tests:
        actual = own[term] if term in own else _attribute(obj, term)
        if how == _CASELESS_EQ:
            if isinstance(actual, str):
                if actual.lower() != compared:
                    return False
            elif actual != wanted:
                return False
        elif how == _MEMBER:
            if not isinstance(actual, list) or compared not in [a.lower() for a in actual]:
                return False
        elif how == _WHOLE:
            if not isinstance(actual, list) or [a.lower() for a in actual] != compared:
                return False
        elif actual != wanted:
            return False
    return True


def _match(vr: VersionResources, q: Query) -> Iterable[Resource]:
    tests = q.tests
    if q.kind is not None:
        candidates: Iterable[Resource] = vr.by_kind_lower.get(q.kind, ())
    elif q.key is not None:
        # Only objects whose filter attributes are their own or their resource's (see ``_index._by_trait``): a
        # ResourceList is matched on its resource directly, as reading them through it would.
        return [o for o in vr.by_trait.get(q.key, ()) if passes(o.__dict__.get(BASE_RESOURCE, o), tests)]
    else:
        candidates = vr.all
    return candidates if not tests else [o for o in candidates if passes(o, tests)]


def collect(entries: list[tuple[GroupEntry, GroupResources]], q: Query, generic_list: Resource
            ) -> tuple[list[Resource], dict[GroupVersion, BaseException]]:
    """The objects of ``entries`` matching ``q`` in discovery order, and the group versions in scope whose lack of
    a match proves nothing (failed, or of an outdated group: :meth:`~restmapper.cache.GroupEntry.unsure`)."""
    prefix, group, version, kind = q.prefix, q.group, q.version, q.kind
    results: list[Resource] = []
    failures: dict[GroupVersion, BaseException] = {}
    for entry, res in entries:
        name = res.name
        if not ((prefix == "api" and name) or (prefix == "apis" and not name) or (group is not None and name != group)):
            if entry.failed or entry.outdated:  # what it lacks proves nothing (DESIGN 5.10)
                failures.update(entry.unsure(version))
            if version is None:
                for vr in res.versions:
                    results.extend(_match(vr, q))
            else:
                one = res.by_version.get(version)
                if one is not None:
                    results.extend(_match(one, q))
        # Upstream serves the generic ``List`` kind under apis//v1.
        if (not name and group is None and version in (None, "v1") and prefix in (None, "apis")
                and kind in (None, "list") and passes(generic_list, q.tests)):
            results.append(generic_list)
    return results, failures


def _by_plural(results: list[Resource], kind: str, flavour: Flavour) -> list[Resource]:
    """Of resources sharing a kind, the one whose names are the kind's (``templates`` over ``processedtemplates``)."""
    if all(isinstance(r, flavour.resource_list) for r in results) and kind.lower().endswith("list"):
        # Pre-resolved when built (``base_resource()`` is a coroutine in the asyncio libraries).
        bases = [r.__dict__[BASE_RESOURCE] for r in results]
        chosen = _by_plural(bases, kind[:-4], flavour)
        return [r for r, b in zip(results, bases, strict=True) if b in chosen]
    plural, singular = unsafe_guess_kind_to_resource(kind)
    wanted = kind.lower()
    exact = [r for r in results if (r.__dict__.get("singular_name") or "").lower() == wanted]
    if len(exact) == 1:
        return exact
    guessed = [r for r in results if (r.__dict__.get("name") or "").lower() in (plural, singular)]
    return guessed if len(guessed) == 1 else results


def choose(results: list[Resource], q: Query, flavour: Flavour,
           version_rank: Callable[[str], dict[str, int]]) -> list[Resource]:
    """``get``'s tie-breaks among several matches: an exact ``api_version``, then non-List kinds, then (all in one
    group) the most preferred version (``version_rank``: a group's versions by priority), then (one version) the
    resource whose plural or singular is the kind's. One match (or none) is returned as it is."""
    if len(results) <= 1:
        return results
    api_version = q.kwargs.get("api_version")
    if api_version:
        results = [r for r in results if r.group_version == api_version] or results
    listing = flavour.resource_list
    if len(results) > 1 and not all(isinstance(r, listing) for r in results):
        results = [r for r in results if not isinstance(r, listing)]
    if len(results) > 1 and len({r.group for r in results}) == 1:
        rank = version_rank(results[0].group)
        best = min(rank.get(r.api_version, len(rank)) for r in results)
        results = [r for r in results if rank.get(r.api_version, len(rank)) == best]
    kind = q.kind_asked
    if len(results) > 1 and isinstance(kind, str) and len({r.group_version for r in results}) == 1:
        results = _by_plural(results, kind, flavour)
    return results
