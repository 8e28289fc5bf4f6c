"""Generated clusters, changes and questions for the mapper's differential tests, and the two ways of answering.

Everything here uses the public API only (``restmapper.testing`` to build clusters, ``LazyRESTMapper``,
``StaticRESTMapper`` and the pure ``resolve``/``expand_category`` functions), so the tests keep working whatever
the mapper's internals become.

Vocabulary: every generated cluster and question draws from the same small pools of names, so questions often hit
(and often collide: one kind in several groups, one short name claimed twice, ``apps.openshift.io`` extending
``apps``, a short name spelled as another resource's guessed singular).

- :func:`clusters`: a :class:`ClusterSpec`: legacy or aggregated discovery, core ``v1`` and ``apps/v1`` as a
  kube-apiserver serves them, plus generated groups served by CRDs or by aggregated APIs (these may leave
  ``singularName`` empty: the mapper then guesses it from the kind).
- :func:`changes`: what happens to the cluster between questions (:class:`Change`): a CRD added, changed or
  deleted, a group version failing (stale in aggregated discovery, 503 in legacy) or recovering, and how the
  long-lived mapper learns of it (``invalidate_group`` of the touched group, or its TTL running out).
- :func:`questions`: one :class:`Question` of any shape the mapper answers.
- :func:`outcome`: what a call gave, reduced to what must agree (:data:`Outcome`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from restmapper import (
    AmbiguousKindError,
    AmbiguousResourceError,
    APIResource,
    DiscoveryError,
    GroupKind,
    GroupVersion,
    GroupVersionResource,
    InvalidArgumentError,
    NoKindMatchError,
    NoResourceMatchError,
    RestMapperError,
    is_no_match,
)
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import GroupIndex, LazyRESTMapper, ResolveResult, ShortNameConflictWarning, StaticRESTMapper
from restmapper.mapper import expand_category as static_expand_category
from restmapper.mapper import resolve as static_resolve
from restmapper.model import APIResourceList
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock, crd_manifest

TTL = 30.0
"""Seconds the long-lived mapper holds a group; "expire" moves its clock past this and the longest retry backoff."""
EXPIRE = TTL + 100.0
MISS_INTERVAL = 1.0
"""The mapper's ``miss_refresh_interval``: a no-match is re-checked once this many seconds passed."""

# --- vocabulary ----------------------------------------------------------------------------------------------

NAMED_GROUPS = ("apps.openshift.io", "example.com", "a.example.com", "ab.example.com")
"""Groups a generated cluster may add: one extends the built-in ``apps``, two extend the prefix ``a``."""
KINDS = ("Widget", "Gadget", "Deployment", "Pod", "Sprocket")
"""Kinds of generated resources: two also served by the built-in groups."""
SHORT_NAMES = ("deploy", "po", "wd", "gadget", "sp")
"""Short names: two claimed by built-in resources, one spelled as ``Gadget``'s singular."""
CATEGORIES = ("all", "fun")
VERSIONS = ("v1", "v1beta1", "v2")
PRIORITIES = (50, 100, 2000)
"""``groupPriorityMinimum`` of an aggregated API: 2000 sorts before CRDs (1000), the others after."""

BUILTIN_NAMES = ("pods", "pod", "po", "services", "svc", "nodes", "no", "gizmos", "gizmo", "deployments",
                 "deployment", "replicasets", "rs")
NAMES = BUILTIN_NAMES + tuple(n for k in KINDS for n in (k.lower() + "s", k.lower())) + SHORT_NAMES + (
    "xyzzy", "all", "fun")
"""Resource arguments: plurals, singulars, short names, categories and one no resource has."""
KIND_NAMES = ("Pod", "Service", "Node", "Gizmo", "ReplicaSet", "Xyzzy", *KINDS)
GROUP_ARGS = ("", "apps", "apps.openshift", "example", "a", "ab.example", *NAMED_GROUPS)
"""Groups as questions name them: whole, or a prefix (kubectl's ``hpa.autoscal`` reading)."""
VERSION_ARGS = ("", *VERSIONS)


