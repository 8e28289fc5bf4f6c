""":class:`Client` and :class:`AsyncClient`: writes through the mapper that the object cache reads back."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from restmapper._public import repr_when_unfinished
from restmapper.aio import AsyncObjectCache
from restmapper.client._writes import (
    KindArg,
    Observation,
    Write,
    check_object_name,
    check_scope,
    check_subresource,
    encode,
    mapping_for_kind,
    mapping_for_object,
    namespace_for,
    object_name,
    observation,
    send,
)
from restmapper.errors import (
    InvalidArgumentError,
    ObjectNotFoundError,
    ObjectWaitTimeoutError,
    RestMapperError,
    WriteNotObservedError,
)
from restmapper.model import RESTMapping
from restmapper.store import ObjectCache
from restmapper.transport import WritingTransport

__all__ = ["AsyncClient", "Client"]

_log = logging.getLogger("restmapper.client")

_PATCH_TYPES = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
                "strategic": "application/strategic-merge-patch+json"}
_APPLY = "application/apply-patch+yaml"  # JSON is YAML: the manifest is sent as JSON


def _not_observed(obs: Observation, timeout: float, exc: RestMapperError) -> WriteNotObservedError:
    """The client's error for a write the cache did not read back: after the timeout (chaining the wait's cause),
    or at once when the cache's wait ended at a failure it knows waiting will not cure (chaining that error: a
    ForbiddenError carrying the server's Status for a list/watch RBAC refuses, a stopped cache, ...)."""
    error = WriteNotObservedError(str(obs.group_kind), obs.namespace or "", obs.name, timeout, obs.resource_version,
                                  obs.written)
    if isinstance(exc, ObjectWaitTimeoutError):
        error.__cause__ = exc.__cause__
    else:
        error.args = (f"the write succeeded, but the object cache cannot read it back: {exc}; reads through it may "
                      "be stale",)
        error.__cause__ = exc
    return error


