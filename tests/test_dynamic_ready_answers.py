"""The drop-in's ready answers (``dynamic/_direct.py``): a first-time ``get``/``search`` is one dictionary read.

What a direct path would memoize is worked out when every group is first ready, and again for a group rebuilt
since; a question with that memo key memoizes that very answer while it holds (checked as a memo hit), else the
direct path works it out. These tests check that the ready answers are used (no direct path, no lookup), that
they are not used once they no longer hold (a group refreshed, a group unreadable, the cache invalidated), that
refreshing group B leaves the ready answers about group A in use, and that every answer equals a new
discoverer's. (``test_dynamic_direct.py`` compares them with the generic path on every question shape.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dynamic_helpers import crd
from kubernetes.dynamic.exceptions import ResourceNotFoundError
from test_dynamic_memo_groups import MODES, A, B, _ask, _cluster, _discoverer

from restmapper import PartialDiscoveryWarning
from restmapper.dynamic import SelfHealingDiscoverer
from restmapper.dynamic._memo import memo_key

FIRST_TIME_ABOUT_A: list[tuple[str, dict[str, Any]]] = [
    ("get", {"api_version": f"{A}/v1", "kind": "Alpha"}),
    ("get", {"kind": "Alpha"}),
    ("search", {"kind": "Alpha"}),
    ("get", {"name": "alphas"}),
    ("search", {"name": "alphas"}),
    ("get", {"short_names": ["al"]}),
    ("search", {"short_names": ["al"]}),
    ("get", {"short_names": "al"}),
]
FIRST_TIME_ABOUT_B: list[tuple[str, dict[str, Any]]] = [
    ("get", {"api_version": f"{B}/v1", "kind": "Beta"}),
    ("get", {"kind": "Beta"}),
    ("search", {"kind": "Beta"}),
    ("get", {"name": "betas"}),
]


def _counting(resources: SelfHealingDiscoverer) -> dict[str, int]:
    """Count, from now on, the answers worked out by a direct path or by the full lookup (a ready answer is
    neither)."""
    counts = {"direct": 0, "lookup": 0}

    def counted(name: str, method: Callable[..., Any], answered: Callable[[Any], bool]) -> Callable[..., Any]:
        def counting(*args: Any, **kwargs: Any) -> Any:
            found = method(*args, **kwargs)
            counts[name] += answered(found)
            return found
        return counting

    resources._lookup = counted("lookup", resources._lookup, lambda found: True)  # type: ignore[method-assign]
    for name in ("_direct_get", "_direct_search"):
        setattr(resources, name, counted("direct", getattr(resources, name), lambda found: found is not None))
    return counts


def _first_time(resources: SelfHealingDiscoverer, questions: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The answers to ``questions``, each asked with nothing memoized."""
    out = []
    for method, kwargs in questions:
        resources._get_memo._young.clear()
        resources._get_memo._old.clear()
        resources._search_memo._young.clear()
        resources._search_memo._old.clear()
        resources._get_hot.stretch.answers.clear()
        resources._search_hot.stretch.answers.clear()
        out.append(_ask(resources, method, kwargs))
    return out


def _ready(cluster: Any) -> SelfHealingDiscoverer:
    """A discoverer holding every group ready, with its Resource objects built (as the bench's warm-up): the
    ready answers of every group are worked out."""
    resources = _discoverer(cluster)
    resources.search(kind="Namespace")  # every group loaded and indexed (the Resource objects of core built)
    for name in resources.cache.group_names():  # each group's built by a question about it
        resources.search(group=name or None, prefix="api" if not name else None)
    return resources


@pytest.mark.parametrize("mode", MODES)
def test_first_time_questions_are_ready_answers(mode: str) -> None:
    cluster = _cluster(mode)
    resources = _ready(cluster)
    counts = _counting(resources)
    questions = FIRST_TIME_ABOUT_A + FIRST_TIME_ABOUT_B
    answers = _first_time(resources, questions)
    assert counts == {"direct": 0, "lookup": 0}, "every first-time question was a ready answer"
    assert answers == _first_time(_discoverer(cluster), questions), "equal to a new discoverer's answers"
    # The very objects the direct path hands out, and the memo holds the ready answer itself.
    assert resources.get(kind="Alpha") is resources.get(api_version=f"{A}/v1", kind="Alpha")
    key = ("kind", "Alpha")
    assert resources._get_memo.get(key) is resources._get_table[key]
    found = resources.search(kind="Alpha")
    assert found == [resources.get(kind="Alpha")] and found is not resources._search_table[key].value
    found.append("mine")  # the caller's own list: the next answer is not changed
    assert len(resources.search(kind="Alpha")) == 1
    assert len(_first_time(resources, [("search", {"kind": "Alpha"})])[0]) == 1