def _res(name: str, kind: str, *, singular: str | None = None, namespaced: bool = True,
         short: Sequence[str] = (), categories: Sequence[str] = ()) -> APIResource:
    return APIResource(name, kind.lower() if singular is None else singular, namespaced, kind,
                       ("get", "list", "watch"), tuple(short), tuple(categories))


def base_cluster(mode: str) -> FakeCluster:
    """The least cluster every generated one starts from: core ``v1`` and ``apps/v1`` as kube-apiserver serves them
    (``gizmos`` with its singular left to the guess), in ``mode`` discovery."""
    cluster = FakeCluster.empty(mode=mode)
    cluster.add_api_resources("v1", [
        _res("pods", "Pod", short=("po",), categories=("all",)),
        _res("services", "Service", short=("svc",), categories=("all",)),
        _res("nodes", "Node", namespaced=False, short=("no",)),
        _res("namespaces", "Namespace", namespaced=False, short=("ns",)),
        _res("gizmos", "Gizmo", singular=""),
    ])
    cluster.add_api_resources("apps/v1", [
        _res("deployments", "Deployment", short=("deploy",), categories=("all",)),
        _res("replicasets", "ReplicaSet", short=("rs",), categories=("all",)),
    ], priority=17800)
    return cluster


# --- clusters ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceSpec:
    """One generated resource: plural ``<kind>s``; ``guessed``: served with no ``singularName``."""

    kind: str
    short: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    namespaced: bool = True
    guessed: bool = False

    @property
    def plural(self) -> str:
        return self.kind.lower() + "s"


@dataclass(frozen=True)
class GroupSpec:
    """One generated group: served by CRDs (one per resource) or by an aggregated API (``priority``)."""

    name: str
    crd: bool
    versions: tuple[str, ...]
    resources: tuple[ResourceSpec, ...]
    priority: int = 100

    def install(self, cluster: FakeCluster) -> None:
        """Serve this group on ``cluster``."""
        if self.crd:
            for r in self.resources:
                cluster.add_crd(crd_of(self.name, self.versions, r))
            return
        for version in self.versions:
            cluster.add_api_resources(f"{self.name}/{version}", [
                _res(r.plural, r.kind, singular="" if r.guessed else None, namespaced=r.namespaced, short=r.short,
                     categories=r.categories) for r in self.resources], priority=self.priority)


def crd_of(group: str, versions: Sequence[str], r: ResourceSpec) -> dict[str, Any]:
    """The CRD manifest serving ``r`` in ``group`` (a CRD always has a singular: ``guessed`` does not apply)."""
    return crd_manifest(group, r.kind, versions=tuple(versions), short_names=r.short, categories=r.categories,
                        scope="Namespaced" if r.namespaced else "Cluster")


@dataclass(frozen=True)
class ClusterSpec:
    """A generated cluster: discovery ``mode`` and the groups added to :func:`base_cluster`."""

    mode: str
    groups: tuple[GroupSpec, ...]

    def build(self) -> FakeCluster:
        cluster = base_cluster(self.mode)
        for g in self.groups:
            g.install(cluster)
        return cluster


def resource_specs() -> st.SearchStrategy[ResourceSpec]:
    return st.builds(ResourceSpec, kind=st.sampled_from(KINDS),
                     short=st.lists(st.sampled_from(SHORT_NAMES), max_size=2, unique=True).map(tuple),
                     categories=st.lists(st.sampled_from(CATEGORIES), max_size=2, unique=True).map(tuple),
                     namespaced=st.booleans(), guessed=st.booleans())


@st.composite
def group_specs(draw: st.DrawFn, name: str) -> GroupSpec:
    resources = draw(st.lists(resource_specs(), min_size=1, max_size=2, unique_by=lambda r: r.kind))
    versions = draw(st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=2, unique=True))
    return GroupSpec(name, draw(st.booleans()), tuple(versions), tuple(resources), draw(st.sampled_from(PRIORITIES)))


