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


def _directive(item: Any) -> Any:
    """The ``$patch`` directive of a list item or map (``replace``, ``delete``, ``merge``), or None."""
    return item.get("$patch") if isinstance(item, dict) else None


def _merge_list(field: str, current: list[Any], patch: list[Any]) -> list[Any]:
    """List ``field`` of a strategic merge patch applied to ``current``: replaced when an item says ``$patch:
    replace`` or the list has no merge key, merged as a set (``finalizers``) or item by item on the merge key."""
    if any(_directive(i) == "replace" for i in patch):
        return [_strip_directives(i) for i in patch if _directive(i) != "replace"]
    if field in _SET_LISTS:
        return current + [v for v in patch if v not in current]
    key = _list_merge_key(field, current + patch)
    if key is None:
        return [_strip_directives(i) for i in patch]
    return _merge_by_key(key, current, patch)


def _list_merge_key(field: str, items: list[Any]) -> str | None:
    """The key the ``items`` of list ``field`` are matched on, or None for an atomic list (no merge key, or an
    item that is not a map)."""
    key = merge_key(field, items)
    return key if key is not None and all(isinstance(i, dict) for i in items) else None


def _merge_by_key(key: str, current: list[dict[str, Any]], patch: list[dict[str, Any]]) -> list[Any]:
    """The items of ``patch`` merged into (a copy of) ``current``, matched on their ``key`` field: a new item is
    appended, an item with ``$patch: delete`` removed, any other merged into its match."""
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
    """``patch`` applied to ``current`` as a strategic merge patch (None: the ``$patch: delete`` directive)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if _directive(patch) == "delete":
        return None
    if _directive(patch) == "replace":
        return _strip_directives(patch)
    return _patch_map(copy.deepcopy(current) if isinstance(current, dict) else {}, patch)


def _patch_map(out: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The fields and directives of map ``patch`` applied to ``out`` (modified), ``$retainKeys`` last."""
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            _delete_from_primitive_list(out, key.partition("/")[2], value)
        elif not key.startswith("$"):  # $setElementOrder/ (order is not modelled), $retainKeys (below)
            _patch_field(out, key, value)
    retain = patch.get("$retainKeys")
    return {k: v for k, v in out.items() if k in retain} if isinstance(retain, list) else out


def _delete_from_primitive_list(out: dict[str, Any], field: str, values: Any) -> None:
    """The ``$deleteFromPrimitiveList/<field>`` directive: remove ``values`` from list ``field`` (in place)."""
    if isinstance(out.get(field), list) and isinstance(values, list):
        out[field] = [v for v in out[field] if v not in values]


def _patch_field(out: dict[str, Any], key: str, value: Any) -> None:
    """Field ``key`` of a strategic merge patch applied to map ``out`` (in place): ``null`` (or a map saying
    ``$patch: delete``) removes it, lists merge (:func:`_merge_list`), maps recurse, anything else replaces."""
    if isinstance(value, list) and isinstance(out.get(key), list):
        merged = _merge_list(key, out[key], value)
    elif isinstance(value, dict):
        merged = _strategic(out.get(key), value)
    else:
        merged = _strip_directives(value)
    if merged is None:
        out.pop(key, None)
    else:
        out[key] = merged


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
