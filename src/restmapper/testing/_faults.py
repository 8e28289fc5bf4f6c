"""Failure modes, injected faults and the request log of :class:`~restmapper.testing.FakeCluster` (a mixin, see
cluster.py).

What a test makes go wrong on the server side: a group version whose APIService is down (:meth:`set_stale`) or
that is listed but answers 404 (:meth:`set_listed_but_gone`), and faults on paths (:meth:`inject`: another
status, latency, a connection reset, a trickled body); and what the cluster was asked (:attr:`requests`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import GroupVersion
from restmapper.testing import _documents as docs
from restmapper.testing._router import Reply, Request
from restmapper.testing._trickle import Trickle

if TYPE_CHECKING:
    import threading

    from restmapper.testing._served import StaticVersion

__all__ = ["Fault", "FaultsMixin", "RecordedRequest"]

_REDACTED_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


@dataclass(eq=False)
class Fault:
    """A fault injected on a path by :meth:`FakeCluster.inject`; ``remove()`` takes it out.

    Attributes:
        path: exact path, or a prefix followed by ``*``.
        hits: how many requests it applied to so far.
    """

    path: str
    status: int | None = None
    body: bytes = b""
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    latency: float = 0.0
    reset: bool = False
    times: int | None = None
    trickle: float = 0.0
    watch: bool | None = None
    hits: int = 0
    _owner: FaultsMixin | None = field(default=None, repr=False)

    def matches(self, path: str, query: Mapping[str, str] | None = None) -> bool:
        """True when this fault applies to ``path`` with ``query`` (its parameters; only ``watch`` is looked at)."""
        if self.watch is not None and docs.asks_to_watch(query) != self.watch:
            return False
        if self.path.endswith("*"):
            return path.startswith(self.path[:-1])
        return path == self.path

    def remove(self) -> None:
        """Stop applying this fault (idempotent)."""
        if self._owner is not None:
            self._owner._remove_fault(self)

    @property
    def exhausted(self) -> bool:
        """True when ``times`` requests have been served by this fault."""
        return self.times is not None and self.hits >= self.times


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake cluster received (credentials redacted).

    Attributes:
        method: the HTTP method, upper case.
        path: the path without query string.
        query: the query parameters (last value wins).
        headers: the request headers; ``Authorization``, ``Proxy-Authorization`` and ``Cookie`` read
            ``<redacted>``.
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]


class FaultsMixin:
    """Failure modes, faults and the request log of FakeCluster; state lives on the cluster (see cluster.py)."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _static: dict[str, dict[str, StaticVersion]]
        _crds: dict[str, dict[str, Any]]
        _stale: set[GroupVersion]
        _gone: set[GroupVersion]
        _faults: list[Fault]
        _sleep: Callable[[float], None]
        requests: list[RecordedRequest]

        def _changed(self) -> None: ...

        def _sync_apiservices(self) -> None: ...

    def set_stale(self, gv: str, stale: bool = True) -> None:
        """Mark a group version as unavailable (its APIService is down).

        Aggregated discovery lists it with ``freshness: Stale`` and no resources; legacy ``/apis/<g>/<v>``
        and its resource paths answer 503 ``text/plain`` while ``/apis`` still lists it, as the aggregator does.
        Its APIService reads ``Available=False`` (see :meth:`set_available`, which also sets a reason).

        Args:
            gv: the group version, ``"metrics.k8s.io/v1beta1"``.
            stale: False makes it available again.

        Raises:
            InvalidArgumentError: marking stale a group version this cluster does not define.
        """
        with self._lock:
            if stale:
                self._require_known(gv)
            (self._stale.add if stale else self._stale.discard)(GroupVersion.parse(gv))
            self._changed()
            self._sync_apiservices()  # eager: an APIService watcher must see every flap, even a brief one

    def set_listed_but_gone(self, gv: str, on: bool = True) -> None:
        """Simulate the upgrade race: the group version stays listed everywhere but its own path answers 404.

        Raises:
            InvalidArgumentError: for a group version this cluster does not define.
        """
        with self._lock:
            if on:
                self._require_known(gv)
            (self._gone.add if on else self._gone.discard)(GroupVersion.parse(gv))
            self._changed()

    def _require_known(self, gv: str) -> None:
        """Raise for a group version this cluster does not define (a typo would otherwise test nothing)."""
        parsed = GroupVersion.parse(gv)
        if parsed.version in self._static.get(parsed.group, {}):
            return
        for crd in self._crds.values():
            spec = crd.get("spec", {})
            if spec.get("group") == parsed.group and any(v.get("name") == parsed.version
                                                         for v in spec.get("versions", ())):
                return
        raise InvalidArgumentError(f"this cluster defines no group version {gv!r} (add it first)")

    def inject(self, path: str, *, status: int | None = None, body: bytes | str | None = None,
               content_type: str | None = None, headers: Mapping[str, str] | None = None, latency: float = 0.0,
               reset: bool = False, times: int | None = None, trickle: float = 0.0,
               watch: bool | None = None) -> Fault:
        """Inject a fault on ``path`` (exact, or a prefix ending in ``*``); the first matching fault applies.

        Args:
            path: e.g. ``/apis/metrics.k8s.io/v1beta1`` or ``/apis/*``.
            status: answer with this status instead of the real answer (None: the real answer, delayed).
            body: the body of that answer (str is UTF-8 encoded).
            content_type: its ``Content-Type`` (default ``text/plain; charset=utf-8`` when a body is given).
            headers: extra response headers (e.g. ``Retry-After``).
            latency: seconds to wait (through the injected ``sleep``) before answering.
            reset: close the connection without an answer (``requests.ConnectionError`` for clients).
            times: how many requests it applies to; None until removed.
            trickle: send the body (the real answer's, a watch's events too) 8 bytes every this many seconds, in
                real time (the loopback server; the ``responses`` mock answers at once).
            watch: True: only watch requests (``watch=1``/``watch=true``), as RBAC granting ``list`` but not
                ``watch`` answers; False: only the others; None: both.

        Returns:
            The :class:`Fault`; call ``remove()`` to take it out.

        Raises:
            TypeError: ``path`` is not a str, or ``status`` not an int (``"503"``, ``503.0``, a bool).
            InvalidArgumentError: for a negative latency, trickle or ``times``, a ``path`` that does not start
                with ``/``, or a ``status`` outside 100-599.
        """
        if not isinstance(path, str):
            raise TypeError(f"inject() takes path as a str such as '/apis/*', not {type(path).__name__}")
        if not path.startswith("/"):
            raise InvalidArgumentError(f"inject() takes path as a request path starting with '/' "
                                       f"(such as '/apis/*'), got {path!r}")
        if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
            raise TypeError(f"inject() takes status as an int HTTP status or None, not {type(status).__name__} "
                            f"{status!r}")
        if status is not None and not 100 <= status <= 599:
            raise InvalidArgumentError(f"inject() takes status as an HTTP status (100-599), got {status}")
        if latency < 0 or trickle < 0 or (times is not None and times < 0):
            raise InvalidArgumentError("latency, trickle and times must not be negative")
        data = body.encode("utf-8") if isinstance(body, str) else (body or b"")
        fault = Fault(path, status, data, content_type, dict(headers or {}), latency, reset, times, trickle,
                      watch, _owner=self)
        with self._lock:
            self._faults.append(fault)
        return fault

    def _remove_fault(self, fault: Fault) -> None:
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear_faults(self) -> None:
        """Remove every injected fault."""
        with self._lock:
            self._faults.clear()

    # --- request log -----------------------------------------------------------------------------------------

    def request_count(self, path: str | None = None, prefix: str | None = None) -> int:
        """Return how many requests were received (recorded in :attr:`requests` until :meth:`clear_requests`).

        Args:
            path: count only requests for exactly this URL path (no query string).
            prefix: count only requests whose path starts with this.

        Returns:
            The number of requests (both filters apply when both are given). Never raises.
        """
        with self._lock:
            return sum(1 for r in self.requests
                       if (path is None or r.path == path) and (prefix is None or r.path.startswith(prefix)))

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self.requests.clear()

    # --- applying faults (FakeCluster.handle_stream) ---------------------------------------------------------

    def _record_and_find_fault(self, request: Request) -> Fault | None:
        recorded = RecordedRequest(
            request.method, request.path, dict(request.query),
            {k: ("<redacted>" if k.lower() in _REDACTED_HEADERS else v) for k, v in request.headers.items()},
        )
        with self._lock:
            self.requests.append(recorded)
            for fault in self._faults:
                if fault.matches(request.path, request.query) and not fault.exhausted:
                    fault.hits += 1
                    return fault
        return None

    def _fault_reply(self, fault: Fault, request: Request) -> Reply | None:
        """Apply ``fault``'s latency (through the injected ``sleep``); return its answer when it replaces the real
        one (None: answer as usual).

        Raises:
            ConnectionResetError: when the fault resets the connection.
        """
        if fault.latency:
            self._sleep(fault.latency)
        if fault.reset:
            raise ConnectionResetError(f"injected connection reset on {request.path}")
        if fault.status is None:
            return None
        headers = dict(fault.headers)
        if fault.content_type is not None or fault.body:
            headers.setdefault("Content-Type", fault.content_type or docs.TEXT)
        return fault.status, headers, Trickle(fault.body, fault.trickle) if fault.trickle else fault.body