@st.composite
def clusters(draw: st.DrawFn) -> ClusterSpec:
    """A :class:`ClusterSpec` with up to four generated groups, in legacy or aggregated discovery."""
    names = draw(st.lists(st.sampled_from(NAMED_GROUPS), max_size=4, unique=True))
    return ClusterSpec(draw(st.sampled_from(("aggregated", "legacy"))),
                       tuple(draw(group_specs(n)) for n in names))


# --- changes -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """Something that happens to the cluster between questions, and how the long-lived mapper learns of it.

    ``what``: ``add`` (a CRD serving ``resource`` in ``group`` at ``versions``; nothing when it exists),
    ``update`` (the CRD serving ``resource`` in ``group`` takes ``resource``'s short names, categories and scope;
    nothing when absent), ``delete`` (the CRD of ``resource`` in ``group``; nothing when absent), ``fail`` (a
    group version goes stale, listed with no resources in aggregated discovery, 503 in legacy: core ``v1`` when
    ``pick`` is 0 or none other is left, else listed named group version number ``pick`` modulo their count),
    ``recover`` (every failing version serves again), ``nothing`` (``group`` is touched, not changed).
    ``tell``: ``invalidate`` (``invalidate_group`` of each touched group, then past the miss interval, as a CRD
    watcher does) or ``expire`` (the clock moves past the TTL and the longest retry backoff).
    """

    what: str
    group: str
    resource: ResourceSpec
    versions: tuple[str, ...]
    pick: int
    tell: str

    def apply(self, cluster: FakeCluster, failing: set[GroupVersion]) -> list[str]:
        """Make the change on ``cluster`` and return the groups it touched (none when it found nothing to
        change); ``failing`` holds the group versions made to fail, and is updated."""
        name = f"{self.resource.plural}.{self.group}"
        if self.what == "add" and cluster.get_crd(name) is None:
            cluster.add_crd(crd_of(self.group, self.versions, self.resource))
        elif self.what == "update" and (old := cluster.get_crd(name)) is not None:
            cluster.update_crd(crd_of(self.group, [v["name"] for v in old["spec"]["versions"]], self.resource))
        elif self.what == "delete" and cluster.get_crd(name) is not None:
            cluster.delete_crd(name)
        elif self.what == "fail":
            named = [gv for g in DiscoveryClient(InProcessTransport(cluster)).server_groups() if g.name
                     for gv in g.group_versions]  # listed and not failing (aggregated lists no stale one)
            gv = named[self.pick % len(named)] if self.pick and named else GroupVersion("", "v1")
            cluster.set_stale(str(gv))
            failing.add(gv)
            return [gv.group]
        elif self.what == "nothing":
            return [self.group]  # only the telling: an invalidation with nothing changed
        elif self.what == "recover":
            for gv in failing:
                cluster.set_stale(str(gv), False)
            touched = sorted({gv.group for gv in failing})
            failing.clear()
            return touched
        else:
            return []
        return [self.group]

    def tell_mapper(self, mapper: LazyRESTMapper, clock: ManualClock, touched: Sequence[str]) -> None:
        """Let ``mapper`` (over ``clock``) learn of the change, which touched the groups ``touched``, as a running
        program would."""
        if self.tell == "invalidate":
            for group in touched:
                mapper.invalidate_group(group)
            clock.advance(MISS_INTERVAL + 1)
        else:
            clock.advance(EXPIRE)


def changes() -> st.SearchStrategy[Change]:
    # A failing version weighs 3 in 8 (and comes first, where generation starts): the certainty rules are where
    # the answers of a mapper that read more and of one that read less can part.
    what = st.sampled_from(("fail", "add", "fail", "update", "delete", "fail", "recover", "nothing"))
    return st.builds(Change, what=what,
                     group=st.sampled_from(NAMED_GROUPS), resource=resource_specs(),
                     versions=st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=2, unique=True).map(tuple),
                     pick=st.integers(0, 15), tell=st.sampled_from(("invalidate", "expire")))


# --- questions -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One question: ``shape`` is the ``LazyRESTMapper`` method; ``args`` its positional arguments."""

    shape: str
    args: tuple[Any, ...]

    def __str__(self) -> str:
        return f"{self.shape}{self.args!r}"


