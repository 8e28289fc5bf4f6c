"""CRD and APIService watches that keep a :class:`~restmapper.mapper.LazyRESTMapper` (and a generation-aware
cache) fresh: :class:`Watcher`, and :func:`wait_for` to wait until a kind is served.

A watcher lists then watches ``apiextensions.k8s.io/v1 customresourcedefinitions`` and ``apiregistration.k8s.io/v1
apiservices`` and invalidates exactly the groups whose discovery changed. It is an optimisation over the mapper's
own healing (TTL, 404 eviction, rate-limited miss revalidation), never a requirement: without it, or when RBAC
forbids it, lookups still converge.

Run it in every replica, leader or not. The lesson of docs/design.md §1.3: a watch started with the
leader-election context dies with the lease, and a stopped watch handed out later silently serves nothing. A
watcher's lifetime is the process: start it once at startup, stop it at shutdown, and let leadership decide only
what the controller *does*::

    from restmapper.mapper import LazyRESTMapper
    from restmapper.watch import Watcher, wait_for

    mapper = LazyRESTMapper.from_kubeconfig()
    with Watcher(mapper) as watcher:           # process lifetime, not lease lifetime
        while not shutting_down():
            with leader_lease():               # may be lost and regained any number of times
                mapping = wait_for(mapper, "widgets.example.com", timeout=60, watcher=watcher)
                reconcile(mapping)
        # losing the lease does not touch the watcher; a standby replica's mapper is already warm

If something does stop a watcher (a test, a reconfiguration), ``start()`` it again: it relists from scratch,
invalidates the mapper's cache and drops its handlers on stop, so nothing from before the stop is served and no
stale handler fires. ``watcher.healthy`` is True only while every enabled loop has listed and has a stream open.

Both the watcher and every :class:`~restmapper.store.Informer` run the one :class:`Reflector` (list-then-watch of
any collection path, reporting to a :class:`ReflectorSink`, which reads each complete list as a :class:`Listing`
as it arrives).
"""

from __future__ import annotations

from restmapper.watch.reflector import Listing, Reflector, ReflectorSink
from restmapper.watch.wait import WaitTimeoutError, wait_for
from restmapper.watch.watcher import Handler, Watcher, WatchStats

__all__ = ["Handler", "Listing", "Reflector", "ReflectorSink", "WaitTimeoutError", "WatchStats", "Watcher", "wait_for"]
