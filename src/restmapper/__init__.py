"""kube-restmapper: a lazy, self-healing Kubernetes REST mapper and discovery cache."""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from restmapper._lazy import lazy_dir, lazy_getattr

# A library adds no handler of its own but a NullHandler (Python logging HOWTO, "Configuring Logging for a
# Library"): applications decide where our records go, and none is printed as "No handlers could be found".
logging.getLogger("restmapper").addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from restmapper.aio import AsyncRESTMapper
    from restmapper.cache import DiscoveryCache
    from restmapper.discovery import DiscoveryClient
    from restmapper.errors import (
        AlreadyExistsError,
        AmbiguousKindError,
        AmbiguousResourceError,
        APIStatusError,
        ConfigError,
        ConflictError,
        DiscoveryError,
        ForbiddenError,
        GroupDiscoveryError,
        InformerStoppedError,
        InvalidArgumentError,
        InvalidObjectError,
        MalformedDiscoveryError,
        MappingChangedError,
        MappingError,
        NoKindMatchError,
        NoResourceMatchError,
        ObjectWaitTimeoutError,
        ResponseTooLargeError,
        RestMapperError,
        TransformError,
        TransportError,
        WaitTimeoutError,
        WriteNotObservedError,
        is_ambiguous,
        is_no_match,
    )
    from restmapper.generation import GenerationCache
    from restmapper.mapper import (
        LazyRESTMapper,
        PartialDiscoveryWarning,
        ShortNameConflictWarning,
        StaticRESTMapper,
    )
    from restmapper.model import (
        APIGroup,
        APIResource,
        APIResourceList,
        GroupKind,
        GroupResource,
        GroupVersion,
        GroupVersionKind,
        GroupVersionResource,
        RESTMapping,
        Scope,
        VersionInfo,
    )
    from restmapper.store import ObjectCache, ObjectNotFoundError, is_not_found
    from restmapper.watch import Watcher, wait_for
    from restmapper.workqueue import AsyncRateLimitingQueue, RateLimitingQueue

# Not imported above for type checkers: restmapper.client sits above the CLI, which imports this package (its
# names reach type checkers as Any through __getattr__; import them from restmapper.client for precise types).

__version__ = "0.1.0.dev0"

# Every layer loads on first use, the errors and the model types too, so `import restmapper` stays cheap (it is
# the parent of every module: `restmapper --help` pays for whatever it loads).
_LAZY = {
    "AmbiguousKindError": "restmapper.errors",
    "AmbiguousResourceError": "restmapper.errors",
    "APIStatusError": "restmapper.errors",
    "ConfigError": "restmapper.errors",
    "DiscoveryError": "restmapper.errors",
    "GroupDiscoveryError": "restmapper.errors",
    "InvalidArgumentError": "restmapper.errors",
    "MalformedDiscoveryError": "restmapper.errors",
    "MappingError": "restmapper.errors",
    "NoKindMatchError": "restmapper.errors",
    "NoResourceMatchError": "restmapper.errors",
    "ResponseTooLargeError": "restmapper.errors",
    "RestMapperError": "restmapper.errors",
    "TransportError": "restmapper.errors",
    "WaitTimeoutError": "restmapper.errors",
    "is_ambiguous": "restmapper.errors",
    "is_no_match": "restmapper.errors",
    "AlreadyExistsError": "restmapper.errors",
    "ConflictError": "restmapper.errors",
    "ForbiddenError": "restmapper.errors",
    "InformerStoppedError": "restmapper.errors",
    "InvalidObjectError": "restmapper.errors",
    "MappingChangedError": "restmapper.errors",
    "ObjectWaitTimeoutError": "restmapper.errors",
    "TransformError": "restmapper.errors",
    "WriteNotObservedError": "restmapper.errors",
    "APIGroup": "restmapper.model",
    "APIResource": "restmapper.model",
    "APIResourceList": "restmapper.model",
    "GroupKind": "restmapper.model",
    "GroupResource": "restmapper.model",
    "GroupVersion": "restmapper.model",
    "GroupVersionKind": "restmapper.model",
    "GroupVersionResource": "restmapper.model",
    "RESTMapping": "restmapper.model",
    "Scope": "restmapper.model",
    "VersionInfo": "restmapper.model",
    "AsyncRESTMapper": "restmapper.aio",
    "DiscoveryCache": "restmapper.cache",
    "DiscoveryClient": "restmapper.discovery",
    "GenerationCache": "restmapper.generation",
    "LazyRESTMapper": "restmapper.mapper",
    "ObjectCache": "restmapper.store",
    "ObjectNotFoundError": "restmapper.store",
    "PartialDiscoveryWarning": "restmapper.mapper",
    "ShortNameConflictWarning": "restmapper.mapper",
    "StaticRESTMapper": "restmapper.mapper",
    "Watcher": "restmapper.watch",
    "is_not_found": "restmapper.store",
    "wait_for": "restmapper.watch",
    "Client": "restmapper.client",
    "AsyncClient": "restmapper.client",
    "RateLimitingQueue": "restmapper.workqueue",
    "AsyncRateLimitingQueue": "restmapper.workqueue",
}
_lazy_attribute = lazy_getattr(globals(), __name__, _LAZY)
_EAGER_BEFORE = frozenset({"errors", "model"})
"""Submodules ``import restmapper`` used to load: ``restmapper.model.GroupVersion`` after ``import restmapper`` alone
still works (loaded on that first use)."""


def __getattr__(name: str) -> Any:
    if name in _EAGER_BEFORE:
        return importlib.import_module(f"{__name__}.{name}")
    return _lazy_attribute(name)

__dir__ = lazy_dir(globals(), _LAZY)


__all__ = [
    "APIGroup",
    "APIResource",
    "APIResourceList",
    "APIStatusError",
    "AlreadyExistsError",
    "AmbiguousKindError",
    "AmbiguousResourceError",
    "AsyncClient",
    "AsyncRESTMapper",
    "AsyncRateLimitingQueue",
    "Client",
    "ConfigError",
    "ConflictError",
    "DiscoveryCache",
    "DiscoveryClient",
    "DiscoveryError",
    "ForbiddenError",
    "GenerationCache",
    "GroupDiscoveryError",
    "GroupKind",
    "GroupResource",
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "InformerStoppedError",
    "InvalidArgumentError",
    "InvalidObjectError",
    "LazyRESTMapper",
    "MalformedDiscoveryError",
    "MappingChangedError",
    "MappingError",
    "NoKindMatchError",
    "NoResourceMatchError",
    "ObjectCache",
    "ObjectNotFoundError",
    "ObjectWaitTimeoutError",
    "PartialDiscoveryWarning",
    "RESTMapping",
    "RateLimitingQueue",
    "ResponseTooLargeError",
    "RestMapperError",
    "Scope",
    "ShortNameConflictWarning",
    "StaticRESTMapper",
    "TransformError",
    "TransportError",
    "VersionInfo",
    "WaitTimeoutError",
    "Watcher",
    "WriteNotObservedError",
    "__version__",
    "is_ambiguous",
    "is_no_match",
    "is_not_found",
    "wait_for",
]