def _timeout_seconds(timeout: object) -> float:
    """The client's ``timeout``: a positive, finite number of seconds (not a bool).

    Raises:
        TypeError: not a real number, or a bool.
        InvalidArgumentError: not positive, NaN or infinite.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise InvalidArgumentError(f"timeout must be a positive, finite number of seconds, got {timeout!r}")
    return float(timeout)


def _patch_content_type(patch: Any, patch_type: str) -> str:
    """The Content-Type of a ``patch_type`` patch, once ``patch`` is checked to have that type's shape.

    Raises:
        InvalidArgumentError: ``patch_type`` is not "merge", "json" or "strategic".
        TypeError: a merge or strategic merge patch that is not a mapping; a JSON patch that is not a list of
            operations (mappings).
    """
    content_type = _PATCH_TYPES.get(patch_type) if isinstance(patch_type, str) else None
    if content_type is None:
        raise InvalidArgumentError(f"patch_type must be 'merge', 'json' or 'strategic', got {patch_type!r}")
    if patch_type in ("merge", "strategic") and not isinstance(patch, Mapping):
        what = "merge patch" if patch_type == "merge" else "strategic merge patch"
        raise TypeError(f"a {what} is a mapping, got {type(patch).__name__}")
    if patch_type == "json" and not _is_operation_list(patch):
        raise TypeError("a JSON patch is a list of operations ({'op': ..., 'path': ...})")
    return content_type


def _is_operation_list(patch: Any) -> bool:
    """Whether ``patch`` is a sequence (not a string) of mappings: the shape of a JSON patch."""
    return (isinstance(patch, Sequence) and not isinstance(patch, (str, bytes))
            and all(isinstance(op, Mapping) for op in patch))

class Client:
    """Create, update, patch, apply and delete objects of any kind, and read them back through an ObjectCache.

    The kind of a request comes from the object's ``apiVersion``/``kind`` (or the ``kind`` argument) through the
    cache's mapper; requests go through the cache's transport (it must send writes:
    :class:`~restmapper.transport.WritingTransport`). Each method returns what the server returned.

    **Read your writes**: a method returns only once the cache holds the written object at the returned
    resourceVersion or newer (after a delete: no longer holds the deleted UID), so a ``cache.get``/``cache.list``
    right after never answers from before the write, as controller-runtime's read-your-writes client. The wait
    compares resourceVersions as :meth:`ObjectCache.wait_for` does (decimal etcd revisions; any event or bookmark
    of the kind at or past the write's version ends it); it is skipped when the cache runs no informer for the kind
    (a first read lists after the write). When the object the server returned does not match the informer's
    ``label_selector``/``field_selector``, the informer will never hold it: the write waits only until the cache
    no longer holds an earlier version (at once for a create or a delete; an update that moved the object out of
    the selection waits for the informer's delete), never for the write's resourceVersion. Events caused by these
    writes reach handlers as any other.

    **Healing**: after a 404 for the resource *type* (not for the object) the group is reported to the mapper and
    the kind resolved again; the request is sent once more only when the kind is still served at the same version
    and scope (a stale mapping). A delete of a kind named without a version may follow the kind to another version
    in the same scope. Otherwise :class:`~restmapper.errors.MappingChangedError` names both mappings and nothing is
    resent: a body written for one version is never sent to another (a merge patch would be applied under another
    schema), nor an object to another scope.

    Thread-safe: one client may be shared by worker threads.

    Example::

        cache = ObjectCache.from_kubeconfig()
        client = Client(cache)
        web = client.patch("deploy", "web", {"spec": {"replicas": 3}}, namespace="default")
        assert cache.get("deploy", "web", "default")["metadata"]["resourceVersion"] >= ...  # never older

    Attributes:
        cache: the cache that reads the writes back.
        timeout: seconds a write waits for the cache to observe it.
    """

    def __init__(self, cache: ObjectCache, *, timeout: float = 30.0, transport: WritingTransport | None = None
                 ) -> None:
        """Create a client writing through ``cache``'s mapper and transport.

        Args:
            cache: the object cache to read writes back through.
            timeout: seconds a write waits for the cache to observe it before
                :class:`~restmapper.errors.WriteNotObservedError` (positive).
            transport: send writes through this transport instead of the cache's.

        Raises:
            TypeError: ``cache`` is not an ObjectCache, the transport cannot send writes (it has no
                ``request`` method), or a timeout that is not a number (a bool is none).
            InvalidArgumentError: a timeout that is not positive and finite.
        """
        if not isinstance(cache, ObjectCache):
            raise TypeError(f"Client writes through an ObjectCache, got {type(cache).__name__}")
        chosen = transport if transport is not None else cache.transport
        if not isinstance(chosen, WritingTransport):
            raise TypeError(f"the transport {type(chosen).__name__} cannot send writes: it needs a "
                            "request(method, path, headers, body) method (restmapper.transport.WritingTransport)")
        self.timeout = _timeout_seconds(timeout)
        self.cache = cache
        self._transport: WritingTransport = chosen

    # --- building requests -------------------------------------------------------------------------------------

    def _object_write(self, verb: str, method: str, obj: Mapping[str, Any], namespace: str | None, *,
                      create: bool = False,
                      subresource: str | None = None, content_type: str = "application/json",
                      params: Mapping[str, str] | None = None) -> Write:
        if isinstance(obj, Mapping) and obj.get("kind") == "PartialObjectMetadata" \
                and obj.get("apiVersion") == "meta.k8s.io/v1":
            raise InvalidArgumentError(
                f"{verb} got a PartialObjectMetadata (an object of a metadata_only cache): it carries only metadata "
                "and no kind of its own to write to; use patch(kind, name, {'metadata': {...}}, namespace) to change "
                "its metadata, or apply() a manifest of the real kind")
        mapping = mapping_for_object(self.cache.mapper, obj)
        name = object_name(obj, generate=create)
        own = obj["metadata"].get("namespace")
        mapping = check_scope(self.cache.mapper, verb, mapping, namespace or own)
        ns = namespace_for(mapping, namespace, own, self.cache.namespace)
        return Write(verb, method, mapping, ns, None if create else name, encode(obj), content_type,
                     dict(params or {}), subresource)

    def _status_write(self, obj: Mapping[str, Any]) -> Write:
        write = self._object_write("update_status", "PUT", obj, None, subresource="status")
        check_subresource(self.cache.mapper, write.mapping, "status")
        return write

    def _patch_write(self, kind: KindArg, name: str, patch: Any, namespace: str | None, patch_type: str) -> Write:
        check_object_name("patch", name)
        content_type = _patch_content_type(patch, patch_type)
        mapping, _ = mapping_for_kind(self.cache.mapper, kind)
        mapping = check_scope(self.cache.mapper, "patch", mapping, namespace)
        ns = namespace_for(mapping, namespace, None, self.cache.namespace)
        return Write("patch", "PATCH", mapping, ns, name, encode(patch), content_type)

    def _apply_write(self, obj: Mapping[str, Any], field_manager: str, force: bool) -> Write:
        if not (isinstance(field_manager, str) and field_manager):
            raise InvalidArgumentError("field_manager must be a non-empty string (the owner of the applied fields)")
        if not isinstance(force, bool):
            raise TypeError(f"force must be a bool, got {type(force).__name__}")
        params = {"fieldManager": field_manager}
        if force:
            params["force"] = "true"
        return self._object_write("apply", "PATCH", obj, None, content_type=_APPLY, params=params)

    def _delete_write(self, kind: KindArg, name: str, namespace: str | None, uid: str | None,
                      resource_version: str | None) -> Write:
        check_object_name("delete", name)
        for label, value in (("uid", uid), ("resource_version", resource_version)):
            if value is not None and not (isinstance(value, str) and value):
                raise TypeError(f"{label} must be a non-empty str or None, got {value!r}")
        mapping, version_named = mapping_for_kind(self.cache.mapper, kind)
        mapping = check_scope(self.cache.mapper, "delete", mapping, namespace)
        ns = namespace_for(mapping, namespace, None, self.cache.namespace)
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v is not None}
        if preconditions:
            options["preconditions"] = preconditions
        return Write("delete", "DELETE", mapping, ns, name, encode(options), bound_to_version=version_named)

    def _perform(self, write: Write, uid: str | None = None) -> tuple[dict[str, Any], Observation | None]:
        """Send ``write``; return the answer and what the cache must observe (None: nothing to wait for)."""
        answer, mapping, status = send(self._transport, self.cache.mapper, write)
        obs = observation(write, mapping, answer, status, uid)
        if obs is None or not self.cache.has_informer(obs.group_kind):
            return answer, None  # no informer yet: its first list comes after this write
        if not self._cache_can_hold(obs):
            # Outside the informer's selectors: it will never hold the object at this version, and it sees nothing
            # of it past here. Only an earlier version it held (an update moved the object out) must be gone.
            uid = obs.written.get("metadata", {}).get("uid")
            return answer, dataclasses.replace(obs, resource_version=None, deleted_at=None,
                                               uid=uid if isinstance(uid, str) and uid else obs.uid)
        if obs.resource_version is None and obs.deleted_at is None:
            obs = dataclasses.replace(obs, deleted_at=self._resource_version_now(write, mapping))
        return answer, obs

    def _cache_can_hold(self, obs: Observation) -> bool:
        """False when the written object (as the server returned it) does not match the selectors of the kind's
        informer: its list and watch never carry it. True when unknown (a delete answered with a Status)."""
        if obs.written.get("kind") == "Status":
            return True
        try:
            scope = self.cache.informer(obs.group_kind).scope
        except RestMapperError:
            return True  # stopped meanwhile: the wait reports it
        return scope.selects(obs.written)

    def _resource_version_now(self, write: Write, mapping: RESTMapping) -> str | None:
        """A resourceVersion read after a delete answered with a Status (which carries none): a one-item list of
        the kind, read from storage (no ``resourceVersion`` parameter: kube-apiserver then reads etcd, so its
        version is at or past the deletion's). The informer lists the kind, so reading it is allowed. None when the
        read fails: the wait then asks only that the object is gone."""
        path = mapping.path(write.namespace if mapping.namespaced else None)
        try:
            response = self._transport.get(path, {"Accept": "application/json"}, params={"limit": "1"})
            doc = json.loads(response.body) if response.status == 200 else None
        except (RestMapperError, ValueError, RecursionError) as exc:
            _log.debug("%s: no resourceVersion after the delete (%s)", path, type(exc).__name__)
            return None
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        rv = meta.get("resourceVersion") if isinstance(meta, dict) else None
        return rv if isinstance(rv, str) and rv else None

    def _observe(self, obs: Observation | None) -> None:
        if obs is None:
            return
        try:
            if obs.resource_version is None:
                self.cache.wait_for_deleted(obs.group_kind, obs.name, obs.namespace, uid=obs.uid,
                                            resource_version=obs.deleted_at, timeout=self.timeout)
            else:
                self.cache.wait_for(obs.group_kind, obs.name, obs.namespace, resource_version=obs.resource_version,
                                    timeout=self.timeout)
        except ObjectNotFoundError:
            pass  # deleted after the write, and the cache saw that too: it is past the write
        except RestMapperError as exc:  # the wait's timeout, or a failure that ended it
            raise _not_observed(obs, self.timeout, exc) from exc

    def _write(self, write: Write, uid: str | None = None) -> dict[str, Any]:
        answer, obs = self._perform(write, uid)
        self._observe(obs)
        return answer

    # --- the writes ------------------------------------------------------------------------------------------

    def create(self, obj: Mapping[str, Any], namespace: str | None = None) -> dict[str, Any]:
        """Create ``obj`` (``POST`` to its collection) and return the created object.

        Args:
            obj: the manifest: ``apiVersion``, ``kind``, ``metadata.name`` (or ``generateName``).
            namespace: for a namespaced kind, the namespace (default: ``metadata.namespace``, else the cache's).

        Returns:
            The object as the server stored it (``metadata.uid``, ``resourceVersion``, defaults filled in).

        Raises:
            AlreadyExistsError: the name is taken.
            InvalidObjectError: the server's validation refused it (``causes`` says which fields).
            ForbiddenError: RBAC refused it. Other server refusals: :class:`APIStatusError` (``server_status``).
            MappingChangedError: the kind moved to another version or scope; nothing was resent. A namespace for a
                kind the mapper holds as cluster-scoped, and a 405, resolve the kind again (rate-limited) to find
                out: a CRD recreated namespaced is reported before anything is sent.
            NoKindMatchError: the kind is not served at that version.
            InvalidArgumentError: no namespace for a namespaced kind, one for a kind still cluster-scoped, a
                namespace other than the object's or outside the cache's, a manifest without apiVersion/kind/name,
                a ``PartialObjectMetadata`` (from a ``metadata_only`` cache: patch or apply instead);
                a body holding NaN or Infinity (JSON has neither; the message names the field) or nested too
                deeply to encode.
            TypeError: ``obj`` is not a mapping or holds values JSON cannot.
            WriteNotObservedError: created, but the cache did not observe it within ``timeout``, or its informer
                fails in a way waiting will not cure (a 403 on its list/watch: raised at once, chaining that
                :class:`ForbiddenError`).
            TransportError: no answer (the create may or may not have happened).
        """
        return self._write(self._object_write("create", "POST", obj, namespace, create=True))

    def update(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the object (``PUT``); with ``metadata.resourceVersion`` set, only if it is still that version.

        Returns:
            The object as stored.

        Raises:
            ConflictError: the object changed since ``metadata.resourceVersion`` (read it again and retry).
            ObjectNotFoundError: no such object (an :class:`ObjectNotFoundStatusError`; nothing is evicted).
            As :meth:`create` otherwise (without AlreadyExistsError).
        """
        return self._write(self._object_write("update", "PUT", obj, None))

    def update_status(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the object's ``status`` (``PUT`` to its ``/status`` subresource); as :meth:`update`.

        Raises:
            InvalidArgumentError: discovery lists no ``status`` subresource for the kind at that version (a
                ConfigMap; a CRD version without ``subresources.status``): refused before anything is sent.
            ObjectNotFoundError: no such object (the server's Status names it).
            MappingChangedError: a 404 on the status subresource that names no object, and the kind is no longer
                served at that version (resolved again, rate-limited); nothing is resent.
            APIStatusError: that 404 for a kind that did not move. As :meth:`update` otherwise.
        """
        return self._write(self._status_write(obj))

    def patch(self, kind: KindArg, name: str, patch: Any, namespace: str | None = None,
              patch_type: str = "merge") -> dict[str, Any]:
        """Patch one object (``PATCH``) and return it.

        Args:
            kind: the kind (``"deploy"``, a GroupKind, GVK or GVR).
            name: the object name.
            patch: a JSON merge patch (a mapping, RFC 7386), a JSON patch (a list of operations, RFC 6902) or a
                strategic merge patch (a mapping; lists with a merge key, such as containers by ``name``, are
                merged item by item, with ``$patch``/``$retainKeys`` directives, as kubectl's default patch).
            namespace: the namespace of a namespaced kind (default: the cache's).
            patch_type: ``"merge"``, ``"json"`` or ``"strategic"`` (``application/strategic-merge-patch+json``:
                built-in kinds only; kube-apiserver answers a custom resource 415, raised as
                :class:`APIStatusError` with ``status`` 415, so use ``"merge"`` there).

        Returns:
            The patched object.

        Raises:
            InvalidArgumentError: an unknown ``patch_type``, an empty ``name``; as :meth:`create` for namespaces
                and bodies.
            TypeError: a patch of the wrong shape for ``patch_type``; a ``name`` that is not a str (None would
                address the collection).
            MappingChangedError: the kind moved to another version or scope; the patch (written for the old schema)
                was not resent.
            As :meth:`update` otherwise.
        """
        return self._write(self._patch_write(kind, name, patch, namespace, patch_type))

    def apply(self, obj: Mapping[str, Any], field_manager: str, force: bool = False) -> dict[str, Any]:
        """Server-side apply ``obj`` (``PATCH`` with ``application/apply-patch+yaml``) and return the result.

        Args:
            obj: the applied configuration: ``apiVersion``, ``kind``, ``metadata.name`` and the fields you own.
            field_manager: the field manager owning them (``fieldManager``).
            force: take ownership of fields another manager owns (``force=true``) instead of a 409.

        Returns:
            The object after the apply (created when it did not exist).

        Raises:
            ConflictError: another field manager owns a field you set (without ``force``).
            InvalidArgumentError: an empty ``field_manager``. As :meth:`create` otherwise.
            TypeError: ``force`` is not a bool.
        """
        return self._write(self._apply_write(obj, field_manager, force))

    def delete(self, kind: KindArg, name: str, namespace: str | None = None, uid: str | None = None,
               resource_version: str | None = None) -> dict[str, Any]:
        """Delete one object (``DELETE``), only if it still has ``uid``/``resource_version`` when given.

        Returns:
            What the server returned: the deleted object, the object marked for deletion (finalizers pending; the
            cache then holds it at that version) or a ``Status``. Once it returns, the cache no longer holds the
            deleted UID and its informer has seen every event up to the deletion (so an event from before it, such
            as the object's ADDED it had not seen yet, cannot bring it back).

        Raises:
            TypeError: ``name`` is not a str (None would address the collection: a DELETE there deletes every
                object); InvalidArgumentError when it is empty.
            ConflictError: a precondition failed (the object was replaced or changed).
            ObjectNotFoundError: no such object.
            MappingChangedError: the kind moved to another scope (or, for a kind named with a version, to another
                version); nothing was resent.
            As :meth:`create` otherwise.
        """
        return self._write(self._delete_write(kind, name, namespace, uid, resource_version), uid)

    @repr_when_unfinished
    def __repr__(self) -> str:
        return f"Client(cache={self.cache!r}, timeout={self.timeout:g})"


class AsyncClient:
    """:class:`Client` for asyncio, over an :class:`~restmapper.aio.AsyncObjectCache`: the same methods as
    coroutines, arguments, results, errors, healing and read-your-writes.

    The request runs in a worker thread (:func:`asyncio.to_thread`; the transport blocks); the wait for the cache
    happens on the event loop (woken by the informer), so it costs no thread and cancelling ends it.

    Attributes:
        cache: the asyncio cache.
        client: the synchronous client doing the requests.
    """

    def __init__(self, cache: AsyncObjectCache, *, timeout: float = 30.0,
                 transport: WritingTransport | None = None) -> None:
        """Create a client writing through ``cache``'s mapper and transport; arguments as :class:`Client`.

        Raises:
            TypeError: ``cache`` is not an AsyncObjectCache. As :class:`Client` otherwise.
        """
        if not isinstance(cache, AsyncObjectCache):
            raise TypeError(f"AsyncClient writes through an AsyncObjectCache, got {type(cache).__name__}")
        self.cache = cache
        self.client = Client(cache.cache, timeout=timeout, transport=transport)

    async def _write(self, build: Callable[[], Write], uid: str | None = None) -> dict[str, Any]:
        answer, obs = await asyncio.to_thread(lambda: self.client._perform(build(), uid))
        if obs is None:
            return answer
        timeout = self.client.timeout
        try:
            if obs.resource_version is None:
                await self.cache.wait_for_deleted(obs.group_kind, obs.name, obs.namespace, uid=obs.uid,
                                                  resource_version=obs.deleted_at, timeout=timeout)
            else:
                await self.cache.wait_for(obs.group_kind, obs.name, obs.namespace,
                                          resource_version=obs.resource_version, timeout=timeout)
        except ObjectNotFoundError:
            pass  # deleted after the write, and the cache saw that too
        except RestMapperError as exc:
            raise _not_observed(obs, timeout, exc) from exc
        return answer

    async def create(self, obj: Mapping[str, Any], namespace: str | None = None) -> dict[str, Any]:
        """Await :meth:`Client.create`."""
        return await self._write(lambda: self.client._object_write("create", "POST", obj, namespace, create=True))

    async def update(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Await :meth:`Client.update`."""
        return await self._write(lambda: self.client._object_write("update", "PUT", obj, None))

    async def update_status(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Await :meth:`Client.update_status`."""
        return await self._write(lambda: self.client._status_write(obj))

    async def patch(self, kind: KindArg, name: str, patch: Any, namespace: str | None = None,
                    patch_type: str = "merge") -> dict[str, Any]:
        """Await :meth:`Client.patch`."""
        return await self._write(lambda: self.client._patch_write(kind, name, patch, namespace, patch_type))

    async def apply(self, obj: Mapping[str, Any], field_manager: str, force: bool = False) -> dict[str, Any]:
        """Await :meth:`Client.apply`."""
        return await self._write(lambda: self.client._apply_write(obj, field_manager, force))

    async def delete(self, kind: KindArg, name: str, namespace: str | None = None, uid: str | None = None,
                     resource_version: str | None = None) -> dict[str, Any]:
        """Await :meth:`Client.delete`."""
        return await self._write(lambda: self.client._delete_write(kind, name, namespace, uid, resource_version), uid)

    @repr_when_unfinished
    def __repr__(self) -> str:
        return f"AsyncClient(cache={self.cache!r}, timeout={self.client.timeout:g})"
