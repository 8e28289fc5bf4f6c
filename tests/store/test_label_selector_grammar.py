"""Label selectors are parsed as kube-apiserver parses them (apimachinery labels.Parse): the cache refuses what the
server refuses, with a typed error, before any request; a read is within an informer's selector when every object
it selects is selected by the informer's (requirement-set containment). Property tests compare the cache's
matcher with the kit's server-side one and check that containment is never unsound."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.store import cm, object_cache, widget_cluster
from helpers.watch import make_mapper
from hypothesis import given
from hypothesis import strategies as st

from restmapper.errors import InvalidArgumentError, OutsideScopeError
from restmapper.store import ObjectCache
from restmapper.store._labels import label_implies, label_matcher
from restmapper.testing import ServedCluster
from restmapper.testing.objects.selectors import parse_label_selector


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


@pytest.mark.parametrize("selector", ["x in (a b)", "a in ()", "-a=b", "a/b/c=d", "a=b,,c=d", "a>b", "a,", ",a",
                                      "a b", "!", "a=b=c", "a in (b", "a=-b"])
def test_selectors_the_server_refuses_are_refused_up_front(served: ServedCluster, selector: str) -> None:
    with pytest.raises(InvalidArgumentError, match="invalid label selector"):
        ObjectCache(make_mapper(served.url), label_selector=selector)
    assert not served.cluster.requests


@pytest.mark.parametrize("selector", ["a", "!a", "a=b", "a==b", "a!=b", "a in (b,c)", "a in(b,c)", "a notin (b)",
                                      "a>1", "a<-2", "x.io/y=z", "a=", " a = b , c "])
def test_selectors_the_server_accepts_are_accepted(served: ServedCluster, selector: str) -> None:
    ObjectCache(make_mapper(served.url), label_selector=selector).stop()


@pytest.mark.parametrize(("held", "read"), [("env in (a,b)", "env in (a)"), ("a", "a=b"), ("a=b", "a in (b)"),
                                            ("tier=gold", "tier = gold,app=web"), ("n>3", "n in (4,5)"),
                                            ("a!=x", "!a"), ("a notin (x,y)", "a=z")])
def test_narrower_reads_are_within_the_informers_selector(served: ServedCluster, held: str, read: str) -> None:
    served.cluster.apply_object(cm("c", "default"))
    with object_cache(served, label_selector=held) as cache:
        cache.list("cm", "default", label_selector=read)


@pytest.mark.parametrize(("held", "read"), [("env in (a)", "env in (a,b)"), ("a=b", "a"), ("tier=gold", "app=web"),
                                            ("n>3", "n>1"), ("a!=x", "a!=y")])
def test_broader_reads_are_refused(served: ServedCluster, held: str, read: str) -> None:
    with object_cache(served, label_selector=held) as cache, pytest.raises(OutsideScopeError):
        cache.list("cm", "default", label_selector=read)


_KEYS = st.sampled_from(["a", "b", "x.io/c"])
_VALUES = st.sampled_from(["", "1", "2", "v", "w"])


@st.composite
def _requirement(draw: st.DrawFn) -> str:
    key = draw(_KEYS)
    form = draw(st.sampled_from(["exists", "!exists", "=", "==", "!=", "in", "notin", ">", "<"]))
    if form == "exists":
        return key
    if form == "!exists":
        return f"!{key}"
    if form in ("in", "notin"):
        values = draw(st.lists(_VALUES.filter(bool), min_size=1, max_size=3))
        return f"{key} {form} ({','.join(values)})"
    if form in (">", "<"):
        return f"{key}{form}{draw(st.integers(-1, 3))}"
    return f"{key}{form}{draw(_VALUES)}"


_SELECTORS = st.lists(_requirement(), min_size=1, max_size=3).map(",".join)
_LABELS = st.dictionaries(_KEYS, _VALUES, max_size=3)


@given(selector=_SELECTORS, labels=_LABELS)
def test_the_cache_matches_as_the_server(selector: str, labels: dict[str, str]) -> None:
    obj = {"metadata": {"labels": labels}}
    assert label_matcher(selector)(obj) == parse_label_selector(selector)(labels)


@given(read=_SELECTORS, held=_SELECTORS, labels=_LABELS)
def test_containment_is_sound(read: str, held: str, labels: dict[str, str]) -> None:
    obj = {"metadata": {"labels": labels}}
    if label_implies(read, held) and label_matcher(read)(obj):
        assert label_matcher(held)(obj)
