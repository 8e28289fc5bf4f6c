"""Object writes as kube-apiserver's generic registry performs them: create, update, patch, apply and delete.

Pure object logic over one resource: each function returns the object to store (the caller stores it, through the
store or, for CRDs, the CRD lifecycle) or raises :class:`APIError` with the Status the API server would answer.

Finalizers and deletion follow "Finalizers" and "Garbage collection" in the concepts docs
(https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/): deleting an object that has
``metadata.finalizers`` only sets ``deletionTimestamp`` (and ``deletionGracePeriodSeconds: 0``, bumping
``generation``); the object is removed when an update leaves it with no finalizers; no finalizer may be added
once it is being deleted. ``propagationPolicy`` (``Orphan``, ``Background``, ``Foreground``) is validated and
accepted; as the kit tracks no dependents, the garbage collector's own ``orphan``/``foregroundDeletion``
finalizers would be removed at once, so the kit does not add them. ``preconditions`` (``uid``,
``resourceVersion``) are checked (409).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from restmapper.testing.objects.apply import ApplyConflict, apply, manager_from_user_agent, record_update
from restmapper.testing.objects.patch import PatchError, apply_patch, loads_request_json

__all__ = ["APPLY_PATCH", "APIError", "Resource", "api_version_mismatch", "apply_config", "check_create",
           "check_update", "delete_options", "kind_mismatch", "mark_deleting", "patched", "write_manager"]

APPLY_PATCH = "application/apply-patch+yaml"
_CONDITIONAL_UPDATES_ONLY = frozenset({"leases.coordination.k8s.io"})
"""Resources whose registry strategy refuses an update without a resourceVersion (``AllowUnconditionalUpdate``
false): a PUT must name the version it replaces."""
_POLICIES = ("Foreground", "Background", "Orphan")


class APIError(Exception):
    """A request the API server refuses: the fields of its ``Status``."""

    def __init__(self, code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, dict(details or {})


@dataclass(frozen=True)
class Resource:
    """What the write functions need to know about the addressed resource."""

    api_version: str
    kind: str
    plural: str
    group: str
    namespaced: bool
    has_status: bool
    custom: bool  # a CRD's resource (no strategic merge patch)

    @property
    def qualified(self) -> str:
        """``deployments.apps`` / ``configmaps``: the resource as error messages spell it."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def details(self, name: str) -> dict[str, str]:
        """The ``details`` of a Status about object ``name``."""
        return {"name": name, **({"group": self.group} if self.group else {}), "kind": self.plural}

    def invalid(self, name: str, field: str, message: str) -> APIError:
        """422 Invalid for one field, as ``errors.NewInvalid``: ``Kind.group "name" is invalid: field: message``,
        ``details`` with the name, group, kind and the cause (``message`` starts with the error type:
        ``Forbidden: ...``, ``Required value``, ...)."""
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        details = {**self.details(name), "kind": self.kind, "causes": [_cause(field, message)]}
        if not name:
            del details["name"]  # omitted when empty, as every empty field of a Status
        return APIError(422, "Invalid", f'{kind} "{name}" is invalid: {field}: {message}', details)


_CAUSES = (("Required value", "FieldValueRequired"), ("Forbidden", "FieldValueForbidden"),
           ("Unsupported value", "FieldValueNotSupported"), ("Too long", "FieldValueTooLong"),
           ("Duplicate value", "FieldValueDuplicate"))


def _cause(field: str, message: str) -> dict[str, str]:
    """The Status cause of one field error: its ``reason`` is the type its message starts with (apimachinery's
    ``field.ErrorType``: ``Forbidden: ...`` is ``FieldValueForbidden``), else ``FieldValueInvalid``."""
    reason = next((r for prefix, r in _CAUSES if message.startswith(prefix)), "FieldValueInvalid")
    return {"reason": reason, "message": message, "field": field}


def _options_invalid(kind: str, field: str, message: str) -> APIError:
    return APIError(422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: {field}: {message}',
                    {"group": "meta.k8s.io", "kind": kind, "causes": [_cause(field, message)]})


