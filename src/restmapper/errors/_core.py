"""The exception hierarchy of restmapper, rooted at :class:`RestMapperError` (published by :mod:`restmapper.errors`).

Mapping errors mirror apimachinery ``pkg/api/meta/errors.go`` (messages included), so that code ported from
Go reads the same; :func:`is_no_match` and :func:`is_ambiguous` see through ``raise ... from`` and
``ExceptionGroup`` as ``meta.IsNoMatchError`` sees through ``%w``, but never through implicit chaining or a
discovery/transport error: "could not read" is never "not there". No error message ever carries a credential.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from restmapper.model import (
        GroupKind,
        GroupResource,
        GroupVersion,
        GroupVersionKind,
        GroupVersionResource,
    )



def remembered_suffix(age: float, lifetime: float) -> str:
    """What a no-match answered again without asking the server appends to its message: how old it is and how long
    misses are remembered (`` (as of 0.4 s ago; misses are cached for up to 1 s)``). One wording for the mapper's
    errors and the drop-in's ``ResourceNotFoundError``."""
    return f" (as of {age:.1f} s ago; misses are cached for up to {lifetime:g} s)"


def replayed_suffix(age: float, retry_in: float) -> str:
    """What a discovery failure answered again from the retry backoff, without a request, appends to its message:
    how old it is and when the next request is allowed
    (`` (failed 0.3 s ago, not asked again yet: the retry backoff allows the next request in 0.7 s)``)."""
    return (f" (failed {age:.1f} s ago, not asked again yet: the retry backoff allows the next request in "
            f"{retry_in:.1f} s)")


def _rebuild(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> BaseException:
    """Recreate an unpickled error without calling its ``__init__`` (whose signature is not ``*args``)."""
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class RestMapperError(Exception):
    """Base of every error raised by restmapper.

    Every subclass survives ``pickle`` (a lookup failing in a ``ProcessPoolExecutor`` worker reaches the parent
    with its message and fields), whatever its ``__init__`` signature: the fields are restored as they were.

    Attributes:
        replayed_age: for a discovery failure answered again from the cache's retry backoff (no request was
            sent), the seconds since the request that failed; None for a failure this call received (the message
            is then the server's answer as it came). A :class:`GroupDiscoveryError` holding replayed failures
            has the oldest one's age.
        retry_in: with ``replayed_age``, the seconds until the backoff allows the next request (0: now).
    """

    replayed_age: float | None = None
    retry_in: float | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))

    def original(self) -> RestMapperError:
        """The failure as received from the server: ``self``, or for a :meth:`replayed` copy the error it copies."""
        original = self.__dict__.get("_replay_of")
        return original if isinstance(original, RestMapperError) else self

    def replayed(self, age: float, retry_in: float) -> RestMapperError:
        """A copy of this failure answered again ``age`` seconds after it happened, without a request.

        Args:
            age: seconds since the request that failed.
            retry_in: seconds until the next request is allowed (negative values count as 0).

        Returns:
            The same type with the same fields (cause included), ``replayed_age`` and ``retry_in`` set, and the
            message followed by :func:`replayed_suffix` (``(failed 0.3 s ago, not asked again yet: ...)``). Called
            on a replayed copy, the copy is made from the original failure (one suffix, the new age).
        """
        original = self.original()  # a replay of a replay is made from the failure itself: never stacked
        retry_in = max(0.0, retry_in)
        copy = _rebuild(type(original), (f"{original}{replayed_suffix(age, retry_in)}",),
                        dict(original.__dict__, replayed_age=age, retry_in=retry_in, _replay_of=original))
        copy.__cause__, copy.__suppress_context__ = original.__cause__, original.__suppress_context__
        assert isinstance(copy, RestMapperError)
        return copy


class InvalidArgumentError(RestMapperError, ValueError):
    """A caller passed a value that cannot be parsed (e.g. ``a/b/c`` as a GroupVersion)."""


class ConfigError(RestMapperError):
    """A kubeconfig or client configuration cannot be used: missing file, unknown context, invalid content.

    The message names the file and the part at fault, never a credential.
    """


# --- transport -------------------------------------------------------------------------------------------


