"""Argument checks of the mapper's public methods: a wrong type is a ``TypeError`` naming what was expected.

Without them a string where a ``GroupKind`` belongs fails deep inside with ``AttributeError`` (or, worse, a
``GroupVersionKind`` where a ``GroupKind`` belongs silently loses its version).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import GroupKind, GroupVersion, GroupVersionKind, GroupVersionResource

__all__ = [
    "SERVABLE_GROUPS",
    "SERVABLE_VERSIONS",
    "api_version_parts",
    "check_options",
    "group_kind_and_versions",
    "gvr_key",
    "is_group_name",
    "not_a_category",
    "require_group_name",
    "require_gv",
    "require_gvr",
    "require_question_shape",
    "require_resource_type",
    "require_resource_types",
    "require_str",
    "typed_at_version",
]


def _name(value: object) -> str:
    return type(value).__name__


def group_kind_and_versions(method: str, group_kind: object, versions: tuple[Any, ...]
                            ) -> tuple[GroupKind, tuple[str, ...]]:
    """The GroupKind and required versions of a kind question.

    A ``GroupVersionKind`` is honoured as "this kind at exactly this version" (DESIGN 5.10: a version given is a
    version required), the same as ``(gvk.group_kind, gvk.version)``; giving versions as well is a TypeError.

    Raises:
        TypeError: ``group_kind`` is neither, or a version is not a string.
    """
    if isinstance(group_kind, GroupVersionKind):
        if versions:
            raise TypeError(f"{method}() takes a GroupVersionKind, or a GroupKind and versions, not both: pass "
                            f"{method}(gvk.group_kind, {', '.join(repr(v) for v in versions)})")
        return group_kind.group_kind, ((group_kind.version,) if group_kind.version else ())
    if not isinstance(group_kind, GroupKind):
        hint = (f"; for what a user types use resolve({group_kind!r}), or GroupKind(group, kind)"
                if isinstance(group_kind, str) else "")
        raise TypeError(f"{method}() takes a GroupKind (or a GroupVersionKind), not {_name(group_kind)}{hint}")
    for v in versions:
        if not isinstance(v, str):
            raise TypeError(f"{method}() takes versions as separate str arguments ({method}(gk, 'v1', 'v2')), "
                            f"not {_name(v)}")
    return group_kind, versions


def require_gvr(method: str, value: object) -> None:
    """Raise TypeError unless ``value`` is a GroupVersionResource."""
    if not isinstance(value, GroupVersionResource):
        hint = (f"; pass GroupVersionResource(group, version, {value!r}) (empty parts match anything), or "
                f"resolve({value!r}) for what a user types" if isinstance(value, str) else "")
        raise TypeError(f"{method}() takes a GroupVersionResource, not {_name(value)}{hint}")


def gvr_key(method: str, value: object) -> tuple[str, str, str, str]:
    """``(method, group, version, resource)``: the memo key of a resource question (TypeError as
    :func:`require_gvr`). Strings hash in C; a GroupVersionResource hashes through a Python-level method."""
    if value.__class__ is not GroupVersionResource:
        require_gvr(method, value)
    gvr: GroupVersionResource = value  # type: ignore[assignment]
    return method, gvr.group, gvr.version, gvr.resource


def _gv_hint(method: str, text: str) -> str:
    """How to pass ``text`` as a GroupVersion: ``GroupVersion.parse`` for ``apps/v1`` or ``v1``; a dotted name
    without a slash (``example.com``) is a group, which ``GroupVersion.parse`` would read as a version."""
    if "/" in text or "." not in text:
        return f"; pass GroupVersion.parse({text!r})"
    if method.startswith("invalidate"):
        return f"; {text!r} is a group: call invalidate_group({text!r}), or pass GroupVersion({text!r}, version)"
    return f"; {text!r} is a group: pass GroupVersion({text!r}, version)"


def require_gv(method: str, value: object) -> None:
    """Raise TypeError unless ``value`` is a GroupVersion."""
    if not isinstance(value, GroupVersion):
        hint = _gv_hint(method, value) if isinstance(value, str) else ""
        if isinstance(value, (GroupVersionResource, GroupVersionKind)):
            hint = (f"; pass its .group_version ({value.group_version!r}), e.g. "
                    f"{method}(mapping.resource.group_version)")
        raise TypeError(f"{method}() takes a GroupVersion, not {_name(value)}{hint}")


_GROUP_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def is_group_name(value: str) -> bool:
    """True when ``value`` can be an API group name: ``""`` (core) or a DNS-1123 subdomain, as the API server
    validates a CRD's ``spec.group``."""
    return value == "" or (len(value) <= 253 and _GROUP_NAME.fullmatch(value) is not None)