def kind_mismatch(res: Resource, kind: str, name: str) -> APIError:
    """The error for a body whose ``kind`` is not the resource's, as kube-apiserver answers it.

    A custom resource's validation (apiextensions' ``ValidateTypeMeta``): 422 Invalid, ``<Kind>.<group> "<name>" is
    invalid: kind: Invalid value: "<Kind>": must be <kind>``. A built-in resource's body cannot be decoded into the
    resource's type: 400 BadRequest, ``<Kind> in version "<v>" cannot be handled as a <kind>: ...`` (the server
    adds the Go conversion error, which names its Go types: approximated here from the group's first label).
    """
    version = res.api_version.rpartition("/")[2]
    if res.custom:
        field = f'Invalid value: "{kind}": must be {res.kind}'
        details = {"name": name, "group": res.group, "kind": kind, "causes": [_cause("kind", field)]}
        if not name:
            del details["name"]
        return APIError(422, "Invalid", f'{kind}.{res.group} "{name}" is invalid: kind: {field}', details)
    package = res.group.split(".")[0] if res.group else "core"
    return APIError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {res.kind}: converting '
                    f"({version}.{kind}) to ({package}.{res.kind}): unknown conversion")


def api_version_mismatch(res: Resource, body: Mapping[str, Any]) -> APIError | None:
    """The error for a create or update body whose ``apiVersion`` is not the one of the URL, or None.

    kube-apiserver's create and update handlers (built-in and custom resources alike): 400 BadRequest, ``the API
    version in the data (<sent>) does not match the expected API version (<url's>)``. A body without
    ``apiVersion`` takes the URL's. A built-in body of another kind fails its decoding first (:func:`kind_mismatch`).
    """
    sent, kind = body.get("apiVersion"), body.get("kind")
    if not sent or sent == res.api_version or (not res.custom and kind not in (None, "", res.kind)):
        return None
    return APIError(400, "BadRequest", f"the API version in the data ({sent}) does not match the expected API "
                    f"version ({res.api_version})")


def write_manager(query: Mapping[str, str], user_agent: str | None) -> str:
    """The field manager of a write: ``fieldManager`` or the User-Agent's product.

    Raises:
        APIError: 422 for a ``fieldManager`` longer than 128 characters.
    """
    manager = query.get("fieldManager")
    if manager is not None and len(manager) > 128:
        raise _options_invalid("PatchOptions", "fieldManager", "Too long: may not be more than 128 bytes")
    return manager or manager_from_user_agent(user_agent)


def _identity(res: Resource, body: Mapping[str, Any], namespace: str | None, name: str | None) -> None:
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        raise res.invalid("", "metadata.name", "Required value: name or generateName is required")
    kind = body.get("kind")
    if kind not in (None, "", res.kind):
        raise kind_mismatch(res, str(kind), str(meta.get("name") or ""))
    ns = meta.get("namespace")
    if res.namespaced and ns and namespace is not None and ns != namespace:
        raise APIError(400, "BadRequest", "the namespace of the provided object does not match the namespace sent "
                       "on the request")
    if name is not None and meta.get("name") != name:
        raise APIError(400, "BadRequest", f"the name of the object ({meta.get('name')}) does not match the name on "
                       f"the URL ({name})")


def check_create(res: Resource, namespace: str | None, body: dict[str, Any], *, manager: str,
                 now: str) -> dict[str, Any]:
    """Validate a create and return the object to store (name generated, namespace set, server fields cleared).

    Raises:
        APIError: 400/422 for a body that does not fit the resource, 405 for a namespaced create without a
            namespace.
    """
    _identity(res, body, namespace, None)
    meta = body["metadata"]
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = str(meta["generateName"]) + uuid.uuid4().hex[:5]
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise APIError(422, "Invalid", f"{res.kind} is invalid: metadata.name: Required value: name or "
                       "generateName is required")
    if res.namespaced:
        if namespace is None:
            raise APIError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
                "deletionGracePeriodSeconds"):
        meta.pop(key, None)
    body["apiVersion"], body["kind"] = res.api_version, res.kind
    if res.has_status:
        body.pop("status", None)  # the status subresource's strategy resets it on create
    record_update(None, body, manager=manager, api_version=res.api_version, now=now)
    return body


