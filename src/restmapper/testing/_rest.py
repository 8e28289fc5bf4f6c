"""Resource endpoints of the fake cluster: create, get, list, update, patch, delete, deletecollection and watch.

Paths as kube-apiserver serves them: ``/api/v1/namespaces/{ns}/configmaps[/{name}[/status]]``, cluster paths
``/apis/{g}/{v}/{resource}[/{name}]``; a namespaced resource at the cluster path lists (and watches) across
namespaces; a cluster-scoped resource under ``/namespaces/`` is 404. Two 404 bodies, as the real server:

- a resource type that is not served: ``the server could not find the requested resource`` (empty details);
- a missing object: ``deployments.apps "x" not found`` with ``details {name, group, kind: <resource>}``.

Objects are stored once per resource and shown in the requested group version (no conversion: ``apiVersion`` is
rewritten). ``customresourcedefinitions`` writes go through the CRD lifecycle (POST is ``add_crd``); their and
``apiservices``' endpoints answer even on a cluster whose discovery does not list them. APIServices are read-only
here (they follow what is served; use ``set_available``). Lists and watches honour ``resourceVersion``,
``resourceVersionMatch``, ``limit``/``continue`` and ``sendInitialEvents`` (see :mod:`restmapper.testing._list`).
Writes, patches, server-side apply, finalizers and namespace deletion follow :mod:`restmapper.testing.objects`. A
create or update whose body names another ``apiVersion`` or ``kind`` than the URL is refused as kube-apiserver
refuses it, and so is a create in a namespace that does not exist (404) or is being deleted (403), as the
``NamespaceLifecycle`` admission plugin does (:meth:`~restmapper.testing.FakeCluster.apply_object`, the Python
seeding path, admits anything). Not modelled: other admission, graceful deletion periods.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from restmapper.model import GroupVersion
from restmapper.testing import _documents as docs
from restmapper.testing._leases import LEASES_KEY
from restmapper.testing._list import ListOptionsError, ListSource, list_page, watch_options
from restmapper.testing._meta import Representation, as_metadata, metadata_list, representation
from restmapper.testing._rbac import forbidden_reply
from restmapper.testing._router import Reply, Request
from restmapper.testing._store import APISERVICE_KEY, CRD_KEY, now_timestamp, object_key
from restmapper.testing._watch import WatchSpec, WatchStream
from restmapper.testing.crd import InvalidCRDError, parse_crd
from restmapper.testing.objects.namespaces import NAMESPACES_KEY, finish_namespace, terminate_namespace
from restmapper.testing.objects.patch import loads_request_json
from restmapper.testing.objects.selectors import (
    BUILTIN_SELECTABLE_FIELDS,
    METADATA_FIELDS,
    NAME_ONLY_METADATA,
    SelectorError,
    compile_selectors,
)
from restmapper.testing.objects.strategy import check_name
from restmapper.testing.objects.writes import (
    APPLY_PATCH,
    APIError,
    Resource,
    api_version_mismatch,
    apply_config,
    check_create,
    check_update,
    delete_options,
    mark_deleting,
    patched,
    write_manager,
)
from restmapper.testing.profile import ResourceSpec

if TYPE_CHECKING:
    from restmapper.testing.cluster import FakeCluster

_DEFAULT_WATCH_TIMEOUT = 1800.0  # kube-apiserver's --min-request-timeout
_ALWAYS = {
    CRD_KEY: (GroupVersion("apiextensions.k8s.io", "v1"), ResourceSpec(
        "customresourcedefinitions", "customresourcedefinition", "CustomResourceDefinition", False,
        ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"), ("crd", "crds"))),
    APISERVICE_KEY: (GroupVersion("apiregistration.k8s.io", "v1"), ResourceSpec(
        "apiservices", "apiservice", "APIService", False,
        ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"))),
}


@dataclass(frozen=True)
class Target:
    """The resource (and object) a request addresses."""

    gv: GroupVersion
    spec: ResourceSpec
    key: str
    namespace: str | None
    name: str | None
    subresource: str | None
    custom: bool = False  # a CRD's resource

    @property
    def qualified(self) -> str:
        """``deployments.apps`` / ``configmaps``: the resource as error messages spell it."""
        return f"{self.spec.name}.{self.gv.group}" if self.gv.group else self.spec.name

    def details(self, name: str) -> dict[str, str]:
        """The ``details`` of a Status about object ``name``."""
        return {"name": name, **({"group": self.gv.group} if self.gv.group else {}), "kind": self.spec.name}


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> Reply:
    return docs.json_reply(code, docs.status_doc(code, reason, message, details))


def _crd_invalid(name: str, exc: InvalidCRDError) -> Reply:
    """422 for a CRD kube-apiserver's validation refuses, as ``errors.NewInvalid(CustomResourceDefinition.
    apiextensions.k8s.io, name, errors)``: every error in the message and one cause per error."""
    return _status(422, "Invalid", f'CustomResourceDefinition.apiextensions.k8s.io "{name}" is invalid: {exc.summary}',
                   {"name": name, "group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition",
                    "causes": exc.causes})


def _bad_request(message: str) -> Reply:
    return _status(400, "BadRequest", message)


def storage_key(cluster: FakeCluster, gv: GroupVersion, spec: ResourceSpec) -> str:
    """Return where objects of ``spec`` at ``gv`` are stored: the CRD name for custom resources (so a renamed
    accepted plural keeps its objects), else ``resource.group`` (``configmaps`` for core). Lock held."""
    for name, crd in cluster.internals.crds().items():
        names = crd.get("status", {}).get("acceptedNames") or crd["spec"]["names"]
        if crd["spec"]["group"] == gv.group and names["plural"] == spec.name:
            return name
    return f"{spec.name}.{gv.group}" if gv.group else spec.name


Lookup = Callable[[GroupVersion], "tuple[Reply | None, tuple[ResourceSpec, ...]]"]


def handle_resource(cluster: FakeCluster, req: Request, gv: GroupVersion, rest: str, lookup: Lookup) -> Reply:
    """Answer a request on a resource path under ``gv`` (``rest`` is the path after the group version).

    ``lookup`` is the discovery handlers' group version lookup (error reply or served resources, lock held).
    """
    target = _target(cluster, gv, rest, lookup)
    if not isinstance(target, Target):
        return target
    verb = _verb(req, target)
    if verb is None:
        return docs.method_not_allowed()
    denial = cluster._denial(target.key, target.namespace) if target.spec.namespaced else None
    if denial is not None:
        return forbidden_reply(denial.user, verb, target.spec.name, gv.group, target.namespace)
    if verb == "watch":
        return _watch(cluster, req, target)
    return _serve(cluster, req, target, verb)


def _serve(cluster: FakeCluster, req: Request, target: Target, verb: str) -> Reply:
    """Answer ``verb`` (any but watch) on ``target``: 405 for a verb the resource does not serve, 406 for an
    ``Accept`` the kit cannot answer, else the verb's handler."""
    if verb not in target.spec.verbs and target.subresource is None:
        return docs.method_not_allowed()
    shape = representation(req.header("Accept"), collection=verb in ("list", "deletecollection"))
    if req.method != "DELETE" and shape is None:
        return docs.not_acceptable()
    if target.key == APISERVICE_KEY and verb not in ("get", "list"):
        return docs.method_not_allowed()  # APIServices follow what is served: read-only here
    try:
        return _dispatch(cluster, req, target, verb, shape or "object")
    except SelectorError as exc:
        return _bad_request(str(exc))


