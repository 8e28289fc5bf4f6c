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
Not modelled: admission (a namespace need not exist), finalizers and graceful deletion, server-side apply.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from restmapper.model import GroupVersion
from restmapper.testing import _documents as docs
from restmapper.testing._list import ListOptionsError, ListSource, list_page, watch_options
from restmapper.testing._router import Reply, Request
from restmapper.testing._store import APISERVICE_KEY, CRD_KEY, SelectorError, merge_patch, object_key, selector_matches
from restmapper.testing._watch import WatchSpec, WatchStream
from restmapper.testing.crd import InvalidCRDError
from restmapper.testing.profile import ResourceSpec

if TYPE_CHECKING:
    from restmapper.testing.cluster import FakeCluster

_MERGE_TYPES = ("application/merge-patch+json", "application/strategic-merge-patch+json")
_JSON_PATCH = "application/json-patch+json"
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

    @property
    def qualified(self) -> str:
        """``deployments.apps`` / ``configmaps``: the resource as error messages spell it."""
        return f"{self.spec.name}.{self.gv.group}" if self.gv.group else self.spec.name

    def details(self, name: str) -> dict[str, str]:
        """The ``details`` of a Status about object ``name``."""
        return {"name": name, **({"group": self.gv.group} if self.gv.group else {}), "kind": self.spec.name}


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> Reply:
    return docs.json_reply(code, docs.status_doc(code, reason, message, details))


def _bad_request(message: str) -> Reply:
    return _status(400, "BadRequest", message)


def storage_key(cluster: FakeCluster, gv: GroupVersion, spec: ResourceSpec) -> str:
    """Return where objects of ``spec`` at ``gv`` are stored: the CRD name for custom resources (so a renamed
    accepted plural keeps its objects), else ``resource.group`` (``configmaps`` for core). Lock held."""
    for name, crd in cluster._crds.items():
        names = crd.get("status", {}).get("acceptedNames") or crd["spec"]["names"]
        if crd["spec"]["group"] == gv.group and names["plural"] == spec.name:
            return name
    return f"{spec.name}.{gv.group}" if gv.group else spec.name


Lookup = Callable[[GroupVersion], "tuple[Reply | None, tuple[ResourceSpec, ...]]"]


def handle_resource(cluster: FakeCluster, req: Request, gv: GroupVersion, rest: str, lookup: Lookup) -> Reply:
    """Answer a request on a resource path under ``gv`` (``rest`` is the path after the group version).

    ``lookup`` is the discovery handlers' group version lookup (error reply or served resources, lock held).
    """
    parts = [s for s in rest.split("/") if s]
    namespace = None
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    if not parts or len(parts) > 3:
        return docs.not_found()
    with cluster._lock:
        cluster._sync_apiservices()
        error, resources = lookup(gv)
        spec = next((r for r in resources if r.name == parts[0]), None)
        if spec is None:
            always = next((v for v in _ALWAYS.values() if v[0] == gv and v[1].name == parts[0]), None)
            if always is None or (error is not None and error[0] != 404):
                return error if error is not None else docs.not_found()
            spec = always[1]
        key = storage_key(cluster, gv, spec)
    if namespace is not None and not spec.namespaced:
        return docs.not_found()
    sub = parts[2] if len(parts) == 3 else None
    if sub is not None and sub not in {s.name for s in spec.subresources}:
        return docs.not_found()
    target = Target(gv, spec, key, namespace, parts[1] if len(parts) >= 2 else None, sub)
    if target.name is None and req.method in ("PUT", "PATCH"):
        return docs.method_not_allowed()
    if req.method == "GET" and req.query.get("watch") in ("1", "true"):
        return _watch(cluster, req, target)
    verb = _verb(req.method, target)
    if verb is None or (verb not in spec.verbs and sub is None):
        return docs.method_not_allowed()
    if req.method != "DELETE" and docs.negotiate(req.header("Accept"), ()) is None:
        return docs.not_acceptable()
    if key == APISERVICE_KEY and verb not in ("get", "list"):
        return docs.method_not_allowed()
    try:
        return _dispatch(cluster, req, target, verb)
    except SelectorError as exc:
        return _bad_request(str(exc))


def _verb(method: str, target: Target) -> str | None:
    if target.name is None:
        return {"GET": "list", "POST": "create", "DELETE": "deletecollection"}.get(method)
    return {"GET": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method)


