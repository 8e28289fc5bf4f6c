"""Objects and derived values kept fresh from the API server: :class:`ObjectCache` and :class:`GenerationCache`.

:class:`ObjectCache` is what a controller reads objects through (docs/design.md §11): one self-healing
:class:`Informer` per kind, for any kind a user can name, started on first use::

    from restmapper.store import ObjectCache

    cache = ObjectCache.from_kubeconfig()
    web = cache.get("deploy", "web", "default")              # starts the Deployment informer, waits for sync
    widgets = cache.list("widgets.example.com", label_selector="tier=gold")
    updated = dynamic_client.replace(...)                     # your write (not through restmapper.client)...
    cache.wait_for("widgets.example.com", "w1", "default",    # ...read back: read your writes
                   resource_version=updated["metadata"]["resourceVersion"], timeout=10)

An informer heals: when the kind moves to another version (a CRD upgrade that stops serving the old one) it
follows with one relist and no delete/add storm; when the kind stops being served (CRD deleted) it enters
``not_served`` (reads raise the mapper's no-match, handlers see deletes and are kept) and restarts by itself when
the kind is back; a CRD recreated with a new UID or another scope replaces the old objects with the new ones.

Leader election: informers live as long as the cache, **not** as long as a lease (docs/design.md §1.3: an
informer started with the leader context dies with the lease and a stopped informer handed out later serves
nothing). Keep one cache for the process; a leader-elected controller adds its handlers when it gains the lease
and removes them when it loses it. A handler added to a synced informer gets ``on_add`` for every current object
first, so the new term starts from the full picture::

    cache = ObjectCache(mapper, watcher=watcher)              # process lifetime; standbys keep it warm
    while not shutting_down():
        with leader_lease():                                  # may be lost and regained any number of times
            handle = cache.add_handler("widgets.example.com", on_add=enqueue, on_update=lambda o, n: enqueue(n))
            try:
                run_workers()                                 # reconcile: read through cache.get / cache.list
            finally:
                cache.remove_handler(handle)

:class:`GenerationCache` (docs/design.md §6) caches values derived from objects, rebuilt when an object's UID,
generation or fingerprint changes; :meth:`ObjectCache.derived` keeps one in step with an informer. It is defined
in :mod:`restmapper.generation` (which :mod:`restmapper.watch` uses too) and re-exported here.

:class:`AsyncObjectCache` is the object cache for asyncio code (also exported by :mod:`restmapper.aio`); it loads
on first use, so importing this package does not import :mod:`asyncio`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from restmapper._lazy import lazy_dir, lazy_getattr
from restmapper.generation import GenerationCache, GenerationCacheStats, crd_fingerprint, object_uid_generation
from restmapper.store._cache import InformerInfo, KindArg, ObjectCache
from restmapper.store._errors import (
    CacheSyncTimeoutError,
    InformerNotStartedError,
    InformerStoppedError,
    ObjectNotFoundError,
    ObjectWaitTimeoutError,
    OutsideScopeError,
    TransformError,
    is_not_found,
)
from restmapper.store._handlers import HandlerHandle
from restmapper.store._informer import Informer, InformerStats, State
from restmapper.store._keys import object_key, split_object_key
from restmapper.store._leading import Leadership, LeadershipBinding
from restmapper.store._reflectors import NamespaceState
from restmapper.store._scope import Scope
from restmapper.store._transforms import strip_last_applied, strip_managed_fields

if TYPE_CHECKING:
    from restmapper.store._aio import AsyncObjectCache

_LAZY = {"AsyncObjectCache": "restmapper.store._aio"}
__getattr__ = lazy_getattr(globals(), __name__, _LAZY)
__dir__ = lazy_dir(globals(), _LAZY)

__all__ = [
    "AsyncObjectCache",
    "CacheSyncTimeoutError",
    "GenerationCache",
    "GenerationCacheStats",
    "HandlerHandle",
    "Informer",
    "InformerInfo",
    "InformerNotStartedError",
    "InformerStats",
    "InformerStoppedError",
    "KindArg",
    "Leadership",
    "LeadershipBinding",
    "NamespaceState",
    "ObjectCache",
    "ObjectNotFoundError",
    "ObjectWaitTimeoutError",
    "OutsideScopeError",
    "Scope",
    "State",
    "TransformError",
    "crd_fingerprint",
    "is_not_found",
    "object_key",
    "object_uid_generation",
    "split_object_key",
    "strip_last_applied",
    "strip_managed_fields",
]
