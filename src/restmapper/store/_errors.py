"""Errors of the object cache; they live in :mod:`restmapper.errors` with every other error and are re-exported here."""

from __future__ import annotations

from restmapper.errors import (
    CacheSyncTimeoutError,
    InformerNotStartedError,
    InformerStoppedError,
    ObjectNotFoundError,
    ObjectWaitTimeoutError,
    OutsideScopeError,
    TransformError,
    is_not_found,
)

__all__ = ["CacheSyncTimeoutError", "InformerNotStartedError", "InformerStoppedError", "ObjectNotFoundError",
           "ObjectWaitTimeoutError", "OutsideScopeError", "TransformError", "is_not_found"]
