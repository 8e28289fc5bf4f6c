"""The waits of an :class:`~restmapper.store.Informer`: for its first list, ended early by a failure it already
knows (:meth:`InformerWaits.wait_for_sync`), and for an object at least as new as a write
(:meth:`InformerWaits.wait_for`: read your writes)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from restmapper.errors import RestMapperError, TransformError
from restmapper.store._args import check_key, check_uid, check_wait
from restmapper.store._errors import (
    CacheSyncTimeoutError,
    InformerStoppedError,
    ObjectNotFoundError,
    ObjectWaitTimeoutError,
)
from restmapper.store._objects import ObjectStore, newer_resource_version, reached
from restmapper.store._reflectors import permanent_failure
from restmapper.store._stats import State

__all__ = ["InformerWaits"]

if TYPE_CHECKING:
    from restmapper.store._reflectors import ReflectorGroup
    from restmapper.store._scope import Scope


class InformerWaits:
    """The waits of an informer (mixed into ``Informer``, which owns the fields below; every one is written with
    ``_cond`` held)."""

    _cond: threading.Condition
    _store: ObjectStore
    _state: State
    _readable: int
    _label: str
    _scope: Scope
    _namespace: str | None
    _observed_rv: str
    _waiters: int
    _no_match: RestMapperError | None
    _error: BaseException | None
    _transform_error: TransformError | None
    _group: ReflectorGroup
    _sync_timeout: float

    @property
    def last_error(self) -> BaseException | None:
        raise NotImplementedError

    if TYPE_CHECKING:  # InformerReads's (a stub here would shadow them in the informer's method order)
        def _ns(self, namespace: str | None) -> str: ...

        def _observed_for(self, namespace: str) -> str: ...

    def wait_for_sync(self, timeout: float | None) -> bool:
        """Block until the informer has synced, ``timeout`` seconds passed, or waiting cannot help: the kind is not
        served, or a failure waiting will not cure is known (see :meth:`ObjectCache.get`; :attr:`last_error`).

        Args:
            timeout: at most this many seconds; None waits without bound.

        Returns:
            :attr:`has_synced` at return (client-go ``WaitForCacheSync``); never raises for a failure: read
            :attr:`last_error`.
        """
        with self._cond:
            self._cond.wait_for(self._sync_wait_over, None if timeout is None else min(timeout, threading.TIMEOUT_MAX))
            return self._readable != 0

    def _sync_wait_over(self) -> bool:
        """True when a wait for the first list is over: synced, or :meth:`_failure` has the answer."""
        return self._readable != 0 or self._failure() is not None

    def _failure(self) -> BaseException | None:
        """The error a read raises at once instead of waiting for a list: one the informer already knows and that
        waiting will not cure. None while waiting may still end in a sync (a 5xx, a dropped connection, a 404
        while discovery catches up). Lock-free (reads of single attributes), so the event loop may call it.

        In that order: stopped; not served (the mapper's no-match); a transform that refused an object; the
        mapper's lookup error (what the same read with a string kind raises at once: server down, discovery
        failed); a list/watch failure that is not transient (403 Forbidden from RBAC, 401, a body over the size
        cap). The informer keeps retrying with backoff meanwhile, so a later grant or fix heals it.
        """
        state = self._state
        if state == "stopped":
            return InformerStoppedError(f"the {self._label} informer is stopped; ask the cache again")
        if state == "not_served":
            return self._no_match
        known = self._transform_error or self._error
        if known is not None:
            return known
        error = self._group.blocking_error()
        if state == "failing" and permanent_failure(error):
            return error
        return None

    def _ensure_readable(self) -> None:
        if self._readable:
            return
        if not self.wait_for_sync(self._sync_timeout):
            failure = self._failure()
            if failure is not None:
                raise failure.with_traceback(None)  # held and raised again: never a growing traceback
            raise CacheSyncTimeoutError(self._label, self._sync_timeout, self.last_error) from self.last_error

    def wait_for(self, name: str, namespace: str | None = None, *, resource_version: str | None = None,
                 generation: int | None = None, timeout: float) -> dict[str, Any]:
        """Block until the cache holds ``name`` at least as new as asked; see :meth:`ObjectCache.wait_for`.

        Args:
            name, namespace: the object, as :meth:`get`.
            resource_version: the object's ``resourceVersion`` at least (a str); None: any.
            generation: its ``metadata.generation`` at least; None: any.
            timeout: at most this many seconds.

        Returns:
            The object held (read-only by contract).

        Raises:
            ObjectWaitTimeoutError: (a :class:`WaitTimeoutError`) not caught up within ``timeout``.
            ObjectNotFoundError: the object was deleted after the version waited for.
            TypeError: a ``resource_version`` not a str, a ``generation`` not an int, a ``timeout`` not a number.
            InvalidArgumentError: a negative, NaN or infinite timeout. As :meth:`get` otherwise.
        """
        check_key("Informer.wait_for", name, namespace)
        check_wait("Informer.wait_for", resource_version, generation, timeout)
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiters += 1
            try:
                while True:
                    obj = self._caught_up(name, namespace, resource_version, generation)
                    if obj is not None:
                        return obj
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise self._wait_timeout(name, namespace, timeout, resource_version, generation)
                    self._cond.wait(min(remaining, threading.TIMEOUT_MAX))  # a huge timeout: in slices
            finally:
                self._waiters -= 1

    def wait_for_deleted(self, name: str, namespace: str | None = None, *, uid: str | None,
                         resource_version: str | None = None, timeout: float) -> None:
        """Block until the cache no longer holds ``name`` of ``uid``; see :meth:`ObjectCache.wait_for_deleted`.

        Args:
            name, namespace: the object, as :meth:`get`.
            uid: the ``metadata.uid`` deleted (an object of another UID under that name does not count); None:
                any object of that name.
            resource_version: the delete's resourceVersion, when known: the cache must have seen through it.
            timeout: at most this many seconds.

        Raises:
            ObjectWaitTimeoutError: still held (or not seen through ``resource_version``) at the timeout.
            InformerStoppedError: the cache was stopped meanwhile.
            InvalidArgumentError: a negative, NaN or infinite timeout.
            TypeError: ``name``, ``namespace``, ``uid`` or ``resource_version`` not a str, ``timeout`` not a
                number. As :meth:`get` otherwise (never ObjectNotFoundError).
        """
        check_key("Informer.wait_for_deleted", name, namespace)
        check_uid("Informer.wait_for_deleted", uid)
        check_wait("Informer.wait_for_deleted", resource_version, None, timeout)
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiters += 1
            try:
                while not self._gone(name, namespace, uid, resource_version):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise self._wait_timeout(name, namespace, timeout, None, None)
                    self._cond.wait(min(remaining, threading.TIMEOUT_MAX))
            finally:
                self._waiters -= 1

    def _gone(self, name: str, namespace: str | None, uid: str | None, resource_version: str | None = None) -> bool:
        """Whether the cache holds no ``name`` of ``uid`` (any UID when None) once readable and, with
        ``resource_version`` (a deletion's), has seen every event up to it, so that none from before (an ADDED it
        had not seen yet) can bring the object back; compared as :meth:`_caught_up` does, and only the absence
        counts when the versions are not decimal integers (lock held)."""
        if self._readable:
            obj = self._store.get(self._ns(namespace), name)
            absent = obj is None or (uid is not None and obj["metadata"].get("uid") != uid)
            return absent and newer_resource_version(resource_version, self._observed_rv) is not True
        if self._state != "not_served":  # as _caught_up: a known failure ends the wait
            failure = self._failure()
            if failure is not None:
                raise failure.with_traceback(None)
        return False

    def _try_gone(self, name: str, namespace: str | None, uid: str | None,
                  resource_version: str | None = None) -> bool | None:
        """:meth:`_gone` without blocking: None when the lock was busy (for asyncio)."""
        if not self._cond.acquire(blocking=False):
            return None
        try:
            return self._gone(name, namespace, uid, resource_version)
        finally:
            self._cond.release()

    def _caught_up(self, name: str, namespace: str | None, resource_version: str | None,
                   generation: int | None) -> dict[str, Any] | None:
        """The object when the wait is over, None while it is not (lock held)."""
        if self._readable:
            ns = self._ns(namespace)
            obj = self._store.get(ns, name)
            if reached(obj, resource_version, generation):
                return obj
            if resource_version is not None and generation is None and \
                    newer_resource_version(resource_version, self._observed_for(ns)) is False:
                # Everything up to that version was seen: the object is as new as it will get.
                if obj is None:
                    raise ObjectNotFoundError(self._label, ns, name, self._scope.describe_selectors())
                return obj
        elif self._state != "not_served":  # a wait spans not-served periods (a CRD being recreated)
            failure = self._failure()
            if failure is not None:
                raise failure.with_traceback(None)
        return None

    def _try_caught_up(self, name: str, namespace: str | None, resource_version: str | None,
                       generation: int | None) -> tuple[bool, dict[str, Any] | None]:
        """``(checked, object)`` without blocking: ``checked`` is False when the lock was busy (for asyncio)."""
        if not self._cond.acquire(blocking=False):
            return False, None
        try:
            return True, self._caught_up(name, namespace, resource_version, generation)
        finally:
            self._cond.release()

    def _wait_timeout(self, name: str, namespace: str | None, timeout: float, resource_version: str | None,
                      generation: int | None) -> ObjectWaitTimeoutError:
        # Waiting spans not-served periods; the no-match (or the last error) is the cause.
        cause = self._no_match if self._state == "not_served" else self.last_error
        error = ObjectWaitTimeoutError(self._label, namespace or self._namespace or "", name, timeout,
                                       resource_version, generation)
        error.__cause__ = cause
        return error
