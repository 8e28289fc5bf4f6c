"""asyncio front end of the object cache: :class:`AsyncObjectCache` (exported from :mod:`restmapper.store` and
:mod:`restmapper.aio`).

Reads of a synced informer are dict lookups and are answered inline; the first read of a kind (which may start
an informer and wait for its sync) runs in a worker thread through :func:`asyncio.to_thread`. Waits
(``wait_for``, ``wait_for_sync``) happen on the event loop itself: the informer wakes them after every change
with ``loop.call_soon_threadsafe``, so the loop never blocks and a wait costs no thread. Handlers may be
coroutine functions: the informer's handler thread hands each change to the loop that registered them and one
task per registration runs them in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.store._aio_handlers import AsyncHandler, Delivery
from restmapper.store._args import check_handle, check_key, check_selectors, check_uid, check_wait
from restmapper.store._cache import InformerInfo, KindArg, ObjectCache
from restmapper.store._handlers import HandlerHandle
from restmapper.store._informer import Informer, _NotReadable
from restmapper.store._kinds import CacheCall
from restmapper.store._leading import Leadership, LeadershipBinding
from restmapper.transport.config import ClientConfig, incluster_config, resolve_config

__all__ = ["AsyncObjectCache"]

_log = logging.getLogger("restmapper.store")
_C = TypeVar("_C", bound="AsyncObjectCache")  # the class a constructor is called on (a subclass builds itself)

class AsyncObjectCache:
    """Awaitable reads, waits and handlers over an :class:`~restmapper.store.ObjectCache` (shareable with sync code).

    Example (kopf, or any asyncio controller)::

        async with AsyncObjectCache.from_kubeconfig(namespaces=["a", "b"]) as cache:  # or AsyncObjectCache(cache)
            widget = await cache.get("widgets.example.com", "w1", "a")

        async def on_update(old, new):
            await reconcile(new)

        handle = await cache.add_handler("widgets.example.com", on_update=on_update)

    Attributes:
        cache: the synchronous cache doing the work.
    """

    def __init__(self, cache: ObjectCache | LazyRESTMapper, **options: Any) -> None:
        """Wrap ``cache``, or a new :class:`ObjectCache` over a mapper built with ``options``.

        Args:
            cache: an ObjectCache, or the LazyRESTMapper of a new one.
            **options: with a mapper, the :class:`ObjectCache` options (``namespaces``, ``label_selector``,
                ``field_selector``, ``metadata_only``, ``transform``, ``by_kind``, ``lazy``, ...).

        Raises:
            TypeError: ``cache`` is neither (for a kubeconfig path the message names :meth:`from_kubeconfig`), or
                options given with an ObjectCache (it has its own). As :class:`ObjectCache` for the options.
        """
        if isinstance(cache, LazyRESTMapper):
            cache = ObjectCache(cache, **options)
        elif not isinstance(cache, ObjectCache):
            hint = (f"; to build one from a kubeconfig file call AsyncObjectCache.from_kubeconfig({json.dumps(cache)})"
                    if isinstance(cache, str) else "")
            raise TypeError(f"AsyncObjectCache wraps an ObjectCache (or a LazyRESTMapper), got "
                            f"{type(cache).__name__}{hint}")
        elif options:
            raise TypeError(f"options {sorted(options)} are for a new cache: pass a mapper, or set them on the "
                            "ObjectCache")
        self.cache = cache
        self._tasks: dict[HandlerHandle, tuple[Informer, asyncio.Task[None]]] = {}

    @property
    def mapper(self) -> LazyRESTMapper:
        """The wrapped cache's mapper (:attr:`ObjectCache.mapper`: resolves kinds; its transport lists and watches),
        read-only. Its methods block (discovery I/O): call them with :func:`asyncio.to_thread` from the loop."""
        return self.cache.mapper

    @classmethod
    def from_config(cls: type[_C], config: ClientConfig, **options: Any) -> _C:
        """Wrap :meth:`ObjectCache.from_config` (same options); ``from_kubeconfig`` and ``from_incluster`` take
        them too, as :class:`ObjectCache`'s do.

        Args:
            config: the settings.
            **options: as :meth:`ObjectCache.from_config` (cache options; the rest go to the mapper and transport).

        Returns:
            An instance of the class called on, wrapping a new :class:`ObjectCache`.

        Raises:
            ConfigError: the settings are unusable.
            TypeError: an unknown option (the message names the method called).
        """
        return cls(ObjectCache.from_config(config, **options))

    @classmethod
    def from_kubeconfig(cls: type[_C], path: str | None = None, context: str | None = None, **options: Any) -> _C:
        """Wrap a cache built as :meth:`ObjectCache.from_kubeconfig` (same arguments).

        Args:
            path: the kubeconfig file, or None to resolve as :func:`~restmapper.transport.resolve_config`
                (``$KUBECONFIG``, in-cluster, ``~/.kube/config``: controller-runtime's ``GetConfig`` order).
            context: the context, or None for the current one.
            **options: as :meth:`from_config`.

        Returns:
            An instance of the class called on, wrapping a new :class:`ObjectCache`.

        Raises:
            ConfigError: no usable source (the message lists those tried), or the kubeconfig is invalid.
            TypeError: an unknown option (the message names this method; raised before any file is read).
        """
        cls._check_config_options(f"{cls.__name__}.from_kubeconfig", options)
        return cls.from_config(resolve_config(path, context), **options)

    @classmethod
    def from_incluster(cls: type[_C], service_account_dir: str | None = None, **options: Any) -> _C:
        """Wrap a cache built as :meth:`ObjectCache.from_incluster` (same arguments).

        Args:
            service_account_dir: the service-account folder (default
                :data:`~restmapper.transport.config.SERVICE_ACCOUNT_DIR`).
            **options: as :meth:`from_config`.

        Returns:
            An instance of the class called on, wrapping a new :class:`ObjectCache`.

        Raises:
            ConfigError: not in a pod, or the token file is missing or empty.
            TypeError: an unknown option (the message names this method; raised before any file is read).
        """
        cls._check_config_options(f"{cls.__name__}.from_incluster", options)
        return cls.from_config(incluster_config(service_account_dir), **options)

    @classmethod
    def _check_config_options(cls, method: str, options: Mapping[str, Any]) -> None:
        ObjectCache._check_config_options(method, options)

    async def aclose(self, timeout: float | None = 10.0) -> bool:
        """Stop: cancel the handler tasks started here, then stop the wrapped cache (every informer and thread it
        started; in a worker thread, so the loop is not blocked). The cache stops for sync code sharing it too.

        Args:
            timeout: seconds to wait for each thread, or None without bound.

        Returns:
            True when every thread ended in time (as :meth:`ObjectCache.stop`).
        """
        for handle in list(self._tasks):
            self.remove_handler(handle)
        return await asyncio.to_thread(self.cache.stop, timeout)

    async def __aenter__(self) -> AsyncObjectCache:
        self.cache.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def start(self, kinds: Iterable[KindArg] = ()) -> AsyncObjectCache:
        """Await :meth:`ObjectCache.start` (resolving ``kinds`` in a worker thread); returns self."""
        await asyncio.to_thread(self.cache.start, kinds)
        return self

    def informers(self) -> list[InformerInfo]:
        """:meth:`ObjectCache.informers` (no I/O)."""
        return self.cache.informers()

    async def informer(self, kind: KindArg) -> Informer:
        """Await :meth:`ObjectCache.informer` (inline when the kind is already known)."""
        return await self._informer(kind, CacheCall("informer"))

    async def _informer(self, kind: KindArg, call: CacheCall) -> Informer:
        """:meth:`informer`, for the cache's ``call`` (named in an argument error)."""
        informer = self.cache._warm_informer(kind)
        if informer is not None:
            return informer
        return await asyncio.to_thread(self.cache._informer, kind, call)

    async def get(self, kind: KindArg, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Await :meth:`ObjectCache.get` (same arguments, result and exceptions)."""
        check_key("AsyncObjectCache.get", name, namespace)
        informer = await self._informer(kind, CacheCall("get", f', "{name}", ...'))
        try:
            return informer._get_now(name, namespace)  # inline when readable; never waits on the loop
        except _NotReadable:
            return await asyncio.to_thread(informer.get, name, namespace)

    async def list(self, kind: KindArg, namespace: str | None = None, label_selector: str | None = None,
                   field_selector: str | None = None, index: str | None = None,
                   value: str | None = None) -> list[dict[str, Any]]:
        """Await :meth:`ObjectCache.list` (same arguments, result and exceptions)."""
        check_selectors("AsyncObjectCache.list", namespace, label_selector, field_selector, index, value)
        informer = await self._informer(kind, CacheCall("list", ""))
        try:
            return informer._list(namespace, label_selector, field_selector, index, value, wait=False)
        except _NotReadable:
            return await asyncio.to_thread(informer.list, namespace, label_selector, field_selector, index, value)

    async def wait_for_sync(self, kind: KindArg, timeout: float | None) -> bool:
        """Await :meth:`ObjectCache.wait_for_sync` (waits on the event loop, woken by the informer).

        Args:
            kind: as :meth:`ObjectCache.wait_for_sync`.
            timeout: seconds to wait at most; None waits until synced or not served.

        Returns:
            True once the first list is in; False on timeout or while the kind is not served.

        Raises:
            As :meth:`ObjectCache.wait_for_sync`.
        """
        check_wait("AsyncObjectCache.wait_for_sync", None, None, timeout, timeout_optional=True)
        informer = await self._informer(kind, CacheCall("wait_for_sync", ", ..."))
        return await self._until(informer, informer._sync_wait_over, timeout) and informer.has_synced

    async def wait_for(self, kind: KindArg, name: str, namespace: str | None = None, *,
                       resource_version: str | None = None, generation: int | None = None,
                       timeout: float) -> dict[str, Any]:
        """Await :meth:`ObjectCache.wait_for` (read your writes).

        The wait happens on the event loop, not in a thread: the informer wakes it after each change (a
        thread-safe hand-off), so many concurrent waits cost no executor threads and cancelling ends the wait.

        Raises:
            As :meth:`ObjectCache.wait_for`.
        """
        check_key("AsyncObjectCache.wait_for", name, namespace)
        check_wait("AsyncObjectCache.wait_for", resource_version, generation, timeout)
        informer = await self._informer(kind, CacheCall("wait_for", f', "{name}", ...'))
        found: list[dict[str, Any]] = []

        def caught_up() -> bool | None:
            checked, obj = informer._try_caught_up(name, namespace, resource_version, generation)
            if obj is not None:
                found.append(obj)
            return (obj is not None) if checked else None

        if await self._until(informer, caught_up, timeout) and found:
            return found[0]
        raise informer._wait_timeout(name, namespace, timeout, resource_version, generation)

    async def wait_for_deleted(self, kind: KindArg, name: str, namespace: str | None = None, *, uid: str | None,
                               resource_version: str | None = None, timeout: float) -> None:
        """Await :meth:`ObjectCache.wait_for_deleted` (on the event loop, as :meth:`wait_for`).

        Raises:
            As :meth:`ObjectCache.wait_for_deleted`.
        """
        check_key("AsyncObjectCache.wait_for_deleted", name, namespace)
        check_uid("AsyncObjectCache.wait_for_deleted", uid)
        check_wait("AsyncObjectCache.wait_for_deleted", resource_version, None, timeout)
        informer = await self._informer(kind, CacheCall("wait_for_deleted", f', "{name}", ...'))
        if not await self._until(informer, lambda: informer._try_gone(name, namespace, uid, resource_version),
                                 timeout):
            raise informer._wait_timeout(name, namespace, timeout, None, None)

    @staticmethod
    async def _until(informer: Informer, predicate: Callable[[], bool | None], timeout: float | None) -> bool:
        """Wait on the loop until ``predicate()`` (evaluated on the loop) is True; False at the timeout. None
        means "could not look" (the informer's lock was busy): look again a millisecond later."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def changed() -> None:  # on the informer's threads, lock held: only schedule
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(wake.set)

        informer._listen(changed)
        try:
            deadline = None if timeout is None else loop.time() + timeout
            while True:
                wake.clear()
                done = predicate()
                if done:
                    return True
                remaining = None if deadline is None else deadline - loop.time()
                if remaining is not None and remaining <= 0:
                    return False
                if done is None:
                    remaining = 0.001 if remaining is None else min(remaining, 0.001)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(wake.wait(), remaining)
        finally:
            informer._listen(changed, on=False)

    async def add_handler(self, kind: KindArg, on_add: AsyncHandler | None = None,
                          on_update: AsyncHandler | None = None,
                          on_delete: AsyncHandler | None = None, *,
                          while_leading: Leadership | None = None) -> HandlerHandle:
        """Register handlers (plain or coroutine functions) run on the calling event loop, in order.

        A coroutine, unlike :meth:`ObjectCache.add_handler`: ``await cache.add_handler(...)``. Called without
        ``await`` it registers nothing (Python warns "coroutine ... was never awaited" only when the coroutine is
        collected).

        Semantics as :meth:`Informer.add_handler` (synthetic adds after sync, deletes while not served); a
        handler that raises anything (``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit`` included: a
        handler's exception is never the program's) or lets a ``CancelledError`` escape is logged and counted in
        the informer's ``stats.handler_errors`` and is called again for later changes. (Ctrl-C under
        ``asyncio.run`` on Python 3.11+ cancels the main task rather than raising in a handler.) With
        ``while_leading`` (a ``LeaderElector`` or ``AsyncLeaderElector``) as :meth:`ObjectCache.add_handler`: the
        handlers are attached while it leads, and one whose turn on the loop comes after the lease was lost is not
        called; when leadership ends, the elector's ``on_stopped_leading`` (and its release of the Lease) comes
        after the coroutine in progress returned, or, if it has not within the elector's ``renew_deadline``
        seconds, after it was cancelled (logged, counted in ``handler_errors``).

        Returns:
            The handle for :meth:`remove_handler`.

        Raises:
            TypeError: a handler that is not callable, or ``while_leading`` that is not a leader elector. As
                :meth:`ObjectCache.informer` otherwise.
        """
        for fn in (on_add, on_update, on_delete):
            if fn is not None and not callable(fn):
                raise TypeError(f"handlers must be callable, got {type(fn).__name__}")
        if while_leading is not None and not isinstance(while_leading, Leadership):
            raise TypeError(f"while_leading must be a leader elector, got {type(while_leading).__name__}")
        informer = await self._informer(kind, CacheCall("add_handler", ", ..."))
        delivery = Delivery(informer, asyncio.get_running_loop())
        handlers = (delivery.forward(on_add, while_leading), delivery.forward(on_update, while_leading),
                    delivery.forward(on_delete, while_leading))
        if while_leading is None:
            handle = informer.add_handler(*handlers)
        else:
            handle = LeadershipBinding(while_leading, informer.add_handler, informer.remove_handler, *handlers,
                                       on_detached=delivery.stopped_leading)
        self._tasks[handle] = (informer, delivery.task)
        return handle

    def remove_handler(self, handle: HandlerHandle) -> bool:
        """Unregister handlers added by :meth:`add_handler`; none of them is called again.

        Returns:
            True when they were registered.

        Raises:
            TypeError: ``handle`` is not a HandlerHandle (a handler function, say).
        """
        check_handle("AsyncObjectCache.remove_handler", handle, HandlerHandle)
        entry = self._tasks.pop(handle, None)
        if entry is None:
            return False
        informer, task = entry
        if isinstance(handle, LeadershipBinding):
            handle.remove()
        else:
            informer.remove_handler(handle)
        task.cancel()
        return True
