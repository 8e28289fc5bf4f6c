"""Kube JSON documents and HTTP details of the fake cluster: discovery bodies, Status bodies, content negotiation.

Everything here is pure: values in, ``(status, headers, body)`` or dicts out. Field order follows the Go structs
kube-apiserver serializes (``metav1.APIResource``, ``apidiscoveryv2.APIResourceDiscovery``); bodies are compact
JSON without a trailing newline so that ``ETag`` is exactly the SHA-512 of the body a client receives.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion
from restmapper.testing.profile import ResourceSpec
from restmapper.wire import (
    DocumentFormat,
    encode_aggregated,
    encode_api_group,
    encode_api_group_list,
    encode_api_resource_list,
    encode_api_versions,
)

JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
AGGREGATED_GROUP = "apidiscovery.k8s.io"
AGGREGATED_KIND = "APIGroupDiscoveryList"

Reply = tuple[int, dict[str, str], bytes]


def dumps(doc: Mapping[str, Any]) -> bytes:
    """Serialize ``doc`` as compact JSON bytes (what a Go ``json.Marshal`` would send)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def json_reply(status: int, doc: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Reply:
    """Return a JSON reply with ``Content-Type: application/json``."""
    return status, {"Content-Type": JSON, **(headers or {})}, dumps(doc)


def text_reply(status: int, text: str) -> Reply:
    """Return a ``text/plain`` reply as Go's ``http.Error`` writes it (trailing newline, nosniff)."""
    return status, {"Content-Type": TEXT, "X-Content-Type-Options": "nosniff"}, (text + "\n").encode("utf-8")


def status_doc(code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return a ``metav1.Status`` failure document as kube-apiserver writes it."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": dict(details or {}),
        "code": code,
    }


NOT_FOUND_MESSAGE = "the server could not find the requested resource"


def not_found() -> Reply:
    """The 404 ``Status`` kube-apiserver sends for an unknown group or version."""
    return json_reply(404, status_doc(404, "NotFound", NOT_FOUND_MESSAGE))


def page_not_found() -> Reply:
    """The plain ``404 page not found`` Go's mux sends for a path no handler serves."""
    return text_reply(404, "404 page not found")


def method_not_allowed() -> Reply:
    """The 405 ``Status`` for a method the discovery endpoints do not serve."""
    return json_reply(405, status_doc(405, "MethodNotAllowed",
                                      "the server does not allow this method on the requested resource"))


def not_acceptable() -> Reply:
    """The 406 ``Status`` kube-apiserver sends when no offered media type is acceptable."""
    return json_reply(406, status_doc(406, "NotAcceptable",
                                      "only the following media types are accepted: application/json, "
                                      "application/yaml, application/vnd.kubernetes.protobuf"))


# --- content negotiation ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MediaRange:
    """One entry of an ``Accept`` header."""

    type: str
    params: tuple[tuple[str, str], ...]
    quality: float

    def param(self, key: str) -> str | None:
        """Return the value of parameter ``key`` or None."""
        for k, v in self.params:
            if k == key:
                return v
        return None


def parse_accept(header: str | None) -> list[MediaRange]:
    """Parse an ``Accept`` header into media ranges, highest quality first (stable for equal qualities).

    A missing or empty header is ``*/*``, as Go's negotiation treats it.
    """
    if not header or not header.strip():
        return [MediaRange("*/*", (), 1.0)]
    ranges = [_media_range(part) for part in header.split(",")]
    return sorted((m for m in ranges if m is not None and m.quality > 0), key=lambda m: -m.quality)


def _media_range(part: str) -> MediaRange | None:
    """One media range of an ``Accept`` header (``type/subtype;key=value;q=0.5``), None when it names no type; a
    quality that is not a number is 0."""
    media_type, *pieces = [p.strip() for p in part.split(";")]
    if not media_type:
        return None
    params: list[tuple[str, str]] = []
    quality = 1.0
    for piece in pieces:
        key, _, value = piece.partition("=")
        key, value = key.strip().lower(), value.strip().strip('"')
        if key == "q":
            quality = _quality(value)
        elif key:
            params.append((key, value))
    return MediaRange(media_type.lower(), tuple(params), quality)


def _quality(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return 0.0


def negotiate(header: str | None, aggregated_versions: Sequence[str]) -> str | None:
    """Choose the representation for a discovery request, as kube-apiserver's negotiation does.

    Args:
        header: the request's ``Accept`` header.
        aggregated_versions: the ``apidiscovery.k8s.io`` versions this endpoint can serve (empty for legacy-only
            endpoints and for servers without aggregated discovery).

    Returns:
        ``"v2"``/``"v2beta1"`` for aggregated, ``""`` for the legacy JSON document, None when nothing offered is
        acceptable (the caller answers 406). Protobuf and YAML ranges are skipped: the fake cluster only
        speaks JSON, so a client offering JSON as a fallback gets JSON.
    """
    for media in parse_accept(header):
        if media.type not in ("application/json", "application/*", "*/*"):
            continue
        g, v, as_ = media.param("g"), media.param("v"), media.param("as")
        if g is None and v is None and as_ is None:
            return ""
        if g == AGGREGATED_GROUP and as_ == AGGREGATED_KIND and v in aggregated_versions:
            return v
    return None


# --- discovery documents ------------------------------------------------------------------------------------


def api_resources(res: ResourceSpec) -> list[APIResource]:
    """Return the ``APIResource`` entries of ``res``: the resource, then one ``parent/sub`` entry per subresource.

    ``group``/``version`` carry what aggregated discovery puts in ``responseKind`` (empty for built-in resources,
    as kube-apiserver leaves them; the CRD's group version for custom resources).
    """
    entries = [APIResource(res.name, res.singular_name, res.namespaced, res.kind, tuple(res.verbs),
                           tuple(res.short_names), tuple(res.categories), group=res.response_group,
                           version=res.response_version, storage_version_hash=res.storage_version_hash or None)]
    entries.extend(APIResource(f"{res.name}/{sub.name}", "", res.namespaced, sub.kind, tuple(sub.verbs),
                               group=sub.group or res.response_group, version=sub.version or res.response_version)
                   for sub in res.subresources)
    return entries


def resource_list(gv: GroupVersion, resources: Sequence[ResourceSpec]) -> dict[str, Any]:
    """Return the legacy ``APIResourceList`` of one group version, encoded by ``wire.encode_api_resource_list``.

    Legacy entries name a group/version only for a kind of another group version (``deployments/scale``); the core
    list carries no ``apiVersion``, as kube-apiserver's.
    """
    entries = []
    for res in resources:
        for entry in api_resources(res):
            foreign = entry.is_subresource and bool(entry.group or entry.version) and \
                (entry.group, entry.version) != (gv.group, gv.version)
            entries.append(replace(entry, group=entry.group if foreign else None,
                                   version=entry.version if foreign else None))
    doc = encode_api_resource_list(APIResourceList(gv, tuple(entries)))
    if not gv.group:
        del doc["apiVersion"]
    return doc


def api_group(name: str, versions: Sequence[str]) -> dict[str, Any]:
    """Return the ``APIGroup`` document of a group (versions most preferred first), by ``wire.encode_api_group``."""
    return encode_api_group(APIGroup(name, tuple(versions), versions[0]))


def api_group_list(groups: Sequence[tuple[str, Sequence[str]]]) -> dict[str, Any]:
    """Return the legacy ``APIGroupList`` (``/apis``), by ``wire.encode_api_group_list``."""
    return encode_api_group_list([APIGroup(name, tuple(vs), vs[0]) for name, vs in groups])


def api_versions(versions: Sequence[str], server_address: str) -> dict[str, Any]:
    """Return the legacy ``APIVersions`` document (``/api``), by ``wire.encode_api_versions``."""
    return encode_api_versions(versions, server_address=server_address)


def aggregated_list(groups: Sequence[tuple[str, Sequence[tuple[str, Sequence[ResourceSpec]]]]],
                    stale: set[GroupVersion], version: str) -> dict[str, Any]:
    """Return an ``APIGroupDiscoveryList`` of ``apidiscovery.k8s.io/<version>``, by ``wire.encode_aggregated``.

    ``groups`` are ``(name, [(version, resources)])`` in server order, versions preferred first. Two adjustments
    to the encoder's output follow kube-apiserver: a stale version stays at its place in the version order (the
    aggregator sorts every version by priority) with ``freshness: Stale`` and no resources, and the core group's
    ``metadata`` is empty.
    """
    api_groups = [APIGroup(name, tuple(v for v, _ in versions), versions[0][0] if versions else None)
                  for name, versions in groups]
    fmt = DocumentFormat.AGGREGATED_V2 if version == "v2" else DocumentFormat.AGGREGATED_V2BETA1
    doc = encode_aggregated(api_groups, _resource_lists(groups), format=fmt)
    for item in doc["items"]:
        name = item["metadata"]["name"]
        if not name:
            item["metadata"] = {}
        item["versions"] = [{"version": v["version"], "freshness": "Stale"}
                            if GroupVersion(name, v["version"]) in stale else v for v in item["versions"]]
    doc["metadata"] = {}
    return doc


def _resource_lists(groups: Sequence[tuple[str, Sequence[tuple[str, Sequence[ResourceSpec]]]]]
                    ) -> dict[GroupVersion, APIResourceList]:
    """The resource list of every group version of ``groups`` (``(name, [(version, resources)])``)."""
    lists = {}
    for name, versions in groups:
        for v, resources in versions:
            gv = GroupVersion(name, v)
            lists[gv] = APIResourceList(gv, tuple(e for r in resources for e in api_resources(r)))
    return lists


def aggregated_headers(version: str, body: bytes) -> dict[str, str]:
    """Return the headers kube-apiserver sends with an aggregated document (content type, ETag, caching)."""
    return {
        "Content-Type": f"{JSON};g={AGGREGATED_GROUP};v={version};as={AGGREGATED_KIND}",
        "Vary": "Accept",
        "ETag": etag(body),
        "Cache-Control": "public",
    }


def etag(body: bytes) -> str:
    """Return the quoted upper-case hex SHA-512 of ``body`` (kube-apiserver's aggregated discovery ETag)."""
    return '"' + hashlib.sha512(body).hexdigest().upper() + '"'


def asks_to_watch(query: Any) -> bool:
    """Whether a request's ``watch`` parameter is true, in any spelling Go's ``strconv.ParseBool`` (kube-apiserver)
    accepts: ``1``, ``t``, ``T``, ``TRUE``, ``true``, ``True`` (kubernetes_asyncio sends ``True``)."""
    return (query or {}).get("watch") in ("1", "t", "T", "TRUE", "true", "True")
