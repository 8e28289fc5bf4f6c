"""The drop-in's memo: an answer is reused while none of the mapper's cells it read moved (issue 10 item 2).

The cells are the :class:`~restmapper.mapper.LazyRESTMapper`'s own (:class:`~restmapper.mapper.merged.Cell`): one
per group, one per merged-index key and the shared cells of absent names, the group listing, the troubled
groups, and the marker of an answer that may come from any group. So refreshing group B never recomputes an answer
that only read group A, and an answer from any group is checked as the mapper checks its own (every group loaded
again after an invalidation; a group turning unreadable moves the troubled cell).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from restmapper.cache import GroupEntry
from restmapper.mapper import LazyRESTMapper
from restmapper.mapper._groups import ANYWHERE
from restmapper.mapper._memo import Memo, Remembered
from restmapper.mapper.merged import Cell

__all__ = ["LISTED", "LIST_TAG", "MEMO_LIMIT", "Deps", "depend_on_read", "memo_key", "recall", "remember"]

MEMO_LIMIT = 1 << 14
"""Answers per memo generation (:class:`~restmapper.mapper._memo.Memo`: no clear-all cliff)."""

Deps = list[tuple[Cell, int]]
"""The cells an answer read so far, each with the version it saw."""

LIST_TAG = object()
"""Tags a list value in a memo key (a tuple value with the same items is another question)."""


LISTED = frozenset({"short_names", "categories", "verbs"})
"""The keywords that take lists: a call without them has no list value (else :func:`memo_key` tags it)."""


def memo_key(kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The memo key of a call's keywords: flat, the names then the values (one tuple to hash and compare, its
    items compared by identity for the caller's own strings), a list value as a tagged tuple
    (``short_names=["deploy"]`` is memoized too; a tuple value with the same items is another question); the one
    list of a call with one keyword as its tag then its items, in the key itself.

    A call without a keyword of :data:`LISTED` has the same key as ``(*kwargs, *kwargs.values())`` (the warm
    path builds it so) unless another keyword was given a list (then that key is unhashable: no hit)."""
    if len(kwargs) == 1:  # ``get(short_names=[...])``: no comprehension (a call of its own) on the warm path
        for name, value in kwargs.items():  # flat: one tuple to hash and compare
            return (name, LIST_TAG, *value) if value.__class__ is list else (name, value)
    return (*kwargs, *[(LIST_TAG, *v) if v.__class__ is list else v for v in kwargs.values()])


def recall(remembered: Callable[[Memo, Any], Remembered | None], memo: Memo, kwargs: dict[str, Any]
           ) -> tuple[Any, Remembered | None]:
    """``(key, the fresh answer ``memo`` holds for the keywords or None)`` (``remembered``: the mapper's check,
    ``LazyRESTMapper._fresh_in``); the key (:func:`memo_key`) is None for an unhashable value (no memo).

    Raises:
        DiscoveryError: reloading every group for an answer from any group failed (as the mapper's lookups).
    """
    key = memo_key(kwargs)
    try:
        return key, remembered(memo, key)
    except TypeError:  # an unhashable filter value
        return None, None


def remember(memo: Memo, key: Any, value: Any, error: BaseException | None, until: float, deps: Deps,
             epoch: int) -> None:
    """Memoize an answer (``value`` or ``error``) valid until clock reading ``until`` while ``deps`` hold.

    ``epoch``: :attr:`Cell.epoch <restmapper.mapper.merged.Cell.epoch>` read before the answer read any cell (a
    hit skips checking the cells while the epoch has not moved since).
    """
    read = dict.fromkeys(deps)
    anywhere = read.pop((ANYWHERE, 0), False) is None  # the marker is always recorded at version 0
    if (_MOVED, -1) in read:
        epoch = -1  # out of date already, though no cell may have moved: the first hit checks (and fails)
    if len(read) == 1:  # most answers read one cell: held flat (a check after a refresh elsewhere is cheaper)
        ((cell, version),) = read
        memo.put(key, Remembered(value, error, until, (), anywhere, epoch, cell, version))
    else:
        memo.put(key, Remembered(value, error, until, tuple(read), anywhere, epoch))


_MOVED = Cell()
"""Recorded at a version it never has: the answer read an entry that changed before its cells were recorded."""


def depend_on_read(mapper: LazyRESTMapper, names: Collection[str] | None, read: Iterable[GroupEntry],
                   deps: Deps) -> None:
    """Record the cells of the groups ``names`` (None: all) an answer just read from the cache as ``read``.

    The cells are recorded after the read (a read that loads a group moves its cell), so an entry that changed in
    between would go unnoticed: then the answer is recorded as already out of date (computed again next time).
    """
    mapper._depend_on(names, deps)
    cache = mapper.cache
    for entry in read:
        current = cache.entry(entry.name)
        if current is None or current.generation != entry.generation:
            deps.append((_MOVED, -1))
            return
