"""Single-flight: concurrent callers of the same key share one call (Go's ``singleflight``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["SingleFlight"]

T = TypeVar("T")


class _Call:
    __slots__ = ("done", "error", "result", "waiters")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.waiters = 0  # callers sharing the leader's call


class SingleFlight:
    """Concurrent callers of the same key share one call (Go's ``singleflight``).

    Every caller gets the leader's result or the very same exception object: whatever records a failure must
    do so in the leader's ``fn`` (or per fetch), never once per caller.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _calls only
        self._calls: dict[Hashable, _Call] = {}

    def waiting(self, match: Callable[[Hashable], bool] | None = None) -> int:
        """How many callers are waiting for a call in flight (of a key ``match`` accepts; None: any key): lets
        tests join threads deterministically."""
        with self._lock:
            return sum(call.waiters for key, call in self._calls.items() if match is None or match(key))

    def do(self, key: Hashable, fn: Callable[[], T]) -> T:
        with self._lock:
            call = self._calls.get(key)
            leader = call is None
            if call is None:
                call = self._calls[key] = _Call()
            else:
                call.waiters += 1
        if not leader:
            call.done.wait()
            if call.error is not None:
                raise call.error
            result: T = call.result
            return result
        try:
            call.result = fn()
            return call.result  # type: ignore[no-any-return]
        except BaseException as exc:
            call.error = exc
            raise
        finally:
            with self._lock:
                del self._calls[key]
            call.done.set()
