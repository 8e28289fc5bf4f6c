"""Patches as kube-apiserver applies them: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and strategic merge.

- ``application/json-patch+json``: every RFC 6902 operation (add, remove, replace, move, copy, test) through the
  ``jsonpatch`` package (the kit's ``testing`` extra); a failed ``test`` or a bad path answers 422.
- ``application/merge-patch+json``: RFC 7386 (``null`` deletes, objects merge, lists are replaced).
- ``application/strategic-merge-patch+json``: built-in kinds only (a custom resource answers 415, as the API server's
  CRD handler does not offer it). Lists with a ``patchMergeKey`` in the Kubernetes API types are merged by that key
  (``containers``/``initContainers``/``ephemeralContainers``/``env``/``volumes``/``imagePullSecrets`` by ``name``,
  ``volumeMounts`` by ``mountPath``, ``volumeDevices`` by ``devicePath``, container ``ports`` by ``containerPort``
  and Service ``ports`` by ``port``, ``ownerReferences`` by ``uid``, ``conditions`` by ``type``, ``hostAliases`` by
  ``ip``), ``finalizers`` merge as a set; the directives ``$patch: replace|delete|merge``, ``$retainKeys``,
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` are honoured. **Fallback:** every other
  list is replaced (merge patch semantics), since the kit does not carry the Go types' full patch metadata.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from restmapper._optional import install_hint


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def loads_request_json(data: bytes | str) -> Any:
    """Decode a request body as kube-apiserver's JSON decoder does: ``NaN``/``Infinity`` (which Python's ``json``
    accepts) are refused with a ValueError, as too deep a document is (a RecursionError).

    Raises:
        ValueError: not JSON (UnicodeDecodeError for bytes that are not UTF-8).
        RecursionError: nested too deeply.
    """
    return json.loads(data, parse_constant=_not_json)


__all__ = ["JSON_PATCH", "MERGE_PATCH", "STRATEGIC_MERGE_PATCH", "PatchError", "apply_patch", "json_patch",
           "loads_request_json", "merge_key", "merge_patch", "strategic_merge_patch"]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

_MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "imagePullSecrets": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "ownerReferences": "uid", "conditions": "type", "hostAliases": "ip",
}
_SET_LISTS = frozenset({"finalizers"})


class PatchError(Exception):
    """A patch the API server refuses: ``code`` (400, 415, 422), ``reason`` and ``message`` of its Status."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def merge_key(field: str, items: list[Any]) -> str | None:
    """Return the ``patchMergeKey`` of list ``field`` of a built-in kind (None: atomic, replaced)."""
    if field == "ports":  # container ports by containerPort, Service ports by port
        return "containerPort" if any(isinstance(i, dict) and "containerPort" in i for i in items) else "port"
    return _MERGE_KEYS.get(field)


def merge_patch(target: Any, patch: Any) -> Any:
    """Return ``target`` with the RFC 7386 JSON merge patch ``patch`` applied (``target`` is not modified)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def json_patch(doc: dict[str, Any], operations: Any) -> Any:
    """Return ``doc`` with the RFC 6902 ``operations`` applied (``doc`` is not modified).

    Raises:
        PatchError: 400 when ``operations`` is not a list of operations, 422 when one fails (a failed ``test``,
            a missing path), 500 when the ``jsonpatch`` package is not installed.
    """
    try:
        import jsonpatch
    except ModuleNotFoundError:  # pragma: no cover - declared in the kit's extra
        raise PatchError(500, "InternalError", "JSON patch needs the 'jsonpatch' package: "
                         + install_hint("testing")) from None
    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        raise PatchError(400, "BadRequest", "the JSON patch must be a list of operation objects")
    try:
        patch = jsonpatch.JsonPatch(operations)
        return patch.apply(copy.deepcopy(doc))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, TypeError,
            ValueError) as exc:
        raise PatchError(422, "Invalid", f"the server rejected our request due to an error in our request: "
                                        f"{exc}") from None


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items()
                if not (k.startswith("$setElementOrder/") or k.startswith("$deleteFromPrimitiveList/")
                        or k in ("$patch", "$retainKeys"))}
    if isinstance(value, list):
        return [_strip_directives(v) for v in value if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    return value


def _merge_list(field: str, current: list[Any], patch: list[Any]) -> list[Any]:
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [_strip_directives(i) for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")]
    if field in _SET_LISTS:
        return current + [v for v in patch if v not in current]
    key = merge_key(field, current + patch)
    if key is None or not all(isinstance(i, dict) for i in current + patch):
        return [_strip_directives(i) for i in patch]
    out = copy.deepcopy(current)
    for item in patch:
        index = next((i for i, c in enumerate(out) if c.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del out[index]
        elif index is None:
            out.append(_strip_directives(item))
        else:
            out[index] = _strategic(out[index], item)
    return out


def _strategic(current: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(current, dict):
        current = {}
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return _strip_directives(patch)
    out = copy.deepcopy(current)
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.partition("/")[2]
            if isinstance(out.get(field), list) and isinstance(value, list):
                out[field] = [v for v in out[field] if v not in value]
            continue
        if key.startswith("$") or key.startswith("$setElementOrder/"):
            continue
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(key, out[key], value)
        elif isinstance(value, dict):
            merged = _strategic(out.get(key), value)
            if merged is None:
                out.pop(key, None)
            else:
                out[key] = merged
        else:
            out[key] = _strip_directives(value)
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def strategic_merge_patch(target: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Return ``target`` with a strategic merge patch applied (see the module docstring for what is modelled).

    Raises:
        PatchError: 400 when the patch is not a JSON object.
    """
    if not isinstance(patch, dict):
        raise PatchError(400, "BadRequest", "a strategic merge patch must be a JSON object")
    out = _strategic(target, patch)
    return out if isinstance(out, dict) else {}


def apply_patch(content_type: str, current: dict[str, Any], body: bytes, *, custom_resource: bool) -> dict[str, Any]:
    """Return ``current`` patched by ``body`` of media type ``content_type`` (JSON, merge or strategic merge).

    Args:
        content_type: the request's ``Content-Type`` without parameters.
        current: the stored object (not modified).
        body: the request body.
        custom_resource: True for a CRD's resource (strategic merge is then refused with 415).

    Raises:
        PatchError: for an unsupported media type (415), a body that is not JSON (400) or a patch that fails.
    """
    supported = [JSON_PATCH, MERGE_PATCH, "application/apply-patch+yaml"]
    if not custom_resource:
        supported.insert(2, STRATEGIC_MERGE_PATCH)
    if content_type not in supported:
        raise PatchError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                         f"accepted media types include: {', '.join(supported)}")
    try:
        patch = loads_request_json(body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise PatchError(400, "BadRequest", f"error decoding patch: {exc}") from None
    if content_type == JSON_PATCH:
        out = json_patch(current, patch)
    elif content_type == MERGE_PATCH:
        if not isinstance(patch, dict):
            raise PatchError(400, "BadRequest", "a merge patch must be a JSON object")
        out = merge_patch(current, patch)
    else:
        out = strategic_merge_patch(current, patch)
    if not isinstance(out, dict):
        raise PatchError(422, "Invalid", "the patched object is not a JSON object")
    return out
