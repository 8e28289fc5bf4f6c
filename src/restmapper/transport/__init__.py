"""Transports: the only layer that does network I/O.

:class:`RequestsTransport` speaks HTTP with ``requests`` (built from a kubeconfig or a
``kubernetes.client.Configuration``); :class:`ApiClientTransport` reuses an existing ``kubernetes.client.ApiClient``.
Both retry per :class:`RetryPolicy`, cap body sizes while reading and keep credentials out of every message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from restmapper._lazy import lazy_dir, lazy_getattr
from restmapper.transport._deadline import DEFAULT_REQUEST_TIMEOUT, Cancellation, end_idle_deadline_thread
from restmapper.transport._status import status_error
from restmapper.transport.base import (
    DEFAULT_MAX_BODY_BYTES,
    Response,
    StreamResponse,
    Transport,
    WritingTransport,
    header,
    scrub_with,
)
from restmapper.transport.config import ClientConfig, incluster_config, resolve_config
from restmapper.transport.kubeconfig import ConfigError
from restmapper.transport.retry import DEFAULT_RETRY_STATUSES, RetryPolicy, check_seconds, parse_retry_after

if TYPE_CHECKING:
    from restmapper.transport.apiclient_transport import ApiClientTransport
    from restmapper.transport.requests_transport import DEFAULT_USER_AGENT, RequestsTransport

# The HTTP stacks (requests, urllib3) load on first use, so code that only needs the Transport protocol (the
# testing kit's in-process transport, `restmapper resolve --embedded`, `restmapper --help`) starts fast.
_LAZY = {
    "ApiClientTransport": "restmapper.transport.apiclient_transport",
    "DEFAULT_USER_AGENT": "restmapper.transport.requests_transport",
    "RequestsTransport": "restmapper.transport.requests_transport",
}
__getattr__ = lazy_getattr(globals(), __name__, _LAZY)
__dir__ = lazy_dir(globals(), _LAZY)


__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_RETRY_STATUSES",
    "DEFAULT_USER_AGENT",
    "ApiClientTransport",
    "Cancellation",
    "ClientConfig",
    "ConfigError",
    "RequestsTransport",
    "Response",
    "RetryPolicy",
    "StreamResponse",
    "Transport",
    "WritingTransport",
    "check_seconds",
    "end_idle_deadline_thread",
    "header",
    "incluster_config",
    "parse_retry_after",
    "resolve_config",
    "scrub_with",
    "status_error",
]
