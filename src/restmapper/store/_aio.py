"""asyncio front end of the object cache: :class:`AsyncObjectCache` (exported from :mod:`restmapper.aio`).

Reads of a synced informer are dict lookups and are answered inline; anything that may wait (the first sync, a
read-your-writes wait) runs in a worker thread through :func:`asyncio.to_thread`, bounded by its timeout, so the
event loop never blocks. Handlers may be coroutine functions: the informer's handler thread hands each change to
the loop that registered them (``loop.call_soon_threadsafe``) and one task per registration runs them in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Callable
from typing import Any

from restmapper.store._cache import KindArg, ObjectCache
from restmapper.store._handlers import HandlerHandle
from restmapper.store._informer import Informer

__all__ = ["AsyncObjectCache"]

_log = logging.getLogger("restmapper.store")

AsyncHandler = Callable[..., Any]
"""A plain function or a coroutine function; called with the same arguments as the sync handlers."""


class AsyncObjectCache:
    """Awaitable reads, waits and handlers over an :class:`~restmapper.store.ObjectCache` (shareable with sync code).

    Example (kopf, or any asyncio controller)::

        cache = AsyncObjectCache(ObjectCache.from_kubeconfig())
        widget = await cache.get("widgets.example.com", "w1", "default")

        async def on_update(old, new):
            await reconcile(new)

        handle = await cache.add_handler("widgets.example.com", on_update=on_update)

    Attributes:
        cache: the synchronous cache doing the work.
    """

    def __init__(self, cache: ObjectCache) -> None:
        """Wrap ``cache``.

        Raises:
            TypeError: ``cache`` is not an ObjectCache.
        """
        if not isinstance(cache, ObjectCache):
            raise TypeError(f"AsyncObjectCache wraps an ObjectCache, got {type(cache).__name__}")
        self.cache = cache
        self._tasks: dict[HandlerHandle, tuple[Informer, asyncio.Task[None]]] = {}

    async def informer(self, kind: KindArg) -> Informer:
        """Await :meth:`ObjectCache.informer` (inline when the kind is already known)."""
        informer = self.cache._warm_informer(kind)
        if informer is not None:
            return informer
        return await asyncio.to_thread(self.cache.informer, kind)

    async def get(self, kind: KindArg, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Await :meth:`ObjectCache.get` (same arguments, result and exceptions)."""
        informer = await self.informer(kind)
        if informer.has_synced:
            return informer.get(name, namespace)
        return await asyncio.to_thread(informer.get, name, namespace)

    async def list(self, kind: KindArg, namespace: str | None = None, label_selector: str | None = None,
                   field_selector: str | None = None, index: str | None = None,
                   value: str | None = None) -> list[dict[str, Any]]:
        """Await :meth:`ObjectCache.list` (same arguments, result and exceptions)."""
        informer = await self.informer(kind)
        if informer.has_synced:
            return informer.list(namespace, label_selector, field_selector, index, value)
        return await asyncio.to_thread(informer.list, namespace, label_selector, field_selector, index, value)

    async def wait_for_sync(self, kind: KindArg, timeout: float | None) -> bool:
        """Await :meth:`ObjectCache.wait_for_sync` (waits in a worker thread)."""
        informer = await self.informer(kind)
        if informer.has_synced:
            return True
        return await asyncio.to_thread(informer.wait_for_sync, timeout)

    async def wait_for(self, kind: KindArg, name: str, namespace: str | None = None, *,
                       resource_version: str | None = None, generation: int | None = None,
                       timeout: float) -> dict[str, Any]:
        """Await :meth:`ObjectCache.wait_for` (read your writes; waits in a worker thread, bounded by ``timeout``).

        Raises:
            As :meth:`ObjectCache.wait_for`.
        """
        informer = await self.informer(kind)
        return await asyncio.to_thread(informer.wait_for, name, namespace, resource_version=resource_version,
                                       generation=generation, timeout=timeout)

    async def add_handler(self, kind: KindArg, on_add: AsyncHandler | None = None,
                          on_update: AsyncHandler | None = None,
                          on_delete: AsyncHandler | None = None) -> HandlerHandle:
        """Register handlers (plain or coroutine functions) run on the calling event loop, in order.

        Semantics as :meth:`Informer.add_handler` (synthetic adds after sync, deletes while not served); a
        handler that raises is logged and counted in the informer's ``stats.handler_errors``.

        Returns:
            The handle for :meth:`remove_handler`.

        Raises:
            TypeError: a handler that is not callable. As :meth:`ObjectCache.informer` otherwise.
        """
        for fn in (on_add, on_update, on_delete):
            if fn is not None and not callable(fn):
                raise TypeError(f"handlers must be callable, got {type(fn).__name__}")
        informer = await self.informer(kind)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[AsyncHandler, tuple[Any, ...]]] = asyncio.Queue()

        def forward(fn: AsyncHandler | None) -> Callable[..., None] | None:
            if fn is None:
                return None

            def hand_off(*args: Any) -> None:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is left to call
                    loop.call_soon_threadsafe(queue.put_nowait, (fn, args))

            return hand_off

        task = loop.create_task(self._consume(informer, queue), name=f"restmapper-handlers-{informer.group_kind}")
        handle = informer.add_handler(forward(on_add), forward(on_update), forward(on_delete))
        self._tasks[handle] = (informer, task)
        return handle

    def remove_handler(self, handle: HandlerHandle) -> bool:
        """Unregister handlers added by :meth:`add_handler`; none of them is called again.

        Returns:
            True when they were registered.
        """
        entry = self._tasks.pop(handle, None)
        if entry is None:
            return False
        informer, task = entry
        informer.remove_handler(handle)
        task.cancel()
        return True

    @staticmethod
    async def _consume(informer: Informer, queue: asyncio.Queue[tuple[AsyncHandler, tuple[Any, ...]]]) -> None:
        while True:
            fn, args = await queue.get()
            try:
                result = fn(*args)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                informer._count("handler_errors")
                _log.exception("async handler of the %s informer failed", informer.group_kind)
