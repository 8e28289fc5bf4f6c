"""What ``resources.search`` answers when some group versions in scope could not be read (DESIGN 5.10).

Upstream's ``search`` returns a plain list and code written against it reads ``[]`` as "not installed" and takes
``results[0]`` as the answer. So an answer is only returned when neither reading can be wrong: an empty answer
(a no-match) needs every group version that could hold a match to have been read; the core group is answered
by core only; and no unreadable group version may rank above the first result. Otherwise
:class:`~restmapper.errors.GroupDiscoveryError` is raised. A non-empty answer with failures ranked below its
first result is returned as :class:`SearchResults` (``partial``/``failed``) with a
:class:`~restmapper.errors.PartialDiscoveryWarning`, as ``LazyRESTMapper.resolve_all`` and kubectl do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any, overload

from restmapper.errors import GroupDiscoveryError, PartialDiscoveryWarning
from restmapper.mapper.resolve import PartialList, partial_message
from restmapper.model import GroupVersion

__all__ = ["SearchResults", "search_answer"]


class _NoneFailed:
    """``failed`` of a :class:`SearchResults` made without ``__init__`` (a memoized, complete answer): an empty
    dict, the instance's own from its first read on (``__init__`` sets one in the instance, which wins)."""

    @overload
    def __get__(self, obj: None, owner: Any = None) -> _NoneFailed: ...

    @overload
    def __get__(self, obj: SearchResults, owner: Any = None) -> dict[GroupVersion, BaseException]: ...

    def __get__(self, obj: SearchResults | None, owner: Any = None) -> Any:
        if obj is None:
            return self
        failed: dict[GroupVersion, BaseException] = {}
        obj.__dict__["failed"] = failed
        return failed


class SearchResults(PartialList[Any]):
    """The ``Resource`` objects of ``resources.search``: a list, plus whether it may be incomplete (``failed``,
    ``partial``: see :class:`restmapper.mapper.resolve.PartialList`)."""

    failed = _NoneFailed()  # an instance's own dict once read or set


def search_answer(results: list[Any], failures: Mapping[GroupVersion, BaseException], asked: str,
                  check_rank: Callable[[Any], None]) -> SearchResults:
    """The answer of a search that found ``results`` while the group versions ``failures`` could not be read.

    Args:
        results: the matches found, in discovery order (core first).
        failures: the unreadable group versions that could hold a match (not empty).
        asked: the question, for the error and the warning.
        check_rank: raises :class:`GroupDiscoveryError` when an unreadable group version ranks above its argument.

    Returns:
        ``results`` as :class:`SearchResults` with ``failed``; a :class:`PartialDiscoveryWarning` is emitted.

    Raises:
        GroupDiscoveryError: ``results`` is empty (the no-match is not the server's word), the core group is in
            scope and failed (another group never answers for it), or a failure outranks ``results[0]``.
    """
    core = {gv: e for gv, e in failures.items() if not gv.group}
    if not results or core:
        ordered = {**core, **failures}
        raise GroupDiscoveryError(next(iter(ordered)).group, ordered, asked=asked)
    check_rank(results[0])
    warnings.warn(partial_message(asked, failures), PartialDiscoveryWarning, stacklevel=4)
    return SearchResults(results, failures)
