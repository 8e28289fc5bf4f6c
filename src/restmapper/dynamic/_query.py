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
_SCOPE = ("prefix", "group", "api_version", "kind")
_MISSING = object()


def wild(value: Any) -> Any:
    """Upstream turns every falsy value and ``"*"`` into its wildcard (None)."""
    return None if not value or value == "*" else value


def _first(value: Any) -> str | None:
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return value if isinstance(value, str) and value else None


_Test = tuple[str, Callable[[Any, Any, Any], bool], Any, Any]
"""One prepared filter: ``(keyword, comparison, value as given, value as compared)``."""


@dataclass(slots=True)
class Query:
    """One ``get``/``search`` call, read once.

    Attributes:
        kwargs: the keywords as given.
        prefix: ``api``, ``apis`` or None.
        group: the group asked for (from ``group``, else the group part of ``api_version``), or None.
        version: the version asked for, or None.
        kind: the kind lowercased, or None (any).
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
    trait: dict[str, str]
    key: str | None
    tests: tuple[_Test, ...] = ()

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
    given = dict.fromkeys(_SCOPE)
    filters: list[tuple[str, Any]] = []
    for term, value in kwargs.items():  # upstream's wildcards (falsy values, "*") inlined: this runs per question
        if term in FILTER_KEYWORDS:
            if value is not None:
                filters.append((term, value))
        elif value and value != "*":
            if not isinstance(value, str):  # upstream fails on a list (unhashable), never matches anything else
                raise TypeError(f"resources.search()/get() takes {term} as a str, not {type(value).__name__}: "
                                f"{term}={value!r} (one {term} per call; short_names, categories and verbs take "
                                f"lists)")
            given[term] = value
    group, version, kind = given["group"], given["api_version"], given["kind"]
    if group is None and version is not None and "/" in version:
        group, _, version = version.partition("/")
    if kind is not None:
        return Query(kwargs, given["prefix"], group, version, kind.lower(), {"kind": kind}, None,
                     _prepared(filters) if filters else ())
    trait, key = _narrowing(filters)
    return Query(kwargs, given["prefix"], group, version, None, trait, key, _prepared(filters))


def _narrowing(filters: list[tuple[str, Any]]) -> tuple[dict[str, str], str | None]:
    """The first indexed filter as a ``groups_serving`` trait, and the per-version table key of the most
    selective one (see :attr:`Query.trait` and :attr:`Query.key`)."""
    given = dict(filters)
    for term, tag, narrows in _NARROWING:
        first = _first(given.get(term))
        if first is not None:
            return {narrows: first}, trait_key(tag, first)
    return {}, None


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


def _caseless(actual: Any, wanted: Any, compared: Any) -> bool:
    return actual.lower() == compared if isinstance(actual, str) else actual == wanted  # type: ignore[no-any-return]


def _member(actual: Any, wanted: Any, compared: Any) -> bool:
    return isinstance(actual, list) and compared in [a.lower() for a in actual]


def _whole(actual: Any, wanted: Any, compared: Any) -> bool:
    return isinstance(actual, list) and [a.lower() for a in actual] == compared


def _equal(actual: Any, wanted: Any, compared: Any) -> bool:
    return actual == wanted  # type: ignore[no-any-return]


def _prepared(filters: list[tuple[str, Any]]) -> tuple[_Test, ...]:
    """The filters with :func:`passes`'s comparison chosen once per question (it depends on the value asked):
    names without case, a string against a list attribute as membership, a list compared whole, else equality."""
    out: list[_Test] = []
    for term, wanted in filters:
        if term in _CASELESS and isinstance(wanted, str):
            out.append((term, _caseless, wanted, wanted.lower()))
        elif term in _LISTS and isinstance(wanted, str):
            out.append((term, _member, wanted, wanted.lower()))
        elif term in _LISTS and isinstance(wanted, (list, tuple)):
            out.append((term, _whole, wanted, [str(w).lower() for w in wanted]))
        else:
            out.append((term, _equal, wanted, wanted))
    return tuple(out)


def passes(obj: Resource, tests: tuple[_Test, ...]) -> bool:
    """True when ``obj`` has every attribute the filters :attr:`Query.tests` ask for (names without case; a string
    against a list attribute is membership, a list compares whole, as upstream); a ``ResourceList``'s are its
    resource's, as upstream's ``__getattr__`` gives them. Each asked value is lowercased once per question."""
    own = obj.__dict__
    for term, test, wanted, compared in tests:
        if not test(own[term] if term in own else _attribute(obj, term), wanted, compared):
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


def _admits(name: str, q: Query) -> bool:
    """Whether the group ``name`` is in the scope ``q`` names (its group; core for ``api``, the others for
    ``apis``)."""
    if q.group is not None and name != q.group:
        return False
    return q.prefix is None or (q.prefix == "api") == (not name)


def _versions(res: GroupResources, version: str | None) -> tuple[VersionResources, ...]:
    """The versions of ``res`` in a question's scope: all (None), else the one asked if served."""
    if version is None:
        return res.versions
    one = res.by_version.get(version)
    return () if one is None else (one,)


