"""The event handlers of :class:`~restmapper.store.ObjectCache`: :meth:`CacheHandlers.add_handler`,
:meth:`~CacheHandlers.remove_handler` and :meth:`~CacheHandlers.derived`.

An object the cache holds (``ObjectCache._handlers``); the cache's public methods of the same names call it and
show its docstrings. Each registers on (or unregisters from) the kind's informer.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

from restmapper.generation import GenerationCache
from restmapper.store._args import check_callables, check_handle
from restmapper.store._handlers import HandlerHandle, OnAdd, OnDelete, OnUpdate
from restmapper.store._kinds import CacheCall
from restmapper.store._leading import Leadership, LeadershipBinding

if TYPE_CHECKING:
    from restmapper.store._cache import KindArg
    from restmapper.store._informer import Informer

__all__ = ["CacheHandlers"]


class CacheHandlers:
    """Handlers on the informers of a cache: added per kind, removed whatever kind, and derived values kept in step.

    Args:
        informer: the cache's ``informer(kind, call)``: the running informer of ``kind``, started if needed
            (``call`` names the cache method in an argument error).
        running: the cache's informers running now.
    """

    __slots__ = ("_informer", "_running")

    def __init__(self, informer: Callable[[KindArg, CacheCall], Informer],
                 running: Callable[[], list[Informer]]) -> None:
        self._informer = informer
        self._running = running

    def add_handler(self, kind: KindArg, on_add: OnAdd | None = None, on_update: OnUpdate | None = None,
                    on_delete: OnDelete | None = None, *, while_leading: Leadership | None = None) -> HandlerHandle:
        """Shortcut for ``informer(kind).add_handler(...)`` (see :meth:`Informer.add_handler`).

        Args:
            kind: any kind spelling the cache takes.
            on_add: ``on_add(obj)``.
            on_update: ``on_update(old, new)``.
            on_delete: ``on_delete(obj)``.
            while_leading: a leader elector (``restmapper.leader.LeaderElector``): the handlers are attached when
                it starts leading (with synthetic adds for the objects held then) and detached when it stops,
                before its own callbacks run; a change dispatched after the lease was lost is not handled. The
                informer keeps running through any number of lease losses: regaining the lease costs no list.

        Returns:
            The handle for :meth:`remove_handler` (a :class:`LeadershipBinding` with ``while_leading``).

        Raises:
            TypeError: a handler that is not callable, or ``while_leading`` without ``add_leadership_listener``.
            As :meth:`informer` otherwise.
        """
        informer = self._informer(kind, CacheCall("add_handler", ", ..."))
        if while_leading is None:
            return informer.add_handler(on_add, on_update, on_delete)
        if not isinstance(while_leading, Leadership):
            raise TypeError(f"while_leading must be a leader elector, got {type(while_leading).__name__}")
        for fn in (on_add, on_update, on_delete):
            if fn is not None and not callable(fn):
                raise TypeError(f"handlers must be callable, got {type(fn).__name__}")
        return LeadershipBinding(while_leading, informer.add_handler, informer.remove_handler, on_add, on_update,
                                 on_delete)

    def remove_handler(self, handle: HandlerHandle, *, wait: float | None = None) -> bool:
        """Unregister handlers added with :meth:`add_handler` (or ``informer(kind).add_handler``), whatever kind.

        Args:
            handle: what :meth:`add_handler` returned.
            wait: None: return at once (a call in progress may still be running). Seconds: also wait, at most that
                long, for a call in progress to return (see :meth:`Informer.remove_handler`; from inside a handler
                of the same informer it does not wait).

        Returns:
            True when they were registered with one of this cache's informers.

        Raises:
            TypeError: ``handle`` is not a HandlerHandle (a handler function, say).
            ValueError: ``wait`` is negative or not a number.
        """
        check_handle("ObjectCache.remove_handler", handle, HandlerHandle)
        if isinstance(handle, LeadershipBinding):
            return handle.remove(wait)
        return any(informer.remove_handler(handle, wait=wait) for informer in self._running())

    def derived(self, kind: KindArg, build: Callable[[Any], Any], *,
                fingerprint: Callable[[Any], Hashable] | None = None,
                dispose: Callable[[Any], None] | None = None) -> GenerationCache[Any, Any]:
        """Return a :class:`GenerationCache` of values derived from objects of ``kind``, kept in step with them.

        ``cache.get(obj)`` builds lazily and rebuilds when ``obj``'s UID, generation or ``fingerprint(obj)``
        changed (docs/design.md §6); the informer's deletes (including a new UID replacing an object, and
        deletes found by a relist or while the kind is not served) forget the entry and ``dispose`` its value.

        Args:
            kind: as :meth:`ObjectCache.group_kind`.
            build: ``build(obj)`` returns the derived value of an object.
            fingerprint: ``fingerprint(obj)``, a hashable; a change rebuilds even at the same generation.
            dispose: ``dispose(value)``, called on a value replaced or forgotten.

        Returns:
            The :class:`~restmapper.generation.GenerationCache` (keyed by ``metadata.uid``).

        Raises:
            TypeError: ``build``, ``fingerprint`` or ``dispose`` not callable. As :meth:`ObjectCache.informer`.
        """
        if not callable(build):
            raise TypeError(f"ObjectCache.derived() takes build as a callable, not {type(build).__name__}")
        check_callables("ObjectCache.derived", fingerprint=fingerprint, dispose=dispose)
        cache: GenerationCache[Any, Any] = GenerationCache(build, fingerprint=fingerprint, dispose=dispose)

        def forget(obj: Mapping[str, Any]) -> None:
            uid = obj.get("metadata", {}).get("uid")
            if isinstance(uid, str):
                cache.forget(uid)

        self._informer(kind, CacheCall("derived", ", ...")).add_handler(on_delete=forget)
        return cache