def check_update(res: Resource, current: dict[str, Any], body: dict[str, Any], *, namespace: str | None,
                 name: str, subresource: str | None, manager: str | None, now: str) -> dict[str, Any]:
    """Validate an update (PUT or a patch's result) and return the object to store.

    Raises:
        APIError: 409 on a stale ``resourceVersion``, 422 without one for a resource that forbids unconditional
            updates (Leases), 400/422 for a body that does not fit, 422 for a finalizer added to an object being
            deleted.
    """
    _identity(res, body, namespace, name)
    sent_version = body["metadata"].get("resourceVersion")
    if not sent_version and res.qualified in _CONDITIONAL_UPDATES_ONLY:
        raise APIError(422, "Invalid", f'{res.qualified} "{name}" is invalid: metadata.resourceVersion: Invalid '
                       "value: 0x0: must be specified for an update",
                       {**res.details(name), "causes": [_cause("metadata.resourceVersion",
                                                               "Invalid value: 0x0: must be specified for an update")]})
    _check_resource_version(res, current, sent_version, name)
    if namespace:
        body["metadata"]["namespace"] = namespace
    body = _with_status_of_write(res, current, body, subresource)
    body["metadata"]["name"] = name
    _keep_deletion(res, current["metadata"], body["metadata"], name)
    body["apiVersion"], body["kind"] = res.api_version, res.kind
    if manager is not None:
        record_update(current, body, manager=manager, api_version=res.api_version, now=now, subresource=subresource)
    return body


def _with_status_of_write(res: Resource, current: dict[str, Any], body: dict[str, Any],
                          subresource: str | None) -> dict[str, Any]:
    """The object an update of ``subresource`` writes: a status update changes only ``status`` (of a copy of
    ``current``); the main resource of a kind with a status subresource keeps the stored ``status``."""
    if subresource == "status":
        new = copy.deepcopy(current)
        new["status"] = body.get("status")
        return new
    if res.has_status and "status" in current:
        body["status"] = copy.deepcopy(current["status"])  # the main resource ignores status changes
    elif res.has_status:
        body.pop("status", None)
    return body


def _keep_deletion(res: Resource, old_meta: Mapping[str, Any], meta: dict[str, Any], name: str) -> None:
    """Keep the fields only a deletion sets (``deletionTimestamp``, ``deletionGracePeriodSeconds``) as stored in
    ``old_meta`` (in place).

    Raises:
        APIError: 422 for a finalizer added to an object being deleted.
    """
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        if key in old_meta:
            meta[key] = old_meta[key]
        else:
            meta.pop(key, None)
    if "deletionTimestamp" not in old_meta:
        return
    added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
    if added:
        raise res.invalid(name, "metadata.finalizers", f"Forbidden: no new finalizers can be added if the object "
                          f"is being deleted, found new finalizers {sorted(added)}")


def _check_resource_version(res: Resource, current: Mapping[str, Any], sent: object, name: str) -> None:
    """The registry's optimistic concurrency: a write naming a resourceVersion (any verb, apply included) applies
    only to the object at that version.

    Raises:
        APIError: 409 Conflict when ``sent`` is set and is not ``current``'s resourceVersion.
    """
    if sent and sent != current["metadata"]["resourceVersion"]:
        raise APIError(409, "Conflict", f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has '
                       "been modified; please apply your changes to the latest version and try again",
                       res.details(name))


def patched(res: Resource, current: dict[str, Any], content_type: str, data: bytes,
            query: Mapping[str, str]) -> dict[str, Any]:
    """Return ``current`` with a JSON, merge or strategic merge patch applied (not stored, not yet validated).

    Raises:
        APIError: 415 for an unsupported patch type, 400/422 for a bad patch or options.
    """
    if query.get("force") is not None:
        raise _options_invalid("PatchOptions", "force", "Forbidden: may not be specified for non-apply patch")
    try:
        return apply_patch(content_type, current, data, custom_resource=res.custom)
    except PatchError as exc:
        raise APIError(exc.code, exc.reason, exc.message) from None


def apply_config(res: Resource, current: dict[str, Any] | None, data: bytes, query: Mapping[str, str], *,
                 namespace: str | None, name: str, subresource: str | None, now: str) -> dict[str, Any]:
    """Return the object after a server-side apply of ``data`` (YAML or JSON) to ``current`` (None: create).

    Raises:
        APIError: 422 without ``fieldManager``, 400 for a body that is not an object of this resource, 409 for a
            stale ``metadata.resourceVersion`` in ``data`` (forced or not), 409 (``Conflict`` with
            ``FieldManagerConflict`` causes) on conflicts without ``force``.
    """
    manager, force = _apply_options(query)
    config = _apply_configuration(data)
    _identity(res, {**config, "apiVersion": res.api_version}, namespace, name)
    mismatch = api_version_mismatch(res, config)
    if mismatch is not None:
        raise mismatch
    if namespace:
        config["metadata"]["namespace"] = namespace
    if subresource != "status" and res.has_status:
        config.pop("status", None)
    if current is not None:
        _check_resource_version(res, current, config["metadata"].get("resourceVersion"), name)
    try:
        out = apply(current, config, manager=manager, force=force, api_version=res.api_version, now=now,
                    subresource=subresource)
    except ApplyConflict as exc:
        causes = [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}" using {v}', "field": f}
                  for m, v, f in exc.conflicts]
        raise APIError(409, "Conflict", exc.message, {"causes": causes}) from None
    out["apiVersion"], out["kind"] = res.api_version, res.kind
    return out