class TransportError(RestMapperError):
    """The request could not be completed: connection refused or reset, timeout, TLS failure, retries exhausted.

    Attributes:
        path: the request path (never the query string or any header).
        transient: True when retrying later may succeed (timeouts, connection errors).
    """

    def __init__(self, message: str, *, path: str = "", transient: bool = True) -> None:
        super().__init__(message)
        self.path = path
        self.transient = transient


class ResponseTooLargeError(TransportError):
    """The response body exceeded the configured size cap (bytes)."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(f"response from {path} exceeds the size limit of {limit} bytes", path=path,
                         transient=False)
        self.limit = limit


class RequestTimeoutError(TransportError, TimeoutError):
    """A request did not complete within its total deadline (headers and the whole body), however slowly the
    server kept sending; client-go's discovery client bounds each request to 32 s the same way.

    Attributes:
        timeout: the deadline that expired, seconds.
        method: the request's HTTP method.
    """

    def __init__(self, path: str, timeout: float, method: str = "GET") -> None:
        super().__init__(f"{method} {path}: no complete answer within the request deadline of {timeout:g}s",
                         path=path, transient=True)
        self.timeout = timeout
        self.method = method


class APIStatusError(TransportError):
    """The server answered with a non-success HTTP status.

    Attributes:
        status: the HTTP status code (404, 403, 503, ...).
        reason: a short, credential-free description (the ``Status.message`` or the first line of the body).
        retry_after: seconds from a ``Retry-After`` header, if any.
        server_status: the server's ``Status`` object (``{"kind": "Status", "code", "reason", "message",
            "details"}``, its strings scrubbed of credentials) when the body was one, else None.
    """

    server_status: Mapping[str, Any] | None = None

    def __init__(self, path: str, status: int, reason: str = "", *, retry_after: float | None = None,
                 server_status: Mapping[str, Any] | None = None) -> None:
        text = f"{path}: HTTP {status}"
        if reason:
            text += f": {reason}"
        super().__init__(text, path=path, transient=status == 429 or status >= 500)
        self.status = status
        self.reason = reason
        self.retry_after = retry_after
        if server_status is not None:
            self.server_status = server_status

    @property
    def not_found(self) -> bool:
        """True for 404 Not Found (the group version, or the whole group, is gone)."""
        return self.status == 404


class ForbiddenError(APIStatusError, PermissionError):
    """The server refused the request with 403 Forbidden: the credentials in use may not do it (RBAC).

    Not transient: asking again answers the same until someone grants the permission (``kubectl auth can-i``
    says which verb and resource are missing). A ``PermissionError``, as ``apierrors.IsForbidden`` reads it.

    Attributes:
        server_status: the server's ``Status`` object (``kind``, ``status``, ``message``, ``reason``,
            ``details``, ``code``), every string in it scrubbed of credentials; None when the body was not a
            Status (a proxy's text page).
    """

    def __init__(self, path: str, reason: str = "", *, retry_after: float | None = None,
                 server_status: Mapping[str, Any] | None = None) -> None:
        super().__init__(path, 403, reason, retry_after=retry_after)
        self.server_status = dict(server_status) if server_status is not None else None


# --- discovery -------------------------------------------------------------------------------------------


class DiscoveryError(RestMapperError):
    """Discovery failed, wholly or for some group versions.

    Attributes:
        failed: each group version that could not be discovered, with its cause. Empty when the failure is
            not tied to a group version (e.g. ``/apis`` itself failed).
        partial: what was discovered despite the failures (the shape depends on the raising call; e.g.
            ``server_groups_and_resources`` puts ``(groups, resources)`` here), or None.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        failed: Mapping[GroupVersion, BaseException] | None = None,
        partial: Any = None,
    ) -> None:
        self.failed: dict[GroupVersion, BaseException] = dict(failed or {})
        self.partial = partial
        if message is None:
            message = self.describe_failures(self.failed)
        super().__init__(message)

    @staticmethod
    def describe_failures(failed: Mapping[GroupVersion, BaseException]) -> str:
        """The message client-go prints for partial failures, group versions sorted.

        e.g. ``unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: HTTP 503``.
        """
        parts = [f"{gv}: {err}" for gv, err in sorted(failed.items(), key=lambda kv: str(kv[0]))]
        return "unable to retrieve the complete list of server APIs: " + ", ".join(parts)