_COLLECTION_VERBS = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
_OBJECT_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def _verb(req: Request, target: Target) -> str | None:
    """The verb of ``req`` on ``target`` as RBAC names it (``watch`` for a GET with ``watch=true``), or None for a
    method the path does not serve."""
    if req.method == "GET" and docs.asks_to_watch(req.query):
        return "watch"
    return (_COLLECTION_VERBS if target.name is None else _OBJECT_VERBS).get(req.method)


def _path_parts(rest: str) -> tuple[str | None, str, str | None, str | None] | None:
    """``rest`` (``[namespaces/{ns}/]{resource}[/{name}[/{sub}]]``) as namespace, resource, name and subresource,
    or None for a path of another shape."""
    parts = [s for s in rest.split("/") if s]
    namespace = None
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    if not 1 <= len(parts) <= 3:
        return None
    name_and_sub: list[str | None] = [*parts[1:], None, None]
    return namespace, parts[0], name_and_sub[0], name_and_sub[1]


def _target(cluster: FakeCluster, gv: GroupVersion, rest: str, lookup: Lookup) -> Target | Reply:
    """What ``rest`` (``[namespaces/{ns}/]{resource}[/{name}[/{sub}]]``) addresses, or the 404 (or discovery error)
    kube-apiserver answers for a path it does not serve."""
    path = _path_parts(rest)
    if path is None:
        return docs.not_found()
    namespace, resource, name, sub = path
    with cluster.internals.lock:
        spec = _served_resource(cluster, gv, resource, lookup)
        if not isinstance(spec, ResourceSpec):
            return spec
        key = storage_key(cluster, gv, spec)
        custom = key in cluster.internals.crds()
    cluster_scoped_in_namespace = namespace is not None and not spec.namespaced
    if cluster_scoped_in_namespace or (sub is not None and sub not in {s.name for s in spec.subresources}):
        return docs.not_found()
    return Target(gv, spec, key, namespace, name, sub, custom)


