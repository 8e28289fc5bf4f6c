"""Pure parsers and encoders for Kubernetes discovery documents: bytes + Content-Type in, model objects out.

No I/O here (and no ``requests``): the discovery layer fetches, this layer reads. Every malformed input becomes a
:class:`~restmapper.errors.MalformedDiscoveryError` naming the document, the JSON path of the field and the reason.
"""

from __future__ import annotations

from restmapper.wire._json import decode_json
from restmapper.wire.aggregated import (
    AggregatedDiscovery,
    GroupResourceLists,
    LazyResourceLists,
    encode_aggregated,
    parse_aggregated,
)
from restmapper.wire.legacy import (
    encode_api_group,
    encode_api_group_list,
    encode_api_resource,
    encode_api_resource_list,
    encode_api_versions,
    parse_api_group,
    parse_api_group_list,
    parse_api_resource_list,
    parse_api_versions,
    parse_version_info,
)
from restmapper.wire.media import ACCEPT_AGGREGATED, ACCEPT_JSON, DocumentFormat, detect_format

__all__ = [
    "ACCEPT_AGGREGATED",
    "ACCEPT_JSON",
    "AggregatedDiscovery",
    "DocumentFormat",
    "GroupResourceLists",
    "LazyResourceLists",
    "decode_json",
    "detect_format",
    "encode_aggregated",
    "encode_api_group",
    "encode_api_group_list",
    "encode_api_resource",
    "encode_api_resource_list",
    "encode_api_versions",
    "parse_aggregated",
    "parse_api_group",
    "parse_api_group_list",
    "parse_api_resource_list",
    "parse_api_versions",
    "parse_version_info",
]
