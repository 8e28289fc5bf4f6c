"""The object cache's reading of a resource type argument: the mapper's checks, worded with the cache's own call.

``cache.list("all")`` or ``cache.get("deploy/web", ...)`` reach :meth:`LazyRESTMapper.resolve`, whose errors name
``resolve()`` and suggest ``resolve_all("all")`` or ``resolve("deploy")``: calls the user did not make, and (for a
category or a comma list) not one the cache offers. Here the same checks
(:func:`~restmapper.mapper.require_resource_type`, its suggestions checked with the server) name the cache's
method and suggest the cache call to make instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

from restmapper.errors import InvalidArgumentError, RestMapperError
from restmapper.mapper import LazyRESTMapper, checked_reading, require_resource_type
from restmapper.model import GroupKind, GroupVersionKind, GroupVersionResource, RESTMapping

__all__ = ["CacheCall", "group_kind_of", "resolve_for"]


@dataclass(frozen=True)
class CacheCall:
    """How to write the cache call the user made, for a type.

    Attributes:
        method: the ObjectCache method (``list``).
        rest: what follows the type in a call, e.g. ``', "web", ...'`` (``cache.get("deploy", "web", ...)``).
    """

    method: str
    rest: str = ""

    @property
    def name(self) -> str:
        """``cache.list``: the call as a user writes it (``()`` is added in messages)."""
        return f"cache.{self.method}"

    def told(self, what: str) -> str:
        """``cache.list("deploy")`` for ``what`` ``deploy``."""
        return f'{self.name}("{what}"{self.rest})'


def _quiet(mapper: LazyRESTMapper) -> Callable[[str], RESTMapping]:
    def resolve(arg: str) -> RESTMapping:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # checking a suggestion: its short-name conflicts are not news
            return mapper.resolve(arg)
    return resolve


def group_kind_of(mapper: LazyRESTMapper, kind: object, call: CacheCall) -> GroupKind:
    """The GroupKind ``kind`` names (``ObjectCache.group_kind``, for the cache's ``call``): a GroupKind, a GVK, a
    GVR (asks the mapper) or a string (resolved as :func:`resolve_for`).

    Raises:
        TypeError: ``kind`` is not one of those types.
        As :func:`resolve_for` and :meth:`LazyRESTMapper.kind_for` otherwise.
    """
    if isinstance(kind, GroupKind):
        return kind
    if isinstance(kind, GroupVersionKind):
        return kind.group_kind
    if isinstance(kind, GroupVersionResource):
        return mapper.kind_for(kind).group_kind
    if isinstance(kind, str):
        mapping = mapper.cached_resolve(kind) or resolve_for(mapper, kind, call)
        return mapping.group_version_kind.group_kind
    raise TypeError(f"kind must be a GroupKind, GroupVersionKind, GroupVersionResource or str, "
                    f"got {type(kind).__name__}")


def resolve_for(mapper: LazyRESTMapper, arg: str, call: CacheCall) -> RESTMapping:
    """``mapper.resolve(arg)`` for the cache's ``call``: an argument that names no one resource type is refused
    with the cache's call in the message.

    Args:
        mapper: the cache's mapper.
        arg: the string kind passed to the cache (what ``kubectl get`` takes for one type).
        call: the cache call made.

    Returns:
        The mapping ``mapper.resolve(arg)`` returns.

    Raises:
        InvalidArgumentError: ``arg`` is a category (``all``), a comma list, ``TYPE/NAME``, an apiVersion and a
            type, or has spaces; the message names ``cache.METHOD()`` and the cache call to make instead.
        As :meth:`LazyRESTMapper.resolve` otherwise.
    """
    if not (arg.__class__ is str and arg and arg.isascii() and arg.isprintable() and " " not in arg
            and "/" not in arg and "," not in arg):
        try:
            require_resource_type(call.name, arg, told=call.told)
        except InvalidArgumentError as exc:
            raise checked_reading(exc, arg, call.name, _quiet(mapper), served=mapper.cache.served_versions,
                                  told=call.told) from None
    try:
        return mapper.resolve(arg)
    except InvalidArgumentError:
        _refuse_category(mapper, arg, call)
        raise


def _refuse_category(mapper: LazyRESTMapper, arg: str, call: CacheCall) -> None:
    """Raise the cache's error for ``arg`` when it names a category (``all``); return when it does not.

    Raises:
        InvalidArgumentError: ``arg`` is a category; the message names one of its types to pass instead.
    """
    try:
        members = mapper.expand_category(arg)
    except RestMapperError:
        return
    if members:
        first = members[0]
        example = f"{first.resource}.{first.group}" if first.group else first.resource
        raise InvalidArgumentError(f'{call.name}() takes one resource type; "{arg}" is a category: call it for each '
                                   f'of its types (mapper.expand_category("{arg}") lists them), e.g. '
                                   f"{call.told(example)}") from None