class StaleGroupVersionError(DiscoveryError):
    """Aggregated discovery marked a group version ``Stale``: its backing API service is down."""

    def __init__(self, gv: GroupVersion) -> None:
        super().__init__(f"stale GroupVersion discovery: {gv}")
        self.group_version = gv


class GroupDiscoveryError(DiscoveryError):
    """A lookup could not be answered because discovery it needs failed; other groups may be fine.

    Never a no-match: :func:`is_no_match` is False for it, whatever it chains, because the server did not say
    the answer is absent, only that part of it could not be read.

    Attributes:
        group: the API group name of the first failed group version (``""`` for core).
        asked: what the lookup asked, as a phrase (``resource type "xyzzy"``, ``kind "Certificate" in group
            "cert-manager.io"``), or "" when raised outside a lookup.
        documents: root documents (``/api``, ``/apis``) that could not be read, with their causes; the group
            versions they list could not be checked. Core ``/api`` failures are also named as ``v1`` in
            ``failed``.
        hint: how to ask a question these failures do not block, or "" (ends the message).
    """

    def __init__(self, group: str, failed: Mapping[GroupVersion, BaseException], *, asked: str = "",
                 documents: Mapping[str, BaseException] | None = None, partial: Any = None, hint: str = "") -> None:
        docs = dict(documents or {})
        text = GroupDiscoveryError._failures_text(failed, docs)
        if asked:
            text = f"cannot tell whether the server has {asked}: {text}"
        if hint:
            text = f"{text}; {hint}"
        super().__init__(text, failed=failed, partial=partial)
        self.group = group
        self.asked = asked
        self.hint = hint
        self.documents = docs
        self._take_replay_ages((*self.failed.values(), *docs.values()))

    @staticmethod
    def _failures_text(failed: Mapping[GroupVersion, BaseException], documents: Mapping[str, BaseException]) -> str:
        """The failed group versions, then the root documents whose failure none of them already names."""
        text = DiscoveryError.describe_failures(failed) if failed else ""
        named = {id(err) for err in failed.values()}
        unnamed = {path: err for path, err in documents.items() if id(err) not in named}
        if not unnamed:
            return text
        listing = ", ".join(f"{path}: {err}" for path, err in sorted(unnamed.items()))
        return f"{text}; unable to retrieve {listing}" if text else f"unable to retrieve {listing}"

    def _take_replay_ages(self, causes: Iterable[BaseException]) -> None:
        """When some of ``causes`` are replays, set :attr:`replayed_age` to the oldest replay's age and
        :attr:`retry_in` to the soonest retry (seconds); else leave both as they are."""
        ages = [(e.replayed_age, e.retry_in or 0.0) for e in causes
                if isinstance(e, RestMapperError) and e.replayed_age is not None]
        if ages:
            self.replayed_age = max(age for age, _ in ages)
            self.retry_in = min(retry for _, retry in ages)

    def with_failures(self, failed: Mapping[GroupVersion, BaseException],
                      documents: Mapping[str, BaseException]) -> GroupDiscoveryError:
        """A copy of this error (same type, question, hint, partial and cause) naming ``failed`` and
        ``documents`` instead (the same failures, some told as replays: see :meth:`RestMapperError.replayed`)."""
        copy = type(self).__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.__dict__.pop("replayed_age", None)  # from the failures named now (below), not from this error's
        copy.__dict__.pop("retry_in", None)
        GroupDiscoveryError.__init__(copy, self.group, failed, asked=self.asked, documents=documents,
                                     partial=self.partial, hint=self.hint)
        copy.__cause__, copy.__suppress_context__ = self.__cause__, self.__suppress_context__
        return copy