_VERSION = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_INTERNAL = "__internal"  # apimachinery's runtime.APIVersionInternal: skipped in a version list, as upstream


def _servable(group: str, version: str) -> bool:
    return (not group or is_group_name(group)) and (not version or version == _INTERNAL or (
        len(version) <= 63 and _VERSION.fullmatch(version) is not None))


_GROUP_SEED = {"": True}
_VERSION_SEED = {"": True, _INTERNAL: True}
SERVABLE_GROUPS: dict[str, bool] = dict(_GROUP_SEED)
"""Group names found servable (``True``), by :func:`require_question_shape`: a hot path asks this dictionary
first and calls the check only for a name it does not hold (one dictionary read for a name asked before: a
memoized function with two arguments built a key and moved a link on every call, seven cold reads on a large
working set). Holds exact ``str`` names only (never a caller's subclass object). Bounded: emptied when it reaches
:data:`_SERVABLE_LIMIT` names. Read it, never change it."""
SERVABLE_VERSIONS: dict[str, bool] = dict(_VERSION_SEED)
"""Versions found servable (``True``), as :data:`SERVABLE_GROUPS`."""
_SERVABLE_LIMIT = 4096


def _record(table: dict[str, bool], seed: dict[str, bool], name: str) -> None:
    # Only an exact str: the table is process-wide, and a str subclass's own __hash__/__eq__ (content "apps",
    # claiming to equal "APPS") would make later lookups of other names hit its key. Not recorded, such a
    # name is checked again at each call.
    if name.__class__ is not str:
        return
    if len(table) >= _SERVABLE_LIMIT:
        table.clear()
        table.update(seed)
    table[name] = True


def require_question_shape(method: str, group: str, versions: tuple[str, ...] = (), *, gvr: bool = False) -> None:
    """Refuse a group or version no server can serve, so a mistake in the call is never a no-match.

    A served group is ``""`` (core) or a DNS-1123 subdomain and a served version a DNS label, lower case: the API
    server validates CRD and APIService groups and versions so (an empty part of a question matches anything;
    ``__internal``, apimachinery's internal version, is skipped as upstream skips it).
    An apiVersion (``apps/v1``) passed where a group or a version belongs is the usual mistake.

    Args:
        method: the method called, for the message.
        group: the group asked.
        versions: the versions asked.
        gvr: the question is a GroupVersionResource (the message says how to build one).

    Raises:
        InvalidArgumentError: the group or a version cannot be served; the message says what to pass.
    """
    groups, known = SERVABLE_GROUPS, SERVABLE_VERSIONS
    if group in groups:
        for v in versions:
            if v not in known:
                break
        else:
            return
    if all(_servable(group, v) for v in versions or ("",)):
        if group not in groups:
            _record(groups, _GROUP_SEED, group)
        for v in versions:
            if v not in known:
                _record(known, _VERSION_SEED, v)
        return
    if group and not is_group_name(group):
        if "/" in group and group.count("/") == 1:
            g, _, v = group.partition("/")
            hint = f'"{group}" is an apiVersion: pass its group, "{g}", and its version, "{v}", apart'
        else:
            low = group.strip().lower()
            hint = f'API group names are lower case: "{low}"' if is_group_name(low) else "not a DNS-1123 subdomain"
        raise InvalidArgumentError(f'{method}() takes an API group name (such as "apps", "" for core), not '
                                   f'"{group}": {hint}')
    for v in versions:
        if _servable("", v):
            continue
        if "/" in v and v.count("/") == 1:
            g, _, ver = v.partition("/")
            shape = (f'GroupVersionResource("{g}", "{ver}", ...)' if gvr
                     else f'{method}(GroupKind("{g}", ...), "{ver}")')
            hint = f'"{v}" is an apiVersion: pass {shape}'
        else:
            low = v.strip().lower()
            hint = f'versions are lower case: "{low}"' if _servable("", low) else "not a DNS label"
        raise InvalidArgumentError(f'{method}() takes a version such as "v1", not "{v}": {hint}')


