"""kube-restmapper: a lazy, self-healing Kubernetes REST mapper and discovery cache."""

from __future__ import annotations

from restmapper.errors import (
    AmbiguousKindError,
    AmbiguousResourceError,
    APIStatusError,
    DiscoveryError,
    GroupDiscoveryError,
    InvalidArgumentError,
    MalformedDiscoveryError,
    MappingError,
    NoKindMatchError,
    NoResourceMatchError,
    ResponseTooLargeError,
    RestMapperError,
    TransportError,
    is_ambiguous,
    is_no_match,
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

__version__ = "0.1.0.dev0"

__all__ = [
    "APIGroup",
    "APIResource",
    "APIResourceList",
    "APIStatusError",
    "AmbiguousKindError",
    "AmbiguousResourceError",
    "DiscoveryError",
    "GroupDiscoveryError",
    "GroupKind",
    "GroupResource",
    "GroupVersion",
    "GroupVersionKind",
    "GroupVersionResource",
    "InvalidArgumentError",
    "MalformedDiscoveryError",
    "MappingError",
    "NoKindMatchError",
    "NoResourceMatchError",
    "RESTMapping",
    "ResponseTooLargeError",
    "RestMapperError",
    "Scope",
    "TransportError",
    "VersionInfo",
    "__version__",
    "is_ambiguous",
    "is_no_match",
]
