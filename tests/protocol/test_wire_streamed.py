"""An aggregated document is read one group at a time, and answers exactly as when it is read whole.

Rule: ``parse_aggregated`` never holds the decoded tree of a whole ``/apis`` (on a thousand-group cluster that tree
is ~14 MiB, and the arenas it leaves behind stay in the process's resident set), and nothing about its answers or
its errors depends on that: the same value for every valid document, the same typed error for every invalid one.
"""

from __future__ import annotations

import copy
import gc
import json
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from restmapper.errors import MalformedDiscoveryError
from restmapper.model import APIResourceList, GroupVersion
from restmapper.wire import AggregatedDiscovery, DocumentFormat, LazyResourceLists, aggregated, parse_aggregated

Doc = dict[str, Any]


def _rk(kind: str, group: str = "", version: str = "") -> Doc:
    return {"group": group, "kind": kind, "version": version}


SMALL: Doc = {
    "apiVersion": "apidiscovery.k8s.io/v2",
    "kind": "APIGroupDiscoveryList",
    "metadata": {},
    "items": [
        {"metadata": {"name": "apps"}, "versions": [
            {"version": "v1", "freshness": "Current", "resources": [{
                "resource": "deployments", "responseKind": _rk("Deployment"), "scope": "Namespaced",
                "singularResource": "deployment", "shortNames": ["deploy"], "categories": ["all"],
                "verbs": ["get", "list"],
                "subresources": [{"subresource": "scale", "responseKind": _rk("Scale", "autoscaling", "v1"),
                                  "verbs": ["get"]}]}]},
            {"version": "v1beta1", "freshness": "Stale"},
        ]},
        {"metadata": {"name": "batch"}, "versions": [
            {"version": "v1", "resources": [{"resource": "jobs", "responseKind": _rk("Job"), "scope": "Namespaced",
                                             "verbs": ["get"]}]},
            {"version": "v1beta1", "resources": None},
        ]},
        {"metadata": {"name": "empty.example.com"}, "versions": []},
    ],
}