class MalformedDiscoveryError(DiscoveryError):
    """A discovery document could not be parsed.

    Attributes:
        document: what was being parsed (a path such as ``/apis/apps/v1`` or a document kind).
        field: the JSON path of the offending field (``items[3].versions[0].resources``), or "" for the body.
        reason: what was wrong.
    """

    def __init__(self, document: str, field: str, reason: str) -> None:
        where = f"{document}: {field}" if field else document
        super().__init__(f"malformed discovery document {where}: {reason}")
        self.document = document
        self.field = field
        self.reason = reason


# --- mapping ---------------------------------------------------------------------------------------------


class MappingError(RestMapperError):
    """Base of the four REST-mapping errors.

    Attributes:
        remembered_age: for a no-match answered again from the mapper's memory of a recent miss (within
            ``miss_refresh_interval``), the seconds since the server was asked; None for a fresh answer (whose
            message is exactly upstream's).
    """

    remembered_age: float | None = None

    def remembered(self, age: float, lifetime: float) -> MappingError:
        """A copy of this error answered again ``age`` seconds after it was found, saying so in its message.

        Args:
            age: seconds since the miss was confirmed with the server.
            lifetime: seconds a miss is remembered (``miss_refresh_interval``).

        Returns:
            The same type with the same fields, ``remembered_age`` set and the message followed by
            ``(as of 0.4 s ago; misses are cached for up to 1 s)``.
        """
        copy = _rebuild(type(self), (f"{self}{remembered_suffix(age, lifetime)}",),
                        dict(self.__dict__, remembered_age=age))
        copy.__cause__, copy.__suppress_context__ = self.__cause__, self.__suppress_context__
        assert isinstance(copy, MappingError)
        return copy


class NoResourceMatchError(MappingError, LookupError):
    """No resource matched (``meta.NoResourceMatchError``); message ``no matches for <gvr>``."""

    def __init__(self, partial_resource: GroupVersionResource) -> None:
        super().__init__(f"no matches for {partial_resource}")
        self.partial_resource = partial_resource


class ResourceTypeNotFoundError(NoResourceMatchError):
    """No resource or kind matches the argument; message as kubectl's ``the server doesn't have a resource type``.

    Attributes:
        argument: what the user typed.
        partial_resource: the GroupResource reading of it (version empty).
    """

    def __init__(self, argument: str, group_resource: GroupResource) -> None:
        super().__init__(group_resource.with_version(""))
        self.argument = argument
        self.args = (f'the server doesn\'t have a resource type "{group_resource.resource}"',)


class NoKindMatchError(MappingError, LookupError):
    """No kind matched (``meta.NoKindMatchError``).

    The message is ``no matches for kind "Foo" in group "bar"`` without versions, ``... in version
    "bar/v1"`` with one, and ``... in versions ["bar/v1" "bar/v2"]`` with several, as apimachinery.
    """

    def __init__(self, group_kind: GroupKind, searched_versions: Sequence[str] = ()) -> None:
        self.group_kind = group_kind
        self.searched_versions = tuple(searched_versions)
        kind, group = group_kind.kind, group_kind.group
        gvs = sorted({f"{group}/{v}" if group else v for v in self.searched_versions})
        if not gvs:
            msg = f'no matches for kind "{kind}" in group "{group}"'
        elif len(gvs) == 1:
            msg = f'no matches for kind "{kind}" in version "{gvs[0]}"'
        else:
            msg = f'no matches for kind "{kind}" in versions [' + " ".join(f'"{g}"' for g in gvs) + "]"
        super().__init__(msg)


class AmbiguousResourceError(MappingError):
    """Several resources matched at the same priority (``meta.AmbiguousResourceError``)."""

    def __init__(
        self,
        partial_resource: GroupVersionResource,
        matching_resources: Iterable[GroupVersionResource] = (),
        matching_kinds: Iterable[GroupVersionKind] = (),
    ) -> None:
        self.partial_resource = partial_resource
        self.matching_resources = tuple(matching_resources)
        self.matching_kinds = tuple(matching_kinds)
        super().__init__(_ambiguous_message(str(partial_resource), self.matching_resources, self.matching_kinds))


