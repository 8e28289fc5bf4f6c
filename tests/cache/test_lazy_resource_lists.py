"""Aggregated resource lists: converted on first read, the JSON dropped once converted, compared either way.

Rule: a warm cache holds each group version's resources once (model objects), never the decoded JSON beside them;
and telling two documents apart gives the same answer whether or not either side was converted.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from restmapper.model import APIResourceList, GroupVersion
from restmapper.wire import LazyResourceLists, parse_aggregated


@pytest.fixture
def doc(fixtures_dir: Path) -> dict[str, object]:
    return json.loads((fixtures_dir / "discovery" / "aggregated_v2.json").read_text())  # type: ignore[no-any-return]


def _lists(doc: dict[str, object]) -> LazyResourceLists:
    lists = parse_aggregated(json.dumps(doc).encode(), document="/apis").resources
    assert isinstance(lists, LazyResourceLists)
    return lists


APPS = GroupVersion("apps", "v1")


def test_a_converted_version_drops_its_json_and_converts_once(doc: dict[str, object]) -> None:
    lists = _lists(doc)
    assert type(lists.group("apps")._raw[APPS]) is not APIResourceList
    first = lists[APPS]
    assert lists.converted() == 1
    assert lists[APPS] is first
    assert lists.group("apps")._raw[APPS] is first  # the JSON is gone
    assert APPS in lists and len(list(lists)) == len(lists)  # still listed


@pytest.mark.parametrize("convert", ["neither", "old", "new", "both"])
def test_same_at_answers_alike_whether_or_not_converted(convert: str, doc: dict[str, object]) -> None:
    changed = copy.deepcopy(doc)
    for group in changed["items"]:  # type: ignore[attr-defined]
        if group["metadata"]["name"] == "apps":
            for version in group["versions"]:
                version["resources"][0]["shortNames"] = ["renamed"]
    old, same, new = _lists(doc), _lists(copy.deepcopy(doc)), _lists(changed)
    for a, b in ((old, same), (old, new)):
        if convert in ("old", "both"):
            a[APPS]
        if convert in ("new", "both"):
            b[APPS]
    assert old.same_at(APPS, same)
    assert not old.same_at(APPS, new)
    assert old.same_at(GroupVersion("autoscaling", "v2"), new)  # an untouched version stays equal
    if convert == "neither":  # the same text: held once from now on
        assert old.group("apps")._raw[APPS] is same.group("apps")._raw[APPS]
        assert old.converted() == same.converted() == 0
    if convert in ("old", "new"):  # the side converted to compare took the other side's objects: one copy
        assert old[APPS] is same[APPS]
