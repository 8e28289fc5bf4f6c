"""Helpers shared by the testing-kit tests."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator

import pytest


def wait_until(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass; return whether it became true.

    Bounded polling of state that another thread or process changes (a watch stream, an operator): a safety net
    with a generous timeout, never a sleep standing in for synchronisation.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class ServerPause:
    """The kit's injected ``sleep`` (``FakeCluster(sleep=...)``): a request with ``latency`` signals ``entered``
    and then waits for ``release`` (60 s at most), so a test holds a request in flight for as long as it needs."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, seconds: float) -> None:
        self.entered.set()
        self.release.wait(60)


@pytest.fixture
def pause() -> Iterator[ServerPause]:
    """A :class:`ServerPause` for ``FakeCluster(sleep=...)``, released after the test so no request stays held."""
    gate = ServerPause()
    yield gate
    gate.release.set()


@pytest.fixture
def kopf_registry() -> Iterator[None]:
    """A copy of kopf's default registry for the test (kopf's own login handlers included), the original restored
    after it.

    ``kopf run`` imports the operator's module in the test's process, whose ``@kopf.on...`` decorators register
    into kopf's process-wide default registry: without this, one test's handlers (an example's ``on.startup``
    reading ``$KUBECONFIG``) run in every later ``KopfRunner`` of the session.
    """
    kopf = pytest.importorskip("kopf")
    saved = kopf.get_default_registry()
    kopf.set_default_registry(copy.deepcopy(saved))
    try:
        yield
    finally:
        kopf.set_default_registry(saved)