@pytest.mark.parametrize("mode", MODES)
def test_other_spellings_take_the_direct_paths(mode: str) -> None:
    resources = _ready(_cluster(mode))
    counts = _counting(resources)
    spelled = [("get", {"kind": "ALPHA"}), ("get", {"kind": "Alpha", "api_version": f"{A}/v1"}),
               ("get", {"short_names": ("al",)}), ("search", {"name": "Alphas"})]
    answers = _first_time(resources, spelled)
    assert counts == {"direct": len(spelled), "lookup": 0}
    assert answers == _first_time(_discoverer(_cluster(mode)), spelled)


@pytest.mark.parametrize("mode", MODES)
def test_ready_answers_wait_for_every_group_and_each_groups_objects(mode: str) -> None:
    resources = _discoverer(_cluster(mode))
    assert resources.get(api_version=f"{A}/v1", kind="Alpha").kind == "Alpha"  # reads group A only
    assert resources._table_due and not resources._get_table
    resources.get(kind="Beta")  # may come from any group: every group is read, then the answers are worked out
    assert not resources._table_due and ("kind", "Beta") in resources._get_table
    assert ("kind", "Alpha") in resources._get_table  # A's objects were built by the first question
    counts = _counting(resources)
    assert _first_time(resources, [("get", {"kind": "Alpha"}), ("get", {"name": "betas"})]) == _first_time(
        _discoverer(_cluster(mode)), [("get", {"kind": "Alpha"}), ("get", {"name": "betas"})])
    assert counts == {"direct": 0, "lookup": 0}


@pytest.mark.parametrize("mode", MODES)
def test_refreshing_group_b_leaves_the_ready_answers_about_group_a(mode: str) -> None:
    cluster = _cluster(mode)
    resources = _ready(cluster)
    about_a = _first_time(resources, FIRST_TIME_ABOUT_A)
    before_b = _first_time(resources, FIRST_TIME_ABOUT_B)
    old_beta = resources.get(kind="Beta")

    cluster.update_crd(crd(B, "Beta", short_names=("bee",)))  # B changes, as a CRD update does
    resources.mapper.invalidate_group(B)
    resources.search(kind="Namespace")  # a question from any group loads every group again
    resources.search(group=B)  # and one about B builds its new objects (as the first question about B would)
    counts = _counting(resources)
    assert _first_time(resources, FIRST_TIME_ABOUT_A) == about_a
    assert counts == {"direct": 0, "lookup": 0}, "refreshing group B left the ready answers about group A in use"

    after_b = _first_time(resources, FIRST_TIME_ABOUT_B)
    assert after_b == _first_time(_discoverer(cluster), FIRST_TIME_ABOUT_B), "B's answers are B's new ones"
    assert after_b != before_b and all("bee" in str(answer) for answer in after_b)
    assert resources.get(kind="Beta") is not old_beta  # B's rebuilt objects
    assert counts == {"direct": 0, "lookup": 0}, "B's ready answers were worked out again when B was rebuilt"
    assert _first_time(resources, [("get", {"short_names": ["bee"]})]) == [_ask(_discoverer(cluster), "get", {
        "short_names": ["bee"]})]
    with pytest.raises(ResourceNotFoundError):
        _first_time(resources, [("get", {"short_names": ["be"]})])


@pytest.mark.parametrize("mode", MODES)
def test_a_ready_answer_no_longer_held_is_not_used(mode: str) -> None:
    """Invalidating a group (no reload yet), making it unreadable, or invalidating the cache: the ready answers
    that may come from any group are not used, as memoized ones would not be (DESIGN 5.10): the full lookup
    answers, warned."""
    cluster = _cluster(mode)
    resources = _ready(cluster)
    counts = _counting(resources)
    resources.mapper.invalidate_group(B)
    assert _first_time(resources, [("get", {"kind": "Alpha"})]) == [_ask(_discoverer(cluster), "get",
                                                                         {"kind": "Alpha"})]
    assert counts["lookup"] == 1, "a reload was due: the full lookup answered"

    if mode == "legacy":
        cluster.inject(f"/apis/{B}/v1", status=503, body="down", content_type="text/plain")
    else:
        cluster.set_stale(f"{B}/v1", True)
    resources.mapper.invalidate_group(B)
    with pytest.warns(PartialDiscoveryWarning):  # B, ranked below A, could serve another Alpha: warned
        assert _first_time(resources, [("get", {"kind": "Alpha"})])[0][0] == f"{A}/v1"
    assert _first_time(resources, [("get", {"api_version": f"{A}/v1", "kind": "Alpha"})])[0][0] == f"{A}/v1"

    resources.invalidate_cache()
    assert resources._table_due and not resources._get_table and not resources._search_table


