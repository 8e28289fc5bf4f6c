"""The Lease lock: read, create and update one ``coordination.k8s.io/v1`` Lease through the mapper's transport.

As client-go's ``resourcelock.LeaseLock``: the leader election record lives in the Lease's ``spec``
(``holderIdentity``, ``leaseDurationSeconds``, ``acquireTime``, ``renewTime``, ``leaseTransitions``), and every
update sends the ``metadata.resourceVersion`` last read, so the API server refuses (409) a write based on a record
that changed meanwhile. A 409 is a lost race, reported as ``None``, never as an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from restmapper.errors import InvalidArgumentError, TransportError
from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.model import GroupKind, RESTMapping
from restmapper.transport import WritingTransport, status_error

__all__ = ["LEASE_KIND", "LeaderElectionRecord", "LeaseLock", "micro_time"]

LEASE_KIND = GroupKind("coordination.k8s.io", "Lease")
_VERSION = "v1"
_JSON = "application/json"
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def micro_time(seconds: float) -> str:
    """Format Unix time ``seconds`` as a ``metav1.MicroTime`` (RFC 3339 with microseconds, UTC)."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderElectionRecord:
    """What a Lease's ``spec`` says about leadership (client-go's ``LeaderElectionRecord``).

    Attributes:
        holder_identity: the holder's identity; "" when nobody holds the lease (released or never held).
        lease_duration_seconds: how long candidates wait, from when they observe a change of this record, before
            they may take the lease over.
        acquire_time: when the holder acquired it (``MicroTime`` text, the holder's wall clock; informational).
        renew_time: when the holder last renewed it (``MicroTime`` text, the holder's wall clock; informational:
            expiry is never judged from it).
        lease_transitions: how many times the lease changed holders.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaderElectionRecord:
        """Read the record of a Lease object (missing or malformed fields read as absent)."""
        spec = lease.get("spec")
        spec = spec if isinstance(spec, dict) else {}

        def text(key: str) -> str | None:
            value = spec.get(key)
            return value if isinstance(value, str) else None

        def number(key: str) -> int:
            value = spec.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(text("holderIdentity") or "", number("leaseDurationSeconds"), text("acquireTime"),
                   text("renewTime"), number("leaseTransitions"))

    def to_spec(self) -> dict[str, Any]:
        """Return the Lease ``spec`` holding this record."""
        spec: dict[str, Any] = {"holderIdentity": self.holder_identity,
                                "leaseDurationSeconds": self.lease_duration_seconds,
                                "leaseTransitions": self.lease_transitions}
        if self.acquire_time is not None:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time is not None:
            spec["renewTime"] = self.renew_time
        return spec


def check_mapper(caller: str, mapper: object) -> None:
    """Raise TypeError naming ``caller`` unless ``mapper`` is a :class:`LazyRESTMapper`."""
    if not isinstance(mapper, LazyRESTMapper):
        hint = "; build one from a kubeconfig with LazyRESTMapper.from_kubeconfig()" if isinstance(mapper, str) else ""
        raise TypeError(f"{caller}() takes a LazyRESTMapper as its first argument, not {type(mapper).__name__}{hint}")


class LeaseLock:
    """One Lease, read and written through ``mapper``'s transport (which must be a :class:`WritingTransport`).

    Attributes:
        name: the Lease name.
        namespace: its namespace.
    """

    def __init__(self, mapper: LazyRESTMapper, name: str, namespace: str) -> None:
        """Bind to Lease ``namespace/name``.

        Raises:
            InvalidArgumentError: ``name`` is no DNS-1123 subdomain or ``namespace`` no DNS-1123 label (as the
                API server validates them; checked here so that no request path is built from them), or the
                transport cannot send writes.
        """
        for label, value, pattern, longest in (("name", name, _DNS_SUBDOMAIN, 253),
                                               ("namespace", namespace, _DNS_LABEL, 63)):
            if not isinstance(value, str) or len(value) > longest or not pattern.fullmatch(value):
                raise InvalidArgumentError(f"the Lease {label} must be a DNS-1123 "
                                           f"{'subdomain' if label == 'name' else 'label'} (lowercase letters, "
                                           f"digits, '-'; at most {longest} characters), got {value!r}")
        transport = mapper.transport
        if not isinstance(transport, WritingTransport):
            raise InvalidArgumentError(f"leader election writes a Lease, but the mapper's transport "
                                       f"{type(transport).__name__} has no request() method (use RequestsTransport "
                                       "or the kit's InProcessTransport)")
        self._mapper = mapper
        self._transport: WritingTransport = transport
        self.name = name
        self.namespace = namespace

    def _mapping(self) -> RESTMapping:
        return self._mapper.rest_mapping(LEASE_KIND, _VERSION)

    def get(self, timeout: float | None) -> dict[str, Any] | None:
        """Return the Lease, or None when it does not exist.

        Raises:
            TransportError: no answer, or an error status (an ``APIStatusError``) other than a 404 for the Lease.
            RestMapperError: the Lease kind could not be resolved (discovery failed, or it is not served).
        """
        mapping = self._mapping()
        path = mapping.path(self.namespace, self.name)
        response = self._transport.get(path, {"Accept": _JSON}, timeout=timeout)
        if response.status == 404 and self._object_not_found(response.body):
            return None
        if response.status == 404:
            self._mapper.report_not_found(mapping.resource.group_version)
        return self._decode(response.status, response.body, response.headers, path, 200)

    def create(self, record: LeaderElectionRecord, timeout: float | None) -> dict[str, Any] | None:
        """Create the Lease holding ``record``; None when it already exists (another candidate won the race).

        Raises:
            TransportError, RestMapperError: as :meth:`get`.
        """
        mapping = self._mapping()
        lease = {"apiVersion": str(mapping.group_version_kind.group_version), "kind": "Lease",
                 "metadata": {"name": self.name, "namespace": self.namespace}, "spec": record.to_spec()}
        return self._write("POST", mapping.path(self.namespace), lease, timeout, 201)

    def update(self, lease: dict[str, Any], record: LeaderElectionRecord, timeout: float | None
               ) -> dict[str, Any] | None:
        """Replace the record of ``lease`` (as last read: its ``resourceVersion`` is the precondition).

        Returns:
            The Lease as written, or None on a 409 (the Lease changed since it was read: a lost race).

        Raises:
            TransportError, RestMapperError: as :meth:`get`.
        """
        body = {**lease, "spec": {**(lease.get("spec") or {}), **record.to_spec()}}
        return self._write("PUT", self._mapping().path(self.namespace, self.name), body, timeout, 200)

    # --- internals -------------------------------------------------------------------------------------------------

    def _write(self, method: str, path: str, lease: dict[str, Any], timeout: float | None,
               expected: int) -> dict[str, Any] | None:
        data = json.dumps(lease, separators=(",", ":")).encode()
        response = self._transport.request(method, path, {"Content-Type": _JSON, "Accept": _JSON}, data,
                                           timeout=timeout)
        if response.status == 409:
            return None
        return self._decode(response.status, response.body, response.headers, path, expected)

    def _object_not_found(self, body: bytes) -> bool:
        """True for the 404 of a missing Lease (its Status names it), not for the Lease type not being served."""
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return False
        details = doc.get("details") if isinstance(doc, dict) else None
        return isinstance(details, dict) and details.get("name") == self.name

    def _decode(self, status: int, body: bytes, headers: Any, path: str, expected: int) -> dict[str, Any]:
        if status not in (expected, 200):
            raise status_error(self._transport, path, status, body, headers)
        try:
            doc = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("metadata"), dict):
            raise TransportError(f"{path}: the answer is not a Lease object", path=path, transient=True)
        return doc
