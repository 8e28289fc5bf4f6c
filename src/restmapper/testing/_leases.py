"""Leader-election controls of :class:`~restmapper.testing.FakeCluster` (a mixin, see cluster.py).

What a test of Lease leader election needs to do to the server side: take a lease over as another candidate would
(:meth:`steal_lease`), end the holder's term at once (:meth:`expire_lease`), and cut one candidate off from the
lease (:meth:`partition_lease`). Changes go through the object store, so watchers see them and the
resourceVersion moves (a candidate writing on top of what it read before gets 409).
"""

from __future__ import annotations

import copy
import json
import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from restmapper.errors import InvalidArgumentError
from restmapper.testing._store import object_key

if TYPE_CHECKING:
    from restmapper.testing._store import ObjectStore

__all__ = ["LEASES_KEY", "LeasePartition", "LeasesMixin"]

LEASES_KEY = "leases.coordination.k8s.io"


def _micro_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _holders(body: bytes, current: dict[str, Any] | None) -> tuple[Any, Any]:
    """The ``spec.holderIdentity`` a Lease write sends (None: none, or a body that is not JSON) and the one of the
    stored Lease ``current``."""
    try:
        doc = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        doc = None
    spec = doc.get("spec") if isinstance(doc, dict) else None
    holder = spec.get("holderIdentity") if isinstance(spec, dict) else None
    return holder, ((current or {}).get("spec") or {}).get("holderIdentity")


class LeasePartition:
    """A partition made by :meth:`LeasesMixin.partition_lease`: ``remove()`` (or leaving the ``with``) heals it.

    Attributes:
        identity: the candidate cut off.
        refused: how many of its writes were refused so far.
    """

    def __init__(self, owner: LeasesMixin, identity: str) -> None:
        self._owner = owner
        self.identity = identity
        self.refused = 0

    def remove(self) -> None:
        """Heal the partition (idempotent)."""
        self._owner._heal(self)

    def __enter__(self) -> LeasePartition:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()


class LeasesMixin:
    """Lease controls of FakeCluster; state lives on the cluster (see cluster.py)."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _store: ObjectStore

    _partitions: list[LeasePartition]

    def steal_lease(self, name: str, namespace: str, identity: str) -> dict[str, Any]:
        """Take Lease ``namespace/name`` over for ``identity`` as a candidate does when it acquires: holder set,
        ``acquireTime``/``renewTime`` now, ``leaseTransitions`` + 1 (created when missing).

        Returns:
            A copy of the stored Lease.

        Raises:
            InvalidArgumentError: ``identity`` is empty.
        """
        if not identity:
            raise InvalidArgumentError("steal_lease needs the identity of the new holder")

        def edit(spec: dict[str, Any]) -> None:
            changed = spec.get("holderIdentity") != identity
            now = _micro_now()
            spec.update(holderIdentity=identity, acquireTime=now, renewTime=now)
            spec.setdefault("leaseDurationSeconds", 15)
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if changed else 0)

        return self._edit_lease(name, namespace, edit)

    def expire_lease(self, name: str, namespace: str) -> dict[str, Any]:
        """End the term of Lease ``namespace/name``'s holder now: the holder is cleared as a release does
        (``leaseTransitions`` kept), so any candidate may acquire it at its next attempt.

        Returns:
            A copy of the stored Lease.

        Raises:
            KeyError: the Lease does not exist.
        """
        with self._lock:
            if self._store.bucket(LEASES_KEY).get(object_key(namespace, name)) is None:
                raise KeyError(object_key(namespace, name))

        def edit(spec: dict[str, Any]) -> None:
            now = _micro_now()
            spec.update(holderIdentity="", leaseDurationSeconds=1, acquireTime=now, renewTime=now)

        return self._edit_lease(name, namespace, edit)

    def partition_lease(self, identity: str) -> LeasePartition:
        """Cut candidate ``identity`` off from every Lease: until healed, its writes to a Lease (those naming it as
        the holder: acquire and renew; and those clearing a Lease it holds: release) fail as a connection reset
        (``TransportError`` for clients). Reads still answer: to an elector a lost write is the partition.

        Returns:
            The :class:`LeasePartition`; ``remove()`` heals it, or use it as a context manager.
        """
        partition = LeasePartition(self, identity)
        with self._lock:
            self._partitions = [*getattr(self, "_partitions", []), partition]
        return partition

    # --- internals (the REST handlers call _refuse_partitioned_write, lock held) --------------------------------

    def _heal(self, partition: LeasePartition) -> None:
        with self._lock:
            self._partitions = [p for p in getattr(self, "_partitions", []) if p is not partition]

    def _refuse_partitioned_write(self, body: bytes, current: dict[str, Any] | None) -> None:
        """Raise ConnectionResetError for a Lease write by a partitioned candidate (lock held)."""
        partitions = getattr(self, "_partitions", None)
        if not partitions:
            return
        holder, held_by = _holders(body, current)
        for partition in partitions:
            if holder == partition.identity or (holder == "" and held_by == partition.identity):
                partition.refused += 1
                raise ConnectionResetError(f"lease write by {partition.identity!r} refused: partitioned")

    def _edit_lease(self, name: str, namespace: str, edit: Any) -> dict[str, Any]:
        with self._lock:
            current = self._store.bucket(LEASES_KEY).get(object_key(namespace, name))
            lease = copy.deepcopy(current) if current is not None else {
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": namespace}, "spec": {}}
            edit(lease.setdefault("spec", {}))
            stored, _ = self._store.put(LEASES_KEY, lease)
            return copy.deepcopy(stored)
