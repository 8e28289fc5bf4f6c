"""A tiny path router for the fake cluster: patterns of literal and ``{name}`` segments, first match wins.

A trailing ``{name*}`` segment captures the rest of the path (possibly several segments), so resource endpoints
(``/apis/{group}/{version}/{rest*}``) can be added without touching the discovery routes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol


class StreamBody(Protocol):
    """A reply body produced over time (a watch): streamed by the loopback server, collected by the mock."""

    def stream(self, should_stop: Callable[[], bool]) -> Iterator[bytes]:
        """Yield chunks as they become available until the stream ends or ``should_stop()`` is true."""
        ...

    def collect(self) -> bytes:
        """Return what is available now (without blocking for new data, see the watch docs) as one body."""
        ...


Reply = tuple[int, dict[str, str], "bytes | StreamBody"]


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request as the router sees it (header names are matched case-insensitively)."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes = b""
    _lower: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._lower.update({k.lower(): v for k, v in self.headers.items()})

    def header(self, name: str) -> str | None:
        """Return the value of header ``name`` (any case) or None."""
        return self._lower.get(name.lower())


Handler = Callable[[Request, dict[str, str]], Reply]


@dataclass(frozen=True, slots=True)
class Route:
    """A pattern, the methods it serves (empty = all) and its handler."""

    segments: tuple[str, ...]
    methods: frozenset[str]
    handler: Handler

    def match(self, parts: list[str]) -> dict[str, str] | None:
        """Return the captured parameters when ``parts`` matches this route, else None."""
        params: dict[str, str] = {}
        for i, seg in enumerate(self.segments):
            if i >= len(parts):
                return None
            if seg.startswith("{") and seg.endswith("*}"):
                params[seg[1:-2]] = "/".join(parts[i:])
                return params
            if not _match_segment(seg, parts[i], params):
                return None
        return params if len(parts) == len(self.segments) else None


def _match_segment(seg: str, part: str, params: dict[str, str]) -> bool:
    """Whether path segment ``part`` matches pattern segment ``seg``: the same literal, or any non-empty segment
    for ``{name}`` (captured into ``params``)."""
    if not (seg.startswith("{") and seg.endswith("}")):
        return seg == part
    params[seg[1:-1]] = part
    return bool(part)


class Router:
    """Routes requests to handlers; unmatched paths go to ``fallback``, matched paths with another method to
    ``wrong_method``."""

    def __init__(self, fallback: Callable[[Request], Reply], wrong_method: Callable[[Request], Reply]) -> None:
        self._routes: list[Route] = []
        self._fallback = fallback
        self._wrong_method = wrong_method

    def add(self, pattern: str, handler: Handler, methods: tuple[str, ...] = ("GET",)) -> None:
        """Register ``handler`` for ``pattern`` (``/apis/{group}/{version}``) and ``methods`` (empty = any)."""
        segments = tuple(pattern.strip("/").split("/")) if pattern.strip("/") else ()
        self._routes.append(Route(segments, frozenset(m.upper() for m in methods), handler))

    def dispatch(self, request: Request) -> Reply:
        """Return the reply of the first route matching the request's path and method."""
        stripped = request.path.strip("/")
        parts = stripped.split("/") if stripped else []
        path_matched = False
        for route in self._routes:
            params = route.match(parts)
            if params is None:
                continue
            if route.methods and request.method.upper() not in route.methods:
                path_matched = True
                continue
            return route.handler(request, params)
        if path_matched:
            return self._wrong_method(request)
        return self._fallback(request)