class AmbiguousKindError(MappingError):
    """Several kinds matched at the same priority (``meta.AmbiguousKindError``)."""

    def __init__(
        self,
        partial_kind: GroupVersionKind,
        matching_resources: Iterable[GroupVersionResource] = (),
        matching_kinds: Iterable[GroupVersionKind] = (),
    ) -> None:
        self.partial_kind = partial_kind
        self.matching_resources = tuple(matching_resources)
        self.matching_kinds = tuple(matching_kinds)
        super().__init__(_ambiguous_message(str(partial_kind), self.matching_resources, self.matching_kinds))


class WaitTimeoutError(RestMapperError, TimeoutError):
    """A kind was still not served at the deadline of a wait; ``__cause__`` is the last lookup error.

    Attributes:
        target: what was waited for (a GroupKind or the user's argument).
        timeout: the timeout, seconds.
        last_error: the last error of the lookup (NoKindMatchError, NoResourceMatchError, GroupDiscoveryError...).
    """

    def __init__(self, target: object, timeout: float, last_error: BaseException | None) -> None:
        self.target = target
        self.timeout = timeout
        self.last_error = last_error
        what = f"resource type {target!r}" if isinstance(target, str) else f"kind {target}"
        suffix = f": {last_error}" if last_error is not None else ""
        super().__init__(f"timed out after {timeout:g}s waiting for {what} to be served{suffix}")


def _ambiguous_message(
    what: str, resources: tuple[GroupVersionResource, ...], kinds: tuple[GroupVersionKind, ...]
) -> str:
    if resources and kinds:
        return (f"{what} matches multiple resources [{', '.join(map(str, resources))}] "
                f"and kinds [{', '.join(map(str, kinds))}]")
    if kinds:
        return f"{what} matches multiple kinds [{', '.join(map(str, kinds))}]"
    return f"{what} matches multiple resources [{', '.join(map(str, resources))}]"


_EXCEPTION_GROUP: Any = getattr(builtins, "BaseExceptionGroup", None)


def _reachable(exc: BaseException,
               follow: Callable[[BaseException], Iterable[BaseException]]) -> Iterator[BaseException]:
    """``exc`` and every error ``follow`` leads to from it, each once (a cycle of causes ends the walk).

    ``follow(e)`` is called after the caller's loop body has seen ``e``, so the body may cut links first.
    """
    seen: set[int] = set()
    stack = [exc]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack.extend(follow(e))


def _members(e: BaseException) -> tuple[BaseException, ...]:
    """The errors an exception group holds (none for any other error)."""
    if _EXCEPTION_GROUP is not None and isinstance(e, _EXCEPTION_GROUP):
        return tuple(e.exceptions)
    return ()


def _kept_alive_by(e: BaseException) -> list[BaseException]:
    """Every error ``e`` holds a reference to: cause, context, group members, failed versions, ``last_error``."""
    held = [x for x in (e.__cause__, e.__context__) if x is not None]
    held.extend(_members(e))
    if isinstance(e, DiscoveryError):
        held.extend(e.failed.values())
    last = getattr(e, "last_error", None)
    if isinstance(last, BaseException):
        held.append(last)
    return held


_RESUMABLE = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
              | inspect.CO_ITERABLE_COROUTINE)
"""Code flags of the frames a generator or coroutine may resume (see :func:`release_frames`)."""


def release_frames(exc: BaseException) -> BaseException:
    """Drop the local variables of the finished frames ``exc`` (and every error it wraps) still refers to.

    An error kept for later (a cache's failure backoff, a watcher's ``last_error``) holds its traceback, whose
    frames hold their locals: a 64 MiB response body among them. File names and line numbers are kept. Frames
    still running are left alone, and so are the frames of generators and coroutines (one may be suspended: an
    error kept by a cache is also raised to its readers, an asyncio task among them, and clearing a suspended
    frame would end that task's coroutine; a finished one dropped its locals already).

    Returns:
        ``exc`` itself.
    """
    for e in _reachable(exc, _kept_alive_by):
        tb = e.__traceback__
        while tb is not None:
            if not tb.tb_frame.f_code.co_flags & _RESUMABLE:
                with contextlib.suppress(RuntimeError):  # still running
                    tb.tb_frame.clear()
            tb = tb.tb_next
        if e.__context__ is not None and e.__suppress_context__:
            # ``raise ... from None`` hides the context but keeps it (and its traceback) alive: drop it.
            e.__context__ = None
    return exc


