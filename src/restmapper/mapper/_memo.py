"""The answer memo of the mapper (and of layers over its cells, the dynamic drop-in): :class:`Remembered` answers
in a bounded :class:`Memo`.

Each answer records the cells it read (:data:`~restmapper.mapper.merged.Dependencies`): it is reused while none of
them moved, so refreshing one group invalidates only answers that read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from restmapper.mapper.merged import Cell, Dependencies

__all__ = ["Memo", "Remembered"]


@dataclass(slots=True)  # only ``checked`` changes once built; not frozen: a frozen __init__ costs 2x
class Remembered:
    """A memoized answer: the value or the error, until when (clock seconds), the cells it read (``deps``, and
    ``cell``), whether it may come from any group (then it is reused only once every group is loaded after an
    invalidation), and the epoch of the mapper's index (:attr:`MergedIndex.epoch
    <restmapper.mapper.merged.MergedIndex.epoch>`) at which its cells were last found unchanged.

    While the epoch has not moved since ``checked`` no cell moved at all, so a hit touches no cell (on a large
    working set, each object a hit touches costs a cache miss); after any cell moved, :meth:`current` checks
    this answer's own cells once: an answer about group B survives a refresh of group A.
    """

    value: Any
    error: BaseException | None
    valid_until: float
    deps: Dependencies
    anywhere: bool = False
    checked: int = -1
    # One more cell read and the version seen, held flat: an answer about one group (most of them) keeps its
    # only cell here with ``deps`` empty, so a check after a refresh elsewhere touches no tuple.
    cell: Cell | None = None
    version: int = 0

    def reads(self) -> Dependencies:
        """Every cell this answer read, with the version it saw (``deps`` and ``cell``)."""
        return self.deps if self.cell is None else ((self.cell, self.version), *self.deps)

    def current(self, epoch: int) -> bool:
        """True if none of the cells this answer read moved (the clock is the caller's to check); ``epoch`` is the
        index's epoch, read before this call (a cell that moves after that read moves the epoch again)."""
        if self.checked == epoch:
            return True
        cell = self.cell
        if cell is not None and cell.version != self.version:
            return False
        for cell, version in self.deps:
            if cell.version != version:
                return False
        self.checked = epoch
        return True


class Memo(dict[Any, Remembered]):
    """A bounded memo without a clear-all cliff: two generations of at most ``limit`` entries each.

    The memo itself (a dictionary) is the young generation: new answers go there; when it is full its entries
    become the old generation (the previous old one is dropped), and a hit in the old generation moves the answer
    back to the young one. So answers in use survive, a working set up to ``limit`` questions always hits, and a
    hit in the young generation is one ``dict.get`` in C. Measured against ``cachetools.LRUCache`` (a Python-level
    ``__getitem__`` plus a move-to-end per hit) on this path: LRU hits cost about 2.5x a plain dictionary hit.
    """

    __slots__ = ("_old", "limit")

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self._old: dict[Any, Remembered] = {}

    def recall(self, key: Any) -> Remembered | None:
        """The answer remembered for ``key``, in either generation, or None (``dict.get`` reads the young one)."""
        found = dict.get(self, key)
        if found is None:
            found = self._old.get(key)
            if found is not None:
                self.put(key, found)
        return found

    get = recall  # type: ignore[assignment]  # both generations for callers that say ``get``

    def put(self, key: Any, value: Remembered) -> None:
        """Remember ``value`` for ``key``."""
        if len(self) >= self.limit and key not in self:
            self._old = dict(self)
            self.clear()
        self[key] = value

    def total(self) -> int:
        """Answers held in both generations."""
        return len(self) + len(self._old)
