"""Read your writes for an :class:`~restmapper.store.Informer`: :meth:`ReadYourWrites.wait_for`."""

from __future__ import annotations

import threading
import time
from typing import Any

from restmapper.errors import InvalidArgumentError, RestMapperError
from restmapper.store._errors import ObjectNotFoundError, ObjectWaitTimeoutError
from restmapper.store._objects import ObjectStore, newer_resource_version, reached
from restmapper.store._stats import State

__all__ = ["ReadYourWrites"]


class ReadYourWrites:
    """The waits of an informer for an object at least as new as a write (mixed into ``Informer``, which owns the
    fields below; every one is read with ``_cond`` held)."""

    _cond: threading.Condition
    _store: ObjectStore
    _state: State
    _readable: int
    _label: str
    _namespace: str | None
    _observed_rv: str
    _waiters: int
    _no_match: RestMapperError | None

    @property
    def last_error(self) -> BaseException | None:
        raise NotImplementedError

    def _ns(self, namespace: str | None) -> str:
        raise NotImplementedError

    def _failure(self) -> BaseException | None:
        raise NotImplementedError

    def wait_for(self, name: str, namespace: str | None = None, *, resource_version: str | None = None,
                 generation: int | None = None, timeout: float) -> dict[str, Any]:
        """Block until the cache holds ``name`` at least as new as asked; see :meth:`ObjectCache.wait_for`."""
        if timeout < 0:
            raise InvalidArgumentError(f"timeout must not be negative, got {timeout}")
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
                    self._cond.wait(remaining)
            finally:
                self._waiters -= 1

    def wait_for_deleted(self, name: str, namespace: str | None = None, *, uid: str | None,
                         timeout: float) -> None:
        """Block until the cache no longer holds ``name`` of ``uid``; see :meth:`ObjectCache.wait_for_deleted`."""
        if timeout < 0:
            raise InvalidArgumentError(f"timeout must not be negative, got {timeout}")
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiters += 1
            try:
                while not self._gone(name, namespace, uid):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise self._wait_timeout(name, namespace, timeout, None, None)
                    self._cond.wait(remaining)
            finally:
                self._waiters -= 1

    def _gone(self, name: str, namespace: str | None, uid: str | None) -> bool:
        """Whether the cache holds no ``name`` of ``uid`` (any UID when None) once readable (lock held)."""
        if self._readable:
            obj = self._store.get(self._ns(namespace), name)
            return obj is None or (uid is not None and obj["metadata"].get("uid") != uid)
        if self._state == "stopped":
            raise InformerStoppedError(f"the {self._label} informer is stopped; ask the cache again")
        return False

    def _try_gone(self, name: str, namespace: str | None, uid: str | None) -> bool | None:
        """:meth:`_gone` without blocking: None when the lock was busy (for asyncio)."""
        if not self._cond.acquire(blocking=False):
            return None
        try:
            return self._gone(name, namespace, uid)
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
                    newer_resource_version(resource_version, self._observed_rv) is False:
                # Everything up to that version was seen: the object is as new as it will get.
                if obj is None:
                    raise ObjectNotFoundError(self._label, ns, name)
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
