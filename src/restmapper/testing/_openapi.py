"""Minimal OpenAPI documents of the fake cluster: ``/openapi/v3`` (root and one document per group version) and
``/openapi/v2``, enough for kubectl's validation and patch-type choices.

What kubectl reads (cli-runtime ``queryParamVerifierV3``, kubectl ``apply.Patcher``): the v3 root lists every group
version as ``{"paths": {"apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=..."}}}``; a group
version's document has one path per resource endpoint whose operations carry ``x-kubernetes-group-version-kind``
and ``x-kubernetes-action``, the PATCH operation listing the ``fieldValidation`` query parameter (so kubectl leaves
validation to the server, ``fieldValidation=Strict``) and its accepted patch media types in ``requestBody``
(strategic merge only for built-in kinds, as kube-apiserver). Schemas are not modelled: ``components.schemas``
holds, per kind, an object schema with ``apiVersion``/``kind``/``metadata`` (and a CRD version's own
``openAPIV3Schema`` when it has one). ``/openapi/v2`` is served as JSON only (kube-apiserver also serves
protobuf, which kubectl asks for first; it then uses v3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from restmapper.testing.profile import ResourceSpec

__all__ = ["gv_document", "root_document", "swagger_document"]

_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
_SMP = "application/strategic-merge-patch+json"
_QUERY = ("dryRun", "fieldManager", "fieldValidation", "pretty")


def gv_path(group: str, version: str) -> str:
    """``api/v1`` or ``apis/<group>/<version>``: a group version's key in the v3 root."""
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": True}}


def _schema_name(group: str, version: str, kind: str) -> str:
    reversed_group = ".".join(reversed(group.split("."))) if group else "core"
    return f"{reversed_group}.{version}.{kind}"


def _operation(action: str, gvk: dict[str, str], extra: Sequence[str] = (), body: Sequence[str] = ()
               ) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": f"{action}{gvk['kind']}",
        "parameters": [_param(p) for p in (*_QUERY, *extra)],
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": dict(gvk),
    }
    if body:
        op["requestBody"] = {"content": {t: {"schema": {"type": "object"}} for t in body}}
    return op


def gv_document(group: str, version: str, resources: Sequence[ResourceSpec], *, custom: bool,
                schemas: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Return the OpenAPI v3 document of one group version.

    Args:
        group: the group (``""`` for core).
        version: the version.
        resources: the served resources (subresources are described under their parent's path).
        custom: True for a CRD group version (no strategic merge patch).
        schemas: per kind, an ``openAPIV3Schema`` to publish (CRDs).
    """
    prefix = "/" + gv_path(group, version)
    paths: dict[str, Any] = {}
    components: dict[str, Any] = {}
    patch_types = _PATCH_TYPES if custom else (*_PATCH_TYPES[:2], _SMP, _PATCH_TYPES[2])
    for res in resources:
        gvk = {"group": group, "version": version, "kind": res.kind}
        base = f"{prefix}/namespaces/{{namespace}}/{res.name}" if res.namespaced else f"{prefix}/{res.name}"
        collection, item = _operations(gvk, set(res.verbs), patch_types)
        if collection:
            paths[base] = collection
        if item:
            paths[base + "/{name}"] = item
        components[_schema_name(group, version, res.kind)] = _schema(gvk, (schemas or {}).get(res.kind))
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": version}, "paths": paths,
            "components": {"schemas": components}}


_JSON_BODY = ("application/json",)
_VERB_OPERATIONS: tuple[tuple[str, bool, str, str, tuple[str, ...], tuple[str, ...] | None], ...] = (
    ("list", False, "get", "list",
     ("labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch"), ()),
    ("create", False, "post", "post", (), _JSON_BODY),
    ("deletecollection", False, "delete", "deletecollection", (), ()),
    ("get", True, "get", "get", (), ()),
    ("update", True, "put", "put", (), _JSON_BODY),
    ("patch", True, "patch", "patch", ("force",), None),
    ("delete", True, "delete", "delete", ("propagationPolicy", "gracePeriodSeconds"), ()),
)
"""The operation of each verb: verb, on the object path (else the collection path), HTTP method, action, extra
query parameters and request body media types (None: the patch types)."""


def _operations(gvk: dict[str, str], verbs: set[str], patch_types: tuple[str, ...]
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The operations, by HTTP method, of a resource's collection path and of its object path for ``verbs``."""
    collection: dict[str, Any] = {}
    item: dict[str, Any] = {}
    for verb, on_object, method, action, extra, body in _VERB_OPERATIONS:
        if verb in verbs:
            (item if on_object else collection)[method] = _operation(
                action, gvk, extra, body=patch_types if body is None else body)
    return collection, item


def _schema(gvk: dict[str, str], published: dict[str, Any] | None) -> dict[str, Any]:
    """The component schema of kind ``gvk``: the ``published`` one (a CRD's) or an object, with the type fields."""
    schema = dict(published or {"type": "object"})
    schema.setdefault("properties", {}).update({
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}})
    schema["x-kubernetes-group-version-kind"] = [gvk]
    return schema


def root_document(documents: dict[str, bytes]) -> dict[str, Any]:
    """Return the ``/openapi/v3`` root for ``{gv_path: serialized document}`` (each URL carries its hash)."""
    return {"paths": {key: {"serverRelativeURL": f"/openapi/v3/{key}?hash={document_hash(body)}"}
                      for key, body in documents.items()}}


def document_hash(body: bytes) -> str:
    """The ``hash`` query value of a document's URL (upper-case hex SHA-512, as kube-openapi)."""
    return hashlib.sha512(body).hexdigest().upper()


def swagger_document(git_version: str) -> dict[str, Any]:
    """Return a minimal OpenAPI v2 (Swagger 2.0) document."""
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": git_version}, "paths": {},
            "definitions": {}}