def _dotted(parts: Sequence[str]) -> str:
    return ".".join(p for p in parts if p)


def resolve_args() -> st.SearchStrategy[str]:
    """kubectl readings: ``deploy``, ``deployments.apps``, ``deployments.v1.apps``, ``Kind``, ``Kind.group``,
    group prefixes (``widgets.example``), categories."""
    name = st.sampled_from(NAMES)
    kind = st.sampled_from(KIND_NAMES)
    group = st.sampled_from(GROUP_ARGS[1:])
    version = st.sampled_from(VERSIONS)
    return st.one_of(
        name, kind,
        st.tuples(name, group).map(_dotted),
        st.tuples(name, version, group).map(_dotted),
        st.tuples(kind, group).map(_dotted),
        st.tuples(kind, version, group).map(_dotted),
    )


def _gvr() -> st.SearchStrategy[GroupVersionResource]:
    # Half the questions name no group and no version: those are the ones most often asked (and answered).
    return st.builds(GroupVersionResource, st.one_of(st.just(""), st.sampled_from(GROUP_ARGS)),
                     st.one_of(st.just(""), st.sampled_from(VERSIONS)), st.sampled_from(NAMES))


def _kind_args() -> st.SearchStrategy[tuple[Any, ...]]:
    group_kind = st.builds(GroupKind, st.sampled_from(("", "apps", *NAMED_GROUPS)), st.sampled_from(KIND_NAMES))
    versions = st.one_of(st.just([]), st.lists(st.sampled_from(VERSIONS), min_size=1, max_size=2))
    return st.tuples(group_kind, versions).map(lambda t: (t[0], *t[1]))


def questions() -> st.SearchStrategy[Question]:
    """A question of any shape the mapper answers, often about names the generated clusters serve."""
    by_resource = st.sampled_from(("kind_for", "kinds_for", "resource_for", "resources_for"))
    return st.one_of(
        st.builds(Question, by_resource, _gvr().map(lambda r: (r,))),
        st.builds(Question, st.sampled_from(("rest_mapping", "rest_mappings")), _kind_args()),
        st.builds(Question, st.sampled_from(("resolve", "resolve_all")), resolve_args().map(lambda a: (a,))),
        st.builds(Question, st.just("expand_category"), st.sampled_from((*CATEGORIES, "xyzzy")).map(lambda a: (a,))),
    )


