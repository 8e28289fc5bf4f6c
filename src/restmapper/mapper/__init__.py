"""The mapper layer: REST mapping over discovery data, short names, categories and kubectl-style resolution.

Pure parts (no I/O, no cache): :class:`GroupIndex` (one group's lookup tables), :class:`StaticRESTMapper`
(client-go ``NewDiscoveryRESTMapper`` semantics over a set of indexes), :func:`expand_resource_shortcut`,
:func:`expand_category`, :func:`mapping_for` and :func:`resolve` (kubectl's argument resolution).
:func:`outranking` is the rule every answer given while some discovery failed obeys (the mapper's own and the
integrations' built on it), with the helpers a layer answering from cache entries words its errors by:
:func:`in_scope` (the failures that could hold an answer in some versions), :func:`with_question` (a discovery
error naming the question) and :func:`raced` (the error after :data:`RACE_ATTEMPTS` reads raced by invalidations);
:func:`may_resend` is the rule every healing client resends a request by.

The argument checks the mapper's methods run, for integrations that take kubectl-style arguments too (the CLI,
the object cache): :func:`require_resource_type` and :func:`require_resource_types` refuse forms that name
something other than a resource type (``deploy/web``, ``apps/v1 Deployment``) before any request, and
:func:`checked_reading` turns such a refusal into the error naming what to type instead, checked with the server;
:func:`api_version_parts` reads a manifest's apiVersion and :func:`is_group_name` says whether a string can be an
API group name (a DNS-1123 subdomain, or ``""`` for core).
"""

from __future__ import annotations

from restmapper.mapper._args import api_version_parts, is_group_name, require_resource_type, require_resource_types
from restmapper.mapper._certainty import RACE_ATTEMPTS, in_scope, outranking, raced, with_question
from restmapper.mapper._typed import checked_reading
from restmapper.mapper.index import GroupIndex, ResourceEntry, VersionIndex, unsafe_guess_kind_to_resource
from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.mapper.priority import (
    ANY,
    discovery_priorities,
    kind_matches,
    narrow_by_priority,
    resource_matches,
)
from restmapper.mapper.resend import has_moved, may_resend
from restmapper.mapper.resolve import (
    PartialDiscoveryWarning,
    ResolvedMappings,
    ResolveResult,
    ResourceTypeNotFoundError,
    kind_for_expanded,
    mapping_for,
    resolve,
)
from restmapper.mapper.shortcut import (
    ShortNameConflictWarning,
    expand_category,
    expand_resource_shortcut,
    short_name_warning,
)
from restmapper.mapper.static import API_VERSION_INTERNAL, StaticRESTMapper

__all__ = [
    "ANY",
    "API_VERSION_INTERNAL",
    "RACE_ATTEMPTS",
    "GroupIndex",
    "LazyRESTMapper",
    "PartialDiscoveryWarning",
    "ResolveResult",
    "ResolvedMappings",
    "ResourceEntry",
    "ResourceTypeNotFoundError",
    "ShortNameConflictWarning",
    "StaticRESTMapper",
    "VersionIndex",
    "api_version_parts",
    "checked_reading",
    "discovery_priorities",
    "expand_category",
    "expand_resource_shortcut",
    "has_moved",
    "in_scope",
    "is_group_name",
    "kind_for_expanded",
    "kind_matches",
    "mapping_for",
    "may_resend",
    "narrow_by_priority",
    "outranking",
    "raced",
    "require_resource_type",
    "require_resource_types",
    "resolve",
    "resource_matches",
    "short_name_warning",
    "unsafe_guess_kind_to_resource",
    "with_question",
]
