"""Kube JSON documents and HTTP details of the fake cluster: discovery bodies, Status bodies, content negotiation.

Everything here is pure: values in, ``(status, headers, body)`` or dicts out. Field order follows the Go structs
kube-apiserver serializes (``metav1.APIResource``, ``apidiscoveryv2.APIResourceDiscovery``); bodies are compact
JSON without a trailing newline so that ``ETag`` is exactly the SHA-512 of the body a client receives.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from restmapper.model import APIResource
from restmapper.testing.profile import ResourceSpec
from restmapper.wire import encode_api_resource

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
    out = []
    for part in header.split(","):
        pieces = [p.strip() for p in part.split(";")]
        if not pieces[0]:
            continue
        params: list[tuple[str, str]] = []
        quality = 1.0
        for p in pieces[1:]:
            key, _, value = p.partition("=")
            key, value = key.strip().lower(), value.strip().strip('"')
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
            elif key:
                params.append((key, value))
        out.append(MediaRange(pieces[0].lower(), tuple(params), quality))
    return sorted((m for m in out if m.quality > 0), key=lambda m: -m.quality)


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


def legacy_resource(res: ResourceSpec) -> list[dict[str, Any]]:
    """Return the ``APIResource`` entries of ``res``: the resource, then one ``parent/sub`` entry each subresource.

    Encoded by :func:`restmapper.wire.encode_api_resource`, the inverse of the parser clients use.
    """
    entries = [APIResource(res.name, res.singular_name, res.namespaced, res.kind, tuple(res.verbs),
                           tuple(res.short_names), tuple(res.categories),
                           storage_version_hash=res.storage_version_hash or None)]
    entries.extend(APIResource(f"{res.name}/{sub.name}", "", res.namespaced, sub.kind, tuple(sub.verbs),
                               group=sub.group or None, version=sub.version or None)
                   for sub in res.subresources)
    return [encode_api_resource(e) for e in entries]


def resource_list(group_version: str, resources: Sequence[ResourceSpec], *, core: bool) -> dict[str, Any]:
    """Return the ``APIResourceList`` of one group version (the core list carries no ``apiVersion``)."""
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if not core:
        doc["apiVersion"] = "v1"
    doc["groupVersion"] = group_version
    doc["resources"] = [e for r in resources for e in legacy_resource(r)]
    return doc


def _gv(group: str, version: str) -> dict[str, str]:
    return {"groupVersion": f"{group}/{version}" if group else version, "version": version}


def api_group(name: str, versions: Sequence[str]) -> dict[str, Any]:
    """Return the ``APIGroup`` entry of a group (versions most preferred first)."""
    return {"name": name, "versions": [_gv(name, v) for v in versions], "preferredVersion": _gv(name, versions[0])}


def aggregated_resource(res: ResourceSpec) -> dict[str, Any]:
    """Return the ``APIResourceDiscovery`` of ``res``."""
    doc: dict[str, Any] = {
        "resource": res.name,
        "responseKind": {"group": res.response_group, "version": res.response_version, "kind": res.kind},
        "scope": "Namespaced" if res.namespaced else "Cluster",
        "singularResource": res.singular_name,
        "verbs": list(res.verbs),
    }
    if res.short_names:
        doc["shortNames"] = list(res.short_names)
    if res.categories:
        doc["categories"] = list(res.categories)
    if res.subresources:
        doc["subresources"] = [
            {
                "subresource": s.name,
                "responseKind": {
                    "group": s.group or res.response_group,
                    "version": s.version or res.response_version,
                    "kind": s.kind,
                },
                "verbs": list(s.verbs),
            }
            for s in res.subresources
        ]
    return doc


def aggregated_list(items: list[dict[str, Any]], version: str) -> dict[str, Any]:
    """Wrap ``APIGroupDiscovery`` items into an ``APIGroupDiscoveryList`` of ``apidiscovery.k8s.io/<version>``."""
    return {"kind": AGGREGATED_KIND, "apiVersion": f"{AGGREGATED_GROUP}/{version}", "metadata": {}, "items": items}


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
