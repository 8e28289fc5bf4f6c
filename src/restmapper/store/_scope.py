"""What one informer holds: its scope on the server and its transform (the cache's options, per kind).

A :class:`Scope` is asked of the **server**, as controller-runtime's ``cache.Options`` (``DefaultNamespaces``,
``DefaultLabelSelector``, ``DefaultFieldSelector``, ``DefaultTransform``, ``ByObject``) and client-go's metadata
informer: namespaced kinds are listed and watched per namespace (one reflector each), selectors are sent as
``labelSelector``/``fieldSelector`` on both the list and the watch, ``metadata_only`` asks for
``PartialObjectMetadata``. A read asking for more than the scope holds is refused (:class:`OutsideScopeError`);
one asking for less is filtered locally.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from restmapper.errors import InvalidArgumentError, OutsideScopeError, RestMapperError, is_no_match
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource
from restmapper.store._labels import label_implies, label_matcher
from restmapper.store._selector import FieldTerm, field_matcher, field_terms
from restmapper.store._stats import Transform

__all__ = ["SCOPE_OPTIONS", "KindScopes", "Scope", "TransformArg", "make_scope"]

SCOPE_OPTIONS = ("namespace", "namespaces", "label_selector", "field_selector", "metadata_only", "transform")
"""The keys of a ``by_kind`` entry: the cache's scope options."""

TransformArg = Transform | Iterable[Transform]
"""A transform, or transforms applied in order (``[strip_managed_fields, strip_last_applied]``)."""

_SPACES = re.compile(r"\s+")
_log = logging.getLogger("restmapper.store")