def _apply_options(query: Mapping[str, str]) -> tuple[str, bool]:
    """The ``fieldManager`` (required) and ``force`` of an apply.

    Raises:
        APIError: 422 without ``fieldManager`` or with one longer than 128 characters.
    """
    manager = query.get("fieldManager") or ""
    if not manager:
        raise _options_invalid("PatchOptions", "fieldManager", "Required value: is required for apply patch")
    write_manager(query, None)
    return manager, (query.get("force") or "").lower() in ("1", "true")


def _apply_configuration(data: bytes) -> dict[str, Any]:
    """The configuration an apply sends (YAML or JSON), checked as the API server checks it before applying.

    Raises:
        APIError: 400 for a body that is not YAML, not an object, lacks ``apiVersion`` or ``kind``, or sets
            ``metadata.managedFields``.
    """
    try:
        config = yaml.safe_load(data.decode("utf-8")) if data.strip() else None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise APIError(400, "BadRequest", f"error decoding YAML: {exc}") from None
    if not isinstance(config, dict):
        raise APIError(400, "BadRequest", "the apply configuration must be an object")
    if not config.get("apiVersion") or not config.get("kind"):
        raise APIError(400, "BadRequest", "apiVersion and kind must be set in the applied configuration")
    meta = config.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields"):
        raise APIError(400, "BadRequest", "metadata.managedFields must be nil")
    return config


def delete_options(query: Mapping[str, str], body: bytes) -> dict[str, Any]:
    """Return the ``DeleteOptions`` of a delete (body merged with query parameters), validated.

    Raises:
        APIError: 400 for a body that is not JSON, 422 for an unknown ``propagationPolicy``.
    """
    options: dict[str, Any] = {}
    if body.strip():
        try:
            parsed = loads_request_json(body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise APIError(400, "BadRequest", f"the body of the request could not be decoded: {exc}") from None
        if isinstance(parsed, dict):
            options.update(parsed)
    if query.get("propagationPolicy"):
        options["propagationPolicy"] = query["propagationPolicy"]
    policy = options.get("propagationPolicy")
    if policy is not None and policy not in _POLICIES:
        raise _options_invalid("DeleteOptions", "propagationPolicy",
                               f'Unsupported value: "{policy}": supported values: "Foreground", "Background", '
                               '"Orphan", "nil"')
    return options


def _check_preconditions(res: Resource, meta: Mapping[str, Any], preconditions: Any) -> None:
    """A delete's ``preconditions`` (``uid``, ``resourceVersion``) against the object's ``meta``.

    Raises:
        APIError: 409 when one does not hold.
    """
    pre = preconditions if isinstance(preconditions, dict) else {}
    name = str(meta.get("name"))
    for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        wanted, actual = pre.get(field), meta.get(field)
        if wanted is not None and wanted != actual:
            raise APIError(409, "Conflict", f"Operation cannot be fulfilled on {res.qualified} \"{name}\": "
                           f"Precondition failed: {label} in precondition: {wanted}, {label} in object meta: "
                           f"{actual}", res.details(name))


def mark_deleting(res: Resource, current: dict[str, Any], options: Mapping[str, Any], now: str
                  ) -> dict[str, Any] | None:
    """Check a delete's preconditions; return the object to store when finalizers hold it (``deletionTimestamp``
    set), or None when it is to be removed now.

    Raises:
        APIError: 409 when a precondition does not hold.
    """
    meta = current["metadata"]
    _check_preconditions(res, meta, options.get("preconditions"))
    if not meta.get("finalizers"):
        return None
    if "deletionTimestamp" in meta:
        return current
    new = copy.deepcopy(current)
    new["metadata"]["deletionTimestamp"] = now
    new["metadata"]["deletionGracePeriodSeconds"] = 0
    if isinstance(meta.get("generation"), int) and meta["generation"] > 0:  # kinds without one get none
        new["metadata"]["generation"] = meta["generation"] + 1
    return new