def _always_served(gv: GroupVersion, name: str) -> ResourceSpec | None:
    """``customresourcedefinitions`` or ``apiservices`` when ``name`` at ``gv`` is one of them, else None."""
    return next((spec for always_gv, spec in _ALWAYS.values() if always_gv == gv and spec.name == name), None)


def _served_resource(cluster: FakeCluster, gv: GroupVersion, name: str, lookup: Lookup) -> ResourceSpec | Reply:
    """The resource ``name`` served at ``gv`` (CRDs and APIServices answer even when discovery does not list
    them), or the error reply (lock held)."""
    cluster.internals.sync_apiservices()
    error, resources = lookup(gv)
    spec = next((r for r in resources if r.name == name), None)
    if spec is not None:
        return spec
    always = _always_served(gv, name)
    if always is not None and (error is None or error[0] == 404):
        return always
    return error if error is not None else docs.not_found()


def _resource(t: Target) -> Resource:
    return Resource(str(t.gv), t.spec.kind, t.spec.name, t.gv.group, t.spec.namespaced,
                    any(s.name == "status" for s in t.spec.subresources), t.custom)


def _error(exc: APIError) -> Reply:
    return _status(exc.code, exc.reason, exc.message, exc.details)


def selectable_fields(cluster: FakeCluster, t: Target) -> tuple[str, ...]:
    """The field selectors ``t``'s resource supports: ``metadata.name``/``metadata.namespace``, and a built-in's own
    fields or the served CRD version's ``selectableFields`` (lock held)."""
    if not t.custom:
        meta = ("metadata.name",) if t.key in NAME_ONLY_METADATA else METADATA_FIELDS
        return meta + BUILTIN_SELECTABLE_FIELDS.get(t.key, ())
    crd = cluster.internals.crds().get(t.key, {})
    versions = crd.get("spec", {}).get("versions", ())
    version: dict[str, Any] = next((v for v in versions if v.get("name") == t.gv.version), {})
    return METADATA_FIELDS + tuple(str(f.get("jsonPath", "")).lstrip(".") for f in version.get("selectableFields", ()))


def _dispatch(cluster: FakeCluster, req: Request, t: Target, verb: str, shape: Representation) -> Reply:
    try:
        with cluster.internals.lock:
            return _dispatch_locked(cluster, req, t, verb, shape)
    except APIError as exc:
        return _error(exc)


def _dispatch_locked(cluster: FakeCluster, req: Request, t: Target, verb: str, shape: Representation) -> Reply:
    if t.name is None:
        return _COLLECTION_HANDLERS[verb](cluster, req, t, shape)
    current = cluster.internals.store.bucket(t.key).get(object_key(t.namespace, t.name))
    if t.key == LEASES_KEY and verb in ("update", "patch"):
        cluster._refuse_partitioned_write(req.body, current)
    if verb == "patch" and _content_type(req) == APPLY_PATCH:
        return _apply(cluster, req, t, current)
    if current is None:
        return _status(404, "NotFound", f'{t.qualified} "{t.name}" not found', t.details(t.name))
    return _OBJECT_HANDLERS[verb](cluster, req, t, current, shape)


def _content_type(req: Request) -> str:
    """The media type of the body (``Content-Type`` without its parameters), lower case."""
    return (req.header("Content-Type") or "").split(";")[0].strip().lower()