@dataclass(frozen=True)
class Scope:
    """The scope of one informer.

    Namespaces are listed and watched at their own paths (``/api/v1/namespaces/a/configmaps``), one reflector
    each, as controller-runtime's multi-namespace cache: reads merge them, a read of another namespace raises
    :class:`~restmapper.errors.OutsideScopeError`, and a 403 in one namespace leaves the others served. Selectors
    are filtered by the server on the list and the watch: an object whose labels or selected fields change out of
    them is sent as ``DELETED`` (and reaches ``on_delete``), one changing into them as ``ADDED``; the server accepts
    ``metadata.name``, ``metadata.namespace`` and each kind's selectable fields (a 400 otherwise, and the informer
    fails). Metadata-only objects are ``{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
    "metadata": {...}}``, exactly as the server sends them; a server answering 406 gets full objects, with a
    warning.

    Attributes:
        namespaces: the namespaces its namespaced kind is listed in, one reflector each (None: all namespaces, one
            cluster-wide reflector). Cluster-scoped kinds ignore it.
        label_selector: sent as ``labelSelector`` (``""``: none).
        field_selector: sent as ``fieldSelector`` (``""``: none).
        metadata_only: hold ``PartialObjectMetadata`` instead of full objects.
        transform: applied to every object before it is stored, or None.
    """

    namespaces: tuple[str, ...] | None = None
    label_selector: str = ""
    field_selector: str = ""
    metadata_only: bool = False
    transform: Transform | None = None

    def params(self) -> dict[str, str]:
        """The query parameters of its lists and watches."""
        params = {"labelSelector": self.label_selector} if self.label_selector else {}
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return params

    def describe(self, namespaced: bool = True) -> str:
        """What it holds, for logs and messages: ``namespaces 'a', 'b'; label selector 'tier=gold'``."""
        parts = []
        if namespaced and self.namespaces is not None:
            parts.append(("namespace " if len(self.namespaces) == 1 else "namespaces ")
                         + ", ".join(repr(ns) for ns in self.namespaces))
        else:
            parts.append("all namespaces" if namespaced else "the cluster scope")
        if self.label_selector:
            parts.append(f"label selector {self.label_selector!r}")
        if self.field_selector:
            parts.append(f"field selector {self.field_selector!r}")
        if self.metadata_only:
            parts.append("metadata only")
        if self.transform is not None:
            parts.append("transformed")
        return "; ".join(parts)

    def describe_selectors(self) -> str:
        """Its selectors, for messages: ``label selector 'tier=gold' and field selector 'x=y'`` (``""``: none)."""
        return " and ".join(f"{what} {value!r}" for what, value in (("label selector", self.label_selector),
                                                                     ("field selector", self.field_selector))
                            if value)

    def selects(self, obj: Mapping[str, Any]) -> bool:
        """True when the server object ``obj`` matches this scope's label and field selectors (so its informer's
        list and watch carry it), as kube-apiserver filters them; namespaces are not checked. The selectors were
        checked when the scope was made, so this raises nothing."""
        return label_matcher(self.label_selector)(obj) and field_matcher(self.field_selector)(obj)

    def check_selectors(self, kind: str, label_selector: str | None, field_selector: str | None) -> None:
        """Refuse a read whose selector may select objects the informer does not hold.

        An omitted selector reads what the informer holds. A given one must contain every term of the informer's
        (it is then as narrow or narrower, and the cache filters locally): ``tier=gold,app=web`` within
        ``tier=gold``; ``app=web`` alone is not within it.

        Raises:
            OutsideScopeError: a selector not within the scope.
        """
        if self.label_selector and label_selector is not None \
                and not label_implies(label_selector, self.label_selector):
            raise OutsideScopeError(kind, self.describe(), f"label selector {label_selector!r}")
        if self.field_selector and field_selector is not None \
                and not set(field_terms(self.field_selector)) <= set(field_terms(field_selector)):
            raise OutsideScopeError(kind, self.describe(), f"field selector {field_selector!r}")

    def local_field_terms(self, kind: str, field_selector: str) -> tuple[FieldTerm, ...]:
        """The terms of a read's ``field_selector`` the cache must evaluate against the objects it holds: those
        the informer's own field selector does not already guarantee.

        Raises:
            OutsideScopeError: a term on a field the held objects do not carry (anything but ``metadata.*`` when
                the informer holds metadata only): filtering locally would answer empty or everything.
        """
        mine = set(field_terms(self.field_selector))
        local = tuple(term for term in field_terms(field_selector) if term not in mine)
        if self.metadata_only:
            for path, _, _ in local:
                if not path.startswith("metadata."):
                    raise OutsideScopeError(
                        kind, self.describe(), f"field selector {field_selector!r} (the informer holds metadata "
                        f"only: {path} is not in the objects it holds; put the term in the cache's field_selector "
                        f"to have the server filter on it)")
        return local

    def held_namespaces(self) -> tuple[str, ...] | None:
        """The namespaces the informer can hold objects of: its ``namespaces``, else the one its field selector
        pins with ``metadata.namespace=<ns>`` (None: any)."""
        if self.namespaces is not None:
            return self.namespaces
        pinned = {value for path, equal, value in field_terms(self.field_selector)
                  if path == "metadata.namespace" and equal}
        return tuple(sorted(pinned)) if pinned else None


def _composed(transforms: tuple[Transform, ...]) -> Transform:
    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        for fn in transforms:
            obj = fn(obj)
        return obj
    return transform


def _transform(value: Any) -> Transform | None:
    if value is None or callable(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, (list, tuple)) and value and all(callable(fn) for fn in value):
        fns: tuple[Transform, ...] = tuple(value)
        return fns[0] if len(fns) == 1 else _composed(fns)
    raise TypeError(f"ObjectCache() takes transform as a callable, a non-empty list of callables or None, not "
                    f"{type(value).__name__}")


