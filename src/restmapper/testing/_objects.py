"""Objects and watch control of :class:`~restmapper.testing.FakeCluster` (a mixin, see cluster.py).

The same objects are reachable over HTTP (see :mod:`restmapper.testing._rest`) and from Python here, so a test can
seed state without a client and check what a client wrote. Resources are named ``resource.group`` (``configmaps``,
``deployments.apps``, ``certificates.cert-manager.io``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import GroupVersion
from restmapper.testing._rbac import Denial
from restmapper.testing._store import APISERVICE_KEY, CRD_KEY, EtcdSnapshot, object_key

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

if TYPE_CHECKING:
    import threading

    from restmapper.testing._served import ServedGroup
    from restmapper.testing._store import ObjectStore
    from restmapper.testing.profile import ResourceSpec


class ObjectsMixin:
    """Object store and watch operations of FakeCluster; state lives on the cluster (see cluster.py)."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _store: ObjectStore
        _crds: dict[str, dict[str, Any]]
        _denials: dict[str, Denial]

        def _view(self) -> tuple[ServedGroup, ...]: ...

        def _core_versions(self) -> list[tuple[str, tuple[ResourceSpec, ...]]]: ...

        def add_crd(self, manifest: Mapping[str, Any] | str) -> str: ...

        def delete_crd(self, name: str) -> None: ...

        def _changed(self) -> None: ...

        def _sync_apiservices(self) -> None: ...

    # --- objects --------------------------------------------------------------------------------------------

    @property
    def resource_version(self) -> str:
        """The current cluster-wide resourceVersion (etcd's revision): the last write's, ``"0"`` before any."""
        with self._lock:
            return str(self._store.resource_version)

    def _resource_for_kind(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(storage key, namespaced) of the served resource of ``kind`` at ``api_version`` (lock held)."""
        from restmapper.testing._rest import storage_key

        gv = GroupVersion.parse(api_version)
        if gv.group == "":
            candidates = dict(self._core_versions()).get(gv.version, ())
        else:
            candidates = next((r for g in self._view() if g.name == gv.group
                               for v, r, _ in g.versions if v == gv.version), ())
        spec = next((r for r in candidates if r.kind == kind), None)
        if spec is None:
            raise InvalidArgumentError(f"no resource of kind {kind!r} is served at {api_version!r}")
        return storage_key(self, gv, spec), spec.namespaced  # type: ignore[arg-type]

    def apply_object(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """Create or replace an object from Python (no admission, no conflict check) and return a stored copy.

        A ``CustomResourceDefinition`` goes through :meth:`add_crd`. Metadata is filled as a create/update would
        (uid, creationTimestamp, generation bumped on changes outside metadata/status, a new resourceVersion) and
        watchers see ``ADDED``/``MODIFIED``.

        Args:
            manifest: an object with ``apiVersion``, ``kind`` and ``metadata.name``; ``metadata.namespace``
                defaults to ``default`` for namespaced kinds.

        Returns:
            A deep copy of the stored object.

        Raises:
            InvalidArgumentError: when the kind is not served at that apiVersion, the name is missing, or the
                object is an APIService (those follow what is served).
        """
        obj = copy.deepcopy(dict(manifest))
        api_version, kind, meta = _identity(obj)
        if kind == "CustomResourceDefinition" and api_version == "apiextensions.k8s.io/v1":
            return copy.deepcopy(self._crds[self.add_crd(obj)])
        with self._lock:
            key, namespaced = self._resource_for_kind(api_version, kind)
            if key == APISERVICE_KEY:
                raise InvalidArgumentError("APIService objects follow what is served; use set_available")
            if namespaced:
                meta.setdefault("namespace", "default")
            else:
                meta.pop("namespace", None)
            old = self._store.bucket(key).get(object_key(meta.get("namespace"), meta["name"]))
            for field in ("uid", "creationTimestamp", "generation", "resourceVersion"):
                meta.pop(field, None)
            if old is not None and "status" not in obj and "status" in old:
                obj["status"] = copy.deepcopy(old["status"])
            stored, _ = self._store.put(key, obj)
            return copy.deepcopy(stored)

    def get_object(self, resource: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """Return a deep copy of an object as stored (no request is recorded).

        Args:
            resource: ``resource.group`` (``"deployments.apps"``; ``"configmaps"`` for the core group).
            name: ``metadata.name``.
            namespace: its namespace; None for a cluster-scoped resource.

        Returns:
            The object (a dict), or None when there is no such object or resource. Never raises.
        """
        with self._lock:
            obj = self._store.bucket(resource).get(object_key(namespace, name))
            return copy.deepcopy(obj) if obj is not None else None

    def list_objects(self, resource: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Return deep copies of the stored objects of ``resource`` (no request is recorded).

        Args:
            resource: ``resource.group``, as :meth:`get_object`.
            namespace: one namespace; None for every namespace (and for cluster-scoped resources).

        Returns:
            The objects, ordered by namespace then name; empty for an unknown resource. Never raises.
        """
        with self._lock:
            return [copy.deepcopy(o) for _, o in sorted(self._store.bucket(resource).items())
                    if namespace is None or o["metadata"].get("namespace") == namespace]

    def delete_object(self, resource: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        """Delete an object (watchers see ``DELETED``) and return its last state; a CRD goes via :meth:`delete_crd`.

        Args:
            resource: ``resource.group``, as :meth:`get_object`.
            name: ``metadata.name``.
            namespace: its namespace; None for a cluster-scoped resource.

        Returns:
            A deep copy of the object as it was.

        Raises:
            KeyError: when no such object exists.
        """
        with self._lock:
            if resource == CRD_KEY:
                last = copy.deepcopy(self._crds[name])
                self.delete_crd(name)
                return last
            removed = self._store.remove(resource, namespace, name)
            if removed is None:
                raise KeyError(object_key(namespace, name))
            return copy.deepcopy(removed)

    def _create_system_namespaces(self) -> None:
        """Create the namespaces kube-apiserver's system namespaces controller keeps (when namespaces are served)."""
        if not any(r.name == "namespaces" for v, rs in self._core_versions() if v == "v1" for r in rs):
            return
        with self._lock:
            for name in SYSTEM_NAMESPACES:
                if self._store.bucket("namespaces").get(name) is None:
                    self._store.put("namespaces", {
                        "apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
                        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    # --- RBAC -----------------------------------------------------------------------------------------------

    def forbid_namespace(self, namespace: str, *, resources: Iterable[str] | None = None,
                         user: str = "system:serviceaccount:default:default") -> None:
        """Deny the client every request in ``namespace`` (of ``resources`` only, when given) with a ``403``.

        The same resources are denied at the cluster scope (a list or watch across all namespaces), as RBAC denies
        a user whose RoleBindings do not cover every namespace. See :mod:`restmapper.testing._rbac`.

        Args:
            namespace: the namespace.
            resources: ``resource.group`` names (``configmaps``, ``deployments.apps``); None: every resource.
            user: the identity the 403 message names.
        """
        with self._lock:
            self._denials[namespace] = Denial(user, frozenset(resources) if resources is not None else None)

    def allow_namespace(self, namespace: str) -> None:
        """Undo :meth:`forbid_namespace` (requests already refused are not replayed; clients retry)."""
        with self._lock:
            self._denials.pop(namespace, None)

    def _denial(self, resource_key: str, namespace: str | None) -> Denial | None:
        """The denial of a request of ``resource_key`` in ``namespace`` (None: the cluster scope), or None."""
        with self._lock:
            if namespace is not None:
                denial = self._denials.get(namespace)
                return denial if denial is not None and denial.covers(resource_key) else None
            return next((d for d in self._denials.values() if d.covers(resource_key)), None)

    # --- watch control --------------------------------------------------------------------------------------

    @property
    def open_watches(self) -> int:
        """How many watch streams are open now (loopback streams, and mock watches waiting for an event)."""
        with self._lock:
            return self._store.open_watches

    def wait_for_watchers(self, n: int, timeout: float = 5.0) -> bool:
        """Block until at least ``n`` watch streams are open; lets tests synchronise without sleeping.

        Args:
            n: the number of open streams to wait for.
            timeout: seconds to wait at most.

        Returns:
            True when ``n`` streams are open, False on timeout.
        """
        with self._store.cond:
            return self._store.cond.wait_for(lambda: self._store.open_watches >= n, timeout)

    def _wake_watchers(self) -> None:
        with self._store.cond:
            self._store.cond.notify_all()

    def compact(self, resource_version: str | int | None = None) -> None:
        """Compact the history as etcd does: a watch from, an exact list at, or a continue token of a
        resourceVersion older than the compacted one gets ``410 Gone`` (reason ``Expired``; a watch as an
        ``ERROR`` event).

        Args:
            resource_version: compact up to this resourceVersion (inclusive of what it replaced); None: up to the
                current one.

        Raises:
            InvalidArgumentError: for a resourceVersion that is not a non-negative integer.
        """
        if resource_version is None:
            target = None
        elif isinstance(resource_version, int) or (isinstance(resource_version, str) and resource_version.isdigit()):
            target = int(resource_version)
            if target < 0:
                raise InvalidArgumentError("resource_version must not be negative")
        else:
            raise InvalidArgumentError(f"resource_version must be an integer, got {resource_version!r}")
        with self._lock:
            self._store.compact(target)

    def delay_watch_events(self, seconds: float) -> None:
        """Hold every watch event back ``seconds`` after its change before streams send it (a lagging watch
        cache, as kube-apiserver's cacher under load): an informer's read right after a write then sees the old
        object for that long. ``math.inf`` holds events until the next call; 0 (the default) sends them at once.
        Bookmarks never claim a held event's resourceVersion. Applies to the loopback server's streams (and the
        mock's collected watches); lists are not delayed.

        Raises:
            InvalidArgumentError: a negative or NaN ``seconds``.
        """
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not seconds >= 0:
            raise InvalidArgumentError(f"seconds must be a non-negative number, got {seconds!r}")
        with self._store.cond:
            self._store.watch_delay = float(seconds)
            self._store.cond.notify_all()  # streams holding events re-check when they are due

    def send_bookmarks(self) -> None:
        """Make every open watch that allows bookmarks send a ``BOOKMARK`` at the current resourceVersion now
        (what the API server does about every minute; lets tests exercise bookmark handling without waiting)."""
        with self._lock:
            self._store.request_bookmarks()

    def drop_watches(self) -> None:
        """End every open watch stream now (clients see the response end cleanly, EOF, and should re-watch)."""
        with self._lock:
            self._store.drop_watches()

    def restart(self, *, keep_objects: bool = True) -> None:
        """Simulate an API server restart: drop every watch and compact the history (re-watches get 410).

        Args:
            keep_objects: keep stored objects (etcd survives the restart). False forgets every object except
                CRDs and APIServices, without events (clients notice through their relist).
        """
        with self._lock:
            self._store.drop_watches()
            if not keep_objects:
                self._store.wipe(keep=[CRD_KEY, APISERVICE_KEY])
                self._create_system_namespaces()
            self._store.compact()

    # --- etcd snapshots and server misbehaviour ------------------------------------------------------------------

    def snapshot(self) -> EtcdSnapshot:
        """Save every object and the current resourceVersion, as ``etcdctl snapshot save`` (see :meth:`restore`)."""
        with self._lock:
            self._sync_apiservices()  # the APIService objects are in etcd too
            return self._store.snapshot_all()

    def restore(self, snapshot: EtcdSnapshot, *, bump_revision: int = 0, mark_compacted: bool = False) -> None:
        """Restore etcd from ``snapshot`` and restart the API server on it (``etcdutl snapshot restore``).

        Every object is as it was at the snapshot (CRDs included, so what is served changes too), with the
        snapshot's resourceVersions; no watch event tells anyone (clients learn it from their relist). Every open
        watch ends. Without ``bump_revision`` resourceVersions go back: a watch from a resourceVersion the client
        saw after the snapshot gets "Too large resource version" (504, an ``ERROR`` event; kubernetes#107457), and
        new writes reuse resourceVersions clients already saw. The documented safe restore (etcd#16028) is
        ``bump_revision`` (larger than the writes since the snapshot) with ``mark_compacted=True``: every watch
        from a resourceVersion clients hold gets 410 Gone, so they relist.

        Args:
            snapshot: what :meth:`snapshot` returned.
            bump_revision: added to the snapshot's resourceVersion (``--bump-revision``).
            mark_compacted: count every resourceVersion up to the new one as compacted (``--mark-compacted``).

        Raises:
            InvalidArgumentError: a negative ``bump_revision``, or not a snapshot.
        """
        if not isinstance(snapshot, EtcdSnapshot):
            raise InvalidArgumentError(f"restore takes what snapshot() returned, got {type(snapshot).__name__}")
        if isinstance(bump_revision, bool) or not isinstance(bump_revision, int) or bump_revision < 0:
            raise InvalidArgumentError(f"bump_revision must be a non-negative integer, got {bump_revision!r}")
        with self._lock:
            self._store.restore(snapshot, bump_revision, mark_compacted)
            self._changed()

    def expire_continue_tokens(self, on: bool = True) -> None:
        """While on, every list continue token answers ``410 Expired`` (with a fresh inconsistent token), as when
        etcd compacts faster than a client reads its pages; client-go's pager then lists in one request."""
        with self._lock:
            self._store.expire_continue_tokens = on

    def end_watches_at_once(self, resource: str | None = None, on: bool = True) -> None:
        """While on, watches of ``resource`` (``configmaps``, ``deployments.apps``; None: every resource) are
        answered ``200`` and end at once without any event, as a proxy closing stale watches (fabric8#7896)."""
        with self._lock:
            key = resource or "*"
            (self._store.watches_end_at_once.add if on else self._store.watches_end_at_once.discard)(key)


def _identity(obj: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """The ``apiVersion``, ``kind`` and ``metadata`` (with a ``name``) of a manifest given to ``apply_object``.

    Raises:
        InvalidArgumentError: when one is missing or of the wrong type.
    """
    api_version, kind, meta = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not isinstance(meta, dict) \
            or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise InvalidArgumentError("an object needs apiVersion, kind and metadata.name")
    return api_version, kind, meta