# --- answers -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """What a call gave, reduced to the parts two correct mappers must agree on (an error's wording and age are
    left out).

    Attributes:
        value: the answer (a list as a tuple), None when it raised.
        unread: the group versions a partial list says it could not read (``failed`` of a ``ResolvedMappings``).
        error: the class name of the typed error raised, or None.
        no_match: :func:`~restmapper.is_no_match` of that error.
        fields: the error's fields that say what it means (:func:`essentials`).
        warned: the warning classes emitted, sorted.
    """

    value: Any = None
    unread: tuple[str, ...] = ()
    error: str | None = None
    no_match: bool = False
    fields: tuple[Any, ...] = ()
    warned: tuple[str, ...] = ()

    @property
    def quiet(self) -> bool:
        """An answer given as complete: no error, no unread versions attached, no ``PartialDiscoveryWarning``."""
        return self.error is None and not self.unread and "PartialDiscoveryWarning" not in self.warned


def _value(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
    if hasattr(value, "mappings"):  # a ResolveResult (the reference's)
        return value.mappings
    return value


def essentials(exc: BaseException) -> tuple[Any, ...]:
    """The fields of an error that say what it means (not how it is worded or how old it is)."""
    if isinstance(exc, DiscoveryError):
        return (sorted(map(str, exc.failed)), sorted(getattr(exc, "documents", {})), _partial(exc.partial))
    if isinstance(exc, AmbiguousResourceError | AmbiguousKindError):
        return (sorted(map(str, exc.matching_resources)), sorted(map(str, exc.matching_kinds)))
    if isinstance(exc, NoKindMatchError):
        return (exc.group_kind,)
    if isinstance(exc, NoResourceMatchError):
        return (exc.partial_resource,)
    return ()


def _partial(partial: Any) -> Any:
    if isinstance(partial, list | tuple):
        return tuple(_value(p) for p in partial)
    return None if partial is None else repr(type(partial))


def outcome(call: Callable[[], Any]) -> Outcome:
    """Run ``call`` and reduce what it gave (answer or typed error, and the warning classes emitted)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except RestMapperError as exc:
            return Outcome(error=type(exc).__name__, no_match=is_no_match(exc), fields=essentials(exc),
                           warned=_warned(caught))
    unread = tuple(sorted(map(str, getattr(value, "failed", None) or ())))
    return Outcome(_value(value), unread, warned=_warned(caught))


def _warned(caught: list[warnings.WarningMessage]) -> tuple[str, ...]:
    return tuple(sorted({w.category.__name__ for w in caught}))


def lazy_mapper(cluster: FakeCluster, clock: ManualClock | None = None) -> LazyRESTMapper:
    """A mapper over a fresh cache of ``cluster``; ``max_stale=0``: an earlier answer never masks a failure, so a
    mapper told of a change holds what a fresh one would read."""
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), ttl=TTL, miss_refresh_interval=MISS_INTERVAL,
                          max_stale=0.0, clock=clock or ManualClock())


def ask(mapper: LazyRESTMapper, question: Question) -> Outcome:
    """``mapper``'s answer to ``question``."""
    return outcome(lambda: getattr(mapper, question.shape)(*question.args))


def snapshot(cluster: FakeCluster) -> StaticRESTMapper:
    """A :class:`StaticRESTMapper` over everything ``cluster`` serves, read in one go by a discovery client (no
    cache, no lazy loading); the cluster must be healthy."""
    groups, resources = DiscoveryClient(InProcessTransport(cluster)).server_groups_and_resources()
    lists: dict[str, dict[GroupVersion, APIResourceList]] = {}
    for gv, listed in resources.items():
        lists.setdefault(gv.group, {})[gv] = listed
    return StaticRESTMapper([GroupIndex(g, lists.get(g.name, {})) for g in groups])


def reference(static: StaticRESTMapper, question: Question) -> Outcome:
    """The answer ``question`` has over the snapshot ``static``: the same method of :class:`StaticRESTMapper`, or
    kubectl's resolution over it (``resolve``, category expansion), with what :class:`LazyRESTMapper` documents on
    top (a category given to ``resolve`` is refused; a short name claimed twice warns)."""
    arg = question.args[0]
    if question.shape == "expand_category":
        return outcome(lambda: static_expand_category(arg, static.indexes))
    if question.shape == "resolve_all":
        return outcome(lambda: list(_warn(static_resolve(arg, static)).mappings))
    if question.shape == "resolve":
        def resolved() -> Any:
            try:
                result = static_resolve(arg, static, expand_categories=False)
            except NoResourceMatchError:
                if static_expand_category(arg, static.indexes):
                    raise InvalidArgumentError(f"{arg} is a category") from None
                raise
            return _warn(result).mapping
        return outcome(resolved)
    return outcome(lambda: getattr(static, question.shape)(*question.args))


def _warn(result: ResolveResult) -> ResolveResult:
    """Emit the short-name conflicts of ``result`` as the mapper does, and return it."""
    for text in result.warnings:
        warnings.warn(text, ShortNameConflictWarning, stacklevel=2)
    return result
