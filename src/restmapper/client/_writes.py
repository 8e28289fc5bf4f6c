"""One write request: how it is built for a mapping, sent, healed after a 404 for its type, and read back.

A :class:`Write` is built once per call (kind resolved through the mapper, path, body, headers); :func:`send` is
the one path every write takes to the server, and :class:`Observation` says what the object cache must have seen
before the write may return (read your writes).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from restmapper.errors import (
    APIStatusError,
    InvalidArgumentError,
    MappingChangedError,
    ObjectNotFoundStatusError,
    RestMapperError,
    TransportError,
    is_no_match,
)
from restmapper.mapper import has_moved, may_resend
from restmapper.mapper.lazy import LazyRESTMapper
from restmapper.model import GroupKind, GroupVersion, GroupVersionKind, GroupVersionResource, RESTMapping
from restmapper.transport import WritingTransport, status_error

__all__ = ["KindArg", "Observation", "Write", "check_object_name", "check_scope", "check_subresource",
           "mapping_for_kind", "mapping_for_object", "namespace_for", "observation", "send"]

_log = logging.getLogger("restmapper.client")

KindArg = GroupKind | GroupVersionKind | GroupVersionResource | str
"""What names a kind: a GroupKind, a GVK (its version is required), a GVR, or what a user types (``"deploy"``)."""

JSON = "application/json"


@dataclass(frozen=True)
class Write:
    """One write, built for ``mapping``.

    Attributes:
        verb: the client method (``create``, ``update``, ``update_status``, ``patch``, ``apply``, ``delete``).
        method: the HTTP method.
        mapping: the mapping it was built for.
        namespace: the namespace in the path (None for cluster-scoped kinds and their collections).
        name: the object name in the path (None: the collection, for a create).
        body: the request body.
        content_type: its Content-Type.
        params: query parameters.
        subresource: ``status`` for a status update, else None.
        bound_to_version: the body (or the patch) was written for ``mapping``'s version, so it is never sent to
            another one; False only for a delete of a kind named without a version.
    """

    verb: str
    method: str
    mapping: RESTMapping
    namespace: str | None
    name: str | None
    body: bytes
    content_type: str = JSON
    params: Mapping[str, str] = field(default_factory=dict)
    subresource: str | None = None
    bound_to_version: bool = True

    def __post_init__(self) -> None:
        if self.name is None and self.method != "POST":  # the collection: a DELETE there is a deletecollection
            raise InvalidArgumentError(f"{self.verb} addresses one object: it needs its name")

    def path(self, mapping: RESTMapping) -> str:
        """The request path under ``mapping``."""
        path = mapping.path(self.namespace if mapping.namespaced else None, self.name)
        return f"{path}/{self.subresource}" if self.subresource else path

    def may_resend(self, old: RESTMapping, new: RESTMapping) -> bool:
        """Whether the request may go to ``new`` after ``old`` answered 404 for the type, by the one rule of
        :func:`restmapper.mapper.may_resend`: a write is never replayed elsewhere, a delete stays in its scope (and
        at its version when the caller named one)."""
        return may_resend(old, new, writes=self.verb != "delete", version_named=self.bound_to_version)


@dataclass(frozen=True)
class Observation:
    """What the object cache must hold before a write returns.

    Attributes:
        group_kind: the kind's informer to ask.
        name: the object name.
        namespace: its namespace (None for cluster-scoped kinds).
        resource_version: the object at this resourceVersion or newer (None: the object must be gone).
        uid: for a delete, the UID that must be gone (None: any object of that name).
        written: what the server returned.
        deleted_at: for a delete, the resourceVersion the informer must have seen through (the deletion's, or one
            read after it) so that no event from before the delete (an ADDED it had not seen yet) can bring the
            object back; None when the answer carries none (:func:`observation`; the client then reads one).
    """

    group_kind: GroupKind
    name: str
    namespace: str | None
    resource_version: str | None
    uid: str | None
    written: dict[str, Any]
    deleted_at: str | None = None


def encode(value: object) -> bytes:
    """``value`` as compact JSON bytes (strict JSON, as kube-apiserver decodes it).

    Raises:
        TypeError: a value JSON cannot hold.
        InvalidArgumentError: a float that is NaN or infinite (JSON has none: the server would answer 400, or a
            lenient one would store what no JSON reader can read back), naming where; or a document nested too
            deeply to encode.
    """
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except RecursionError:
        raise InvalidArgumentError("the body is nested too deeply to encode as JSON") from None
    except ValueError as exc:
        where = _non_finite_at(value)
        if where is None:  # a circular reference
            raise InvalidArgumentError(f"the body cannot be encoded as JSON: {exc}") from None
        raise InvalidArgumentError(f"the body holds {where[1]!r} at {where[0] or 'the top'}: JSON has no NaN or "
                                   "Infinity (send a string or leave the field out)") from None


def _non_finite_at(value: object) -> tuple[str, float] | None:
    """Where the first NaN or infinite float of ``value`` is (a dotted path, ``[i]`` for list items), None when it
    holds none; iterative, and each container is visited once (a circular one too)."""
    todo: list[tuple[str, object]] = [("", value)]
    seen: set[int] = set()
    while todo:
        path, item = todo.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return path, item
        if isinstance(item, (Mapping, list, tuple)) and id(item) not in seen:
            seen.add(id(item))
            todo.extend(reversed(_items_at(path, item)))
    return None


def _items_at(path: str, container: Mapping[Any, object] | list[object] | tuple[object, ...]
              ) -> list[tuple[str, object]]:
    """The items of ``container`` (found at ``path``) in order, each with its own path (``a.b``, ``a[0]``)."""
    if isinstance(container, Mapping):
        return [(f"{path}.{key}" if path else str(key), v) for key, v in container.items()]
    return [(f"{path}[{i}]", v) for i, v in enumerate(container)]


def check_object_name(verb: str, name: object) -> str:
    """``name`` of the one object ``verb`` addresses: a non-empty str (None or "" would address the collection:
    a DELETE there deletes every object).

    Raises:
        TypeError: not a str.
        InvalidArgumentError: empty.
    """
    if not isinstance(name, str):
        raise TypeError(f"{verb} addresses one object: name must be a non-empty str, got {type(name).__name__}")
    if not name:
        raise InvalidArgumentError(f"{verb} addresses one object: name must not be empty")
    return name


def _metadata(obj: object) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise TypeError(f"the object must be a mapping (a manifest dict), got {type(obj).__name__}")
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        raise InvalidArgumentError("the object has no metadata mapping")
    return meta


def object_name(obj: Mapping[str, Any], *, generate: bool = False) -> str | None:
    """``metadata.name`` of ``obj`` (None for a create with ``metadata.generateName`` only).

    Raises:
        InvalidArgumentError: neither (or not strings).
        TypeError: ``obj`` is not a mapping.
    """
    meta = _metadata(obj)
    name = meta.get("name")
    if isinstance(name, str) and name:
        return name
    if generate and isinstance(meta.get("generateName"), str) and meta["generateName"]:
        return None
    raise InvalidArgumentError("the object needs a non-empty metadata.name" +
                               (" (or metadata.generateName)" if generate else ""))


def mapping_for_object(mapper: LazyRESTMapper, obj: Mapping[str, Any]) -> RESTMapping:
    """The mapping of ``obj``'s ``apiVersion`` and ``kind`` (the version is required, as the body is written for it).

    Raises:
        InvalidArgumentError: no string ``apiVersion``/``kind``, or an unparseable apiVersion.
        TypeError: ``obj`` is not a mapping.
        NoKindMatchError: the kind is not served at that version. As :meth:`LazyRESTMapper.rest_mapping`.
    """
    _metadata(obj)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not (isinstance(api_version, str) and api_version and isinstance(kind, str) and kind):
        raise InvalidArgumentError("the object needs string apiVersion and kind fields (e.g. 'apps/v1', "
                                   "'Deployment')")
    gv = GroupVersion.parse(api_version)
    return mapper.rest_mapping(GroupKind(gv.group, kind), gv.version)


def mapping_for_kind(mapper: LazyRESTMapper, kind: KindArg) -> tuple[RESTMapping, bool]:
    """The mapping ``kind`` names and whether it named a version (a GVK or GVR does; a GroupKind does not; a
    string does when the mapper's answer is pinned by it, e.g. ``widgets.v1.example.com``).

    Raises:
        TypeError: not one of the accepted types. As the mapper's ``resolve``/``rest_mapping``/``kind_for``.
    """
    if isinstance(kind, GroupVersionKind):
        return mapper.rest_mapping(kind.group_kind, kind.version), True
    if isinstance(kind, GroupKind):
        return mapper.rest_mapping(kind), False
    if isinstance(kind, GroupVersionResource):
        gvk = mapper.kind_for(kind)
        return mapper.rest_mapping(gvk.group_kind, gvk.version), bool(kind.version)
    if isinstance(kind, str):
        mapping = mapper.resolve(kind)
        return mapping, f".{mapping.resource.version}." in f".{kind}."
    raise TypeError(f"kind must be a GroupKind, GroupVersionKind, GroupVersionResource or str, "
                    f"got {type(kind).__name__}")


def namespace_for(mapping: RESTMapping, given: str | None, in_object: object, cache_namespace: str | None
                  ) -> str | None:
    """The namespace a write addresses: the argument, else the object's, else the cache's.

    Raises:
        InvalidArgumentError: a namespace for a cluster-scoped kind (it would write somewhere else than asked);
            none for a namespaced kind; an argument that differs from ``metadata.namespace``; a namespace the
            cache does not hold (its reads could never see the write).
        TypeError: a namespace that is not a str.
    """
    kind = mapping.group_version_kind.kind
    if given is not None and not isinstance(given, str):
        raise TypeError(f"namespace must be a str or None, got {type(given).__name__}")
    if not mapping.namespaced:
        if given:
            raise InvalidArgumentError(f"{kind} ({mapping.resource}) is cluster-scoped: pass no namespace "
                                       f"(got {given!r})")
        return None
    return _namespace_of_namespaced(kind, given, in_object, cache_namespace)


def _namespace_of_namespaced(kind: str, given: str | None, in_object: object, cache_namespace: str | None) -> str:
    """:func:`namespace_for` a namespaced ``kind``: the argument, else the object's, else the cache's."""
    own = _non_empty(in_object)
    if given and own and given != own:
        raise InvalidArgumentError(f"namespace {given!r} differs from the object's metadata.namespace {own!r}")
    namespace = given or own or cache_namespace
    if not namespace:
        raise InvalidArgumentError(f"{kind} is namespaced: pass namespace= or set metadata.namespace")
    if cache_namespace is not None and namespace != cache_namespace:
        raise InvalidArgumentError(f"the object cache holds only namespace {cache_namespace!r}: a write to "
                                   f"{namespace!r} could never be read back through it")
    return namespace


def check_scope(mapper: LazyRESTMapper, verb: str, mapping: RESTMapping, namespace: object) -> RESTMapping:
    """``mapping`` when a write may address ``namespace`` (the argument or the object's ``metadata.namespace``)
    under it. A namespace for a kind ``mapping`` says is cluster-scoped may mean the mapping is stale (the CRD was
    recreated namespaced): the group is reported to the mapper (rate-limited, as after a 404 for the type) and the
    kind resolved again before anything is sent.

    Raises:
        MappingChangedError: the kind is now served under another scope or version (nothing was sent).
        InvalidArgumentError: still cluster-scoped: a namespace names no place for it (kube-apiserver would drop
            it, or refuse the path); pass none.
        NoKindMatchError: the kind is no longer served. As :meth:`LazyRESTMapper.rest_mapping`.
    """
    if mapping.namespaced or not (isinstance(namespace, str) and namespace):
        return mapping
    mapper.cache.report_not_found_limited(mapping.resource.group_version)
    new = _reresolve(mapper, mapping)
    if new.resource != mapping.resource or new.scope != mapping.scope:
        raise MappingChangedError(verb, mapping, new, answered=None)
    raise InvalidArgumentError(f"{mapping.group_version_kind.kind} ({mapping.resource}) is cluster-scoped: pass no "
                               f"namespace and leave metadata.namespace empty (got {namespace!r})")


def _type_not_found(error: APIStatusError, write: Write) -> bool:
    """A 404 for the resource *type* (not for the object, whose Status names it; never on a subresource path,
    where an empty Status cannot tell a missing subresource from a missing type)."""
    return error.status == 404 and not isinstance(error, ObjectNotFoundStatusError) and write.subresource is None


def _mapping_suspect(error: APIStatusError, write: Write) -> bool:
    """An answer a stale mapping may cause, but that is never resent: 405 Method Not Allowed (a create POSTed to
    the cluster-wide path of a kind now namespaced) and a 404 on a subresource path that names no object (a
    version no longer served answers so; a kind without that subresource too)."""
    return error.status == 405 or (error.status == 404 and not isinstance(error, ObjectNotFoundStatusError)
                                   and write.subresource is not None)


def _reresolve(mapper: LazyRESTMapper, old: RESTMapping) -> RESTMapping:
    """The kind's mapping after an eviction: at the old version when still served there, else the preferred one.

    Raises:
        NoKindMatchError: the kind is not served at all any more. As :meth:`LazyRESTMapper.rest_mapping`.
    """
    gk = old.group_version_kind.group_kind
    try:
        return mapper.rest_mapping(gk, old.resource.version)
    except RestMapperError as exc:
        if not is_no_match(exc):
            raise
    return mapper.rest_mapping(gk)


def send(transport: WritingTransport, mapper: LazyRESTMapper, write: Write
         ) -> tuple[dict[str, Any], RESTMapping, int]:
    """Send ``write`` and return the server's answer (a JSON object), the mapping it was sent under and the HTTP
    status (2xx).

    After a 404 for the resource type the group is reported to the mapper (rate-limited) and the kind resolved
    again; the request is sent once more only when :meth:`Write.may_resend` holds (a stale mapping), never to
    another version for a body written for one, never to another scope. After a 405, or a 404 on a subresource
    path that names no object, the kind is resolved again the same way but nothing is resent: a moved kind is a
    MappingChangedError, else the server's error stands.

    Raises:
        APIStatusError: the server's error answer, typed (ConflictError, AlreadyExistsError,
            ObjectNotFoundStatusError, InvalidObjectError, ForbiddenError or APIStatusError itself).
        MappingChangedError: the kind moved to another version or scope; nothing was resent (chains the 404 or
            405).
        NoKindMatchError: the kind is no longer served (chains the 404).
        TransportError: no answer, or an answer that is not a JSON object.
    """
    mapping = write.mapping
    headers = {"Content-Type": write.content_type, "Accept": JSON}
    for attempt in (1, 2):
        path = write.path(mapping)
        response = transport.request(write.method, path, headers, write.body, params=dict(write.params))
        if 200 <= response.status < 300:
            return _answer(write.method, path, response.body), mapping, response.status
        error = status_error(transport, path, response.status, response.body, response.headers)
        type_not_found = _type_not_found(error, write)
        if attempt == 2 or not (type_not_found or _mapping_suspect(error, write)):
            raise error
        mapper.cache.report_not_found_limited(mapping.resource.group_version)
        try:
            new = _reresolve(mapper, mapping)
        except RestMapperError as exc:
            raise exc from error
        if not type_not_found:  # the type is there: the error stands unless the kind moved
            if has_moved(mapping, new):
                raise MappingChangedError(write.verb, mapping, new, answered=error.status) from error
            raise error
        if not write.may_resend(mapping, new):
            raise MappingChangedError(write.verb, mapping, new) from error
        _log.info("%s %s: resource type not found; sending it again under %s (%s)", write.method, path,
                  new.resource, new.scope.value)
        mapping = new
    raise AssertionError("unreachable")  # pragma: no cover


def _answer(method: str, path: str, body: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        raise TransportError(f"{method} {path}: the server's answer is not a JSON object", path=path,
                             transient=False)
    return doc


def _still_there(status: int, meta: Mapping[str, Any], answer: Mapping[str, Any]) -> bool:
    """Whether a delete answered with the object marked for deletion rather than gone: kube-apiserver answers 202
    Accepted then; finalizers, a grace period or a Terminating namespace say so too (servers that answer 200)."""
    grace = meta.get("deletionGracePeriodSeconds")
    phase = answer.get("status", {}).get("phase") if isinstance(answer.get("status"), Mapping) else None
    return (status == 202 or bool(meta.get("finalizers")) or (isinstance(grace, int) and grace > 0)
            or ("deletionTimestamp" in meta and phase == "Terminating"))


def observation(write: Write, mapping: RESTMapping, answer: dict[str, Any], status: int,
                status_uid: str | None = None) -> Observation | None:
    """What the cache must see before ``write`` (answered ``status`` and ``answer`` under ``mapping``) returns;
    None when the answer carries no object to wait for.

    A delete waits until the UID is gone (``status_uid``, the caller's precondition, when the answer names none)
    and the informer has seen through the deletion's resourceVersion (the returned object's; a ``Status`` has
    none: ``deleted_at`` is None), unless the object is still there, marked for deletion (see
    :func:`_still_there`): then, as any write, until the cache holds the returned version (or a newer one, or has
    seen it go).
    """
    meta = answer.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    gk = mapping.group_version_kind.group_kind
    namespace = write.namespace if mapping.namespaced else None
    if write.method == "DELETE":
        return _deletion_observation(gk, write.name or "", namespace, answer, meta, status, status_uid)
    written_name, rv = _non_empty(meta.get("name")), _non_empty(meta.get("resourceVersion"))
    if written_name is None or rv is None:
        return None
    return Observation(gk, written_name, namespace, rv, None, answer)


def _deletion_observation(gk: GroupKind, name: str, namespace: str | None, answer: dict[str, Any],
                          meta: Mapping[str, Any], status: int, status_uid: str | None) -> Observation | None:
    """:func:`observation` of a delete answered ``status`` and ``answer`` (whose ``metadata`` is ``meta``)."""
    rv = _non_empty(meta.get("resourceVersion"))
    if answer.get("kind") == "Status":
        details = answer.get("details")
        uid = details.get("uid") if isinstance(details, Mapping) else None
        return Observation(gk, name, namespace, None, uid if isinstance(uid, str) else status_uid, answer)
    if _still_there(status, meta, answer):
        return Observation(gk, name, namespace, rv, None, answer) if rv is not None else None
    uid = meta.get("uid")
    # kube-apiserver answers the deleted object at the deletion's resourceVersion.
    return Observation(gk, name, namespace, None, uid if isinstance(uid, str) else status_uid, answer, rv)


def _non_empty(value: object) -> str | None:
    """``value`` when it is a non-empty str, else None."""
    return value if isinstance(value, str) and value else None


def check_subresource(mapper: LazyRESTMapper, mapping: RESTMapping, subresource: str) -> None:
    """Refuse a write to ``subresource`` of ``mapping``'s resource when discovery (the mapper's cached group
    version, read again only when expired) lists no such subresource: the server would answer a bare 404 naming
    nothing (a ConfigMap has no ``status``; a CRD version has one only with ``subresources.status``). When the
    group version's resources are not known (it failed to load), the request is sent and the server decides.

    Raises:
        InvalidArgumentError: the subresource is not served for that resource at that version.
        GroupDiscoveryError: discovery of the group cannot be read at all.
    """
    gv = mapping.resource.group_version
    for entry in mapper.cache.groups([gv.group], [gv.version]).entries:
        resources = entry.resources.get(gv)
        if resources is None:
            continue
        wanted = f"{mapping.resource.resource}/{subresource}"
        if not any(r.name == wanted for r in resources.resources):
            raise InvalidArgumentError(f"{mapping.resource.resource}.{gv} has no {subresource} subresource (its "
                                       f"discovery lists none), so there is no {subresource} to write; write the "
                                       f"object itself (update/patch/apply)")
