"""The read-your-writes waits of :class:`~restmapper.store.ObjectCache`: :meth:`CacheWaits.wait_for_sync`,
:meth:`~CacheWaits.wait_for` and :meth:`~CacheWaits.wait_for_deleted`.

An object the cache holds (``ObjectCache._waits``); the cache's public methods of the same names call it and show
its docstrings. Each starts the kind's informer if needed (through the cache) and waits on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from restmapper.store._args import check_key, check_uid, check_wait
from restmapper.store._kinds import CacheCall

if TYPE_CHECKING:
    from restmapper.store._cache import KindArg
    from restmapper.store._informer import Informer

__all__ = ["CacheWaits"]


class CacheWaits:
    """Waits for an informer's first list, for a write, for a delete (client-go ``WaitForCacheSync`` and more).

    Args:
        informer: the cache's ``informer(kind, call)``: the running informer of ``kind``, started if needed
            (``call`` names the cache method in an argument error).
    """

    __slots__ = ("_informer",)

    def __init__(self, informer: Callable[[KindArg, CacheCall], Informer]) -> None:
        self._informer = informer

    def wait_for_sync(self, kind: KindArg, timeout: float | None) -> bool:
        """Start the informer for ``kind`` if needed and wait for its first list (client-go ``WaitForCacheSync``).

        Args:
            kind: as :meth:`get` takes it: what ``kubectl get`` takes for one type, a GroupKind or a
                GroupVersionKind.
            timeout: seconds to wait at most; None waits until synced or not served.

        Returns:
            True once the first list is in; False when ``timeout`` passed first (the server is slow or answers
            5xx), or at once when waiting cannot help: the kind is found not served (a GroupKind or
            GroupVersionKind of a CRD not installed: the informer waits in state ``not_served`` and syncs when the
            CRD appears), or a failure that waiting will not cure is known (see :meth:`get`; the informer's
            ``last_error`` says which; it keeps retrying with backoff).

        Raises:
            NoKindMatchError, NoResourceMatchError: at once, for a string ``kind`` the server does not serve (a
                string is resolved before the informer starts; a GroupKind is not).
            AmbiguousResourceError, AmbiguousKindError, DiscoveryError: resolving a string ``kind``, as the mapper.
            TypeError: ``kind`` is not one of the accepted types, or ``timeout`` is not a number or None.
            InvalidArgumentError: a negative, NaN or infinite ``timeout`` (None waits without bound).
        """
        check_wait("ObjectCache.wait_for_sync", None, None, timeout, timeout_optional=True)
        return self._informer(kind, CacheCall("wait_for_sync", ", ...")).wait_for_sync(timeout)

    def wait_for(self, kind: KindArg, name: str, namespace: str | None = None, *,
                 resource_version: str | None = None, generation: int | None = None,
                 timeout: float) -> dict[str, Any]:
        """Read your writes: block until the cache holds ``name`` at least as new as a write you made.

        After ``updated = client.update(...)`` (any write made outside :class:`restmapper.client.Client`, which
        waits so by itself), ``cache.wait_for(kind, name, ns,
        resource_version=updated["metadata"]["resourceVersion"], timeout=10)`` returns once the cache has caught
        up, and ``get`` returns that version (or a newer one) from then on.

        How resourceVersions are compared: they are opaque strings by API contract, but every kube-apiserver
        (etcd) issues decimal integers from one cluster-wide counter, so when both are decimal integers the cache
        compares them as numbers: it is done when the held object's version is equal or greater, or when the
        informer has observed that version on *any* event or bookmark of the kind (everything up to it was seen,
        so the object is as new as it will get; a deleted object then raises ObjectNotFoundError). For other
        servers only equality with the held object's version counts: a best effort that times out if another
        write replaced yours first. ``generation`` waits for ``metadata.generation >= generation`` (spec writes).
        Without either, it waits until the object exists. The wait spans the informer's first sync and periods
        where the kind is not served (a CRD being recreated).

        Args:
            kind, name, namespace: as :meth:`get`.
            resource_version: ``metadata.resourceVersion`` returned by your write.
            generation: ``metadata.generation`` returned by your write.
            timeout: seconds.

        Returns:
            The object held when the condition holds (shared, read-only).

        Raises:
            ObjectWaitTimeoutError: (a :class:`WaitTimeoutError`) not caught up within ``timeout``; chains the
                no-match when the kind was not served, else the informer's last error.
            ObjectNotFoundError: the object was deleted after the version waited for.
            TypeError: a ``resource_version`` that is not a str (an int names the string to pass), a
                ``generation`` that is not an int, a ``timeout`` that is not a number.
            InvalidArgumentError: a negative, NaN or infinite timeout. As :meth:`get` otherwise.
        """
        check_key("ObjectCache.wait_for", name, namespace)
        check_wait("ObjectCache.wait_for", resource_version, generation, timeout)
        informer = self._informer(kind, CacheCall("wait_for", f', "{name}", ...'))
        return informer.wait_for(name, namespace, resource_version=resource_version, generation=generation,
                                 timeout=timeout)

    def wait_for_deleted(self, kind: KindArg, name: str, namespace: str | None = None, *, uid: str | None,
                         resource_version: str | None = None, timeout: float) -> None:
        """Read your deletes: block until the cache no longer holds ``name`` of ``uid`` (deleted, or replaced by a
        new object of another UID), so that ``get`` does not return the object you deleted.

        Not holding the object proves nothing while the informer has not seen it created (its ADDED event still
        on the way): pass the deletion's ``resource_version`` and the wait also lasts until the informer has seen
        every event up to it (compared as :meth:`wait_for` does; when the versions are not decimal integers only
        the absence counts).

        Args:
            kind, name, namespace: as :meth:`get`.
            uid: the deleted object's ``metadata.uid``; None waits until no object of that name is held.
            resource_version: the deletion's resourceVersion (the deleted object a delete returns carries it), or
                one read after the delete; None: the absence only.
            timeout: seconds.

        Raises:
            ObjectWaitTimeoutError: still held (or not seen through ``resource_version``) at the timeout.
            InformerStoppedError: the cache was stopped meanwhile.
            InvalidArgumentError: a negative, NaN or infinite timeout.
            TypeError: ``name``, ``namespace``, ``uid`` or ``resource_version`` is not a str, or ``timeout`` not a
                number. As :meth:`get` otherwise (never ObjectNotFoundError).
        """
        check_key("ObjectCache.wait_for_deleted", name, namespace)
        check_uid("ObjectCache.wait_for_deleted", uid)
        check_wait("ObjectCache.wait_for_deleted", resource_version, None, timeout)
        informer = self._informer(kind, CacheCall("wait_for_deleted", f', "{name}", ...'))
        informer.wait_for_deleted(name, namespace, uid=uid, resource_version=resource_version, timeout=timeout)
