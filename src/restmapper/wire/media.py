"""Content negotiation for discovery: the Accept header we send and reading the Content-Type we get back."""

from __future__ import annotations

import enum

from restmapper.wire._json import fail, quote

__all__ = ["ACCEPT_AGGREGATED", "ACCEPT_JSON", "DocumentFormat", "detect_format"]

ACCEPT_AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)
"""Accept header for ``/api`` and ``/apis``: aggregated v2, then v2beta1 (1.26-1.32 servers), then legacy JSON.

Same preference order as client-go's ``AcceptV2`` discovery header; listing v2beta1 matters because a 1.27 server
answers 406 to a v2-only Accept."""

ACCEPT_JSON = "application/json"
"""Accept header for legacy per-group-version documents and ``/version``."""

_AGGREGATED_GROUP = "apidiscovery.k8s.io"
_AGGREGATED_KIND = "apigroupdiscoverylist"


class DocumentFormat(enum.Enum):
    """Which discovery document a ``/api`` or ``/apis`` response holds."""

    LEGACY = "legacy"
    """``APIVersions`` / ``APIGroupList`` (and every per-group-version ``APIResourceList``)."""
    AGGREGATED_V2 = "apidiscovery.k8s.io/v2"
    """``APIGroupDiscoveryList`` of ``apidiscovery.k8s.io/v2`` (GA since 1.30)."""
    AGGREGATED_V2BETA1 = "apidiscovery.k8s.io/v2beta1"
    """``APIGroupDiscoveryList`` of ``apidiscovery.k8s.io/v2beta1`` (served 1.26 to 1.32)."""

    @property
    def aggregated(self) -> bool:
        """True for the two ``APIGroupDiscoveryList`` formats."""
        return self is not DocumentFormat.LEGACY

    @property
    def api_version(self) -> str | None:
        """The ``apiVersion`` of an aggregated document, None for legacy."""
        return self.value if self.aggregated else None

    @property
    def content_type(self) -> str:
        """The Content-Type kube-apiserver sends for this format."""
        if not self.aggregated:
            return ACCEPT_JSON
        version = self.value.rsplit("/", 1)[1]
        return f"application/json;g={_AGGREGATED_GROUP};v={version};as=APIGroupDiscoveryList"


_VERSIONS = {"v2": DocumentFormat.AGGREGATED_V2, "v2beta1": DocumentFormat.AGGREGATED_V2BETA1}


def _media_type(content_type: str) -> tuple[str, dict[str, str]]:
    base, *raw_params = content_type.split(";")
    params: dict[str, str] = {}
    for raw in raw_params:
        name, sep, value = raw.partition("=")
        name = name.strip().lower()
        if not name:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        params[name] = value if sep else ""
    return base.strip().lower(), params


def detect_format(content_type: str | None, *, document: str) -> DocumentFormat:
    """Decide which discovery document a response holds from its Content-Type.

    Args:
        content_type: the response's ``Content-Type`` header value; None or empty is read as JSON (some proxies
            and 304 answers drop it).
        document: what is being parsed, for error messages (``/apis``).

    Returns:
        ``AGGREGATED_V2``/``AGGREGATED_V2BETA1`` for ``application/json`` with ``g=apidiscovery.k8s.io``,
        ``v=v2``/``v2beta1`` and ``as=APIGroupDiscoveryList`` (parameter order, spacing, case of parameter names
        and extra parameters such as ``charset`` do not matter); ``LEGACY`` for plain ``application/json``.

    Raises:
        MalformedDiscoveryError: a media type that is not JSON (``text/html`` from a proxy, ``text/plain`` from
            an unavailable aggregated API, protobuf, YAML), an unknown aggregated version (``v=v3``), or
            ``g``/``v``/``as`` parameters naming some other type.

    Mirrors client-go ``discovery.ContentTypeIsGVK`` as used by ``DiscoveryClient.downloadAPIs``.
    """
    if not content_type or not content_type.strip():
        return DocumentFormat.LEGACY
    base, params = _media_type(content_type)
    shown = quote(content_type.strip(), 200)
    if base != "application/json":
        fail(document, "", f"unexpected Content-Type {shown}: not a JSON discovery document")
    if not params.keys() & {"g", "v", "as"}:
        return DocumentFormat.LEGACY
    return _aggregated_format(params, shown, document)


def _aggregated_format(params: dict[str, str], shown: str, document: str) -> DocumentFormat:
    """The aggregated format the ``g``/``v``/``as`` parameters of a JSON media type name (see
    :func:`detect_format`, which raises what this raises)."""
    if params.get("g", "").lower() != _AGGREGATED_GROUP or params.get("as", "").lower() != _AGGREGATED_KIND:
        fail(document, "", f"unexpected Content-Type {shown}: not an APIGroupDiscoveryList of {_AGGREGATED_GROUP}")
    fmt = _VERSIONS.get(params.get("v", "").lower())
    if fmt is None:
        fail(document, "", f"unexpected Content-Type {shown}: "
             f"unsupported aggregated discovery version {quote(params.get('v', ''))}")
    return fmt