def _lists_generic(q: Query) -> bool:
    """Whether ``q`` may match upstream's generic ``List`` kind, served under ``apis//v1``."""
    return (q.group is None and q.version in (None, "v1") and q.prefix in (None, "apis")
            and q.kind in (None, "list"))


def collect(entries: list[tuple[GroupEntry, GroupResources]], q: Query, generic_list: Resource
            ) -> tuple[list[Resource], dict[GroupVersion, BaseException]]:
    """The objects of ``entries`` matching ``q`` in discovery order, and the group versions in scope whose lack of
    a match proves nothing (failed, or of an outdated group: :meth:`~restmapper.cache.GroupEntry.unsure`)."""
    version = q.version
    results: list[Resource] = []
    failures: dict[GroupVersion, BaseException] = {}
    for entry, res in entries:
        if _admits(res.name, q):
            if entry.failed or entry.outdated:  # what it lacks proves nothing (DESIGN 5.10)
                failures.update(entry.unsure(version))
            for vr in _versions(res, version):
                results.extend(_match(vr, q))
        if not res.name and _lists_generic(q) and passes(generic_list, q.tests):
            results.append(generic_list)
    return results, failures


def _by_plural(results: list[Resource], kind: str) -> list[Resource]:
    """Of resources sharing a kind, the one whose names are the kind's (``templates`` over ``processedtemplates``)."""
    plural, singular = unsafe_guess_kind_to_resource(kind)
    wanted = kind.lower()
    exact = [r for r in results if (r.__dict__.get("singular_name") or "").lower() == wanted]
    if len(exact) == 1:
        return exact
    guessed = [r for r in results if (r.__dict__.get("name") or "").lower() in (plural, singular)]
    return guessed if len(guessed) == 1 else results


_Rank = Callable[[str], dict[str, int]]


def _exact_version(results: list[Resource], q: Query, flavour: Flavour, version_rank: _Rank) -> list[Resource]:
    api_version = q.kwargs.get("api_version")
    return ([r for r in results if r.group_version == api_version] or results) if api_version else results


def _not_lists(results: list[Resource], q: Query, flavour: Flavour, version_rank: _Rank) -> list[Resource]:
    kept = [r for r in results if not isinstance(r, flavour.resource_list)]
    return kept or results


def _preferred(results: list[Resource], q: Query, flavour: Flavour, version_rank: _Rank) -> list[Resource]:
    """All in one group: those at its most preferred version (``version_rank``: version -> priority)."""
    if len({r.group for r in results}) != 1:
        return results
    rank = version_rank(results[0].group)
    best = min(rank.get(r.api_version, len(rank)) for r in results)
    return [r for r in results if rank.get(r.api_version, len(rank)) == best]


def _named_after_kind(results: list[Resource], q: Query, flavour: Flavour, version_rank: _Rank) -> list[Resource]:
    """All of one version: the resource whose plural or singular is the kind's; ``...List`` entries by their
    resources (pre-resolved when built: ``base_resource()`` is a coroutine in the asyncio libraries)."""
    kind = q.kind_asked
    if not isinstance(kind, str) or len({r.group_version for r in results}) != 1:
        return results
    if not (kind.lower().endswith("list") and all(isinstance(r, flavour.resource_list) for r in results)):
        return _by_plural(results, kind)
    bases = [r.__dict__[BASE_RESOURCE] for r in results]
    chosen = _by_plural(bases, kind[:-4])
    return [r for r, b in zip(results, bases, strict=True) if b in chosen]


_TIE_BREAKS = (_exact_version, _not_lists, _preferred, _named_after_kind)


def choose(results: list[Resource], q: Query, flavour: Flavour, version_rank: _Rank) -> list[Resource]:
    """``get``'s tie-breaks among several matches, in turn while several remain: an exact ``api_version``, then
    non-List kinds, then (all in one group) the most preferred version (``version_rank``: a group's versions by
    priority), then (one version) the resource whose plural or singular is the kind's. One match (or none) is
    returned as it is."""
    for tie_break in _TIE_BREAKS:
        if len(results) <= 1:
            break
        results = tie_break(results, q, flavour, version_rank)
    return results
