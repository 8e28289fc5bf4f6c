"""The object cache's errors (published by :mod:`restmapper.errors`, their one import path)."""

from __future__ import annotations

from restmapper.errors._core import InvalidArgumentError, RestMapperError, WaitTimeoutError, _walk, check_exception


class ObjectNotFoundError(RestMapperError, LookupError):
    """The cache holds no such object (the informer has synced, so the server had none when last seen).

    Attributes:
        kind: the kind asked for (``Widget.example.com``).
        namespace: the namespace (``""`` for cluster-scoped kinds).
        name: the object name.
        selectors: the informer's selectors (``label selector 'app=web'``), ``""`` when it has none: the cache holds
            only objects matching them, so the server may have this one.
    """

    selectors: str = ""

    def __init__(self, kind: str, namespace: str, name: str, selectors: str = "") -> None:
        self.kind = kind
        self.namespace = namespace
        self.name = name
        if selectors:  # the class default otherwise: pickles of errors without one stay the bytes they were
            self.selectors = selectors
        where = f" in namespace {namespace!r}" if namespace else ""
        held = (f"; it holds only objects matching its {selectors}: an object outside them is never cached, so "
                "read it from the server or widen the cache's selectors") if selectors else ""
        super().__init__(f"{kind} {name!r} not found{where} (object cache{held})")


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


class TransformError(RestMapperError):
    """An object cache's ``transform`` raised, or returned something that is not the object it was given.

    A transform must return a dict whose ``metadata`` keeps the ``name``, ``namespace``, ``uid`` and
    ``resourceVersion`` it was given (they are how the cache keys, orders and replaces objects). Anything else
    (None from a forgotten ``return obj``, a list, a copy without ``uid``, a renamed object) would leave the cache
    without the object while it says synced, so the list or event fails instead: the informer enters ``failing``,
    retries with backoff (as client-go's reflector retries a list whose transform failed) and reads raise this.

    Attributes:
        kind: the informer's kind (``Widget.example.com``).
        transform: the transform's name (``module.qualname``).
        namespace: the object's namespace (``""`` for cluster-scoped).
        name: the object's name.
        problem: what was wrong (``returned None``, ``changed metadata.uid``...).
    """

    def __init__(self, kind: str, transform: str, namespace: str, name: str, problem: str) -> None:
        self.kind = kind
        self.transform = transform
        self.namespace = namespace
        self.name = name
        self.problem = problem
        where = f"{namespace}/{name}" if namespace else name
        super().__init__(f"the transform {transform} {problem} for {kind} {where!r}; it must return the object "
                         f"(a dict) keeping metadata.name, namespace, uid and resourceVersion; the {kind} "
                         f"informer lists again with backoff, and reads raise this meanwhile")


class InformerStoppedError(RestMapperError):
    """A stopped informer or a stopped ObjectCache was used: ask the cache for the kind again, or ``start()`` a
    stopped cache again (a stopped cache starts no informer threads by itself)."""


class InformerNotStartedError(RestMapperError):
    """A read (``get``, ``list``, ``add_handler``, ...) of a kind whose informer was not started, on a cache made with
    ``lazy=False`` (controller-runtime's ``ReaderFailOnMissingInformer``).

    Attributes:
        kind: the kind read (``Widget.example.com``).
        call: the call refused, as written (``cache.add_handler()``).
    """

    call: str = "a read"

    def __init__(self, kind: str, call: str = "a read") -> None:
        self.kind = kind
        if call != "a read":  # the class default otherwise: older pickles load, new ones without it keep their bytes
            self.call = call
        super().__init__(f"no informer runs for {kind} and this cache (lazy=False) does not start one on {call}: "
                         f"start it first with cache.start(kinds=[...]) or cache.informer(...)")


class OutsideScopeError(InvalidArgumentError):
    """A read asks for more than the informer holds: a namespace outside the cache's ``namespaces``, or a label or
    field selector broader than the one the informer lists with (the cache cannot answer it; an empty answer would
    be wrong).

    Attributes:
        kind: the kind read (``Pod``).
        scope: what the informer holds, as :meth:`ObjectCache.informers` describes it.
        asked: what the read asked for (``namespace 'c'``, ``label selector 'tier=gold'``).
    """

    def __init__(self, kind: str, scope: str, asked: str) -> None:
        self.kind = kind
        self.scope = scope
        self.asked = asked
        super().__init__(f"the {kind} informer holds {scope}, which does not cover {asked}: widen the cache's scope "
                         f"(namespaces=, label_selector=, field_selector=, by_kind=) or read within it")


def is_not_found(exc: BaseException) -> bool:
    """True when ``exc`` is, wraps or aggregates an :class:`ObjectNotFoundError` (``errors.IsNotFound`` for the
    cache; a no-match for the *kind* is :func:`~restmapper.errors.is_no_match`, not this).

    Raises:
        TypeError: ``exc`` is not an exception.
    """
    check_exception("is_not_found", exc)
    return any(isinstance(e, ObjectNotFoundError) for e in _walk(exc))
