"""The checks kube-apiserver makes of a CRD, for the fields the kit serves (names, group, scope, versions).

Behaviour learnt from apiextensions-apiserver's ``pkg/apis/apiextensions/validation`` and apimachinery's
``util/validation`` and ``util/validation/field`` (restated, not copied):

- ``metadata.name`` must be a DNS-1123 subdomain and equal ``<spec.names.plural>.<spec.group>`` (create only);
- ``spec.group``: required, a lower-case DNS-1123 subdomain (at most 253 characters), with at least one dot;
- ``spec.scope``: ``Cluster`` or ``Namespaced``;
- each version name, plural, singular, short name and category a DNS-1035 label (at most 63 characters);
  kind and listKind one once lower-cased as Go's ``strings.ToLower`` does (:func:`go_lower`; "may have mixed
  case, but should otherwise match"), and not equal;
  the same rules for ``status.acceptedNames`` (:func:`check_accepted_names`);
- version names unique, exactly one storage version;
- on update ``spec.group`` and ``spec.names.plural`` are immutable (and, once the CRD is Established,
  ``spec.scope`` and ``spec.names.kind``).

Every error is reported at once, as a :class:`FieldError` (``field: Invalid value: "x": detail``), and a Status
cause (``{"reason": "FieldValueInvalid", "message": ..., "field": ...}``), as ``errors.NewInvalid`` builds them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FieldError", "check_accepted_names", "check_crd", "go_lower", "summary"]

_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL_FMT = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  f"validation is '{_SUBDOMAIN_FMT}')")
_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
              "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
              f"validation is '{_LABEL_FMT}')")
_SCOPES = ("Cluster", "Namespaced")


def go_lower(text: str) -> str:
    """``text`` lower-cased as Go's ``strings.ToLower``: each character by its *simple* case mapping, alone.

    Python's :meth:`str.lower` applies the full mapping (``"\u0130"``, capital I with dot, becomes two
    characters, ``"i\u0307"``) and the final-sigma context rule (``"\u03a3"`` at the end of a word becomes
    ``"\u03c2"``); Go maps ``"\u0130"`` to ``"i"`` and every ``"\u03a3"`` to ``"\u03c3"``. U+0130 is the only
    character whose full lower-case mapping is longer than one character.
    """
    if text.isascii():
        return text.lower()
    return "".join("i" if c == "\u0130" else c.lower() for c in text)


def _quote(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class FieldError:
    """One validation error, as apimachinery's ``field.Error``.

    Attributes:
        field: the JSON path (``spec.names.shortNames[1]``).
        type: ``Required``, ``Invalid``, ``NotSupported`` or ``Duplicate``.
        value: the offending value (shown quoted, as Go's ``%q``; other values as JSON).
        detail: why.
        supported: for ``NotSupported``, the values that are.
    """

    field: str
    type: str
    value: Any = None
    detail: str = ""
    supported: tuple[str, ...] = ()

    def body(self) -> str:
        """The message without the field (``Invalid value: "Example.com": ...``): a Status cause's ``message``."""
        if self.type == "Required":
            text = "Required value"
        elif self.type == "NotSupported":
            text = f"Unsupported value: {_quote(self.value)}"
            if self.supported:
                text += ": supported values: " + ", ".join(_quote(s) for s in self.supported)
        else:
            text = f"{'Duplicate' if self.type == 'Duplicate' else 'Invalid'} value: {_quote(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def cause(self) -> dict[str, str]:
        """The Status cause: ``{"reason": "FieldValue<type>", "message": body, "field": field}``."""
        return {"reason": f"FieldValue{self.type}", "message": self.body(), "field": self.field}

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def summary(errors: Sequence[FieldError]) -> str:
    """The errors as one text, as ``ErrorList.ToAggregate()`` prints them (one alone, several in ``[a, b]``)."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _subdomain(value: str) -> list[str]:
    errs = ["must be no more than 253 characters"] if len(value) > 253 else []
    return errs + ([] if _SUBDOMAIN.fullmatch(value) else [_SUBDOMAIN_MSG])


def _label(value: str) -> list[str]:
    errs = ["must be no more than 63 characters"] if len(value) > 63 else []
    return errs + ([] if _LABEL.fullmatch(value) else [_LABEL_MSG])


def _names(names: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``: the names of ``spec.names`` or ``status.acceptedNames``."""
    out: list[FieldError] = []
    for key in ("plural", "singular", "kind", "listKind"):
        if names.get(key):  # an empty one is Required (checked on spec.names only)
            out += _not_a_label(f"{path}.{key}", names[key], mixed_case=key in ("kind", "listKind"))
    for i, short in enumerate(names.get("shortNames") or ()):
        out += _not_a_label(f"{path}.shortNames[{i}]", short)
    kind = names.get("kind") or ""
    if kind and kind == names.get("listKind"):
        out.append(FieldError(f"{path}.listKind", "Invalid", kind, "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or ()):
        out += _not_a_label(f"{path}.categories[{i}]", category)
    return out


def _not_a_label(field: str, value: str, *, mixed_case: bool = False) -> list[FieldError]:
    """The error of name ``value`` at ``field`` when it is not a DNS-1123 label (``mixed_case``: a kind, checked
    lower-cased), else none."""
    errs = _label(go_lower(value) if mixed_case else value)
    if not errs:
        return []
    prefix = "may have mixed case, but should otherwise match: " if mixed_case else ""
    return [FieldError(field, "Invalid", value, prefix + ",".join(errs))]


def _established(crd: Mapping[str, Any]) -> bool:
    conditions: Iterable[Mapping[str, Any]] = crd.get("status", {}).get("conditions") or ()
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def check_crd(crd: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
    """Every error kube-apiserver finds in ``crd`` (its structure already checked: the fields are of the right
    types), in its order: metadata, spec (group, scope, versions, names); on update (``old`` given) the
    immutable fields instead of the name rule (the name cannot change).

    Returns:
        The errors; empty when the CRD is valid.
    """
    spec, names = crd["spec"], crd["spec"]["names"]
    out: list[FieldError] = []
    if old is None:
        out.extend(_name_errors(crd))
    out.extend(_group_errors(spec.get("group") or ""))
    scope = spec.get("scope") or ""
    if not scope:
        out.append(FieldError("spec.scope", "Required"))
    elif scope not in _SCOPES:
        out.append(FieldError("spec.scope", "NotSupported", scope, supported=_SCOPES))
    out.extend(_version_errors(spec.get("versions") or []))
    out.extend(FieldError(f"spec.names.{key}", "Required") for key in ("plural", "singular", "kind", "listKind")
               if not names.get(key))
    out.extend(_names(names, "spec.names"))
    if old is not None:
        out.extend(_immutable_errors(crd, old))
    return out


def _name_errors(crd: Mapping[str, Any]) -> list[FieldError]:
    """``metadata.name``: a DNS subdomain spelled ``<spec.names.plural>.<spec.group>`` (checked on create)."""
    spec = crd["spec"]
    name = str(crd["metadata"].get("name") or "")
    messages = _subdomain(name)
    if name != f"{spec['names'].get('plural') or ''}.{spec.get('group') or ''}":
        messages.append('must be spec.names.plural+"."+spec.group')
    return [FieldError("metadata.name", "Invalid", name, m) for m in messages]


def _group_errors(group: str) -> list[FieldError]:
    """``spec.group``: required, a DNS subdomain with at least one dot."""
    if not group:
        return [FieldError("spec.group", "Required")]
    if errs := _subdomain(group):
        return [FieldError("spec.group", "Invalid", group, ",".join(errs))]
    if "." not in group:
        return [FieldError("spec.group", "Invalid", group, "should be a domain with at least one dot")]
    return []


def _version_errors(versions: list[Mapping[str, Any]]) -> list[FieldError]:
    """``spec.versions``: DNS labels as names, each name once, exactly one storage version."""
    out: list[FieldError] = []
    for i, v in enumerate(versions):
        if errs := _label(str(v.get("name") or "")):
            out.append(FieldError(f"spec.versions[{i}].name", "Invalid", v.get("name"), ",".join(errs)))
    listed = [v.get("name") for v in versions]
    if len(set(listed)) != len(listed):
        out.append(FieldError("spec.versions", "Invalid", listed, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        out.append(FieldError("spec.versions", "Invalid", listed, "must have exactly one version marked as storage "
                              "version"))
    return out


def _immutable_errors(crd: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    """On update: group and plural never change; scope and kind neither once the old CRD was Established."""
    spec, names = crd["spec"], crd["spec"]["names"]
    fixed = [("spec.group", spec.get("group"), old["spec"].get("group")),
             ("spec.names.plural", names.get("plural") or "", old["spec"]["names"].get("plural"))]
    if _established(old):
        fixed[:0] = [("spec.scope", spec.get("scope") or "", old["spec"].get("scope")),
                     ("spec.names.kind", names.get("kind"), old["spec"]["names"].get("kind"))]
    return [FieldError(path, "Invalid", new, "field is immutable") for path, new, was in fixed if new != was]


def check_accepted_names(names: Mapping[str, Any]) -> list[FieldError]:
    """The errors kube-apiserver's status validation finds in ``status.acceptedNames`` (the names rules)."""
    return _names(names, "status.acceptedNames")
