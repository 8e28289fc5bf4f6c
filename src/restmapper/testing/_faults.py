"""Faults injected into the fake cluster's responses by :meth:`FakeCluster.inject`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from restmapper.testing import _documents as docs

if TYPE_CHECKING:
    from restmapper.testing.cluster import FakeCluster

__all__ = ["Fault"]


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
    _owner: FakeCluster | None = field(default=None, repr=False)

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
