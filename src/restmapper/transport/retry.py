"""Bounded retries of idempotent GETs, built on tenacity.

What is retried mirrors client-go ``rest.Request``: connection errors and timeouts, ``429 Too Many Requests`` and
the 5xx statuses that mean "try again" (500, 502, 503, 504), waiting ``Retry-After`` when the server gives one and an
exponential, jittered backoff otherwise. Other 4xx answers are final. Retries are bounded both in count and in total
time; the last status answer is returned to the caller (a 503 from an aggregated API is an answer, not a failure).
"""

from __future__ import annotations

import email.utils
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import tenacity

from restmapper.errors import InvalidArgumentError, RequestTimeoutError, ResponseTooLargeError, TransportError
from restmapper.transport.base import Response

__all__ = ["DEFAULT_RETRY_STATUSES", "RetryPolicy", "check_seconds", "parse_retry_after", "run_with_retry"]

DEFAULT_RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504})
"""Statuses retried by default: rate limiting and the transient server-side errors."""

_log = logging.getLogger("restmapper.transport")


def check_seconds(method: str, arg: str, value: object, *, optional: bool = False, positive: bool = True) -> None:
    """Check a duration option: a finite real number of seconds (int or float, never a bool), positive (or, with
    ``positive=False``, non-negative); None too when ``optional``. The one check of every seconds option of the
    library (object cache, watcher, reflector), made before anything starts: NaN or infinity would otherwise make
    a wait that never ends or a loop that never waits.

    Args:
        method: the call, for the message (``"ObjectCache"``).
        arg: the argument's name, for the message.
        value: what was passed.
        optional: None is allowed (the option is off).
        positive: 0 is refused (0 is allowed when False).

    Raises:
        TypeError: ``value`` is not an int or float (a bool or a string too).
        InvalidArgumentError: NaN, infinite, negative, or 0 when ``positive``.
    """
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{method}() takes {arg} as a number of seconds{' or None' if optional else ''}, "
                        f"not {_type_name(value)}")
    _check_seconds_range(method, arg, value, positive=positive)


def _check_seconds_range(method: str, arg: str, value: float, *, positive: bool) -> None:
    """Raise InvalidArgumentError when ``value`` is NaN, infinite, negative, or 0 when ``positive``."""
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise InvalidArgumentError(f"{method}() takes {arg} as a finite number of seconds {bound}, got {value!r}")

def _type_name(value: object) -> str:
    """The name of ``value``'s type for a message ("None" for None)."""
    return "None" if value is None else type(value).__name__


_NOT_PROCESSED = frozenset({429})
"""Statuses that say the server did nothing with the request: the only ones after which a write is resent."""


_MAX_DOUBLINGS = 64
"""Doublings past which the exponential backoff is at its cap for any sane ``initial``/``max`` pair."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a transport retries one GET.

    Attributes:
        max_attempts: total attempts, the first included (1 disables retries).
        max_total_seconds: bound on the time spent from the first attempt to the start of the last one, seconds;
            a wait (backoff or ``Retry-After``) is cut to what remains of it.
        initial_backoff: wait before the second attempt, seconds; doubled for each later attempt.
        max_backoff: cap of one backoff wait, seconds (``Retry-After`` is capped by the total time only).
        jitter: extra random fraction of each backoff wait (0.1 adds up to 10 %), so that clients that failed
            together do not retry together.
        retry_statuses: HTTP statuses that are retried; other statuses are returned at once. Discovery of an
            aggregated API may pass ``frozenset({429})`` so that a 503 from a down APIService is seen at once.
        sleep: called with seconds to wait (inject a recorder in tests).
        clock: monotonic clock in seconds, for the total-time bound.
        wall_clock: Unix time in seconds, for ``Retry-After`` given as an HTTP-date without a ``Date`` header.
        random: returns a float in [0, 1), for jitter.

    Mirrors client-go's ``rest.Request`` retry (``WithRetry``, ``checkWait``) with a ``wait.Backoff`` shape.
    """

    max_attempts: int = 4
    max_total_seconds: float = 30.0
    initial_backoff: float = 0.2
    max_backoff: float = 5.0
    jitter: float = 0.1
    retry_statuses: frozenset[int] = DEFAULT_RETRY_STATUSES
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    wall_clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InvalidArgumentError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("max_total_seconds", "initial_backoff", "max_backoff", "jitter"):
            if getattr(self, name) < 0:
                raise InvalidArgumentError(f"{name} must not be negative, got {getattr(self, name)}")
        object.__setattr__(self, "retry_statuses", frozenset(self.retry_statuses))

    @classmethod
    def no_retry(cls) -> RetryPolicy:
        """Return a policy that makes exactly one attempt."""
        return cls(max_attempts=1)

    def backoff(self, failed_attempts: int) -> float:
        """Return the wait in seconds after ``failed_attempts`` (>= 1) failures, jitter included.

        Exponential from ``initial_backoff``, capped at ``max_backoff`` however many failures were counted (the
        exponent is bounded first: a group down for days must not overflow the float).
        """
        doublings = min(max(0, failed_attempts - 1), _MAX_DOUBLINGS)
        base = min(self.max_backoff, self.initial_backoff * (2.0 ** doublings))
        return base * (1.0 + self.jitter * self.random())


