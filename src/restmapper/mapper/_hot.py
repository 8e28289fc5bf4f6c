"""Final answers of warm questions, in front of the memo: :class:`HotAnswers` (issue 10, warm lookups).

A memo hit (:class:`~restmapper.mapper._memo.Remembered`) is checked on every call: the clock against its
``valid_until``, its epoch, whether it may come from any group while a reload is due. On a working set of
thousands of questions each object a hit touches costs a cache miss, and the checks touch the remembered answer,
its float and its value's own fields before the value is returned.

:class:`HotAnswers` holds, per question, nothing but the value a fresh memo hit returned, in one dictionary per
*stretch*: a stretch holds while no :class:`~restmapper.mapper.merged.Cell` moved (the class-wide
:attr:`Cell.epoch <restmapper.mapper.merged.Cell.epoch>`), the cache's generation did not move, and the clock is
before the earliest ``valid_until`` of the answers it holds. Those three checks read a few hot objects and are the
same for every question, so a hit touches the key and one dictionary slot. When a stretch ends, the next hit of
each question goes through the memo, which checks that answer's own cells (an answer about group B survives a
refresh of group A: nothing is computed again); the hit after that, finding it checked at the current epoch,
holds it in the new stretch (the first question after a change runs on memory the change left cold: it allocates
nothing here). So the layer changes no answer and no validity rule; it only skips re-checking answers while
nothing at all changed.

Only answers (never errors, never answers with warnings to emit) are held, at most ``limit`` per stretch: a
larger working set keeps the first ``limit`` questions hot and answers the rest through the memo (no clear-all
cliff). Thread-safe: readers take no lock (dictionary reads are atomic under the GIL; a reader that finds the
stretch over ignores it); a promotion takes the layer's lock, so a stretch's deadline is never later than an
answer it holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from restmapper.mapper.merged import Cell

__all__ = ["HotAnswers", "Stretch"]


class Stretch:
    """Answers valid together: while :attr:`Cell.epoch` is ``epoch``, the cache's generation is ``generation``
    and the clock is before ``until`` (seconds).

    Attributes:
        epoch: the :attr:`Cell.epoch` every answer held was last found current at.
        generation: the cache generation (applied to the indexes) the answers were found at.
        until: the earliest ``valid_until`` of the answers held (clock seconds).
        answers: question key -> value (the memo's key space; never None).
        resolved: ``resolve`` argument -> its RESTMapping.
        categories: ``expand_category`` name -> its members (a tuple: the caller copies it into a new list).
    """

    __slots__ = ("answers", "categories", "epoch", "generation", "gvk", "resolved", "short", "until")

    def __init__(self, epoch: int, generation: int) -> None:
        self.epoch = epoch
        self.generation = generation
        self.until = float("inf")
        self.answers: dict[Any, Any] = {}
        self.resolved: dict[str, Any] = {}
        # Its own small table, keyed by the name: a category hit reads no key tuple and no slot of the large
        # ``answers`` table (on a working set of thousands of questions, each costs a cache miss).
        self.categories: dict[str, Any] = {}
        # The drop-in's ``get(short_names=[name])`` -> its Resource, keyed by the name (no key tuple to compare).
        self.short: dict[Any, Any] = {}
        # The drop-in's ``get(api_version=..., kind=...)`` (strings, either order) -> its Resource.
        self.gvk: dict[tuple[str, str], Any] = {}


_OVER = Stretch(-1, -1)
_OVER.until = float("-inf")  # the stretch before the first promotion: never current


class HotAnswers:
    """The current :class:`Stretch` of a memo's answers, and how answers enter it (see the module docstring).

    Attributes:
        stretch: the current stretch (readers check ``stretch.epoch == Cell.epoch``, ``stretch.generation ==
            cache.generation`` and ``clock() < stretch.until`` before reading it).
        limit: at most this many answers per dictionary of a stretch.
    """

    __slots__ = ("_lock", "limit", "stretch")

    def __init__(self, limit: int) -> None:
        self.stretch = _OVER
        self.limit = limit
        self._lock = threading.Lock()

    def held(self, table: str, key: Any, generation: int, clock: Callable[[], float]) -> Any:
        """The answer held for ``key`` in ``table`` (``"answers"``, ``"resolved"`` or ``"categories"``) if the
        stretch is current for the cache ``generation`` at ``clock()``, else None (also for an unhashable key). The
        hottest readers (``rest_mapping``, ``resolve``, ``expand_category``, ``_answer``, the drop-in's
        ``get``/``search``) inline this check."""
        stretch = self.stretch
        if stretch.epoch == Cell.epoch and stretch.generation == generation and clock() < stretch.until:
            try:
                return getattr(stretch, table).get(key)
            except TypeError:  # unhashable: never held
                return None
        return None

    def promote(self, table: str, key: Any, value: Any, checked: int, valid_until: float,
                clock: Callable[[], float], generation: int, applied: int) -> None:
        """Hold ``value`` for ``key`` after a fresh memo hit (the memo's rules held just now).

        Args:
            table: ``"answers"``, ``"resolved"`` or ``"categories"`` (the dictionary of the stretch).
            key: the question's key in that table.
            value: the answer the hit returned (None is never held).
            checked: the :attr:`Cell.epoch` the answer's cells were found current at (``Remembered.checked``).
            valid_until: the answer's deadline (clock seconds).
            clock: the clock (read under the layer's lock: no reader of the stretch sees a deadline already past).
            generation: the cache's generation, read after the hit.
            applied: the generation the mapper's indexes were brought up to (the hit was checked against it).

        An answer found current at an epoch that has moved since, or while the cache has changes not applied, is
        not held (its next hit checks it again).
        """
        if value is None or generation != applied:
            return
        with self._lock:
            if Cell.epoch != checked:
                return  # a cell moved since the hit checked: the next hit checks again
            now = clock()
            if now >= valid_until:
                return
            stretch = self.stretch
            if stretch.epoch != checked or stretch.generation != generation or now >= stretch.until:
                stretch = self.stretch = Stretch(checked, generation)
            held: dict[Any, Any] = getattr(stretch, table)
            if key not in held and len(held) >= self.limit:
                return
            if valid_until < stretch.until:
                stretch.until = valid_until  # before the answer is readable: never held past its deadline
            held[key] = value
