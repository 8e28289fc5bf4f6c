"""Lookup scopes: what one lookup already fetched counts as fresh until the lookup ends."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

__all__ = ["LookupScope"]

T = TypeVar("T")


class LookupScope:
    """Per thread, the objects fetched during the current lookup (so ``ttl=0`` revalidates once per lookup).

    A lookup may ask the cache several times (core first, then the groups it needs, then again after a miss
    revalidation); each document it fetched itself stays fresh for those asks, whatever the TTL.
    """

    def __init__(self) -> None:
        self._local = threading.local()  # .fetched: {id: object} of this thread's current lookup, or None

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        """Scope one lookup in this thread; re-entrant (an inner scope joins the outer one)."""
        if getattr(self._local, "fetched", None) is not None:
            yield
            return
        self._local.fetched = {}
        try:
            yield
        finally:
            self._local.fetched = None

    def mark(self, obj: object) -> None:
        """Record ``obj`` as fetched by the current lookup (no-op outside a scope)."""
        fetched: dict[int, object] | None = getattr(self._local, "fetched", None)
        if fetched is not None:
            fetched[id(obj)] = obj  # the reference keeps the id from being reused during the lookup

    def fetched(self, obj: object) -> bool:
        """True when ``obj`` was fetched during this thread's current lookup."""
        fetched: dict[int, object] | None = getattr(self._local, "fetched", None)
        return fetched is not None and fetched.get(id(obj)) is obj

    def bind(self, fn: Callable[[], T]) -> Callable[[], T]:
        """``fn``, to be run in another thread as part of this thread's current lookup (a fetch done for it).

        What ``fn`` fetches is recorded in this lookup, as if this thread had fetched it; outside a scope, ``fn``
        runs outside one too.
        """
        fetched: dict[int, object] | None = getattr(self._local, "fetched", None)

        def bound() -> T:
            self._local.fetched = fetched  # the same dict: its item writes are atomic
            try:
                return fn()
            finally:
                self._local.fetched = None

        return bound
