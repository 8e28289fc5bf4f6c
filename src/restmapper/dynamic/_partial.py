"""What ``resources.search`` and ``resources.get`` answer when some group versions in scope could not be read
(DESIGN 5.10), by the mapper's rule (:func:`restmapper.mapper.outranking`).

Upstream's ``search`` returns a plain list and code written against it reads ``[]`` as "not installed" and takes
``results[0]`` as the answer; its ``get`` returns the one match. So an answer is only returned when neither
reading can be wrong: an empty answer (a no-match) needs every group version that could hold a match to have been
read; the core group is answered by core only; and no unreadable group version may rank above the (first)
result in client-go's discovery priority. Otherwise :class:`~restmapper.errors.GroupDiscoveryError` is raised.
An answer with failures ranked below it is given with a :class:`~restmapper.errors.PartialDiscoveryWarning`
carrying them (``failed``), as ``LazyRESTMapper.resolve`` and kubectl do (a search's list carries them too, as
:class:`SearchResults`): ``get(kind="Deployment")`` answers ``apps/v1`` while a lower-ranked
``cert-manager.io/v1`` is down, although that group could serve a second ``Deployment`` kind (upstream would then
say "not unique").

The asyncio drop-ins run the lookup in a worker thread; :func:`deferring_warnings` collects its warnings there so
that :func:`emit_deferred` emits them on the event loop, at the caller's line.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any, overload

from restmapper._public import caller_stacklevel
from restmapper.errors import GroupDiscoveryError, PartialDiscoveryWarning
from restmapper.mapper.resolve import PartialList, partial_message
from restmapper.model import GroupVersion

__all__ = ["SearchResults", "deferring_warnings", "emit_deferred", "judge_partial", "search_answer"]

_deferred = threading.local()  # .sink: the warnings list of the asyncio call running in this thread, if any


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


def judge_partial(results: list[Any], failures: Mapping[GroupVersion, BaseException], asked: str,
                  check_rank: Callable[[Any], None], *, one: bool = False) -> None:
    """Let ``results`` stand while the group versions ``failures`` could not be read, warning; or refuse them.

    Args:
        results: the matches found, in discovery order (core first); one for a ``get``.
        failures: the unreadable group versions that could hold a match (not empty).
        asked: the question, for the error and the warning.
        check_rank: raises :class:`GroupDiscoveryError` when an unreadable group version ranks above its argument
            (the mapper's :func:`~restmapper.mapper.outranking`).
        one: the answer of a ``get`` (the warning says another match may exist, not that a list is incomplete).

    Raises:
        GroupDiscoveryError: ``results`` is empty (the no-match is not the server's word), the core group is in
            scope and failed (another group never answers for it), or a failure outranks ``results[0]``.
    """
    core = {gv: e for gv, e in failures.items() if not gv.group}
    if not results or core:
        ordered = {**core, **failures}
        raise GroupDiscoveryError(next(iter(ordered)).group, ordered, asked=asked)
    check_rank(results[0])
    if one:
        found = results[0]
        unread = ", ".join(f"{gv}: {err}" for gv, err in sorted(failures.items(), key=lambda kv: str(kv[0])))
        text = (f"{asked} was answered from {found.group_version}, but group versions ranked below it could not "
                f"be read and may serve another match (the answer would then not be unique): {unread}")
    else:
        text = partial_message(asked, failures)
    warning = PartialDiscoveryWarning(text, failed=failures)
    sink = getattr(_deferred, "sink", None)
    if sink is not None:
        sink.append(warning)
    else:
        warnings.warn(warning, stacklevel=caller_stacklevel())


def search_answer(results: list[Any], failures: Mapping[GroupVersion, BaseException], asked: str,
                  check_rank: Callable[[Any], None]) -> SearchResults:
    """The answer of a search that found ``results`` while the group versions ``failures`` could not be read.

    Returns:
        ``results`` as :class:`SearchResults` with ``failed``; a :class:`PartialDiscoveryWarning` is emitted.

    Raises:
        GroupDiscoveryError: as :func:`judge_partial`.
    """
    judge_partial(results, failures, asked, check_rank)
    return SearchResults(results, failures)


def deferring_warnings(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> tuple[Any, list[Warning]]:
    """Call ``fn(*args, **kwargs)`` in this thread (an asyncio front end's worker) and return its result with the
    partial-answer warnings it made, collected instead of emitted (see :func:`emit_deferred`)."""
    sink: list[Warning] = []
    _deferred.sink = sink
    try:
        return fn(*args, **kwargs), sink
    finally:
        _deferred.sink = None


def emit_deferred(made: list[Warning]) -> None:
    """Emit warnings collected by :func:`deferring_warnings`, at the first caller's line outside restmapper."""
    for warning in made:
        warnings.warn(warning, stacklevel=caller_stacklevel())
