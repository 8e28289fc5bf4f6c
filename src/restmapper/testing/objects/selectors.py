"""Label and field selectors as kube-apiserver parses and matches them.

Label selectors follow apimachinery's ``labels.Parse`` (the "Labels and Selectors" concept page,
https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors): comma-separated
requirements, all of which must hold:

- equality-based: ``key=value``, ``key==value``, ``key!=value`` (``!=`` also matches objects without the key);
- set-based: ``key in (a,b)``, ``key notin (a,b)`` (``notin`` also matches objects without the key), ``key`` (exists),
  ``!key`` (does not exist), and ``key>N`` / ``key<N`` (integer comparison, the key must exist).

Field selectors follow ``fields.ParseSelector`` (the "Field Selectors" concept page): ``field=value``,
``field==value``, ``field!=value``; every resource supports ``metadata.name`` and ``metadata.namespace``, and a
resource's own selectable fields (:data:`BUILTIN_SELECTABLE_FIELDS` for the built-in kinds the kit serves, a CRD
version's ``selectableFields``); any other field answers ``400 field label not supported``. A field reads as its
string form (``true``/``false`` for booleans, ``""`` when absent), as the server's field sets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BUILTIN_SELECTABLE_FIELDS", "FIELD_LABEL_ALIASES", "METADATA_FIELDS", "NAME_ONLY_METADATA", "Selector",
           "SelectorError", "compile_selectors", "parse_field_selector", "parse_label_selector", "selector_matches"]

_NAME = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)"
_KEY = re.compile(rf"^(?:[a-z0-9](?:[-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_NAME}$")
_VALUE = re.compile(rf"^(?:{_NAME})?$")
METADATA_FIELDS = ("metadata.name", "metadata.namespace")
"""The field selectors every resource supports."""

BUILTIN_SELECTABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
             "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"),
    "replicationcontrollers": ("status.replicas",),
    "nodes": ("spec.unschedulable",),
    "namespaces": ("status.phase",),
    "secrets": ("type",),
    "services": ("spec.clusterIP", "spec.type"),
    "replicasets.apps": ("status.replicas",),
    "jobs.batch": ("status.successful",),
    "events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
               "reportingComponent", "source", "type"),
    "certificatesigningrequests.certificates.k8s.io": ("spec.signerName",),
}
"""The selectable fields beyond :data:`METADATA_FIELDS` of the built-in resources (``resource.group``), as each
kind's field label conversion in kube-apiserver (``pkg/apis/core/v1/conversion.go``,
``AddFieldLabelConversionFunc``)."""

NAME_ONLY_METADATA = frozenset({"nodes", "namespaces"})
"""Built-in cluster-scoped resources whose field label conversion accepts ``metadata.name`` but not
``metadata.namespace`` (Node, Namespace); other resources accept both."""

FIELD_LABEL_ALIASES: dict[str, str] = {"spec.host": "spec.nodeName"}
"""Legacy field labels the server converts (a Pod's ``spec.host``, from old v1 clients, reads ``spec.nodeName``):
accepted wherever their target is."""


class SelectorError(ValueError):
    """A label or field selector kube-apiserver would refuse (the kit answers 400 BadRequest with the message)."""


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    op: str  # =, !=, in, notin, exists, !exists, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        return _MATCHES[self.op](self.key in labels, labels.get(self.key), self.values)


def _integer(value: Any) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _greater(present: bool, value: Any, values: tuple[str, ...]) -> bool:
    number = _integer(value)
    return present and number is not None and number > int(values[0])


def _less(present: bool, value: Any, values: tuple[str, ...]) -> bool:
    number = _integer(value)
    return present and number is not None and number < int(values[0])


_MATCHES: dict[str, Callable[[bool, Any, tuple[str, ...]], bool]] = {
    "=": lambda present, value, values: present and value in values,
    "in": lambda present, value, values: present and value in values,
    "!=": lambda present, value, values: not present or value not in values,  # also without the key
    "notin": lambda present, value, values: not present or value not in values,
    "exists": lambda present, _value, _values: present,
    "!exists": lambda present, _value, _values: not present,
    "gt": _greater,
    "lt": _less,
}
"""Whether a label requirement holds, by operator, given whether the object has the key, its value and the
requirement's values."""


Selector = Callable[[Mapping[str, Any]], bool]


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"unable to parse requirement: unexpected ')' in {text!r}")
        if ch == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth:
        raise SelectorError(f"unable to parse requirement: unclosed '(' in {text!r}")
    terms.append("".join(current))
    return [t.strip() for t in terms]


def _check_key(key: str) -> str:
    if not _KEY.match(key):
        raise SelectorError(f"unable to parse requirement: key: Invalid value: {key!r}: a valid label key must "
                            "consist of alphanumeric characters, '-', '_' or '.'")
    return key


def _check_value(value: str) -> str:
    if not _VALUE.match(value):
        raise SelectorError(f"unable to parse requirement: values[0]: Invalid value: {value!r}: a valid label "
                            "value must be an empty string or consist of alphanumeric characters, '-', '_' or '.'")
    return value