def parse_retry_after(value: str | None, *, date: str | None = None, now: float | None = None) -> float | None:
    """Return the wait a ``Retry-After`` header asks for, in seconds, or None when absent or unparseable.

    Args:
        value: the header value: delta-seconds (``"3"``) or an HTTP-date (``"Wed, 21 Oct 2015 07:28:00 GMT"``).
        date: the response's ``Date`` header; an HTTP-date is measured against it when present, which keeps
            client clock skew out of the wait.
        now: Unix time in seconds used when ``date`` is absent (defaults to ``time.time()``).

    Returns:
        Seconds to wait, never negative.

    As RFC 9110 section 10.2.3; client-go reads only the seconds form, servers behind proxies send both.
    """
    text = (value or "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        return _seconds_until(text, date, now)
    return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None


def _seconds_until(http_date: str, date: str | None, now: float | None) -> float | None:
    """Seconds from the response's ``date`` (else ``now``, else ``time.time()``) to ``http_date``, never
    negative; None when ``http_date`` is not an HTTP-date."""
    target = _http_date(http_date)
    if target is None:
        return None
    ref = _http_date(date) if date else None
    if ref is None:
        ref = time.time() if now is None else now
    return max(0.0, target - ref)


def _http_date(text: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None


def _is_retryable_error(exc: BaseException) -> bool:
    return isinstance(exc, TransportError) and exc.transient and not isinstance(exc, ResponseTooLargeError)


def run_with_retry(policy: RetryPolicy, attempt: Callable[[], Response], *, path: str,
                   method: str = "GET") -> Response:
    """Call ``attempt`` until it gives a final answer or the policy is exhausted, and return that answer.

    A request that is not a GET (a write) is retried only after a ``429 Too Many Requests``, which the server
    sends before it processes anything; a connection error, a timeout or a 5xx may come after the write was
    applied, so they are final, as in client-go ``rest.Request`` (which resends a non-GET only on a
    ``Retry-After`` answer).

    Args:
        policy: the retry policy.
        attempt: makes one request; returns the Response or raises TransportError.
        path: the request path, for log lines and messages.
        method: the HTTP method (``GET`` is retried per ``policy``; any other only after a 429).

    Returns:
        The first Response whose status is not in ``policy.retry_statuses``, or the last Response when the
        attempts or the time ran out.

    Raises:
        TransportError: the last attempt failed without an answer (``transient`` kept from the cause); errors
            that are not transient (TLS, size cap, bad URL) are raised at once.
    """
    start = policy.clock()
    # tenacity asks "stop?" and "how long to wait?" separately and in an order that changed across versions;
    # both answers come from one plan per attempt so that they cannot disagree.
    plans: dict[int, float | None] = {}

    def plan(state: tenacity.RetryCallState) -> float | None:
        number = state.attempt_number
        if number in plans:
            return plans[number]
        remaining = policy.max_total_seconds - (policy.clock() - start)
        wait: float | None
        if number >= policy.max_attempts or remaining <= 0:
            wait = None
        else:
            wait = policy.backoff(number)
            why = "error"
            outcome = state.outcome
            if outcome is not None and not outcome.failed:
                response: Response = outcome.result()
                why = f"HTTP {response.status}"
                retry_after = parse_retry_after(response.header("Retry-After"), date=response.header("Date"),
                                                now=policy.wall_clock())
                if retry_after is not None:
                    wait = retry_after
            elif outcome is not None:
                why = str(outcome.exception())
            wait = min(wait, remaining)
            _log.info("retrying %s %s after %s (attempt %d of %d) in %.2fs", method, path, why, number + 1,
                      policy.max_attempts, wait)
        plans[number] = wait
        return wait

    def give_up(state: tenacity.RetryCallState) -> Response:
        outcome = state.outcome
        assert outcome is not None
        if outcome.failed:
            exc = outcome.exception()
            if isinstance(exc, TransportError) and state.attempt_number > 1:
                message = f"{exc} (gave up after {state.attempt_number} attempts)"
                final: TransportError
                if isinstance(exc, RequestTimeoutError):
                    # Still a timeout for ``except TimeoutError`` after the retries.
                    final = RequestTimeoutError(exc.path, exc.timeout, exc.method)
                    final.args = (message,)
                else:
                    final = TransportError(message, path=exc.path, transient=exc.transient)
                raise final from exc
        result: Response = outcome.result()
        return result

    idempotent = method == "GET"
    statuses = policy.retry_statuses if idempotent else policy.retry_statuses & _NOT_PROCESSED
    retrying = tenacity.Retrying(
        sleep=policy.sleep,
        stop=lambda state: plan(state) is None,
        wait=lambda state: plan(state) or 0.0,
        retry=(tenacity.retry_if_exception(lambda exc: idempotent and _is_retryable_error(exc))
               | tenacity.retry_if_result(lambda r: r.status in statuses)),
        retry_error_callback=give_up,
        reraise=True,
    )
    result: Response = retrying(attempt)
    return result