def _walk(exc: BaseException, terminal: tuple[type[BaseException], ...] = ()) -> Iterable[BaseException]:
    """``exc`` and what it wraps *with the same meaning*: explicit ``__cause__`` and group members.

    The implicit ``__context__`` ("raised while handling") is never followed, and nothing is followed past an
    error of a ``terminal`` type: a :class:`DiscoveryError` or :class:`TransportError` says the answer could not
    be read, whatever it was raised from.
    """

    def follow(e: BaseException) -> Iterable[BaseException]:
        if isinstance(e, terminal):
            return ()
        return [*(() if e.__cause__ is None else (e.__cause__,)), *_members(e)]

    return _reachable(exc, follow)


_UNREAD = (DiscoveryError, TransportError)


def check_exception(caller: str, exc: object) -> None:
    """Raise TypeError naming ``caller`` unless ``exc`` is an exception (the error predicates take one)."""
    if not isinstance(exc, BaseException):
        raise TypeError(f"{caller}() takes an exception (the error caught), not {type(exc).__name__}")


def is_no_match(exc: BaseException) -> bool:
    """True when ``exc`` is a no-match error, or wraps only no-match errors (``meta.IsNoMatchError``).

    A no-match means the server said so: every group that could hold the answer was read. So this is False
    for a :class:`DiscoveryError` or :class:`TransportError` (whatever their cause), for an error that merely
    happened while handling a no-match (implicit ``__context__``), and for an ``ExceptionGroup`` unless all of
    its members are no-matches. It is True through explicit ``raise ... from no_match`` by a non-discovery error.
    Raises TypeError when ``exc`` is not an exception.
    """
    check_exception("is_no_match", exc)
    if _EXCEPTION_GROUP is not None and isinstance(exc, _EXCEPTION_GROUP):
        return bool(exc.exceptions) and all(is_no_match(e) for e in exc.exceptions)
    if isinstance(exc, (NoResourceMatchError, NoKindMatchError)):
        return True
    if isinstance(exc, _UNREAD) or exc.__cause__ is None:
        return False
    return is_no_match(exc.__cause__)


def is_ambiguous(exc: BaseException) -> bool:
    """True when ``exc`` is, wraps (``raise ... from``) or groups an ambiguity error (``meta.IsAmbiguousError``).

    As :func:`is_no_match`, the implicit ``__context__`` and the causes of discovery and transport errors are
    not followed. Raises TypeError when ``exc`` is not an exception.
    """
    check_exception("is_ambiguous", exc)
    return any(isinstance(e, (AmbiguousResourceError, AmbiguousKindError)) for e in _walk(exc, _UNREAD))


# --- warnings ---------------------------------------------------------------------------------------------


class PartialDiscoveryWarning(UserWarning):
    """An answer given while some group versions in scope could not be read: a list answer (a category such as
    ``all``) may be incomplete, or an argument resolved by a short name or a kind (not a real name) may be beaten
    by a resource of that real name in one of them (``resolve("po")`` while an aggregated API is down).

    kubectl prints the same situation as a warning and goes on with what it found. To refuse such answers, turn
    the warning into an error: ``warnings.simplefilter("error", PartialDiscoveryWarning)``; the raised warning's
    ``failed`` maps each unreadable group version to its cause (empty when emitted with a message only).

    Attributes:
        failed: group version -> the error that made it unreadable.
    """

    def __init__(self, *args: object, failed: Mapping[GroupVersion, BaseException] | None = None) -> None:
        super().__init__(*args)
        self.failed: dict[GroupVersion, BaseException] = dict(failed or {})


class ShortNameConflictWarning(UserWarning):
    """A short name is claimed by several resources; the first in priority order was used.

    Emitted (with :func:`warnings.warn`) by the mapper layer for the messages
    :func:`restmapper.mapper.shortcut.expand_resource_shortcut` returns, as kubectl prints
    ``Warning: short name "ev" could also match lower priority resource events.events.k8s.io``.
    """
