"""Field selectors evaluated against cached objects (apimachinery ``fields.ParseSelector``; label selectors are
in :mod:`restmapper.store._labels`).

Field selectors: ``path=value``,
``path==value``, ``path!=value`` over a dotted path into the object (``metadata.name``, ``status.phase``,
``spec.nodeName``), comparing the field's string form (a missing field reads as ``""``), as the API server's field
selectors do for the fields it indexes. Parsed selectors are memoized.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from restmapper.errors import InvalidArgumentError

__all__ = ["FieldTerm", "Matcher", "field_matcher", "field_terms", "fields_match"]

Matcher = Callable[[Mapping[str, Any]], bool]


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


FieldTerm = tuple[str, bool, str]
"""One field-selector requirement: ``(path, equal, value)`` (``equal`` False for ``!=``; the value unescaped)."""

_FIELD_OPS = ("!=", "==", "=")


def _split_unescaped(text: str) -> list[str]:
    """Split on commas not escaped by a backslash (apimachinery ``fields.splitTerms``)."""
    terms, start, escaped = [], 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str, term: str) -> str:
    """apimachinery ``fields.UnescapeValue``: ``\\\\``, ``\\,`` and ``\\=`` are the escapes; an unescaped ``,``
    or ``=`` is an error."""
    out, escaped = [], False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise InvalidArgumentError(f"invalid field selector term {term!r}: invalid escape sequence \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            raise InvalidArgumentError(f"invalid field selector term {term!r}: unescaped {c!r} in the value "
                                       f"(write \\{c})")
        else:
            out.append(c)
    if escaped:
        raise InvalidArgumentError(f"invalid field selector term {term!r}: a trailing backslash")
    return "".join(out)


@functools.lru_cache(maxsize=256)
def field_terms(selector: str) -> tuple[FieldTerm, ...]:
    """Parse the field selector ``selector`` as kube-apiserver does (apimachinery ``fields.ParseSelector``).

    Terms are separated by unescaped commas; each is ``path=value``, ``path==value`` or ``path!=value``, split at
    its first unescaped operator; the value may hold anything (``kubernetes.io/tls``, ``fd00::1``,
    ``spec.containers{app}``) but an unescaped ``,`` or ``=`` (escape them, and ``\\``, with a backslash).

    Raises:
        InvalidArgumentError: a term without an operator, an empty or malformed path, a bad escape.
    """
    terms: list[FieldTerm] = []
    for raw in _split_unescaped(selector):
        term = raw.strip()
        if not term:
            continue
        found = None
        escaped = False
        for i, c in enumerate(term):
            if escaped:
                escaped = False
                continue
            if c == "\\":
                escaped = True
                continue
            op = next((op for op in _FIELD_OPS if term.startswith(op, i)), None)
            if op is not None:
                found = (term[:i].strip(), op, term[i + len(op):].strip())
                break
        if found is None:
            raise InvalidArgumentError(f"invalid field selector term {term!r}: expected path=value, path==value "
                                       f"or path!=value")
        path, op, value = found
        if not path or path.startswith(".") or path.endswith(".") or ".." in path or "\\" in path:
            raise InvalidArgumentError(f"invalid field selector term {term!r}: bad field path {path!r}")
        terms.append((path, op != "!=", _unescape(value, term)))
    return tuple(terms)


def fields_match(obj: Mapping[str, Any], terms: tuple[FieldTerm, ...]) -> bool:
    """Whether ``obj`` meets every term (a missing field reads as ``""``)."""
    return all((_field(obj, tuple(path.split("."))) == value) == equal for path, equal, value in terms)


@functools.lru_cache(maxsize=256)
def field_matcher(selector: str) -> Matcher:
    """Return a predicate for the field selector ``selector`` (``""`` matches everything).

    Raises:
        InvalidArgumentError: as :func:`field_terms`.
    """
    terms = field_terms(selector)
    return lambda obj: fields_match(obj, terms)