def _delete_collection(cluster: FakeCluster, req: Request, t: Target, shape: Representation) -> Reply:
    options = delete_options(req.query, req.body)
    items = _select(cluster, cluster.internals.store.bucket(t.key), t, req)
    shown = [_shown(_delete(cluster, t, obj, options), t) for obj in items]
    return docs.json_reply(200, {
        "kind": t.spec.kind + "List", "apiVersion": str(t.gv),
        "metadata": {"resourceVersion": str(cluster.internals.store.resource_version)}, "items": shown,
    })


def _apply(cluster: FakeCluster, req: Request, t: Target, current: dict[str, Any] | None) -> Reply:
    """Server-side apply: creates the object when there is none."""
    assert t.name is not None
    config = apply_config(_resource(t), current, req.body, req.query, namespace=t.namespace, name=t.name,
                          subresource=t.subresource, now=now_timestamp())
    if current is None:
        return _store_new(cluster, t, config)
    return _store_update(cluster, t, current, config)


def _get(cluster: FakeCluster, req: Request, t: Target, current: dict[str, Any], shape: Representation) -> Reply:
    return docs.json_reply(200, as_metadata(_shown(current, t)) if shape == "metadata" else _shown(current, t))


def _delete_one(cluster: FakeCluster, req: Request, t: Target, current: dict[str, Any],
                shape: Representation) -> Reply:
    return docs.json_reply(200, _shown(_delete(cluster, t, current, delete_options(req.query, req.body)), t))


def _update(cluster: FakeCluster, req: Request, t: Target, current: dict[str, Any], shape: Representation) -> Reply:
    manager = write_manager(req.query, req.header("User-Agent"))
    body = _json_body(req)
    if isinstance(body, tuple):
        return body
    mismatch = api_version_mismatch(_resource(t), body) if t.subresource in (None, "status") else None
    if mismatch is not None:
        raise mismatch
    return _checked_update(cluster, t, current, body, manager)


def _patch(cluster: FakeCluster, req: Request, t: Target, current: dict[str, Any], shape: Representation) -> Reply:
    manager = write_manager(req.query, req.header("User-Agent"))
    # a patch carries no apiVersion of its own: its result keeps the stored one
    body = patched(_resource(t), current, _content_type(req), req.body, req.query)
    return _checked_update(cluster, t, current, body, manager)


def _checked_update(cluster: FakeCluster, t: Target, current: dict[str, Any], body: dict[str, Any],
                    manager: str) -> Reply:
    assert t.name is not None  # an object's path
    new = check_update(_resource(t), current, body, namespace=t.namespace, name=t.name, subresource=t.subresource,
                       manager=manager, now=now_timestamp())
    return _store_update(cluster, t, current, new)


ObjectHandler = Callable[["FakeCluster", Request, Target, "dict[str, Any]", Representation], Reply]
_OBJECT_HANDLERS: dict[str, ObjectHandler] = {"get": _get, "delete": _delete_one, "update": _update, "patch": _patch}
"""The verbs on an existing object, by verb."""


def _list(cluster: FakeCluster, req: Request, t: Target, shape: Representation) -> Reply:
    store = cluster.internals.store
    q = req.query
    label_selector, field_selector = q.get("labelSelector"), q.get("fieldSelector")
    selected = compile_selectors(label_selector, field_selector, selectable_fields(cluster, t))

    def matches(obj: dict[str, Any]) -> bool:
        return (t.namespace is None or obj["metadata"].get("namespace") == t.namespace) and selected(obj)

    source = ListSource(lambda rv: store.sorted_state(t.key, rv), store.resource_version, store.oldest_available,
                        store.expire_continue_tokens, object_key(t.namespace, "") if t.namespace else "")
    try:
        at, items, extra = list_page(q, source, matches, bool(label_selector or field_selector),
                                     cluster.internals.watch_list())
    except ListOptionsError as exc:
        return exc.reply
    if shape == "metadata":
        return docs.json_reply(200, metadata_list({"resourceVersion": str(at), **extra},
                                                  [as_metadata(_shown(obj, t)) for obj in items]))
    return docs.json_reply(200, {
        "kind": t.spec.kind + "List", "apiVersion": str(t.gv),
        "metadata": {"resourceVersion": str(at), **extra},
        "items": [_shown(obj, t) for obj in items],
    })


def _select(cluster: FakeCluster, bucket: dict[str, dict[str, Any]], t: Target, req: Request) -> list[dict[str, Any]]:
    matches = compile_selectors(req.query.get("labelSelector"), req.query.get("fieldSelector"),
                                selectable_fields(cluster, t))
    return [obj for _, obj in sorted(bucket.items())
            if (t.namespace is None or obj["metadata"].get("namespace") == t.namespace) and matches(obj)]