def _dispatch(cluster: FakeCluster, req: Request, t: Target, verb: str) -> Reply:
    with cluster._lock:
        bucket = cluster._store.bucket(t.key)
        if verb == "deletecollection":
            items = _select(bucket, t, req)
            for obj in items:
                _delete(cluster, t, obj["metadata"].get("namespace"), obj["metadata"]["name"])
            return docs.json_reply(200, {
                "kind": t.spec.kind + "List", "apiVersion": str(t.gv),
                "metadata": {"resourceVersion": str(cluster._store.resource_version)},
                "items": [_shown(obj, t) for obj in items],
            })
        if verb == "list":
            return _list(cluster, req, t)
        if verb == "create":
            return _create(cluster, req, t)
        assert t.name is not None
        current = bucket.get(object_key(t.namespace, t.name))
        if current is None:
            return _status(404, "NotFound", f'{t.qualified} "{t.name}" not found', t.details(t.name))
        if verb == "get":
            return docs.json_reply(200, _shown(current, t))
        if verb == "delete":
            return docs.json_reply(200, _shown(_delete(cluster, t, t.namespace, t.name), t))
        body = _json_body(req)
        if isinstance(body, tuple):
            return body
        if verb == "patch":
            patched = _patch(req, current, body)
            if isinstance(patched, tuple):
                return patched
            body = patched
        return _update(cluster, t, current, body)


def _list(cluster: FakeCluster, req: Request, t: Target) -> Reply:
    store = cluster._store
    q = req.query
    label_selector, field_selector = q.get("labelSelector"), q.get("fieldSelector")

    def matches(obj: dict[str, Any]) -> bool:
        return (t.namespace is None or obj["metadata"].get("namespace") == t.namespace) and \
            selector_matches(obj, label_selector, field_selector)

    source = ListSource(lambda rv: store.snapshot(t.key, rv), store.resource_version, store.oldest_available)
    try:
        at, items, extra = list_page(q, source, matches, bool(label_selector or field_selector))
    except ListOptionsError as exc:
        return exc.reply
    return docs.json_reply(200, {
        "kind": t.spec.kind + "List", "apiVersion": str(t.gv),
        "metadata": {"resourceVersion": str(at), **extra},
        "items": [_shown(obj, t) for obj in items],
    })


def _select(bucket: dict[str, dict[str, Any]], t: Target, req: Request) -> list[dict[str, Any]]:
    return [obj for _, obj in sorted(bucket.items())
            if (t.namespace is None or obj["metadata"].get("namespace") == t.namespace)
            and selector_matches(obj, req.query.get("labelSelector"), req.query.get("fieldSelector"))]


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
        body = json.loads(req.body or b"null")
    except (ValueError, UnicodeDecodeError) as exc:
        return _bad_request(f"the body of the request could not be decoded as JSON: {exc}")
    if req.method != "PATCH" and not isinstance(body, dict):
        return _bad_request("the body of the request must be a JSON object")
    return body  # type: ignore[no-any-return]


def _patch(req: Request, current: dict[str, Any], patch: Any) -> dict[str, Any] | Reply:
    content_type = (req.header("Content-Type") or "").split(";")[0].strip().lower()
    if content_type in _MERGE_TYPES:
        if not isinstance(patch, dict):
            return _bad_request("a merge patch must be a JSON object")
        out = merge_patch(current, patch)
    elif content_type == _JSON_PATCH:
        try:
            out = _json_patch(current, patch)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            return _status(422, "Invalid", f"the JSON patch could not be applied: {exc!r}")
    else:
        return _status(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted "
                       f"media types include: {_JSON_PATCH}, {', '.join(_MERGE_TYPES)}")
    if not isinstance(out, dict):
        return _bad_request("the patched object is not a JSON object")
    return out


def _json_patch(doc: dict[str, Any], ops: Any) -> Any:
    """Apply an RFC 6902 patch (add, remove, replace, test); raises on a bad path or a failed test."""
    out: Any = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ValueError("a JSON patch must be a list of operations")
    for op in ops:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in str(op["path"]).split("/")[1:]]
        if not tokens:
            raise ValueError("the root path is not supported")
        parent = out
        for tok in tokens[:-1]:
            parent = parent[int(tok)] if isinstance(parent, list) else parent[tok]
        last: Any = tokens[-1]
        if isinstance(parent, list):
            last = len(parent) if last == "-" else int(last)
        kind = op["op"]
        if kind == "add":
            parent.insert(last, op["value"]) if isinstance(parent, list) else parent.__setitem__(last, op["value"])
        elif kind == "remove":
            del parent[last]
        elif kind == "replace":
            _ = parent[last]  # replace requires an existing target
            parent[last] = op["value"]
        elif kind == "test":
            if parent[last] != op["value"]:
                raise ValueError(f"test failed at {op['path']}")
        else:
            raise ValueError(f"unsupported operation {kind!r}")
    return out


