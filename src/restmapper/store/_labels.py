"""Label selectors as kube-apiserver parses and matches them (apimachinery ``labels.Parse``), and whether one
selector selects only objects another selects (the cache's scope check).

Grammar: comma-separated requirements, all of which must hold; whitespace between tokens is ignored. A requirement
is ``!key`` (absent), ``key`` (present), ``key=value``, ``key==value``, ``key!=value`` (also matches an absent key),
``key in (v1,v2)``, ``key notin (v1,v2)`` (also matches an absent key), ``key>N`` / ``key<N`` (the label is present
and an integer greater / less than the integer N). A key is a qualified name (``[prefix/]name``: a DNS subdomain
prefix, a name of at most 63 alphanumerics, ``-``, ``_``, ``.`` starting and ending alphanumeric); a value is empty
or such a name. Identifiers run until whitespace or one of ``=!(),<>``, so ``key in(a,b)`` parses and ``x in (a b)``,
``a in ()``, ``-a=b``, ``a/b/c=d``, ``a=b,,c=d`` are refused.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from restmapper.errors import InvalidArgumentError

__all__ = ["LabelRequirement", "label_implies", "label_matcher", "label_requirements", "labels_matcher"]

_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_INTEGER = re.compile(r"[-+]?[0-9]+")
_TOKEN = re.compile(r"\s*(?:(?P<op>!=|==|=|!|\(|\)|,|>|<)|(?P<ident>[^\s=!(),<>]+))")


@dataclass(frozen=True)
class LabelRequirement:
    """One requirement: ``op`` is ``exists``, ``!exists``, ``in``, ``notin``, ``gt`` or ``lt`` (``=`` is ``in``
    of one value, ``!=`` ``notin`` of one); ``values`` a frozenset (one integer string for ``gt``/``lt``)."""

    key: str
    op: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        """Whether ``labels`` meet the requirement."""
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op == "in":
            return present and labels[self.key] in self.values
        if self.op == "notin":
            return not present or labels[self.key] not in self.values
        value = labels.get(self.key)
        if not isinstance(value, str) or not _INTEGER.fullmatch(value):
            return False
        bound = int(next(iter(self.values)))
        return int(value) > bound if self.op == "gt" else int(value) < bound


def _bad(selector: str, why: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"invalid label selector {selector!r}: {why}")


def _check_key(selector: str, key: str) -> str:
    prefix, slash, name = key.rpartition("/")
    if not _NAME.fullmatch(name) or (slash and (len(prefix) > 253 or not _PREFIX.fullmatch(prefix))):
        raise _bad(selector, f"{key!r} is not a valid label key ([prefix/]name: a name of at most 63 alphanumerics, "
                             f"'-', '_' or '.', starting and ending alphanumeric; a DNS subdomain prefix)")
    return key


def _check_value(selector: str, value: str) -> str:
    if value and not _NAME.fullmatch(value):
        raise _bad(selector, f"{value!r} is not a valid label value (empty, or at most 63 alphanumerics, '-', '_' "
                             f"or '.', starting and ending alphanumeric)")
    return value


def _tokens(selector: str) -> list[tuple[str, str]]:
    """``(kind, text)`` tokens: kind ``op`` or ``ident``."""
    tokens, pos = [], 0
    while pos < len(selector):
        found = _TOKEN.match(selector, pos)
        if found is None:  # only trailing whitespace is left
            break
        pos = found.end()
        if found["op"] is not None:
            tokens.append(("op", found["op"]))
        else:
            tokens.append(("ident", found["ident"]))
    return tokens


_END = ("end", "")


class _Cursor:
    """The tokens of one selector, read left to right (``("end", "")`` past the last one)."""

    __slots__ = ("i", "selector", "tokens")

    def __init__(self, selector: str) -> None:
        self.selector = selector
        self.tokens = _tokens(selector)
        self.i = 0

    def more(self) -> bool:
        return self.i < len(self.tokens)

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i] if self.i < len(self.tokens) else _END

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.i += 1
        return token

    def value(self) -> str:
        """The next identifier as a value, or ``""`` (taking nothing) when the next token is not one."""
        kind, value = self.peek()
        if kind != "ident":
            return ""
        self.take()
        return value


@functools.lru_cache(maxsize=256)
def label_requirements(selector: str) -> tuple[LabelRequirement, ...]:
    """Parse ``selector`` (``""`` or blank: no requirement).

    Raises:
        InvalidArgumentError: a selector kube-apiserver would refuse, saying where.
    """
    cur = _Cursor(selector)
    requirements: list[LabelRequirement] = []
    while cur.more():
        requirements.append(_requirement(cur))
        kind, text = cur.take()
        if kind == "end":
            break
        if (kind, text) != ("op", ","):
            raise _bad(selector, f"expected ',' between requirements, found {text!r}")
        if cur.peek()[0] == "end" or cur.peek() == ("op", ","):
            raise _bad(selector, "expected a requirement after ','")
    return tuple(requirements)


def _requirement(cur: _Cursor) -> LabelRequirement:
    """One requirement: ``!key``, ``key``, ``key in (...)``/``notin (...)``, or ``key`` with a comparison."""
    selector = cur.selector
    kind, text = cur.take()
    if (kind, text) == ("op", "!"):
        kind, key = cur.take()
        if kind != "ident":
            raise _bad(selector, "'!' must be followed by a key")
        return LabelRequirement(_check_key(selector, key), "!exists")
    if kind != "ident":
        raise _bad(selector, f"expected a key or '!', found {text!r}")
    key = _check_key(selector, text)
    kind, op = cur.peek()
    if kind == "end" or (kind, op) == ("op", ","):
        return LabelRequirement(key, "exists")
    if kind == "ident" and op in ("in", "notin"):
        cur.take()
        return _set_requirement(cur, key, op)
    if kind == "op" and op in ("=", "==", "!=", ">", "<"):
        cur.take()
        return _compared_requirement(cur, key, op)
    raise _bad(selector, f"expected an operator (in, notin, =, ==, !=, >, <) after {key!r}, found {op!r}")


def _set_requirement(cur: _Cursor, key: str, op: str) -> LabelRequirement:
    """``key in (a,b)`` or ``key notin (a,b)``, from the ``(`` on (``()``: one empty value, as apimachinery)."""
    selector = cur.selector
    if cur.take() != ("op", "("):
        raise _bad(selector, f"'{op}' must be followed by '(' and a list of values")
    values: list[str] = []
    closed = cur.peek() == ("op", ")")
    if closed:  # "()": one empty value, as apimachinery reads it
        cur.take()
        values.append("")
    while not closed:
        values.append(_check_value(selector, cur.value()))
        kind, value = cur.take()
        closed = (kind, value) == ("op", ")")
        if not closed and (kind, value) != ("op", ","):
            raise _bad(selector, f"expected ',' or ')' in the values of {key!r}, found {value or 'the end'!r}")
    if op == "in" and values == [""]:
        raise _bad(selector, f"the values of 'in' cannot be empty ({key!r})")
    return LabelRequirement(key, op, frozenset(values))


def _compared_requirement(cur: _Cursor, key: str, op: str) -> LabelRequirement:
    """``key=v``, ``key==v``, ``key!=v`` (as ``in``/``notin`` of one value) or ``key>n``, ``key<n`` (integers)."""
    selector = cur.selector
    value = cur.value()
    if op in (">", "<"):
        if not _INTEGER.fullmatch(value):
            raise _bad(selector, f"the value of '{op}' must be an integer, found {value!r}")
        return LabelRequirement(key, "gt" if op == ">" else "lt", frozenset({str(int(value))}))
    return LabelRequirement(key, "notin" if op == "!=" else "in", frozenset({_check_value(selector, value)}))


Matcher = Callable[[Mapping[str, Any]], bool]


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


@functools.lru_cache(maxsize=256)
def label_matcher(selector: str) -> Matcher:
    """A predicate over objects for ``selector`` (its labels meet every requirement).

    Raises:
        InvalidArgumentError: as :func:`label_requirements`.
    """
    requirements = label_requirements(selector)
    return lambda obj: all(r.matches(_labels(obj)) for r in requirements)


@functools.lru_cache(maxsize=256)
def labels_matcher(selector: str) -> Matcher:
    """A predicate over label sets (``metadata.labels`` mappings) for ``selector``: what :func:`label_matcher`
    tests of an object, without the object (the store matches its records, never decoding what it skips).

    Raises:
        InvalidArgumentError: as :func:`label_requirements`.
    """
    requirements = label_requirements(selector)
    return lambda labels: all(r.matches(labels) for r in requirements)


def _integers(values: frozenset[str]) -> list[int] | None:
    return [int(v) for v in values] if all(_INTEGER.fullmatch(v) for v in values) else None


def _implies(r: LabelRequirement, s: LabelRequirement) -> bool:
    """Whether every label set meeting ``r`` meets ``s`` (same key; sound, not complete)."""
    if s.op == "exists":
        return r.op in ("exists", "in", "gt", "lt")
    if s.op == "!exists":
        return r.op == "!exists"
    if s.op == "in":
        return r.op == "in" and r.values <= s.values
    if s.op == "notin":
        return r.op == "!exists" or (r.op == "in" and not r.values & s.values) or \
            (r.op == "notin" and s.values <= r.values)
    bound = int(next(iter(s.values)))
    above = s.op == "gt"
    if r.op == s.op:
        own = int(next(iter(r.values)))
        return own >= bound if above else own <= bound
    numbers = _integers(r.values) if r.op == "in" else None
    return numbers is not None and all(n > bound if above else n < bound for n in numbers)


def label_implies(read: str, held: str) -> bool:
    """Whether every object matching the selector ``read`` matches ``held`` (requirement-set containment: each
    requirement of ``held`` follows from one of ``read``'s: ``env in (a)`` within ``env in (a,b)``, ``a=b`` within
    ``a``, ``a in (b)`` within ``a=b``). Sound: when unsure, False.

    Raises:
        InvalidArgumentError: as :func:`label_requirements`.
    """
    mine = label_requirements(read)
    return all(any(r.key == s.key and _implies(r, s) for r in mine) for s in label_requirements(held))
