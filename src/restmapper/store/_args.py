"""The argument checks of the object cache: a value of the wrong type is a ``TypeError`` naming the call, the
argument and what to pass instead, raised before anything starts or waits (never an internal error, a silent
timeout or a value that can never match).

Every public entry point of :class:`~restmapper.store.ObjectCache`, :class:`~restmapper.store.Informer` and
:class:`~restmapper.aio.AsyncObjectCache` calls these; the warm read path checks only once it missed (a
wrong-typed name or namespace can never be found, so the miss is where it is reported).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.transport.retry import check_seconds

__all__ = ["check_callables", "check_handle", "check_key", "check_options", "check_selectors", "check_streams",
           "check_uid", "check_wait", "own_names"]


def _type(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _str(method: str, arg: str, value: object, *, optional: bool, hint: str = "") -> None:
    if isinstance(value, str) or (optional and value is None):
        return
    raise TypeError(f"{method}() takes {arg} as str{' or None' if optional else ''}, not {_type(value)}{hint}")


def _number(method: str, arg: str, value: object, *, optional: bool, integer: bool = False) -> None:
    """A number of seconds (or an int), never a bool; the message names ``arg``."""
    if optional and value is None:
        return
    types: tuple[type, ...] = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, types):
        what = "an int" if integer else "a number of seconds"
        raise TypeError(f"{method}() takes {arg} as {what}{' or None' if optional else ''}, not {_type(value)}")


def check_key(method: str, name: object, namespace: object) -> None:
    """An object's ``name`` (str) and ``namespace`` (str or None).

    Raises:
        TypeError: either is of another type.
    """
    _str(method, "name", name, optional=False)
    _str(method, "namespace", namespace, optional=True)


def check_callables(method: str, **functions: object) -> None:
    """Each of ``functions`` is callable or None.

    Raises:
        TypeError: one is neither (the message names it).
    """
    for arg, fn in functions.items():
        if fn is not None and not callable(fn):
            raise TypeError(f"{method}() takes {arg} as a callable or None, not {_type(fn)}")


def check_handle(method: str, handle: object, handle_type: type) -> None:
    """``handle`` is what ``add_handler`` returned (not one of the functions registered with it).

    Raises:
        TypeError: it is anything else.
    """
    if not isinstance(handle, handle_type):
        raise TypeError(f"{method}() takes the {handle_type.__name__} that add_handler returned, not {_type(handle)}")


def check_uid(method: str, uid: object) -> None:
    """A ``uid`` (str) or None.

    Raises:
        TypeError: anything else.
    """
    _str(method, "uid", uid, optional=True)


def _selector_hint(value: object) -> str:
    if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return f' (a selector string as kubectl -l takes: {",".join(f"{k}={v}" for k, v in value.items())!r})'
    return ""


def check_selectors(method: str, namespace: object, label_selector: object, field_selector: object,
                    index: object, value: object) -> None:
    """The filters of a list: each a str or None (a dict of labels is refused with the selector string to pass).

    Raises:
        TypeError: a filter of another type.
    """
    _str(method, "namespace", namespace, optional=True)
    _str(method, "label_selector", label_selector, optional=True, hint=_selector_hint(label_selector))
    _str(method, "field_selector", field_selector, optional=True, hint=_selector_hint(field_selector))
    _str(method, "index", index, optional=True)
    _str(method, "value", value, optional=True)


def check_wait(method: str, resource_version: object, generation: object, timeout: object, *,
               timeout_optional: bool = False) -> None:
    """The targets of a wait: ``resource_version`` a str (``metadata.resourceVersion`` is one), ``generation`` an
    int, ``timeout`` finite, non-negative seconds (None waits without bound where ``timeout_optional``).

    Raises:
        TypeError: a value of another type (an int resourceVersion names the string to pass).
        InvalidArgumentError: a negative, NaN or infinite timeout.
    """
    hint = f" (resourceVersions are strings: {str(resource_version)!r})" if isinstance(resource_version, int) else ""
    _str(method, "resource_version", resource_version, optional=True, hint=hint)
    _number(method, "generation", generation, optional=True, integer=True)
    check_seconds(method, "timeout", timeout, optional=timeout_optional, positive=False)


_SECONDS = ("resync", "relist_period", "sync_timeout", "watch_timeout", "watch_idle_timeout", "backoff_initial",
            "backoff_max", "probe_initial", "probe_max")
_OPTIONAL_SECONDS = ("resync", "relist_period")
_MAY_BE_ZERO = ("backoff_initial", "backoff_max")
_POSITIVE = ("sync_timeout", "watch_timeout", "watch_idle_timeout", "resync", "relist_period")
_FLAGS = ("daemon", "lazy", "watch_list")
_CALLABLES = ("sleep",)  # transform: a callable or a list of them, checked with the scope (store._scope)


def check_options(method: str, mapper: object, options: Mapping[str, Any]) -> None:
    """The constructor's arguments: types, every seconds option a finite number (:func:`check_seconds`) and the
    values in range (:func:`_check_ranges`).

    Raises:
        TypeError: ``mapper`` is not a LazyRESTMapper (a kubeconfig path names ``from_kubeconfig``), or an option
            of the wrong type.
        InvalidArgumentError: a seconds option that is NaN, infinite, negative, or 0 where 0 means nothing; backoff
            bounds out of order, a negative ``page_size``, an empty ``namespace``.
    """
    from restmapper.mapper.lazy import LazyRESTMapper

    if not isinstance(mapper, LazyRESTMapper):
        hint = f"; to build one from a kubeconfig file call {method}.from_kubeconfig({json.dumps(mapper)})" \
            if isinstance(mapper, str) else ""
        raise TypeError(f"{method}() takes a LazyRESTMapper as its first argument, not {_type(mapper)}{hint}")
    for name in _SECONDS:
        check_seconds(method, name, options[name], optional=name in _OPTIONAL_SECONDS,
                      positive=name not in _MAY_BE_ZERO)
    _number(method, "page_size", options["page_size"], optional=False, integer=True)
    _str(method, "namespace", options["namespace"], optional=True)
    for name in _CALLABLES:
        if options[name] is not None and not callable(options[name]):
            raise TypeError(f"{method}() takes {name} as a callable or None, not {_type(options[name])}")
    for name in _FLAGS:
        if name in options and not isinstance(options[name], bool):
            raise TypeError(f"{method}() takes {name} as a bool, not {_type(options[name])}")
    _check_services(method, options)
    _check_ranges(options)


def _check_ranges(options: Mapping[str, Any]) -> None:
    """The constructor's values in range (their types checked)."""
    if any(options[name] is not None and options[name] <= 0 for name in _POSITIVE):
        raise InvalidArgumentError("sync_timeout, watch_timeout, watch_idle_timeout, resync and relist_period "
                                   "must be positive")
    if not (0 <= options["backoff_initial"] <= options["backoff_max"]) or \
            not (0 < options["probe_initial"] <= options["probe_max"]):
        raise InvalidArgumentError("need 0 <= backoff_initial <= backoff_max and 0 < probe_initial <= probe_max")
    if options["page_size"] < 0:
        raise InvalidArgumentError(f"page_size must not be negative, got {options['page_size']}")
    if options["namespace"] == "":
        raise InvalidArgumentError("namespace must be a non-empty string or None")


