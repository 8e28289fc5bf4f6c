"""The object cache's errors (published by :mod:`restmapper.errors`, their one import path)."""

from __future__ import annotations

from restmapper.errors._core import RestMapperError, WaitTimeoutError, _walk


class ObjectNotFoundError(RestMapperError, LookupError):
    """The cache holds no such object (the informer has synced, so the server had none when last seen).

    Attributes:
        kind: the kind asked for (``Widget.example.com``).
        namespace: the namespace (``""`` for cluster-scoped kinds).
        name: the object name.
    """

    def __init__(self, kind: str, namespace: str, name: str) -> None:
        self.kind = kind
        self.namespace = namespace
        self.name = name
        where = f" in namespace {namespace!r}" if namespace else ""
        super().__init__(f"{kind} {name!r} not found{where} (object cache)")


class CacheSyncTimeoutError(WaitTimeoutError):
    """An informer did not complete its first list within the timeout; ``__cause__`` is its last error.

    A :class:`WaitTimeoutError` (and so a ``TimeoutError``), as every "waited and gave up" error of restmapper.

    Attributes:
        kind: the kind (``Widget.example.com``).
        timeout: seconds waited.
        last_error: the informer's last list/watch or discovery error, or None.
    """

    def __init__(self, kind: str, timeout: float, last_error: BaseException | None) -> None:
        super().__init__(kind, timeout, last_error)
        self.kind = kind
        suffix = f": {last_error}" if last_error is not None else ""
        self.args = (f"timed out after {timeout:g}s waiting for the {kind} informer to sync{suffix}",)


class ObjectWaitTimeoutError(WaitTimeoutError):
    """:meth:`ObjectCache.wait_for` reached its timeout before the cache held the object as new as asked.

    Attributes:
        target: ``"Kind.group namespace/name"``.
        timeout: seconds waited.
        resource_version: the resourceVersion waited for, or None.
        generation: the generation waited for, or None.
    """

    def __init__(self, kind: str, namespace: str, name: str, timeout: float, resource_version: str | None,
                 generation: int | None) -> None:
        super().__init__(f"{kind} {namespace + '/' if namespace else ''}{name}", timeout, None)
        self.resource_version = resource_version
        self.generation = generation
        wanted = [f"resourceVersion {resource_version}"] if resource_version is not None else []
        wanted += [f"generation {generation}"] if generation is not None else []
        self.args = (f"timed out after {timeout:g}s waiting for the cache to hold {self.target}"
                     f"{' at ' + ' and '.join(wanted) if wanted else ''}",)


class InformerStoppedError(RestMapperError):
    """A stopped informer was used (its cache was stopped); ask the cache for the kind again."""


def is_not_found(exc: BaseException) -> bool:
    """True when ``exc`` is, wraps or aggregates an :class:`ObjectNotFoundError` (``errors.IsNotFound`` for the
    cache; a no-match for the *kind* is :func:`~restmapper.errors.is_no_match`, not this)."""
    return any(isinstance(e, ObjectNotFoundError) for e in _walk(exc))