_SET_TERM = re.compile(r"^(?P<key>[^\s!=<>()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")


def _parse_label_term(term: str) -> _Requirement:
    if not term:
        raise SelectorError("unable to parse requirement: found '', expected: identifier")
    found = _SET_TERM.match(term)
    if found:
        return _set_requirement(term, found)
    op = next((op for op in _OPERATORS if op in term), None)
    if op is not None:
        return _operator_requirement(term, op)
    if term.startswith("!"):
        return _Requirement(_check_key(term[1:].strip()), "!exists")
    if " " in term:
        raise SelectorError(f"unable to parse requirement: found {term.split()[1]!r}, expected: in, notin, =, ==, "
                            "!=, gt, lt")
    return _Requirement(_check_key(term), "exists")


_OPERATORS = {"!=": "!=", "==": "=", "=": "=", ">": "gt", "<": "lt"}
"""The operators of equality and comparison terms (in the order they are looked for) and the requirement each
makes."""


def _set_requirement(term: str, found: re.Match[str]) -> _Requirement:
    """The requirement of a set-based term (``key in (a,b)``, ``key notin (a,b)``) matched by ``_SET_TERM``."""
    values = tuple(_check_value(v.strip()) for v in found["values"].split(","))
    if found["op"] == "in" and values == ("",):
        raise SelectorError(f"unable to parse requirement: for 'in' operator, values set can't be empty: {term!r}")
    return _Requirement(_check_key(found["key"]), found["op"], values)


def _operator_requirement(term: str, op: str) -> _Requirement:
    """The requirement of an equality (``=``, ``==``, ``!=``) or comparison (``>``, ``<``) term using ``op``."""
    key, _, value = term.partition(op)
    value = value.strip()
    name = _OPERATORS[op]
    if name not in ("gt", "lt"):
        checked = _check_value(value)  # a bad value is reported before a bad key
        return _Requirement(_check_key(key.strip()), name, (checked,))
    if not re.fullmatch(r"-?\d+", value):
        raise SelectorError(f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an "
                            f"integer: {term!r}")
    # Gt/Lt values are integers (a negative one is no label value, and is accepted).
    return _Requirement(_check_key(key.strip()), name, (value,))


def parse_label_selector(text: str | None) -> Selector:
    """Parse a label selector and return a predicate over an object's labels (empty: everything).

    Raises:
        SelectorError: for a selector kube-apiserver would refuse.
    """
    if not text or not text.strip():
        return lambda _labels: True
    requirements = [_parse_label_term(t) for t in _split_terms(text)]
    return lambda labels: all(r.matches(labels) for r in requirements)


def _field_value(obj: Mapping[str, Any], path: tuple[str, ...]) -> str:
    node: Any = obj
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def parse_field_selector(text: str | None,
                         fields: Collection[str] = METADATA_FIELDS) -> Callable[[Mapping[str, Any]], bool]:
    """Parse a field selector and return a predicate over an object (empty: everything).

    Args:
        text: the selector.
        fields: the fields the resource supports (dotted paths).

    Raises:
        SelectorError: for a malformed term or a field not in ``fields``.
    """
    if not text or not text.strip():
        return lambda _obj: True
    terms = [_field_term(text, term.strip(), fields) for term in text.split(",")]

    def matches(obj: Mapping[str, Any]) -> bool:
        return all((_field_value(obj, path) == value) != negated for path, negated, value in terms)

    return matches


def _field_term(text: str, term: str, fields: Collection[str]) -> tuple[tuple[str, ...], bool, str]:
    """One term of field selector ``text`` as ``(field path, negated, value)``.

    Raises:
        SelectorError: for a term without an operator or a field not in ``fields`` (nor an alias of one).
    """
    op = next((op for op in ("!=", "==", "=") if op in term), None)
    if op is None:
        raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
    key, _, value = term.partition(op)
    key = key.strip()
    if key not in fields and FIELD_LABEL_ALIASES.get(key) in fields:
        key = FIELD_LABEL_ALIASES[key]
    if key not in fields:
        raise SelectorError(f"field label not supported: {key}")
    return tuple(key.split(".")), op == "!=", value.strip()


def compile_selectors(label_selector: str | None, field_selector: str | None,
                      fields: Collection[str] = METADATA_FIELDS) -> Callable[[Mapping[str, Any]], bool]:
    """Parse both selectors once and return a predicate over objects (for lists and watches).

    Args:
        label_selector: the label selector, or None.
        field_selector: the field selector, or None.
        fields: the fields the resource supports (see :func:`parse_field_selector`).

    Raises:
        SelectorError: for a selector kube-apiserver would refuse.
    """
    by_labels, by_fields = parse_label_selector(label_selector), parse_field_selector(field_selector, fields)
    return lambda obj: by_labels((obj.get("metadata") or {}).get("labels") or {}) and by_fields(obj)


def selector_matches(obj: Mapping[str, Any], label_selector: str | None, field_selector: str | None) -> bool:
    """True when ``obj`` matches both selectors.

    Raises:
        SelectorError: for a selector kube-apiserver would refuse.
    """
    return compile_selectors(label_selector, field_selector)(obj)
