"""The exception hierarchy of restmapper, rooted at :class:`RestMapperError`: the one import path of every error
and warning restmapper raises or emits.

Mapping errors mirror apimachinery ``pkg/api/meta/errors.go`` (messages included), so that code ported from
Go reads the same; :func:`is_no_match` and :func:`is_ambiguous` see through ``raise ... from`` and
``ExceptionGroup`` as ``meta.IsNoMatchError`` sees through ``%w``, but never through implicit chaining or a
discovery/transport error: "could not read" is never "not there". No error message ever carries a credential.

The classes are defined in private modules (``_core``, ``_objects``: the object cache's, ``_requests``: the
healing clients', ``_status``: the server's refusals of object requests, ``_workqueue``: the work queue's) and
published here, with ``__module__ == "restmapper.errors"``: tracebacks and ``repr`` name them
``restmapper.errors.X`` and pickles refer to ``restmapper.errors.X``, whichever module holds the code.
"""

from __future__ import annotations

from restmapper.errors._core import (
    AmbiguousKindError,
    AmbiguousResourceError,
    APIStatusError,
    ConfigError,
    DiscoveryError,
    ForbiddenError,
    GroupDiscoveryError,
    InvalidArgumentError,
    MalformedDiscoveryError,
    MappingError,
    NoKindMatchError,
    NoResourceMatchError,
    PartialDiscoveryWarning,
    RequestTimeoutError,
    ResourceTypeNotFoundError,
    ResponseTooLargeError,
    RestMapperError,
    ShortNameConflictWarning,
    StaleGroupVersionError,
    TransportError,
    WaitTimeoutError,
    is_ambiguous,
    is_no_match,
)
from restmapper.errors._core import _rebuild as _rebuild
from restmapper.errors._core import release_frames as release_frames
from restmapper.errors._core import remembered_suffix as remembered_suffix
from restmapper.errors._core import replayed_suffix as replayed_suffix
from restmapper.errors._objects import (
    CacheSyncTimeoutError,
    InformerNotStartedError,
    InformerStoppedError,
    ObjectNotFoundError,
    ObjectWaitTimeoutError,
    OutsideScopeError,
    TransformError,
    is_not_found,
)
from restmapper.errors._requests import MappingChangedError
from restmapper.errors._status import (
    AlreadyExistsError,
    ConflictError,
    InvalidObjectError,
    ObjectNotFoundStatusError,
    WriteNotObservedError,
)
from restmapper.errors._workqueue import ShutDown, WorkQueueTimeoutError

__all__ = [
    "APIStatusError",
    "AlreadyExistsError",
    "AmbiguousKindError",
    "AmbiguousResourceError",
    "CacheSyncTimeoutError",
    "ConfigError",
    "ConflictError",
    "DiscoveryError",
    "ForbiddenError",
    "GroupDiscoveryError",
    "InformerNotStartedError",
    "InformerStoppedError",
    "InvalidArgumentError",
    "InvalidObjectError",
    "MalformedDiscoveryError",
    "MappingChangedError",
    "MappingError",
    "NoKindMatchError",
    "NoResourceMatchError",
    "ObjectNotFoundError",
    "ObjectNotFoundStatusError",
    "ObjectWaitTimeoutError",
    "OutsideScopeError",
    "PartialDiscoveryWarning",
    "RequestTimeoutError",
    "ResourceTypeNotFoundError",
    "ResponseTooLargeError",
    "RestMapperError",
    "ShortNameConflictWarning",
    "ShutDown",
    "StaleGroupVersionError",
    "TransformError",
    "TransportError",
    "WaitTimeoutError",
    "WorkQueueTimeoutError",
    "WriteNotObservedError",
    "is_ambiguous",
    "is_no_match",
    "is_not_found",
]

# Published here: the path users write (``except restmapper.errors.X``), tracebacks print and pickles record
# (``_rebuild`` is what a pickled error is rebuilt with: pickles made before the split name it here too).
for _published in (*(globals()[_name] for _name in __all__), release_frames, remembered_suffix, replayed_suffix,
                   _rebuild):
    _published.__module__ = __name__
del _published
