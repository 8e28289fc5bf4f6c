"""``restmapper.transport.Cancellation``: another thread cuts the requests made under it, at once and without a
retry, whether the request waits for its answer or reads a trickled body; later requests under it fail at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from helpers.kit import ServerPause
from helpers.kit import pause as pause  # a fixture, used by name

from restmapper.errors import TransportError
from restmapper.testing import FakeCluster, ServedCluster
from restmapper.transport import Cancellation, RequestsTransport, RetryPolicy

PATH = "/api/v1/namespaces"


@pytest.fixture
def served(pause: ServerPause) -> Iterator[ServedCluster]:
    with FakeCluster(sleep=pause).serve() as s:
        yield s


def _get_in_thread(transport: RequestsTransport, cancellation: Cancellation) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def run() -> None:
        with cancellation:
            try:
                outcome.append(transport.get(PATH))
            except TransportError as exc:
                outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("fault", ["no answer", "trickled body"])
def test_cancel_cuts_the_request_in_flight_without_retry(served: ServedCluster, pause: ServerPause,
                                                        fault: str) -> None:
    served.cluster.inject(PATH, latency=0.001, trickle=0.5 if fault == "trickled body" else 0.0)
    transport = RequestsTransport(served.url, retry=RetryPolicy(max_attempts=3))
    cancellation = Cancellation()
    thread, outcome = _get_in_thread(transport, cancellation)
    assert pause.entered.wait(10)
    if fault == "trickled body":
        pause.release.set()
    started = time.monotonic()
    cancellation.cancel()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 2
    [error] = outcome
    assert isinstance(error, TransportError) and not error.transient and "cancelled" in str(error)
    assert served.cluster.request_count(PATH) == 1  # not retried
    pause.release.set()
    thread, outcome = _get_in_thread(transport, cancellation)  # a later request under it fails at once
    thread.join(10)
    assert isinstance(outcome[0], TransportError) and served.cluster.request_count(PATH) <= 2
    transport.close()


def test_requests_outside_a_cancellation_are_not_cut(served: ServedCluster, pause: ServerPause) -> None:
    pause.release.set()
    Cancellation().cancel()
    transport = RequestsTransport(served.url)
    assert transport.get(PATH).status == 200
    transport.close()
