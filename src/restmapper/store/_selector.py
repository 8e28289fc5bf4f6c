"""Label and field selectors evaluated against cached objects (apimachinery ``labels.Parse`` / ``fields``).

Label selectors: ``key=value``, ``key==value``, ``key!=value``, ``key``, ``!key``, ``key in (a,b)``,
``key notin (a,b)``, comma-separated (all must hold), as ``kubectl get -l``. Field selectors: ``path=value``,
``path==value``, ``path!=value`` over a dotted path into the object (``metadata.name``, ``status.phase``,
``spec.nodeName``), comparing the field's string form (a missing field reads as ``""``), as the API server's field
selectors do for the fields it indexes. Parsed selectors are memoized.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from restmapper.errors import InvalidArgumentError

__all__ = ["Matcher", "field_matcher", "label_matcher"]

Matcher = Callable[[Mapping[str, Any]], bool]

_SET = re.compile(r"^\s*(!?)([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_TERM = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_.-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*$")


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    terms, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return [t for t in terms if t.strip()]


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


LabelCheck = Callable[[Mapping[str, Any]], bool]


def _in(key: str, values: frozenset[str], inside: bool) -> LabelCheck:
    return lambda labels: (labels.get(key) in values) == inside


def _equals(key: str, value: str, equal: bool) -> LabelCheck:
    # "k!=v" also holds when k is absent, as apimachinery's labels.Selector.
    return lambda labels: (key in labels and labels[key] == value) == equal


def _exists(key: str, present: bool) -> LabelCheck:
    return lambda labels: (key in labels) == present


@functools.lru_cache(maxsize=256)
def label_matcher(selector: str) -> Matcher:
    """Return a predicate for the label selector ``selector`` (``""`` matches everything).

    Raises:
        InvalidArgumentError: a term that is not one of the forms in the module docstring.
    """
    checks: list[LabelCheck] = []
    for term in _split(selector):
        m = _SET.match(term)
        if m:
            if m.group(1):
                raise InvalidArgumentError(f"invalid label selector term {term.strip()!r}")
            values = frozenset(v.strip() for v in m.group(4).split(",") if v.strip())
            checks.append(_in(m.group(2), values, m.group(3) == "in"))
            continue
        m = _TERM.match(term)
        if m:
            key, op, value = m.groups()
            checks.append(_equals(key, value, op != "!="))
            continue
        m = _EXISTS.match(term)
        if m:
            checks.append(_exists(m.group(2), not m.group(1)))
            continue
        raise InvalidArgumentError(f"invalid label selector term {term.strip()!r}")

    def matches(obj: Mapping[str, Any]) -> bool:
        labels = _labels(obj)
        return all(check(labels) for check in checks)

    return matches


def _field(obj: Mapping[str, Any], path: tuple[str, ...]) -> str:
    node: Any = obj
    for part in path:
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


@functools.lru_cache(maxsize=256)
def field_matcher(selector: str) -> Matcher:
    """Return a predicate for the field selector ``selector`` (``""`` matches everything).

    Raises:
        InvalidArgumentError: a term that is not ``path=value``, ``path==value`` or ``path!=value``.
    """
    terms: list[tuple[tuple[str, ...], bool, str]] = []
    for term in _split(selector):
        m = _TERM.match(term)
        if not m or m.group(1).startswith(".") or m.group(1).endswith("."):
            raise InvalidArgumentError(f"invalid field selector term {term.strip()!r}")
        path, op, value = m.groups()
        terms.append((tuple(path.split(".")), op != "!=", value))

    def matches(obj: Mapping[str, Any]) -> bool:
        return all((_field(obj, path) == value) == equal for path, equal, value in terms)

    return matches
