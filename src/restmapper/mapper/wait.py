"""Waiting for a kind to be served (apply a CRD, then its first custom resource, in one run).

The loop lives in the mapper layer so that :meth:`LazyRESTMapper.wait_for` needs nothing from above it; a
watcher takes part only through the small :class:`ChangeNotifier` protocol.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from restmapper.errors import (
    APIStatusError,
    GroupDiscoveryError,
    MappingError,
    RestMapperError,
    TransportError,
    WaitTimeoutError,
    is_no_match,
)
from restmapper.model import GroupKind, RESTMapping
from restmapper.transport import check_seconds

__all__ = ["CRD_KIND", "ChangeNotifier", "is_retryable_wait_error", "wait_for_mapping"]

CRD_KIND = "CustomResourceDefinition"


class ChangeNotifier(Protocol):
    """What a waiter needs from a watcher: a change counter and a way to sleep until it moves."""

    @property
    def change_count(self) -> int:
        """A number that grows with every invalidation the watcher makes."""
        ...

    def watching(self, kind: str) -> bool:
        """True while the watcher's loop for ``kind`` (``CustomResourceDefinition``) is up."""
        ...

    def wait_for_change(self, after: int, timeout: float) -> bool:
        """Block until ``change_count`` exceeds ``after`` or ``timeout`` seconds pass; True on a change."""
        ...


class _Lookups(Protocol):
    def rest_mapping(self, group_kind: GroupKind, *versions: str) -> RESTMapping: ...

    def resolve(self, arg: str) -> RESTMapping: ...


def is_retryable_wait_error(exc: RestMapperError) -> bool:
    """True for lookup errors that waiting may cure (no match yet, a group not discoverable yet, a transient error)."""
    if isinstance(exc, MappingError):
        return is_no_match(exc)
    # A CRD just created may be listed before its group version answers (Established delay), and a server
    # being restarted answers nothing for a moment: both may heal before the deadline. Being forbidden will not.
    if isinstance(exc, GroupDiscoveryError):
        causes = list(exc.failed.values()) + list(exc.documents.values())
        return not causes or not all(isinstance(c, APIStatusError) and c.status in (401, 403) for c in causes)
    return isinstance(exc, TransportError) and exc.transient


def wait_for_mapping(
    mapper: _Lookups,
    group_kind_or_arg: GroupKind | str,
    timeout: float,
    *,
    watcher: ChangeNotifier | None = None,
    poll_interval: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
    caller: str = "wait_for_mapping",
) -> RESTMapping:
    """Return the RESTMapping of a kind (or of what ``kubectl get ARG`` names) as soon as the server serves it.

    Event-driven when ``watcher`` watches CRDs (each invalidation it makes wakes the wait at once), with a poll
    every ``poll_interval`` as a safety net (discovery may publish a moment after the event); polling only
    otherwise, each poll
    going through the mapper, whose miss revalidation is rate-limited (``miss_refresh_interval``), so many
    waiters cost at most one discovery request per interval.

    Args:
        mapper: the mapper to ask.
        group_kind_or_arg: a GroupKind (looked up with ``rest_mapping``) or a user string (``resolve``).
        timeout: seconds to wait in total; 0 tries once.
        watcher: a running watcher (:class:`restmapper.watch.Watcher`) to be woken by, or None.
        poll_interval: seconds between polls without a (healthy) watcher.
        clock: monotonic clock in seconds.
        sleep: ``sleep(seconds)`` between polls (tests inject a fake); None waits on an event.
        caller: the call the user made, named in argument errors (``"wait_for"`` from ``mapper.wait_for``).

    Returns:
        The RESTMapping.

    Raises:
        WaitTimeoutError: (a ``TimeoutError`` and a ``RestMapperError``) the kind was not served by the deadline;
            it chains the last NoKindMatchError/NoResourceMatchError/GroupDiscoveryError.
        AmbiguousKindError, AmbiguousResourceError: the lookup is ambiguous (waiting will not fix it).
        DiscoveryError, TransportError: a permanent discovery failure (403, malformed document).
        InvalidArgumentError: a negative timeout or a non-positive poll interval, or either NaN or infinite.
        TypeError: either is not a number.

    Mirrors ``kubectl wait --for=condition=Established`` followed by a mapper reset, without the reset: the
    mapper's invalidation and miss revalidation find the new kind.
    """
    check_seconds(caller, "timeout", timeout, positive=False)
    check_seconds(caller, "poll_interval", poll_interval)
    deadline = clock() + timeout
    last: RestMapperError | None = None
    idle = threading.Event()
    while True:
        seen = watcher.change_count if watcher is not None else 0
        try:
            if isinstance(group_kind_or_arg, GroupKind):
                return mapper.rest_mapping(group_kind_or_arg)
            return mapper.resolve(group_kind_or_arg)
        except RestMapperError as exc:
            if not is_retryable_wait_error(exc):
                raise
            last = exc
        remaining = deadline - clock()
        if remaining <= 0:
            raise WaitTimeoutError(group_kind_or_arg, timeout, last) from last
        if watcher is not None and watcher.watching(CRD_KIND):
            watcher.wait_for_change(seen, min(remaining, poll_interval))
        elif sleep is not None:
            sleep(min(remaining, poll_interval))
        else:
            idle.wait(min(remaining, poll_interval))
