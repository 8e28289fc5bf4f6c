"""The reads of an :class:`~restmapper.store.Informer`: ``get``, ``list`` and the rules they share (one readable
state per answer, the namespaces the informer's scope holds, a namespace RBAC refuses)."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from restmapper.errors import InvalidArgumentError, OutsideScopeError
from restmapper.store._args import check_key, check_selectors
from restmapper.store._errors import ObjectNotFoundError
from restmapper.store._labels import labels_matcher
from restmapper.store._objects import ObjectStore, Record
from restmapper.store._selector import FieldTerm, field_terms, fields_match

if TYPE_CHECKING:
    from restmapper.store._reflectors import ReflectorGroup
    from restmapper.store._scope import Scope

__all__ = ["InformerReads"]

_T = TypeVar("_T")


class _NotReadable(Exception):
    """Internal: a read that must not wait found the informer unreadable (the caller waits elsewhere)."""


class InformerReads:
    """The reads of an informer (mixed into ``Informer``, which owns the fields below: see there)."""

    _cond: threading.Condition
    _store: ObjectStore
    _by_ns: Mapping[str, Mapping[str, Record]]
    _readable: int
    _label: str
    _namespaced: bool
    _namespace: str | None
    _namespaces: tuple[str, ...] | None
    _scope: Scope
    _group: ReflectorGroup
    _observed_rv: str
    _observed_in: dict[str, str]

    if TYPE_CHECKING:
        def _ensure_readable(self) -> None: ...  # InformerWaits's

    def _read(self, fn: Callable[..., _T], *args: Any, wait: bool = True) -> _T:
        """``fn(*args)`` (a read of the store, its key computed from the mapping's scope) answered from one readable
        state: a move, a not-served period or a stop between finding the informer readable and reading makes it
        read again after the next list (DESIGN 5.10: never an answer for neither state, such as the old objects
        looked up with the new scope). Without ``wait``, raise :class:`_NotReadable` instead of waiting."""
        while True:
            epoch = self._readable
            if not epoch:
                if not wait:
                    raise _NotReadable
                self._ensure_readable()
                continue
            try:
                result = fn(*args)
            except (ObjectNotFoundError, InvalidArgumentError):
                if self._readable == epoch:
                    raise
                continue
            if self._readable == epoch:
                return result

    def _ns(self, namespace: str | None) -> str:
        """The namespace a read of one namespace reads (``""`` for a cluster-scoped kind), checked against the
        scope: every read's namespace, however given (argument, the one-namespace default, a
        ``metadata.namespace=`` field selector), goes through here.

        Raises:
            InvalidArgumentError: a namespaced kind without a namespace.
            OutsideScopeError: a namespace the informer cannot hold.
            TransportError: the reflector of that namespace is refused (see :meth:`ReflectorGroup.error_in`).
        """
        if not self._namespaced:
            ns = ""  # as client-go's NamespaceIfScoped: a namespace means nothing to a cluster-scoped kind
        else:
            ns = namespace or self._namespace or ""
            if not ns:
                raise InvalidArgumentError(f"{self._label} is namespaced: give a namespace")
            held = self._namespaces if self._namespaces is not None else self._scope.held_namespaces()
            if held is not None and ns not in held:
                raise OutsideScopeError(self._label, self._scope.describe(), f"namespace {ns!r}")
        error = self._group.error_in(ns)
        if error is not None:
            raise error.with_traceback(None)  # no answer is better than an empty or stale one
        return ns

    def _check_all_namespaces(self) -> None:
        """A read of every namespace the informer holds answers only when each of them can (DESIGN 5.10: a
        partial answer would be confidently wrong about the refused ones).

        Raises:
            TransportError: the first refused namespace's failure (a ForbiddenError's message names its
                namespace); the namespaces still served answer reads of their own.
        """
        refused = self._group.refused()
        if refused:
            raise refused[0][1].with_traceback(None)  # held and raised again: never a growing traceback

    # --- reads -----------------------------------------------------------------------------------------------------

    def get(self, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Return the cached object (shared: never mutate it; see :meth:`ObjectCache.get`).

        Args:
            name: ``metadata.name``.
            namespace: its namespace (None for a cluster-scoped kind, or the informer's one namespace).

        Returns:
            The object, a wire-form dict (read-only by contract).

        Raises:
            ObjectNotFoundError: no such object.
            NoKindMatchError: the kind is not served (the mapper's no-match).
            CacheSyncTimeoutError: not synced within the cache's ``sync_timeout``.
            InvalidArgumentError: a namespaced kind without a namespace (several namespaces in scope).
            OutsideScopeError: (an InvalidArgumentError) a namespace outside the informer's ``namespaces``.
            APIStatusError: the namespace is refused to the client (its 403); the others are served.
            InformerStoppedError: the cache was stopped.
        """
        if self._readable:  # the warm path: attribute reads, two dict lookups and a decoded one, no lock
            try:
                if not self._namespaced:
                    ns = ""
                elif namespace is not None and (self._namespaces is None or namespace in self._namespaces):
                    ns = namespace
                else:
                    ns = self._ns(namespace)
                objects = self._by_ns.get(ns)
                record = objects.get(name) if objects is not None else None
            except TypeError:  # an unhashable argument: check_key below says what is wrong
                record = None
            if record is not None and self._group.error_in(ns) is None:
                return self._store.decoded(record)
        check_key("Informer.get", name, namespace)
        return self._read(self._get_held, name, namespace)  # no closure: cells would slow the warm path

    def _get_held(self, name: str, namespace: str | None) -> dict[str, Any]:
        ns = self._ns(namespace)
        obj = self._store.get(ns, name)
        if obj is None:
            raise ObjectNotFoundError(self._label, ns, name, self._scope.describe_selectors())
        return obj

    def list(self, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None, index: str | None = None,
             value: str | None = None) -> builtins.list[dict[str, Any]]:
        """Return the cached objects that match, ordered by namespace then name (see :meth:`ObjectCache.list`).

        Args:
            namespace: one namespace, or None for every namespace the informer holds.
            label_selector: a label selector string (``"app=web,tier!=db"``), as kubectl's ``-l``.
            field_selector: a field selector string (``"metadata.name=web"``).
            index: an index added with :meth:`add_indexer`, with ``value``: only the objects it maps ``value`` to.
            value: the index value (required with ``index``).

        Returns:
            A new list of the objects (each shared, read-only by contract); empty when none match.

        Raises:
            TypeError: a filter that is not a str.
            InvalidArgumentError: a malformed selector, an unknown index, ``index`` without ``value``.
            OutsideScopeError: a namespace or selector broader than what the informer holds.
            ForbiddenError: a namespace read is refused (its 403).
            As :meth:`get` otherwise (never ObjectNotFoundError).
        """
        return self._list(namespace, label_selector, field_selector, index, value, wait=True)

    def _get_now(self, name: str, namespace: str | None) -> dict[str, Any]:
        """:meth:`get` that never waits (for the event loop): :class:`_NotReadable` when it would."""
        return self._read(self._get_held, name, namespace, wait=False)

    def _list(self, namespace: str | None, label_selector: str | None, field_selector: str | None,
              index: str | None, value: str | None, *, wait: bool) -> builtins.list[dict[str, Any]]:
        check_selectors("Informer.list", namespace, label_selector, field_selector, index, value)
        self._scope.check_selectors(self._label, label_selector, field_selector)
        labels = labels_matcher(label_selector) if label_selector else None
        terms = self._scope.local_field_terms(self._label, field_selector) if field_selector else ()
        if (index is None) != (value is None):
            raise InvalidArgumentError("give both index and value, or neither")
        if field_selector and self._namespaced:
            pinned = {v for path, equal, v in field_terms(field_selector) if path == "metadata.namespace" and equal}
            if namespace is not None:
                pinned.add(namespace)
            if len(pinned) > 1:
                return []  # two namespaces at once: nothing matches
            namespace = next(iter(pinned), None)
        objects = self._read(self._list_held, namespace, index, value, labels, wait=wait)
        if terms:
            if self._scope.transform is not None:
                self._check_carried(objects, terms, field_selector or "")
            objects = [o for o in objects if fields_match(o, terms)]
        return objects

    def _check_carried(self, objects: builtins.list[dict[str, Any]], terms: tuple[FieldTerm, ...],
                       field_selector: str) -> None:
        """Refuse to filter objects a transform stripped of the part a term reads (``spec`` of ``spec.nodeName``):
        the answer would be empty or everything."""
        for path, _, _ in terms:
            top = path.split(".", 1)[0]
            if top != "metadata" and any(top not in o for o in objects):
                raise OutsideScopeError(self._label, self._scope.describe(), f"field selector {field_selector!r} "
                                        f"(the cache's transform removed {top!r} from objects it holds)")

    def _list_held(self, namespace: str | None, index: str | None, value: str | None,
                   labels: Callable[[Mapping[str, Any]], bool] | None) -> builtins.list[dict[str, Any]]:
        if namespace is not None or self._namespace is not None or not self._namespaced:
            ns: str | None = self._ns(namespace)
        else:
            ns = None
            self._check_all_namespaces()
        if index is not None and value is not None:
            return self._store.by_index(index, value, labels, ns or None)
        return self._store.select(ns or None, labels)

    def _observed_for(self, namespace: str) -> str:
        """The resourceVersion everything of ``namespace`` was seen up to (lock held): per namespace, each
        reflector's own (another namespace's bookmark says nothing about this one)."""
        return self._observed_in.get(namespace, "") if self._group.per_namespace else self._observed_rv