@pytest.mark.parametrize("mode", MODES)
def test_a_list_of_short_names_is_memoized_under_its_memo_key(mode: str) -> None:
    """The warm path builds the key of ``get(short_names=[...])`` itself: the memo's key (a tuple of the same
    names is another question, with the same answer)."""
    resources = _ready(_cluster(mode))
    listed = resources.get(short_names=["al"])
    assert resources._get_memo.get(memo_key({"short_names": ["al"]})).value is listed  # type: ignore[union-attr]
    assert memo_key({"short_names": ["al"]}) != memo_key({"short_names": ("al",)})
    assert resources.get(short_names=("al",)) is listed is resources.get(short_names=["al"])
    # Held by the name alone (a list of one short name: its own table, no key tuple), never for a tuple of it.
    hot = resources._get_hot.stretch
    assert hot.short.get("al") is listed and memo_key({"short_names": ["al"]}) not in hot.answers
    assert resources.get(short_names=["al"], kind="Alpha") is listed  # two keywords: the memo key, as before


def test_get_by_api_version_and_kind_is_held_by_the_pair_in_either_order() -> None:
    """``get(api_version=..., kind=...)`` of strings is held by ``(api_version, kind)``; the other order shares it;
    other value types take the memo's key (and its answer or error), as a cold discoverer gives them."""
    resources = _ready(_cluster("aggregated"))
    found = [resources.get(api_version="a.example.com/v1", kind="Alpha") for _ in range(3)]
    assert found[0] is found[1] is found[2]
    assert resources._get_hot.stretch.gvk.get(("a.example.com/v1", "Alpha")) is found[0]
    assert resources.get(kind="Alpha", api_version="a.example.com/v1") is found[0]
    cold = _ready(_cluster("aggregated"))
    for kwargs in ({"api_version": ["a.example.com/v1"], "kind": "Alpha"}, {"api_version": "a.example.com/v1",
                                                                             "kind": ("Alpha",)}):
        outcomes = []
        for target in (resources, resources, cold):
            try:
                outcomes.append(target.get(**kwargs))
            except Exception as exc:  # the same error either way
                outcomes.append(type(exc))
        assert outcomes[0] == outcomes[1] == outcomes[2], kwargs


def test_ready_answers_are_kept_under_the_memo_keys_of_their_questions() -> None:
    """The tables are filled with keys built directly: each is :func:`memo_key` of the question it answers."""
    resources = _ready(_cluster("aggregated"))
    wanted = {memo_key(kw) for _, kw in FIRST_TIME_ABOUT_A + FIRST_TIME_ABOUT_B}
    assert wanted <= set(resources._get_table) | set(resources._search_table)
    for key in resources._get_table:
        names, values = key[:len(key) // 2], key[len(key) // 2:]
        if key[0] == "short_names" and len(key) > 2:
            kwargs: dict[str, Any] = {"short_names": list(key[2:])}
        else:
            kwargs = dict(zip(names, values, strict=True))
        assert memo_key(kwargs) == key


def test_crd_churn_neither_grows_the_tables_without_bound_nor_switches_them_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review adv4 F1: entries of groups removed or rebuilt since are no longer current; at the limit they are
    dropped (not kept, keeping the deleted CRDs' objects alive), and a group created later still gets its ready
    answers."""
    import restmapper.dynamic._direct as direct
    from restmapper.testing import FakeCluster

    monkeypatch.setattr(direct, "TABLE_LIMIT", 200)
    cluster = FakeCluster.embedded(mode="aggregated")
    resources = _discoverer(cluster)
    resources.search(kind="Namespace")
    for i in range(120):
        group = f"g{i}.example.com"
        cluster.add_crd(crd(group, f"Kind{i}", short_names=(f"k{i}",)))
        resources.mapper.invalidate_group(group)
        assert resources.get(kind=f"Kind{i}").group == group
        cluster.delete_crd(f"kind{i}s.{group}")
        resources.mapper.invalidate_group(group)
        resources.search(kind="Namespace")
        assert len(resources._get_table) <= 200 and len(resources._search_table) <= 200
    cluster.add_crd(crd("new.example.com", "Fresh", short_names=("fr",)))
    resources.mapper.invalidate_group("new.example.com")
    assert resources.get(kind="Fresh").group == "new.example.com"
    assert memo_key({"kind": "Fresh"}) in resources._get_table