def _shown(obj: dict[str, Any], t: Target) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["apiVersion"], out["kind"] = str(t.gv), t.spec.kind
    return out


def _json_body(req: Request) -> dict[str, Any] | Reply:
    if "protobuf" in (req.header("Content-Type") or ""):
        # kubectl sends built-in types as protobuf; decoding that would need the generated Go types.
        return _status(415, "UnsupportedMediaType",
                       "the restmapper test API server accepts JSON bodies only (kubectl: use "
                       "'kubectl apply -f' or 'kubectl create -f' with a JSON or YAML manifest)")
    try:
        body = loads_request_json(req.body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return _bad_request(f"the body of the request could not be decoded as JSON: {exc}")
    if not isinstance(body, dict):
        return _bad_request("the body of the request must be a JSON object")
    return body


def _create(cluster: FakeCluster, req: Request, t: Target, shape: Representation) -> Reply:
    if t.key == LEASES_KEY:
        cluster._refuse_partitioned_write(req.body, None)
    body = _json_body(req)
    if isinstance(body, tuple):
        return body
    res = _resource(t)
    mismatch = api_version_mismatch(res, body)
    if mismatch is not None:
        raise mismatch
    new = check_create(res, t.namespace, body, manager=write_manager(req.query, req.header("User-Agent")),
                       now=now_timestamp())
    return _store_new(cluster, t, new)


def _store_new(cluster: FakeCluster, t: Target, new: dict[str, Any]) -> Reply:
    name = new["metadata"]["name"]
    if t.key != CRD_KEY:  # a CRD's name is checked against its spec by parse_crd
        check_name(_resource(t), name)
    refused = _namespace_refuses(cluster, t, name)
    if refused is not None:
        return refused
    if object_key(t.namespace, name) in cluster.internals.store.bucket(t.key):
        return _status(409, "AlreadyExists", f'{t.qualified} "{name}" already exists', t.details(name))
    if t.key == CRD_KEY:
        try:
            crd_name = cluster.add_crd(new)
        except InvalidCRDError as exc:
            return _crd_invalid(name, exc)
        return docs.json_reply(201, _shown(cluster.internals.crds()[crd_name], t))
    stored, _ = cluster.internals.store.put(t.key, new)
    return docs.json_reply(201, _shown(stored, t))


def _namespace_refuses(cluster: FakeCluster, t: Target, name: str) -> Reply | None:
    """The answer of kube-apiserver's ``NamespaceLifecycle`` admission to creating ``name`` in ``t.namespace``, or
    None: 404 ``namespaces "x" not found`` when the namespace does not exist, 403 Forbidden while it is being
    deleted (lock held)."""
    if t.namespace is None or t.key == NAMESPACES_KEY:
        return None
    namespace = cluster.internals.store.bucket(NAMESPACES_KEY).get(object_key(None, t.namespace))
    if namespace is None:
        return _status(404, "NotFound", f'namespaces "{t.namespace}" not found',
                       {"name": t.namespace, "kind": "namespaces"})
    if "deletionTimestamp" in namespace["metadata"]:
        reason = f"unable to create new content in namespace {t.namespace} because it is being terminated"
        return _status(403, "Forbidden", f'{t.qualified} "{name}" is forbidden: {reason}', {
            **t.details(name), "causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                                           "message": f"namespace {t.namespace} is being terminated"}]})
    return None


def _store_update(cluster: FakeCluster, t: Target, current: dict[str, Any], new: dict[str, Any]) -> Reply:
    if t.key == CRD_KEY:
        try:
            parse_crd(new, lambda _name: current)  # an update: group and plural immutable (scope, kind too once
            name = cluster.update_crd(new)  # Established), as kube-apiserver's ValidateCustomResourceDefinitionUpdate
        except InvalidCRDError as exc:
            return _crd_invalid(t.name or "", exc)
        return docs.json_reply(200, _shown(cluster.internals.crds()[name], t))
    store = cluster.internals.store
    meta = new["metadata"]
    if "deletionTimestamp" in meta and not meta.get("finalizers"):
        # The last finalizer is gone: the registry removes the object (watchers see DELETED).
        if t.key == NAMESPACES_KEY:
            stored, _ = store.put(t.key, new, bump_generation=None)
            return docs.json_reply(200, _shown(finish_namespace(store, meta["name"]) or stored, t))
        removed = store.remove(t.key, meta.get("namespace"), meta["name"])
        assert removed is not None
        finish_namespace(store, meta.get("namespace"))
        return docs.json_reply(200, _shown(removed, t))
    stored, _ = store.put(t.key, new)
    return docs.json_reply(200, _shown(stored, t))


def _delete(cluster: FakeCluster, t: Target, current: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    meta = current["metadata"]
    if t.key == CRD_KEY:
        last = copy.deepcopy(current)
        cluster.delete_crd(meta["name"])
        return last
    store = cluster.internals.store
    held = mark_deleting(_resource(t), current, options, now_timestamp())
    if t.key == NAMESPACES_KEY:
        return terminate_namespace(store, current, now_timestamp())
    if held is not None:
        if held is current:
            return current
        stored, _ = store.put(t.key, held, bump_generation=None)
        return stored
    removed = store.remove(t.key, meta.get("namespace"), meta["name"])
    assert removed is not None
    finish_namespace(store, meta.get("namespace"))
    return removed


CollectionHandler = Callable[["FakeCluster", Request, Target, Representation], Reply]
_COLLECTION_HANDLERS: dict[str, CollectionHandler] = {
    "list": _list, "create": _create, "deletecollection": _delete_collection}
"""The verbs on a resource's collection path, by verb."""


def _watch(cluster: FakeCluster, req: Request, t: Target) -> Reply:
    if "watch" not in t.spec.verbs and t.key not in _ALWAYS:
        return docs.method_not_allowed()
    shape = representation(req.header("Accept"), collection=False)
    if shape is None:
        return docs.not_acceptable()
    try:
        spec = _watch_spec(cluster, req.query, t, metadata_only=shape == "metadata")
    except ListOptionsError as exc:
        return exc.reply
    stream = WatchStream(cluster.internals.store, spec, mock_wait=cluster.mock_watch_wait)
    return 200, {"Content-Type": docs.JSON, "Cache-Control": "no-cache, private"}, stream


def _watch_spec(cluster: FakeCluster, q: Mapping[str, str], t: Target, *, metadata_only: bool) -> WatchSpec:
    """What a watch on ``t`` with query ``q`` streams, validated.

    Raises:
        ListOptionsError: 400 for a bad selector, resourceVersion or timeout, 422 for invalid watch options.
    """
    field_selector = q.get("fieldSelector")
    if t.name is not None:  # a watch on one object is a watch with a name field selector
        field_selector = ",".join(s for s in (field_selector, f"metadata.name={t.name}") if s)
    with cluster.internals.lock:
        fields = selectable_fields(cluster, t)
    try:
        compile_selectors(q.get("labelSelector"), field_selector, fields)
    except SelectorError as exc:
        raise ListOptionsError(_bad_request(str(exc))) from None
    rv = q.get("resourceVersion") or ""
    if rv not in ("", "0") and not rv.isdigit():
        raise ListOptionsError(_bad_request(f'resourceVersion: Invalid value: "{rv}": must be an integer'))
    with cluster.internals.lock:
        options = watch_options(q, cluster.internals.store.resource_version, cluster.internals.watch_list())
    return WatchSpec(
        key=t.key, api_version=str(t.gv), kind=t.spec.kind, namespace=t.namespace,
        label_selector=q.get("labelSelector"), field_selector=field_selector,
        since=options.since, bookmarks=options.bookmarks, send_initial_events=options.initial_end_bookmark,
        timeout=_watch_timeout(q), initial_events=options.initial_events,
        bookmark_interval=cluster.bookmark_interval, fields=fields, metadata_only=metadata_only,
    )


def _watch_timeout(q: Mapping[str, str]) -> float:
    """The watch's ``timeoutSeconds`` (seconds, not below 0), kube-apiserver's ``--min-request-timeout`` without.

    Raises:
        ListOptionsError: 400 for a value that is not a number.
    """
    text = q.get("timeoutSeconds")
    if not text:
        return _DEFAULT_WATCH_TIMEOUT
    try:
        return max(float(text), 0.0)
    except ValueError:
        raise ListOptionsError(_bad_request(f"invalid timeoutSeconds {text!r}")) from None