def require_group_name(method: str, value: object) -> None:
    """Refuse what cannot be an API group name (a DNS-1123 subdomain, or ``""`` for core), so an apiVersion
    (``example.com/v1``) or a mistyped group is not silently a no-op.

    Raises:
        TypeError: ``value`` is not a str.
        InvalidArgumentError: ``value`` is not a group name; the message says what to pass.
    """
    require_str(method, value, "a group name")
    assert isinstance(value, str)
    if is_group_name(value):
        return
    if "/" in value:
        group = value.partition("/")[0] if value.count("/") == 1 else ""
        hint = (f': pass the group alone, {method}("{group}"), or for a group version '
                f'invalidate_group_version(GroupVersion.parse("{value}"))') if group else ""
    else:
        hint = f': API group names are lower-case, e.g. {method}("{value.strip().lower()}")' \
            if value.strip().lower() != value and _GROUP_NAME.fullmatch(value.strip().lower()) else ""
    raise InvalidArgumentError(f'{method}() takes an API group name (such as "apps" or "example.com", "" for '
                               f'core), not "{value}"{hint}')


def require_str(method: str, value: object, what: str) -> None:
    """Raise TypeError unless ``value`` is a str (``what`` names it, e.g. "a resource name")."""
    if not isinstance(value, str):
        raise TypeError(f"{method}() takes {what} as str, not {_name(value)}")


def check_options(method: str, options: Mapping[str, object], allowed: Collection[str]) -> None:
    """Raise TypeError naming ``method`` for an unknown keyword, with the closest known one."""
    for name in options:
        if name not in allowed:
            close = difflib.get_close_matches(name, list(allowed), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r}{hint}")


