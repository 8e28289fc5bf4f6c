"""The watcher's side of one watched resource type (CRDs or APIServices): a :class:`Reflector` sink on its thread.

The list/watch protocol itself is :class:`~restmapper.watch.reflector.Reflector` (the one reflector of the code
base). What is specific to the watcher lives here: what it remembers about each object (:class:`Known`), the diff
of a relist against that memory, and which groups a change invalidates. What it learns goes to its owner through
:class:`LoopOwner`; the loop never touches the mapper.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from restmapper.errors import APIStatusError, InvalidArgumentError
from restmapper.transport.base import Transport
from restmapper.transport.retry import RetryPolicy
from restmapper.watch._objects import Known, ResourceKind, known_from
from restmapper.watch.reflector import Listing, Reflector

__all__ = ["LoopOwner", "ResourceLoop"]

_log = logging.getLogger("restmapper.watch")


class LoopOwner(Protocol):
    """What a loop reports to (implemented by :class:`~restmapper.watch.Watcher`)."""

    def _loop_event(self, loop: ResourceLoop, event_type: str, obj: Mapping[str, Any],
                    groups: frozenset[str], relisted: bool = False) -> None: ...

    def _loop_state(self, loop: ResourceLoop) -> None: ...

    def _loop_forbidden(self, loop: ResourceLoop, error: APIStatusError) -> None: ...

    def _loop_relisted(self, loop: ResourceLoop, live: frozenset[str]) -> None: ...


class ResourceLoop:
    """List-then-watch of one resource type for one watcher session.

    ``known`` (uid -> Known) is written by the loop thread alone; ``disabled`` is set when RBAC forbids the
    resource (403) and the thread ends.
    """

    def __init__(self, owner: LoopOwner, kind: ResourceKind, transport: Transport, stop: threading.Event, *,
                 backoff: RetryPolicy, sleep: Callable[[threading.Event, float], None] | None,
                 watch_timeout: float, idle_timeout: float, clock: Callable[[], float],
                 count: Callable[[str], None]) -> None:
        self.owner = owner
        self.kind = kind
        self.stop = stop
        self.known: dict[str, Known] = {}
        self.disabled = False
        self._count = count
        self.reflector = Reflector(transport, kind.path, self, stop, label=kind.label, backoff=backoff,
                                   sleep=sleep, watch_timeout=watch_timeout, idle_timeout=idle_timeout,
                                   clock=clock, count=count)
        self.thread: threading.Thread | None = None

    @property
    def synced(self) -> bool:
        return self.reflector.synced

    @property
    def connected(self) -> bool:
        return self.reflector.connected

    @property
    def last_error(self) -> BaseException | None:
        return self.reflector.last_error

    def close_stream(self) -> None:
        """Close the open stream, if any (called by the stopping thread to wake the reader)."""
        self.reflector.close_stream()

    def run(self) -> None:
        """Loop until the session stops or RBAC forbids the resource."""
        while True:
            outcome = self.reflector.run(relist=not self.reflector.synced)
            if outcome == "stopped":
                return
            if outcome == "forbidden":
                self.disabled = True
                error = self.reflector.last_error
                assert isinstance(error, APIStatusError)
                self.owner._loop_forbidden(self, error)
                return
            if outcome == "not_found":
                # CRDs and APIServices are built in: a 404 is a server fault to back off from, not a moved type.
                error = self.reflector.last_error
                self.reflector.fail(error if error is not None else
                                    InvalidArgumentError(f"GET {self.kind.path}: 404"))

    # --- ReflectorSink ---------------------------------------------------------------------------------------------

    def reflector_state(self) -> None:
        self.owner._loop_state(self)

    def reflector_bookmark(self, resource_version: str) -> None:
        pass

    def reflector_replace(self, items: Listing) -> None:
        fresh: dict[str, Known] = {}
        objects: dict[str, Mapping[str, Any]] = {}
        for item in items:
            try:
                known = known_from(self.kind, item)
            except InvalidArgumentError as exc:
                self._count("malformed")
                _log.warning("ignoring malformed %s in list: %s", self.kind.kind, exc)
                continue
            fresh[known.uid] = known
            objects[known.uid] = item
        old = self.known
        # Diff against what we knew: a relist after missed events invalidates only what changed (the first list
        # of a session knows nothing, so everything listed counts as added and is invalidated). Deletions go
        # first, as a live stream would have sent them: a CRD deleted and recreated (new UID) while the watch was
        # down must end up present for a handler keyed by name.
        # A relist is the truth: what differs is reported whatever the resourceVersions say (after an etcd
        # restore they go back), and the owner replaces what it derived rather than keep a "newer" value.
        for uid, vanished in old.items():
            if uid not in fresh:
                self._emit("DELETED", vanished.slim, frozenset({vanished.group}), True)
        for uid, known in fresh.items():
            before = old.get(uid)
            if before is None:
                self._emit("ADDED", objects[uid], frozenset({known.group}), True)
            elif before.fingerprint != known.fingerprint:
                self._emit("MODIFIED", objects[uid], frozenset({known.group, before.group}), True)
            elif before.resource_version != known.resource_version:
                self._emit("MODIFIED", objects[uid], frozenset(), True)
        self.known = fresh
        self.owner._loop_relisted(self, frozenset(fresh))

    def reflector_event(self, event_type: str, obj: dict[str, Any]) -> None:
        try:
            known = known_from(self.kind, obj)
        except InvalidArgumentError as exc:
            self._count("malformed")
            _log.warning("ignoring malformed %s event on %s: %s", event_type, self.kind.kind, exc)
            return
        before = self.known.get(known.uid)
        groups = {known.group} | ({before.group} if before is not None else set())
        if event_type == "DELETED":
            self.known.pop(known.uid, None)
            self._emit(event_type, obj, frozenset(groups))
            return
        self.known[known.uid] = known
        changed = before is None or before.fingerprint != known.fingerprint
        # A status heartbeat or a no-op update changes nothing discovery serves: do not invalidate for it.
        self._emit(event_type, obj, frozenset(groups) if changed else frozenset())

    def _emit(self, event_type: str, obj: Mapping[str, Any], groups: frozenset[str], relisted: bool = False) -> None:
        if not self.stop.is_set():
            self.owner._loop_event(self, event_type, obj, groups, relisted)