def _whole(body: bytes, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Any:
    """``parse_aggregated`` made to read the whole tree (the streamed reading declines)."""
    with monkeypatch.context() as m:
        m.setattr(aggregated, "read_streamed", lambda text: None)
        return _outcome(body, **kw)


def _outcome(body: bytes, **kw: Any) -> Any:
    """What parse_aggregated answers, comparable: the value with every resource list converted, or the error."""
    try:
        parsed = parse_aggregated(body, document="/apis", **kw)
    except MalformedDiscoveryError as exc:
        return ("error", exc.field, str(exc))
    return (parsed.groups, dict(parsed.resources), parsed.stale, parsed.format, dict(parsed.listed_versions))


def _streamed(body: bytes, **kw: Any) -> bool:
    """True when parse_aggregated read ``body`` one group at a time (its versions hold their JSON text)."""
    held = [raw for raw in _held(parse_aggregated(body, document="/apis", **kw).resources).values() if raw]
    return bool(held) and all(type(raw) in (tuple, str, bytes) for raw in held)


def _held(lists: object) -> dict[GroupVersion, object]:
    """What each version of ``lists`` holds until converted."""
    assert isinstance(lists, LazyResourceLists)
    return {gv: lists.group(gv.group)._raw[gv] for gv in lists}


def _same(body: bytes, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> None:
    assert _outcome(body, **kw) == _whole(body, monkeypatch, **kw)


_FORMATS = {
    "compact": lambda d: json.dumps(d, separators=(",", ":")),
    "spaced": json.dumps,
    "indented": lambda d: json.dumps(d, indent=2),
    "crlf-tabs": lambda d: "\r\n\t " + json.dumps(d, indent="\t").replace("\n", "\r\n") + " \r\n",
    "sorted": lambda d: json.dumps(d, sort_keys=True),
    "unicode": lambda d: json.dumps(d, ensure_ascii=False),
}


@pytest.mark.parametrize("fmt", list(_FORMATS))
def test_any_formatting_is_read_streamed_and_answers_as_the_whole_reading(
        fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = copy.deepcopy(SMALL)
    doc["items"][0]["versions"][0]["resources"][0]["shortNames"] = ["déploiement", "\u2603"]
    body = _FORMATS[fmt](doc).encode()
    assert _streamed(body)
    _same(body, monkeypatch)


def test_the_fixtures_are_read_streamed_and_answer_as_the_whole_reading(
        fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    discovery = fixtures_dir / "discovery"
    for path, fmt in ((discovery / "aggregated_v2.json", DocumentFormat.AGGREGATED_V2),
                      (discovery / "aggregated_v2beta1.json", DocumentFormat.AGGREGATED_V2BETA1),
                      *((p, DocumentFormat.AGGREGATED_V2) for p in (discovery / "history").glob("aggregated_v2*"))):
        body = path.read_bytes()
        assert _streamed(body, format=fmt), path.name
        _same(body, monkeypatch, format=fmt)
        _same(b"\xef\xbb\xbf" + body, monkeypatch, format=fmt)


@pytest.mark.parametrize("text", [
    # JSON keeps the last of repeated keys: left to the whole reading, which does just that.
    '{"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": "a"}}], "items": []}',
    '{"kind": "APIGroupDiscoveryList", "items": [], "items": [{"metadata": {"name": "a"}}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": "a"}, "metadata": {"name": "b"}}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": "v1"}], "versions": []}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": "v1", "version": "v2"}]}]}',
    '{"kind": "APIGroupDiscoveryList", "kind": "APIGroupList", "items": []}',
    # Shapes the walk does not enter.
    '{"kind": "APIGroupDiscoveryList", "items": null}',
    '{"kind": "APIGroupDiscoveryList"}',
    '{"kind": "APIGroupDiscoveryList", "items": {}}',
    '{"kind": "APIGroupDiscoveryList", "items": [null, 1, "x", []]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": null, "metadata": null}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": {"version": "v1"}}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [null, {"version": "v1"}]}]}',
    '{"items": [{"metadata": {"name": "a"}}], "kind": "APIGroupDiscoveryList", "apiVersion": "v1"}',
    '{"items": [], "kind": "Status", "message": "forbidden"}',
    # Syntax errors, at every level the walk reads.
    '{"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": "a"}},]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": "a"},}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"metadata": {"name": "a"}} {"metadata": {}}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"metadata" {"name": "a"}}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{metadata: {"name": "a"}}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": "v1"} {"version": "v2"}]}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": "v1"},]}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": NaN}]}]}',
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [{"version": "v\x01"}]}]}',
    '{"kind": "APIGroupDiscoveryList", "items": []} {}',
    '{"kind": "APIGroupDiscoveryList", "items": []}]',
    '{"kind": "APIGroupDiscoveryList", "items": [' + "[" * 100_000,
    '{"kind": "APIGroupDiscoveryList", "items": [{"versions": [' + "[" * 100_000 + "]" * 100_000 + "]}]}",
    '{"kind": "APIGroupDiscoveryList", "items": [{"x": 1' + "0" * 5000 + "}]}",
    '\ufeff{"kind": "APIGroupDiscoveryList"}',
    "[]",
    "null",
    '"APIGroupDiscoveryList"',
])
def test_unusual_and_broken_documents_answer_as_the_whole_reading(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(text.encode(), monkeypatch)


def test_a_repeated_key_is_left_to_the_whole_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    body = (json.dumps(SMALL)[:-1] + ', "items": []}').encode()  # "items" twice: the last one wins
    assert not _streamed(json.dumps(SMALL).replace('"metadata": {}', '"items": [], "metadata": {}').encode())
    assert not _streamed(json.dumps(SMALL).replace('{"metadata": {"name": "apps"}',
                                                   '{"metadata": {}, "metadata": {"name": "apps"}').encode())
    assert parse_aggregated(body, document="/apis").groups == ()
    _same(body, monkeypatch)


def _nodes(value: object, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _nodes(child, (*path, i))


def _replaced(doc: Doc, path: tuple[str | int, ...], value: object) -> Doc:
    out = copy.deepcopy(doc)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def test_any_node_of_any_type_answers_as_the_whole_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    replacements: list[object] = [None, 0, 1.5, True, "", "Stale", [], [1], [{}], {}, {"name": None}]
    for path in _nodes(SMALL):
        if path:
            for value in replacements:
                _same(json.dumps(_replaced(SMALL, path, value)).encode(), monkeypatch)


def test_every_prefix_answers_as_the_whole_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    body = json.dumps(SMALL, indent=1).encode()
    for cut in range(len(body)):
        _same(body[:cut], monkeypatch)


def test_a_version_keeps_where_its_json_is_not_its_tree() -> None:
    lists = parse_aggregated(json.dumps(SMALL).encode(), document="/apis").resources
    held = _held(lists)
    apps = held[GroupVersion("apps", "v1")]
    assert type(apps) is tuple
    text, start, end = apps
    assert json.loads(text[start:end]) == SMALL["items"][0]["versions"][0]  # its version object
    assert held[GroupVersion("batch", "v1")][0] is text  # type: ignore[index]  # an ASCII text: one, shared
    assert held[GroupVersion("batch", "v1beta1")] is None  # nothing to convert: nothing held
    converted = lists[GroupVersion("apps", "v1")]
    assert converted.resources[1].name == "deployments/scale"
    assert _held(lists)[GroupVersion("apps", "v1")] is converted  # the JSON is gone


def test_a_group_keeps_only_its_own_versions() -> None:
    lists = parse_aggregated(json.dumps(SMALL).encode(), document="/apis").resources
    assert isinstance(lists, LazyResourceLists)
    apps = lists.group("apps")
    assert list(apps) == [GroupVersion("apps", "v1")] and list(lists.group("nothing")) == []
    assert list(lists) == [GroupVersion("apps", "v1"), GroupVersion("batch", "v1"), GroupVersion("batch", "v1beta1")]
    assert lists[GroupVersion("apps", "v1")] is apps[GroupVersion("apps", "v1")]  # one conversion, shared
    assert GroupVersion("apps", "v1") in lists and GroupVersion("apps", "v2") not in lists and "apps" not in lists
    with pytest.raises(KeyError):
        lists[GroupVersion("nothing", "v1")]


def _astral(note: str, description: str) -> bytes:
    doc = copy.deepcopy(SMALL)
    doc["x-note"] = note  # an unknown field: read and dropped
    for i in range(300):
        doc["items"].append({"metadata": {"name": f"g{i}.example.com"}, "versions": [{"version": "v1", "resources": [
            {"resource": "things", "scope": "Namespaced", "verbs": ["get", "list"] * 5,
             "responseKind": _rk("Thing")}]}]})
    doc["items"][0]["versions"][0]["x-description"] = description
    return json.dumps(doc, ensure_ascii=False).encode()


@pytest.mark.parametrize("where", ["document", "version"])
def test_one_astral_character_does_not_quadruple_the_kept_text(where: str) -> None:
    """A single non-BMP character makes the whole decoded text four bytes a character; what is kept of such a text
    is each version's own copy, about its size in the body (UTF-8 bytes where it is not ASCII): the character costs
    what it costs in the body, not three bytes more for every character of the document."""
    emoji = "\U0001F600"
    plain = _astral("-", "-")
    body = _astral(emoji if where == "document" else "-", emoji if where == "version" else "-")
    kept_plain = _traced(plain)[1]
    _, kept, parsed = _traced(body)
    assert kept < kept_plain + 1024, (kept, kept_plain, len(body))  # before: ~3 x the body more
    held = _held(parsed.resources)
    assert sum(sys.getsizeof(raw) for raw in held.values() if type(raw) in (str, bytes)) < 1.5 * len(body)
    apps = held[GroupVersion("apps", "v1")]
    assert type(apps) is (bytes if where == "version" else str)
    assert all(type(raw) is str for gv, raw in held.items() if gv.group != "apps" and raw is not None)
    assert parsed.resources[GroupVersion("apps", "v1")].resources[0].name == "deployments"
    again = parse_aggregated(body, document="/apis").resources
    assert isinstance(again, LazyResourceLists) and again.same_at(GroupVersion("apps", "v1"), _lists_of(body))


def _lists_of(body: bytes) -> LazyResourceLists:
    lists = parse_aggregated(body, document="/apis").resources
    assert isinstance(lists, LazyResourceLists)
    return lists


def _big(groups: int) -> bytes:
    """A compact aggregated document of ``groups`` operator-shaped groups (~2.5 KB of JSON each)."""
    items = []
    for i in range(groups):
        versions = [{"version": v, "freshness": "Current", "resources": [{
            "resource": f"widgets{j}", "responseKind": _rk(f"Widget{j}"), "scope": "Namespaced",
            "singularResource": f"widget{j}", "shortNames": [f"w{j}"], "categories": ["all", f"g{i}"],
            "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
            "subresources": [{"subresource": "status", "responseKind": _rk(f"Widget{j}"),
                              "verbs": ["get", "patch", "update"]}]} for j in range(3)]}
            for v in ("v1", "v1beta1")]
        items.append({"metadata": {"name": f"g{i}.example.com"}, "versions": versions})
    return json.dumps({"apiVersion": "apidiscovery.k8s.io/v2", "kind": "APIGroupDiscoveryList", "items": items},
                      separators=(",", ":")).encode()


def _traced(body: bytes) -> tuple[int, int, AggregatedDiscovery]:
    """(peak, kept) traced bytes of parsing ``body``, the body itself not counted."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        parsed = parse_aggregated(body, document="/apis")
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, kept - base, parsed


def test_parsing_a_large_document_never_holds_its_whole_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _big(400)  # ~1 MB
    peak, kept, parsed = _traced(body)
    # The text (1x) and one group's tree at the peak; the text kept. Reading the whole tree takes ~7x the body at
    # the peak and ~6x kept (checked below, so these bounds can tell the two apart).
    assert peak < 2 * len(body), peak / len(body)
    assert kept < 1.5 * len(body), kept / len(body)
    with monkeypatch.context() as m:
        m.setattr(aggregated, "read_streamed", lambda text: None)
        whole_peak, whole_kept, whole = _traced(body)
    assert whole_peak > 4 * len(body) and whole_kept > 3 * len(body), (whole_peak / len(body), whole_kept / len(body))
    assert parsed == whole


def _lists(text: str) -> LazyResourceLists:
    lists = parse_aggregated(text.encode(), document="/apis").resources
    assert isinstance(lists, LazyResourceLists)
    return lists


APPS = GroupVersion("apps", "v1")


def test_same_at_compares_texts_then_values(monkeypatch: pytest.MonkeyPatch) -> None:
    changed = copy.deepcopy(SMALL)
    changed["items"][0]["versions"][0]["resources"][0]["verbs"] = ["get"]
    compact = _lists(json.dumps(SMALL))
    assert compact.same_at(APPS, _lists(json.dumps(SMALL)))  # the same text
    assert compact.same_at(APPS, _lists(json.dumps(SMALL, indent=3)))  # other text, the same resources
    assert compact.same_at(APPS, _lists(json.dumps(SMALL, sort_keys=True)))
    assert not compact.same_at(APPS, _lists(json.dumps(changed)))
    with monkeypatch.context() as m:
        m.setattr(aggregated, "read_streamed", lambda text: None)
        whole, whole_changed = _lists(json.dumps(SMALL)), _lists(json.dumps(changed))
    assert type(_held(whole)[APPS]) is list
    assert compact.same_at(APPS, whole) and whole.same_at(APPS, compact)
    assert not compact.same_at(APPS, whole_changed) and not whole_changed.same_at(APPS, compact)
    assert type(_held(compact)[APPS]) is not APIResourceList  # compared without converting