_VERSION = re.compile(r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?")


def api_version_parts(text: str) -> tuple[str, str] | None:
    """``(group, version)`` when ``text`` reads as a manifest's apiVersion (``v1``, ``apps/v1``), else None."""
    group, slash, version = text.rpartition("/")
    if _VERSION.fullmatch(version) is None:
        return None
    if slash and not (group and is_group_name(group)):
        return None
    return group, version


def typed_at_version(group: str, version: str, name: str) -> str:
    """The one ``kubectl get`` argument naming the type ``name`` (a kind or a resource) of apiVersion
    ``group/version``: ``Deployment.v1.apps``; for core the name alone (``pods``, ``Pod``), which core wins."""
    return f"{name}.{version}.{group}" if group else name


def require_resource_type(method: str, arg: str, *, command: str = "", told: Callable[[str], str] | None = None
                          ) -> None:
    """Refuse forms that name something other than resource types, so they never read as "not installed".

    ``TYPE/NAME`` (``deploy/web``) and subresources (``deployments/scale``) name objects, not types;
    ``apiVersion kind`` (``apps/v1 Deployment``) and ``apiVersion/type`` (``apps/v1/Deployment``, ``v1/pods``)
    name a type the way a manifest does, written ``Deployment.v1.apps`` (``pods`` for core) here; a comma list is
    for :meth:`resolve_all` (``resolve`` only); an empty argument or one with spaces (``"deploy "``) is refused
    with kubectl's message (kubectl looks the spaces up too, and finds nothing).

    Args:
        method: the Python method called, named in the message.
        arg: the argument (one element of a comma list for ``resolve_all``).
        command: the shell command to name instead (``restmapper resolve``), for a CLI user: the message then
            names no Python call.
        told: writes the caller's own call for a type (``cache.list("deploy")`` from ``"deploy"``), for a caller
            other than the mapper (the object cache): the message then names ``method()`` and that call only
            (a comma list is refused as for ``resolve``, each element told).

    Raises:
        InvalidArgumentError: ``arg`` is one of those forms; the message says what to pass (or type) instead.
    """
    words = arg.split()
    if len(words) == 2 and "/" not in words[1] and (parts := api_version_parts(words[0])) is not None:
        raise _Refusal(method, command, told).manifest_pair(arg, words, parts)
    if not arg or words != [arg]:
        raise _Refusal(method, command, told).spaces(arg, words)
    if "," in arg and (told is not None or method == "resolve"):
        raise _Refusal(method, command, told).comma_list(arg)
    if "/" in arg:
        raise _Refusal(method, command, told).slashes(arg)


class _Refusal:
    """The message of :func:`require_resource_type` refusing an argument of ``method``, naming what to pass (or
    type) instead: ``method("...")``, the shell ``command`` when given, or the caller's own call that ``told``
    writes. Built only once an argument is refused: an accepted type costs nothing here."""

    def __init__(self, method: str, command: str, told: Callable[[str], str] | None) -> None:
        self.method = method
        self.command = command
        self.told = told
        self.caller = command or f"{method}()"

    def instead(self, what: str) -> str:
        """The call (or command) to make for the type ``what``."""
        if self.told is not None:
            return self.told(what)
        return f"{self.command} {what}" if self.command else f'{self.method}("{what}")'

    def manifest_pair(self, arg: str, words: list[str], parts: tuple[str, str]) -> InvalidArgumentError:
        """``apps/v1 Deployment``: a manifest's apiVersion and kind, split by a space."""
        typed = typed_at_version(*parts, words[1])
        python = ("" if self.command or self.told else
                  f'; for a manifest use rest_mapping(GroupVersionKind.from_api_version_and_kind("{words[0]}", '
                  f'"{words[1]}"))')
        return InvalidArgumentError(f'{self.caller} takes a resource type; "{arg}" reads as a manifest\'s apiVersion '
                                    f"and kind: {self.instead(typed)}{python}")

    def spaces(self, arg: str, words: list[str]) -> InvalidArgumentError:
        """An empty argument, or one with spaces (kubectl's message: it looks them up too, and finds nothing)."""
        if not words:
            hint = " (a resource type must be given)"
        elif len(words) == 1:
            hint = f" (a resource type has no spaces: {self.instead(words[0])})"
        else:
            listed = (", ".join(self.told(w) for w in words) if self.told else
                      f"{self.command} {','.join(words)}" if self.command else f'resolve_all("{",".join(words)}")')
            hint = f" (one resource type, without spaces; for several use {listed})"
        return InvalidArgumentError(f'the server doesn\'t have a resource type "{arg}"{hint}')

    def comma_list(self, arg: str) -> InvalidArgumentError:
        """A comma list given to a call that takes one type (``resolve``, or a ``told`` caller's)."""
        if self.told is not None:
            return InvalidArgumentError(f'{self.caller} takes one resource type; "{arg}" is a list: call it for each, '
                                        + ", ".join(self.told(part) for part in arg.split(",") if part))
        return InvalidArgumentError(f'resolve() takes one resource type; "{arg}" is a list: use resolve_all("{arg}")')

    def slashes(self, arg: str) -> InvalidArgumentError:
        """``apps/v1/Deployment`` or ``v1/pods`` (an apiVersion and a type), ``apps/v1`` (an apiVersion alone, or
        kubectl's TYPE/NAME), ``deploy/web`` or ``deployments/scale`` (an object or a subresource)."""
        head, _, name = arg.rpartition("/")
        parts = api_version_parts(head)
        if parts is not None and name and (parts[0] or arg.count("/") == 1):
            return InvalidArgumentError(f'{self.caller} takes a resource type; "{arg}" reads as an apiVersion and a '
                                        f"type: {self.instead(typed_at_version(*parts, name))}")
        parts = api_version_parts(arg)
        if parts is not None and parts[0]:
            return InvalidArgumentError(f'{self.caller} takes a resource type; "{arg}" reads as an apiVersion (or '
                                        f"kubectl's TYPE/NAME), not a type: for a kind of {arg}, pass "
                                        f"{self.instead(f'KIND.{parts[1]}.{parts[0]}')}")
        kind = arg.partition("/")[0]
        hint = f": pass the type alone, {self.instead(kind)}" if kind else ""
        return InvalidArgumentError(f'{self.caller} takes a resource type; "{arg}" names an object '
                                    f"(kubectl's TYPE/NAME) or a subresource, not a type{hint}")


def require_resource_types(method: str, args: str, *, command: str = "") -> None:
    """:func:`require_resource_type` for each element of a comma list, refusing the whole list for an empty or
    space-padded element as kubectl does (``svc,,cm``, ``svc, cm``: kubectl names the element and lists nothing);
    the message then says what to type for the whole list.

    Raises:
        InvalidArgumentError: an element is refused.
    """
    parts = args.split(",")
    for part in parts:
        if part and part.split() == [part]:
            continue
        if len(parts) > 1 and all(len(p.split()) <= 1 for p in parts) and any(p.strip() for p in parts):
            fixed = ",".join(p.strip() for p in parts if p.strip())
            instead = f"{command} {fixed}" if command else f'{method}("{fixed}")'
            why = "a resource type has no spaces" if part else "an element of the list is empty"
            raise InvalidArgumentError(f'the server doesn\'t have a resource type "{part}" ({why}: {instead})')
        require_resource_type(method, part, command=command)
    for part in parts:
        require_resource_type(method, part, command=command)


def not_a_category(arg: str) -> InvalidArgumentError:
    """The error for ``resolve(arg)`` when ``arg`` is a category and no resource type (``all``)."""
    return InvalidArgumentError(f'resolve() takes one resource type; "{arg}" is a category: use resolve_all("{arg}") '
                                f'(or expand_category("{arg}")), as kubectl get {arg} expands it')