def _check_identity(t: Target, body: dict[str, Any], name: str | None) -> Reply | None:
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        return _status(422, "Invalid", f"{t.spec.kind} is invalid: metadata: Required value")
    if body.get("kind") not in (None, t.spec.kind):
        return _bad_request(f"the kind of the provided object ({body.get('kind')}) does not match the resource "
                            f"({t.spec.kind})")
    ns = meta.get("namespace")
    if t.spec.namespaced and ns and t.namespace is not None and ns != t.namespace:
        return _bad_request("the namespace of the provided object does not match the namespace sent on the request")
    if name is not None and meta.get("name") != name:
        return _bad_request(f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
    return None


def _create(cluster: FakeCluster, req: Request, t: Target) -> Reply:
    body = _json_body(req)
    if isinstance(body, tuple):
        return body
    error = _check_identity(t, body, None)
    if error is not None:
        return error
    meta = body["metadata"]
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = str(meta["generateName"]) + uuid.uuid4().hex[:5]
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return _status(422, "Invalid", f"{t.spec.kind} is invalid: metadata.name: Required value: name or "
                       "generateName is required")
    if t.spec.namespaced:
        if t.namespace is None:
            return docs.method_not_allowed()  # POST to the all-namespaces path
        meta["namespace"] = t.namespace
    else:
        meta.pop("namespace", None)
    if object_key(t.namespace, name) in cluster._store.bucket(t.key):
        return _status(409, "AlreadyExists", f'{t.qualified} "{name}" already exists', t.details(name))
    if t.key == CRD_KEY:
        try:
            crd_name = cluster.add_crd(body)
        except InvalidCRDError as exc:
            return _status(422, "Invalid", str(exc), {"name": name, "group": t.gv.group, "kind": t.spec.name})
        return docs.json_reply(201, _shown(cluster._crds[crd_name], t))
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp"):
        meta.pop(key, None)
    body["apiVersion"], body["kind"] = str(t.gv), t.spec.kind
    stored, _ = cluster._store.put(t.key, body)
    return docs.json_reply(201, _shown(stored, t))


def _update(cluster: FakeCluster, t: Target, current: dict[str, Any], body: dict[str, Any]) -> Reply:
    error = _check_identity(t, body, t.name)
    if error is not None:
        return error
    meta = body["metadata"]
    sent_rv = meta.get("resourceVersion")
    if sent_rv and sent_rv != current["metadata"]["resourceVersion"]:
        return _status(409, "Conflict", f'Operation cannot be fulfilled on {t.qualified} "{t.name}": the object has '
                       "been modified; please apply your changes to the latest version and try again",
                       t.details(t.name or ""))
    if t.namespace:
        meta["namespace"] = t.namespace
    if t.subresource == "status":
        body = {**copy.deepcopy(current), "status": body.get("status")}
    elif "status" in current and any(s.name == "status" for s in t.spec.subresources):
        body["status"] = copy.deepcopy(current["status"])  # the main resource ignores status changes
    if t.key == CRD_KEY:
        try:
            name = cluster.update_crd(body)
        except InvalidCRDError as exc:
            return _status(422, "Invalid", str(exc), t.details(t.name or ""))
        return docs.json_reply(200, _shown(cluster._crds[name], t))
    body["metadata"] = {**body["metadata"], "name": t.name}
    stored, _ = cluster._store.put(t.key, body)
    return docs.json_reply(200, _shown(stored, t))


def _delete(cluster: FakeCluster, t: Target, namespace: str | None, name: str) -> dict[str, Any]:
    if t.key == CRD_KEY:
        last = copy.deepcopy(cluster._crds[name])
        cluster.delete_crd(name)
        return last
    removed = cluster._store.remove(t.key, namespace, name)
    assert removed is not None
    return removed


def _watch(cluster: FakeCluster, req: Request, t: Target) -> Reply:
    if "watch" not in t.spec.verbs and t.key not in _ALWAYS:
        return docs.method_not_allowed()
    q = req.query
    field_selector = q.get("fieldSelector")
    if t.name is not None:  # a watch on one object is a watch with a name field selector
        field_selector = ",".join(s for s in (field_selector, f"metadata.name={t.name}") if s)
    try:
        selector_matches({}, q.get("labelSelector"), field_selector)
    except SelectorError as exc:
        return _bad_request(str(exc))
    rv = q.get("resourceVersion") or ""
    if rv not in ("", "0") and not rv.isdigit():
        return _bad_request(f'resourceVersion: Invalid value: "{rv}": must be an integer')
    try:
        with cluster._lock:
            options = watch_options(q, cluster._store.resource_version)
    except ListOptionsError as exc:
        return exc.reply
    try:
        timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else _DEFAULT_WATCH_TIMEOUT
    except ValueError:
        return _bad_request(f"invalid timeoutSeconds {q.get('timeoutSeconds')!r}")
    spec = WatchSpec(
        key=t.key, api_version=str(t.gv), kind=t.spec.kind, namespace=t.namespace,
        label_selector=q.get("labelSelector"), field_selector=field_selector,
        since=options.since, bookmarks=options.bookmarks, send_initial_events=options.initial_end_bookmark,
        timeout=max(timeout, 0.0), initial_events=options.initial_events,
        bookmark_interval=cluster.bookmark_interval,
    )
    stream = WatchStream(cluster._store, spec, mock_wait=cluster.mock_watch_wait)
    return 200, {"Content-Type": docs.JSON, "Cache-Control": "no-cache, private"}, stream