def _selector(value: Any, name: str, check: Callable[[str], Any]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string or None, got {type(value).__name__}")
    check(value)  # InvalidArgumentError for a malformed selector, before any request
    return value.strip()


_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _namespaces(namespace: Any, namespaces: Any) -> tuple[str, ...] | None:
    """The namespaces of the scope, each checked as kube-apiserver checks a namespace name (a DNS-1123 label: at
    most 63 lowercase letters, digits and ``-``, starting and ending with a letter or digit), so no name can
    change the path it is listed at (``..``, ``a/b``, ``a?x=y``)."""
    if namespace is not None and namespaces is not None:
        raise InvalidArgumentError("give namespace (one) or namespaces (several), not both")
    if namespace is not None:
        if not isinstance(namespace, str):
            raise TypeError(f"namespace must be a namespace name (str), got {type(namespace).__name__}")
        namespaces = [namespace]
    if namespaces is None:
        return None
    if not isinstance(namespaces, (list, tuple, set, frozenset)):
        raise TypeError(f"namespaces must be a list of namespace names, got {type(namespaces).__name__}")
    names = tuple(dict.fromkeys(sorted(namespaces) if isinstance(namespaces, (set, frozenset)) else namespaces))
    if not names:
        raise InvalidArgumentError("namespaces must be a non-empty list of namespace names (None: all namespaces)")
    for ns in names:
        _check_namespace_name(ns)
    return names


def _check_namespace_name(ns: object) -> None:
    """``ns`` is a namespace name: a DNS-1123 label (see :func:`_namespaces`).

    Raises:
        TypeError: not a str.
        InvalidArgumentError: not a DNS-1123 label.
    """
    if not isinstance(ns, str):
        raise TypeError(f"namespaces must be namespace names (str), got {type(ns).__name__} {ns!r}")
    if len(ns) > 63 or not _DNS1123_LABEL.fullmatch(ns):
        raise InvalidArgumentError(f"namespace {ns!r} is not a valid namespace name (a DNS-1123 label: at most "
                                   f"63 lowercase letters, digits and '-', starting and ending with a letter or "
                                   f"digit)")


def make_scope(options: Mapping[str, Any], base: Scope | None = None) -> Scope:
    """Return ``base`` (or the widest scope) with the scope options in ``options`` applied.

    Args:
        options: keys of :data:`SCOPE_OPTIONS` (a key present overrides ``base``, even with None).
        base: the cache's scope, when ``options`` are a ``by_kind`` entry.

    Raises:
        InvalidArgumentError: an unknown key, a malformed selector, an empty ``namespaces``, both ``namespace``
            and ``namespaces``.
        TypeError: a value of the wrong type.
    """
    unknown = set(options) - set(SCOPE_OPTIONS)
    if unknown:
        raise InvalidArgumentError(f"unknown scope option(s) {sorted(unknown)}; the options are {list(SCOPE_OPTIONS)}")
    scope = base or Scope()
    changes: dict[str, Any] = {}
    if "namespace" in options or "namespaces" in options:
        changes["namespaces"] = _namespaces(options.get("namespace"), options.get("namespaces"))
    if "label_selector" in options:
        changes["label_selector"] = _selector(options["label_selector"], "label_selector", label_matcher)
    if "field_selector" in options:
        changes["field_selector"] = _selector(options["field_selector"], "field_selector", field_matcher)
    if "metadata_only" in options:
        if not isinstance(options["metadata_only"], bool):
            raise TypeError(f"metadata_only must be a bool, got {type(options['metadata_only']).__name__}")
        changes["metadata_only"] = options["metadata_only"]
    if "transform" in options:
        changes["transform"] = _transform(options["transform"])
    return replace(scope, **changes)


_KEY_TYPES = (GroupKind, GroupVersionKind, GroupVersionResource, str)


def _check_key(key: Any) -> None:
    """A ``by_kind`` key: a GroupKind, GVK, GVR, or one resource type as ``kubectl get`` takes it."""
    if not isinstance(key, _KEY_TYPES):
        raise TypeError(f"by_kind keys name a kind (a GroupKind, GroupVersionKind, GroupVersionResource or str such "
                        f"as 'configmaps'), not {type(key).__name__}: {key!r}")
    if isinstance(key, str) and not (key and key.isascii() and key.isprintable()
                                     and not any(c in key for c in " /,")):
        raise InvalidArgumentError(f"by_kind key {key!r} is not one resource type (write it as kubectl get takes "
                                   f"one: 'configmaps', 'cm', 'widgets.example.com', 'Widget.v1.example.com')")


class KindScopes:
    """The cache's scope and its per-kind overrides (``by_kind``), checked up front.

    A ``by_kind`` key is resolved to its GroupKind when an informer is created and remembered from then on (a move
    to another version keeps it). A key naming no served kind yet (a typo, or a CRD not installed yet) is logged
    once at WARNING and tried again for every later informer; an informer created meanwhile asks again once its own
    kind is served (:meth:`pending`), so the entry applies when its kind appears and never falls back to the
    cache's scope for good.

    Attributes:
        base: the cache's scope.
    """

    def __init__(self, options: Mapping[str, Any], by_kind: Mapping[Any, Mapping[str, Any]] | None) -> None:
        """Check the cache's scope ``options`` and its ``by_kind`` entries.

        Raises:
            As :func:`make_scope`; TypeError: ``by_kind`` or one of its entries is not a mapping, or a key is not
                a GroupKind, GroupVersionKind, GroupVersionResource or str; InvalidArgumentError: a str key that is
                not one resource type (empty, ``v1/ConfigMap``, a comma list).
        """
        self.base = make_scope(options)
        if by_kind is not None and not isinstance(by_kind, Mapping):
            raise TypeError(f"ObjectCache() takes by_kind as a mapping of kind to options, not "
                            f"{type(by_kind).__name__}")
        self._by_kind: dict[Any, Scope] = {}
        for kind, entry in (by_kind or {}).items():
            _check_key(kind)
            if not isinstance(entry, Mapping):
                raise TypeError(f"by_kind[{kind!r}] must be a mapping of scope options, got {type(entry).__name__}")
            self._by_kind[kind] = make_scope(entry, self.base)
        self._lock = threading.Lock()
        self._resolved: dict[Any, Any] = {}  # key -> its GroupKind, once resolved
        self._warned: set[Any] = set()

    def pending(self) -> bool:
        """True while a ``by_kind`` key has not resolved yet."""
        with self._lock:
            return len(self._resolved) < len(self._by_kind)

    def for_kind(self, group_kind: Any, resolve: Callable[[Any], Any]) -> Scope:
        """The scope of ``group_kind``'s informer: its ``by_kind`` entry, else the cache's.

        Args:
            group_kind: the informer's GroupKind.
            resolve: the GroupKind a ``by_kind`` key names (a string or GVR is resolved by the mapper).

        Raises:
            InvalidArgumentError: two keys name the same kind (``cm`` and ``configmaps``).
            As ``resolve``, but its no-match (that key is logged once and tried again next time).
        """
        for key in self._by_kind:
            with self._lock:
                if key in self._resolved:
                    continue
            try:
                resolved = resolve(key)
            except RestMapperError as exc:
                if not is_no_match(exc):
                    raise
                with self._lock:
                    warn = key not in self._warned
                    self._warned.add(key)
                if warn:
                    _log.warning("by_kind key %r names no kind the server serves (yet): its options apply once "
                                 "it does (a CRD not installed yet?), check its spelling otherwise", key)
                continue
            with self._lock:
                self._resolved[key] = resolved
        with self._lock:
            named: dict[Any, Any] = {}
            for key, resolved in self._resolved.items():
                if resolved in named:
                    raise InvalidArgumentError(f"by_kind names {resolved} twice ({named[resolved]!r} and {key!r}): "
                                               f"give one entry per kind")
                named[resolved] = key
            key = named.get(group_kind)
        return self._by_kind[key] if key is not None else self.base
