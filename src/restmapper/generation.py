"""A generation-aware cache of values derived from Kubernetes objects (docs/design.md §6).

Controllers keep derived state per object: a client per CRD, a compiled schema, a validator. The cache here
answers "give me the value for *this* object" and guarantees the value was built from an object at least as new
as the one in hand. It exists because of a real failure (docs/design.md §1.1): kube-apiserver's CRD
handler kept per-CRD serving state keyed by UID and never checked that the entry was built from the CRD it was
serving, so after an update, discovery (fed by the same informer) already advertised the new spec while requests
were still served from the old one.

The freshness rule, checked on every :meth:`GenerationCache.get`:

* the entry is keyed by ``metadata.uid``; a new UID (delete and recreate under the same name) is a new object;
* it is reused only if it was built from the same ``metadata.generation`` (the API server bumps it on every spec
  change) **and** the same ``fingerprint(obj)``, which covers what changes without a generation bump (for CRDs:
  ``status.acceptedNames``, which the names controller writes into status);
* an object with a *lower* generation than the entry never replaces it: the newer value is returned (a lagging
  informer or a stale list must not downgrade the cache);
* within one generation, the object presented most recently wins: a different fingerprint rebuilds.

Pure: no I/O. ``build`` and ``dispose`` run in the caller's thread, never under the cache's lock.

This module sits just above :mod:`restmapper.model` and :mod:`restmapper.errors` (it imports nothing else of the
library), so both integrations that use it, :mod:`restmapper.store` (:meth:`ObjectCache.derived
<restmapper.store.ObjectCache.derived>`) and :mod:`restmapper.watch` (the CRD fingerprint a
:class:`~restmapper.watch.Watcher` compares, the cache it refreshes), import it without importing each other.
:mod:`restmapper.store` re-exports its names, so ``from restmapper.store import GenerationCache`` keeps working.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from restmapper.errors import InvalidArgumentError, RestMapperError

__all__ = [
    "GenerationCache",
    "GenerationCacheStats",
    "crd_fingerprint",
    "object_uid_generation",
]

logger = logging.getLogger("restmapper.store")  # the name it has always logged under: logging configs keep working

T = TypeVar("T")
V = TypeVar("V")

_SCALARS = (str, int, float, bool, type(None))


# --- reading objects in any of their Python shapes ---------------------------------------------------------
#
# Objects arrive as plain dicts (wire form, camelCase keys), as kubernetes client models (snake_case attributes
# with an ``attribute_map`` to the wire names; their ``to_dict()`` is snake_case, so it is NOT used), as
# ``kubernetes.dynamic`` ``ResourceInstance``/``ResourceField`` (camelCase attributes, ``to_dict()`` in wire form)
# or as any object with attributes. Everything is read through ``_child`` and ``_plain`` so a fingerprint is the
# same whatever the shape.


def _is_client_model(node: object) -> bool:
    return isinstance(getattr(type(node), "attribute_map", None), dict) and isinstance(
        getattr(type(node), "openapi_types", None), dict
    )


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _child(node: object, key: str) -> Any:
    """The field ``key`` (wire name) of ``node``, or None when absent."""
    if node is None:
        return None
    if isinstance(node, Mapping):
        # A client model's to_dict() output is snake_case: read it too, or a fingerprint would silently miss fields.
        return node[key] if key in node else node.get(_snake(key))
    if _is_client_model(node):
        return _model_child(node, key)
    value, answered = _attribute_child(node, key)
    if answered:
        return value
    to_dict = getattr(node, "to_dict", None)
    as_dict = to_dict() if callable(to_dict) else None
    return _child(as_dict, key) if isinstance(as_dict, Mapping) else None


def _model_child(model: object, key: str) -> Any:
    """The field ``key`` (wire name) of a kubernetes client model, through its ``attribute_map``."""
    attribute_map: dict[str, str] = type(model).attribute_map  # type: ignore[attr-defined]
    for attr, wire in attribute_map.items():
        if wire == key:
            return getattr(model, attr, None)
    return None


def _attribute_child(node: object, key: str) -> tuple[Any, bool]:
    """The field ``key`` of an object with attributes, read as ``key`` then in snake_case, and whether it
    answered at all: ``(value, True)``, ``(None, True)`` for a field that is None, ``(None, False)`` when neither
    name is a field (the caller then tries ``to_dict()``)."""
    answered = False
    for name in (key, _snake(key)):
        try:
            value = getattr(node, name)
        except AttributeError:
            continue
        # ResourceField answers unknown names with dict methods (``.items``); a method is never a field.
        if callable(value) and not isinstance(value, type):
            continue
        if value is not None:
            return value, True
        answered = True
    return None, answered


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _plain(node: object, where: str) -> Any:
    """``node`` as JSON-compatible wire-form data; None-valued fields are dropped so shapes compare equal."""
    if isinstance(node, _SCALARS):
        return node
    if isinstance(node, Mapping):
        return {str(k): _plain(v, f"{where}.{k}") for k, v in node.items() if v is not None}
    if isinstance(node, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(node)]
    if _is_client_model(node):
        return _plain_model(node, where)
    to_dict = getattr(node, "to_dict", None)
    if callable(to_dict):
        return _plain(to_dict(), where)
    raise InvalidArgumentError(f"{where}: cannot read a value of type {type(node).__name__}")


def _plain_model(model: object, where: str) -> dict[str, Any]:
    """A kubernetes client model as wire-form data, through its ``attribute_map`` (None fields dropped)."""
    attribute_map: dict[str, str] = type(model).attribute_map  # type: ignore[attr-defined]
    out: dict[str, Any] = {}
    for attr, wire in attribute_map.items():
        value = getattr(model, attr, None)
        if value is not None:
            out[wire] = _plain(value, f"{where}.{wire}")
    return out


def object_uid_generation(obj: object) -> tuple[str, int]:
    """Return ``(metadata.uid, metadata.generation)`` of a Kubernetes object in any of its Python shapes.

    Args:
        obj: a dict in wire form (``{"metadata": {"uid": ..., "generation": ...}}``), a kubernetes client model
            (``V1CustomResourceDefinition``), a ``kubernetes.dynamic`` ``ResourceInstance``, or any object with a
            ``.metadata`` attribute carrying ``.uid`` and ``.generation``.

    Returns:
        The UID and the generation; a missing generation reads as 0 (kinds that do not track one).

    Raises:
        InvalidArgumentError: no metadata, no UID (an object not yet persisted), a UID that is not a non-empty
            string, or a generation that is not a non-negative integer.

    Mirrors apimachinery ``ObjectMeta``: the UID identifies one incarnation of an object, the generation counts
    its spec changes.
    """
    metadata = _child(obj, "metadata")
    if metadata is None:
        raise InvalidArgumentError(f"object of type {type(obj).__name__} has no metadata")
    uid = _child(metadata, "uid")
    if not isinstance(uid, str) or not uid:
        raise InvalidArgumentError(
            f"object has no metadata.uid (got {type(uid).__name__}); only persisted objects can be cached by UID"
        )
    generation = _child(metadata, "generation")
    if generation is None:
        generation = 0
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
        raise InvalidArgumentError(f"metadata.generation of {uid} must be a non-negative integer, got {generation!r}")
    return uid, generation


def crd_fingerprint(obj: object) -> str:
    """Return a canonical string of what changes a CRD's serving without a generation bump.

    The fingerprint covers ``status.acceptedNames`` (deep; list order kept, as ``shortNames`` order is what the
    API server publishes; dict key order ignored) and the served versions (``name`` and ``served`` of each
    ``spec.versions`` entry, sorted by name, since discovery orders versions by priority, not by spec order).

    Args:
        obj: a CustomResourceDefinition in any shape accepted by :func:`object_uid_generation`.

    Returns:
        A JSON string (``json.dumps(..., sort_keys=True)``); equal strings mean equal serving names and versions.

    Raises:
        InvalidArgumentError: ``spec.versions`` is not a list, or an entry has no string ``name``, or a field
            holds a value that is not JSON data, or the object is nested too deeply.

    Mirrors apiextensions-apiserver: the names controller writes ``status.acceptedNames`` and the CRD handler
    must rebuild its serving info when they change (the seed-1 failure).
    """
    try:
        return _crd_fingerprint(obj)
    except RecursionError:
        # A hostile object nested thousands of levels deep: a typed error, never a crashed watch thread.
        raise InvalidArgumentError("CustomResourceDefinition is nested too deeply to fingerprint") from None


def _crd_fingerprint(obj: object) -> str:
    accepted = _plain(_child(_child(obj, "status"), "acceptedNames"), "status.acceptedNames")
    if isinstance(accepted, dict):
        # acceptedNames has fixed schema fields: normalize snake_case (a client model's to_dict()) to wire names.
        accepted = {_camel(k): v for k, v in accepted.items()}
    versions = _child(_child(obj, "spec"), "versions")
    if versions is None:
        versions = []
    if not isinstance(versions, (list, tuple)):
        raise InvalidArgumentError(f"spec.versions must be a list, got {type(versions).__name__}")
    served: list[tuple[str, Any]] = []
    for i, version in enumerate(versions):
        name = _child(version, "name")
        if not isinstance(name, str):
            raise InvalidArgumentError(f"spec.versions[{i}].name must be a string, got {type(name).__name__}")
        served.append((name, _plain(_child(version, "served"), f"spec.versions[{i}].served")))
    served.sort(key=lambda pair: pair[0])
    return json.dumps({"acceptedNames": accepted, "servedVersions": served}, sort_keys=True, separators=(",", ":"))


# --- the cache ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerationCacheStats:
    """A snapshot of a :class:`GenerationCache`'s counters (all monotonic since creation).

    Attributes:
        builds: calls to ``build`` started (successful or not).
        hits: ``get`` calls answered from an existing entry without building.
        rebuilds: the builds that were started because an existing entry was stale.
        waits: ``get`` calls that waited for another caller's build instead of building.
        stale_reads: hits for an object older (lower generation) than the entry, answered with the newer value.
        build_errors: builds that raised.
        disposals: values released by the cache (handed to ``dispose`` when one is set).
        dispose_errors: ``dispose`` calls that raised (logged on ``restmapper.store``, never propagated).
    """

    builds: int = 0
    hits: int = 0
    rebuilds: int = 0
    waits: int = 0
    stale_reads: int = 0
    build_errors: int = 0
    disposals: int = 0
    dispose_errors: int = 0


class _Entry(Generic[V]):
    __slots__ = ("fingerprint", "generation", "seq", "value")

    def __init__(self, generation: int, fingerprint: Hashable, seq: int, value: V) -> None:
        self.generation = generation
        self.fingerprint = fingerprint
        self.seq = seq  # start order of the build; breaks ties within one generation (latest presented wins)
        self.value = value


class _Flight(Generic[V]):
    """One ``build`` call in progress; waiters block on ``done`` and share its outcome."""

    __slots__ = ("cancelled", "done", "error", "fingerprint", "generation", "owner", "seq", "value")

    def __init__(self, generation: int, fingerprint: Hashable, seq: int) -> None:
        self.generation = generation
        self.fingerprint = fingerprint
        self.seq = seq
        self.owner = threading.get_ident()
        self.done = threading.Event()
        self.cancelled = False  # set (under the cache lock) by forget/clear: the result must not be cached
        self.value: V | None = None
        self.error: BaseException | None = None

    def outcome(self) -> V:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # set before done when error is None


class GenerationCache(Generic[T, V]):
    """A thread-safe cache of values derived from Kubernetes objects, rebuilt whenever the object changed.

    ``get(obj)`` returns ``build(obj)``'s value for ``obj``'s UID, reusing the cached value only if it was built
    from the same UID, the same ``metadata.generation`` and the same ``fingerprint(obj)``. An object with a
    *lower* generation than the entry returns the entry's newer value and never replaces it. An equal generation
    with a different fingerprint rebuilds. Values that leave the cache (replaced, forgotten, pruned, cleared, or
    built by a build that lost a race to a newer one) are handed to ``dispose``; a value returned by ``get`` is
    borrowed and may be disposed as soon as a newer object replaces it.

    Concurrency: one build per key at a time for a given object version (callers presenting the same version wait
    for it and share its value or its exception; a failed build caches nothing); different keys build in
    parallel (no lock is held while building or disposing). A caller presenting a newer generation than a build
    in flight starts its own build rather than accept the older result; whichever build is newer (by generation,
    then by start order) ends up cached, and a stale build finishing late never overwrites it.

    Example:
        >>> cache = GenerationCache.for_crds(lambda crd: crd["status"]["acceptedNames"]["kind"])
        >>> crd = {"metadata": {"uid": "u1", "generation": 1},
        ...        "status": {"acceptedNames": {"kind": "Widget", "plural": "widgets"}}}
        >>> cache.get(crd)
        'Widget'

    Mirrors the check kube-apiserver's CRD handler lacked (docs/design.md §1.1): serving state must be
    built from a CRD at least as new as the one in hand, including ``status.acceptedNames``.
    """

    def __init__(
        self,
        build: Callable[[T], V],
        *,
        fingerprint: Callable[[T], Hashable] | None = None,
        dispose: Callable[[V], None] | None = None,
    ) -> None:
        """Create an empty cache.

        Args:
            build: derives the value from an object; runs in the calling thread, outside the cache's lock. Its
                exceptions propagate to every caller waiting on that build.
            fingerprint: returns a hashable summary of the fields that change without a generation bump; compared
                with ``==``. None means generation and UID alone decide. Its exceptions propagate from ``get``.
            dispose: releases a value that left the cache; its exceptions are logged and counted, never raised.
        """
        self._build = build
        self._fingerprint = fingerprint
        self._dispose = dispose
        # _lock guards _entries, _flights, _seq and the counters; never held while build or dispose run.
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry[V]] = {}
        self._flights: dict[str, list[_Flight[V]]] = {}
        self._seq = itertools.count()
        self._counts: dict[str, int] = dict.fromkeys(GenerationCacheStats.__dataclass_fields__, 0)

    @classmethod
    def for_crds(
        cls, build: Callable[[T], V], *, dispose: Callable[[V], None] | None = None
    ) -> GenerationCache[T, V]:
        """Return a cache for values derived from CustomResourceDefinitions (fingerprint :func:`crd_fingerprint`).

        Args:
            build: derives the value from a CRD (dict, kubernetes client model or ``ResourceInstance``).
            dispose: releases a value that left the cache.

        Returns:
            A cache that rebuilds on a new UID, a new generation, a ``status.acceptedNames`` change or a change
            in which versions are served.

        Mirrors what apiextensions-apiserver's CRD handler must compare before reusing serving info.
        """
        return cls(build, fingerprint=crd_fingerprint, dispose=dispose)

    # --- reading -------------------------------------------------------------------------------------------

    def get(self, obj: T) -> V:
        """Return the value for ``obj``, building it unless a fresh enough one is cached.

        Args:
            obj: a Kubernetes object in any shape accepted by :func:`object_uid_generation`.

        Returns:
            The value built from ``obj`` (or from an object with the same UID, generation and fingerprint); when
            the cache holds a value built from a higher generation, that newer value.

        Raises:
            InvalidArgumentError: ``obj`` has no metadata, no UID or an invalid generation (nothing is cached).
            RestMapperError: ``build`` called ``get`` for the same object version it is building (a deadlock
                otherwise).
            Exception: whatever ``build`` or ``fingerprint`` raised; every caller waiting on that build gets it
                and nothing is cached.
        """
        uid, generation = object_uid_generation(obj)
        fingerprint = self._fingerprint(obj) if self._fingerprint is not None else None
        with self._lock:
            entry = self._entries.get(uid)
            if entry is not None:
                if entry.generation > generation:
                    self._counts["hits"] += 1
                    self._counts["stale_reads"] += 1
                    return entry.value
                if entry.generation == generation and entry.fingerprint == fingerprint:
                    self._counts["hits"] += 1
                    return entry.value
            flight = self._joinable(uid, generation, fingerprint)
            if flight is not None:
                if flight.owner == threading.get_ident():
                    raise RestMapperError(f"build for object {uid} called get() for the object it is building")
                self._counts["waits"] += 1
                owner = False
            else:
                flight = _Flight(generation, fingerprint, next(self._seq))
                self._flights.setdefault(uid, []).append(flight)
                self._counts["builds"] += 1
                if entry is not None:
                    self._counts["rebuilds"] += 1
                owner = True
        if owner:
            return self._run(uid, flight, obj)
        flight.done.wait()
        return flight.outcome()

    def _joinable(self, uid: str, generation: int, fingerprint: Hashable) -> _Flight[V] | None:
        # Caller holds _lock. Join a build of exactly this version, else the newest build of a higher generation
        # (its result is what this caller would get anyway, since lower generations never downgrade).
        newer: _Flight[V] | None = None
        for flight in reversed(self._flights.get(uid, ())):
            if flight.generation == generation and flight.fingerprint == fingerprint:
                return flight
            if flight.generation > generation and (
                newer is None or (flight.generation, flight.seq) > (newer.generation, newer.seq)
            ):
                newer = flight
        return newer

    def _run(self, uid: str, flight: _Flight[V], obj: T) -> V:
        # Runs build() without the lock, so other keys (and other versions of this key) proceed meanwhile.
        try:
            value = self._build(obj)
        except BaseException as exc:
            with self._lock:
                self._drop_flight(uid, flight)
                self._counts["build_errors"] += 1
            flight.error = exc
            flight.done.set()
            raise
        released: list[V] = []
        with self._lock:
            self._drop_flight(uid, flight)
            entry = self._entries.get(uid)
            if flight.cancelled:
                # forget()/clear() ran during the build: the object is gone, so the value is handed to the
                # callers that asked for it but not cached; the cache releases it like any value it drops.
                result = value
                released.append(value)
            elif entry is None or (flight.generation, flight.seq) > (entry.generation, entry.seq):
                self._entries[uid] = _Entry(flight.generation, flight.fingerprint, flight.seq, value)
                if entry is not None:
                    released.append(entry.value)
                result = value
            else:
                # A newer build finished first: this one lost; its callers get the newer value (no downgrade).
                released.append(value)
                result = entry.value
            flight.value = result
        flight.done.set()
        self._release(uid, released)
        return result

    def _drop_flight(self, uid: str, flight: _Flight[V]) -> None:
        flights = self._flights.get(uid)
        if flights is None:
            return
        for i, f in enumerate(flights):
            if f is flight:
                del flights[i]
                break
        if not flights:
            del self._flights[uid]

    def peek(self, uid: str) -> V | None:
        """Return the cached value for ``uid`` without building or checking freshness.

        Args:
            uid: the object's ``metadata.uid``.

        Returns:
            The value built last for that UID (possibly from an older generation), or None when none is cached.
            Never raises.
        """
        with self._lock:
            entry = self._entries.get(uid)
            return entry.value if entry is not None else None

    def __contains__(self, uid: object) -> bool:
        """True when a value is cached for ``uid``."""
        with self._lock:
            return uid in self._entries

    def __len__(self) -> int:
        """The number of cached values (builds in flight are not counted)."""
        with self._lock:
            return len(self._entries)

    @property
    def stats(self) -> GenerationCacheStats:
        """A consistent snapshot of the counters."""
        with self._lock:
            return GenerationCacheStats(**self._counts)

    def __repr__(self) -> str:
        # Values are never shown: they may be clients holding credentials.
        with self._lock:
            return f"GenerationCache(entries={len(self._entries)}, in_flight={sum(map(len, self._flights.values()))})"

    # --- dropping ------------------------------------------------------------------------------------------

    def forget(self, uid: str) -> bool:
        """Drop and dispose the value for ``uid`` (the object was deleted); cancel builds in flight for it.

        A build in flight for ``uid`` still answers its callers, but its value is not cached and is disposed.

        Args:
            uid: the object's ``metadata.uid``.

        Returns:
            True when a cached value was dropped.
        """
        with self._lock:
            entry = self._entries.pop(uid, None)
            for flight in self._flights.pop(uid, ()):
                flight.cancelled = True
        if entry is None:
            return False
        self._release(uid, [entry.value])
        return True

    def prune(self, live_uids: Iterable[str]) -> int:
        """Drop and dispose every cached value whose UID is not in ``live_uids`` (after a relist).

        Builds in flight are left alone: they may be for objects created after the list was taken.

        Args:
            live_uids: the UIDs of the objects that exist (e.g. from a fresh list); a lone string is rejected.

        Returns:
            The number of values dropped.

        Raises:
            InvalidArgumentError: ``live_uids`` is a single string (almost always a bug: its characters are not
                UIDs).
        """
        if isinstance(live_uids, (str, bytes)):
            raise InvalidArgumentError("prune() takes an iterable of UIDs, not a single string")
        live = set(live_uids)
        with self._lock:
            dead = [(uid, self._entries.pop(uid)) for uid in list(self._entries) if uid not in live]
        for uid, entry in dead:
            self._release(uid, [entry.value])
        return len(dead)

    def clear(self) -> None:
        """Drop and dispose every cached value and cancel every build in flight (their values are disposed)."""
        with self._lock:
            entries, self._entries = self._entries, {}
            for flights in self._flights.values():
                for flight in flights:
                    flight.cancelled = True
            self._flights = {}
        for uid, entry in entries.items():
            self._release(uid, [entry.value])

    def _release(self, uid: str, values: list[V]) -> None:
        # Called without _lock: dispose may be slow or call back into the cache.
        for value in values:
            failed = False
            if self._dispose is not None:
                try:
                    self._dispose(value)
                except BaseException:  # user code, SystemExit too: may run on a watch thread, never ends it
                    failed = True
                    # The value itself is not logged: it may hold credentials.
                    logger.warning("dispose failed for the value cached for object %s", uid, exc_info=True)
            with self._lock:
                self._counts["disposals"] += 1
                if failed:
                    self._counts["dispose_errors"] += 1