def check_streams(transport: object) -> None:
    """The cache's transport streams watches.

    Raises:
        InvalidArgumentError: it says it does not (the testing kit's ``InProcessTransport``); the message says how
            to get one that does.
    """
    if getattr(transport, "streams", True) is False:
        raise InvalidArgumentError(
            f"ObjectCache needs a transport that streams watches, and {type(transport).__name__} does "
            f"not: serve the cluster and connect to it (with cluster.serve() as served: "
            f"ObjectCache.from_kubeconfig(str(served.kubeconfig_path))), pass transport= one that streams, "
            f"or in a pytest test use the restmapper plugin's object_cache fixture")


def own_names(cls: type) -> set[str]:
    """The constructor keywords of the cache class ``cls`` (the other keywords of ``from_config`` go to the mapper
    and transport): those its ``__init__`` names and, while it takes ``**kwargs`` (a subclass forwarding them),
    those of the next ``__init__`` up the MRO."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = inspect.signature(vars(klass)["__init__"]).parameters.values()
        names.update(p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return names - {"self", "mapper"}


def _check_services(method: str, options: Mapping[str, Any]) -> None:
    """The transport and the watcher, when given, are what they must be."""
    transport = options["transport"]
    if transport is not None and not (callable(getattr(transport, "get", None))
                                      and callable(getattr(transport, "stream", None))):
        raise TypeError(f"{method}() takes transport as a restmapper Transport (get and stream) or None, "
                        f"not {_type(transport)}")
    watcher = options["watcher"]
    if watcher is not None and not (callable(getattr(watcher, "add_handler", None))
                                    and callable(getattr(watcher, "watching", None))):
        raise TypeError(f"{method}() takes watcher as a restmapper.watch.Watcher or None, not {_type(watcher)}")
