"""Waiting for a kind to be served: :func:`wait_for` (apply a CRD, then its first custom resource, in one run)."""

from __future__ import annotations

import time
from collections.abc import Callable

from restmapper.errors import WaitTimeoutError
from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.mapper.wait import wait_for_mapping
from restmapper.model import GroupKind, RESTMapping
from restmapper.watch.watcher import Watcher

__all__ = ["WaitTimeoutError", "wait_for"]


def wait_for(
    mapper: LazyRESTMapper,
    group_kind_or_arg: GroupKind | str,
    timeout: float,
    *,
    watcher: Watcher | None = None,
    poll_interval: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
) -> RESTMapping:
    """Return the RESTMapping of a kind as soon as the server serves it (see ``wait_for_mapping``).

    Same as ``mapper.wait_for(...)``, with an explicit clock and sleep for tests.

    Args:
        mapper: the mapper to ask.
        group_kind_or_arg: a GroupKind (looked up with ``rest_mapping``) or what ``kubectl get ARG`` takes for one
            type (looked up with ``resolve``).
        timeout: seconds to wait in total; 0 tries once.
        watcher: a running :class:`~restmapper.watch.Watcher` watching CRDs, to be woken at once by each group it
            invalidates; None polls only.
        poll_interval: seconds between polls (also the safety net with a watcher).
        clock: a monotonic clock in seconds (inject one in tests).
        sleep: ``sleep(seconds)`` between polls (tests inject a fake); None waits on an event.

    Returns:
        The RESTMapping, once served.

    Raises:
        WaitTimeoutError: not served by the deadline (chains the last lookup error).
        AmbiguousKindError, AmbiguousResourceError, DiscoveryError, TransportError, InvalidArgumentError: as
            :func:`~restmapper.mapper.wait.wait_for_mapping`.
    """
    return wait_for_mapping(mapper, group_kind_or_arg, timeout, watcher=watcher, poll_interval=poll_interval,
                            clock=clock, sleep=sleep, caller="wait_for")
