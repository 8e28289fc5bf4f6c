"""Healing a drop-in request after a 404 for its resource type, by the one rule of
:func:`restmapper.mapper.may_resend`, for every healing client here (sync and asyncio).

The group is reported to the mapper (evicting it) and the kind looked up again, at the request's version first
(:func:`healing_questions`). A drop-in request always names its version (its ``Resource`` is of one group version),
so it is sent once more only to the same kind in the same scope at that version: a read (``get``: get, list and,
through ``DynamicClient.watch``, watch) or a delete also to a renamed resource (a CRD recreated with another
plural), any request to the very same mapping (the upgrade race: still listed, 404 once). Every other case raises
:class:`~restmapper.errors.MappingChangedError` naming the old and the new mapping: nothing was resent. When the
kind is no longer served, the 404 is raised as it came.
"""

from __future__ import annotations

import logging
from typing import Any

from restmapper.errors import MappingChangedError
from restmapper.mapper import has_moved, may_resend
from restmapper.model import GroupVersion, GroupVersionKind, GroupVersionResource, RESTMapping, Scope

__all__ = ["HEALED_VERBS", "RESENT_VERBS", "answered_mapping", "healed_doc", "healing_questions", "mapping_of",
           "refuse_if_moved", "report_gone", "resend_after_mismatch", "resend_target", "resolved_parent"]

log = logging.getLogger("restmapper.dynamic")

RESENT_VERBS = frozenset({"get", "delete"})
"""The client methods that carry no body written for a mapping: reads (``get`` also lists, and
``DynamicClient.watch`` streams through it) and deletes."""


HEALED_VERBS = ("get", "create", "replace", "patch", "server_side_apply", "delete")
"""The client methods a healing client heals (``DynamicClient.watch`` lists through ``get``)."""


def healed_doc(verb: str) -> str:
    """The docstring of a healing client's ``verb`` method."""
    return (f"``DynamicClient.{verb}``, healed once on a resource-type 404 as the class says.\n\n"
            f"Raises:\n    MappingChangedError: after a resource-type 404, the kind is served where this request "
            f"may not be resent\n        (nothing was resent). Otherwise as the library's client.\n")


def resolved_parent(resource: Any, resource_class: Any, list_class: Any, subresource_class: Any) -> Any | None:
    """The ``Resource`` whose kind is resolved again when a request to ``resource`` answered 404 for its type:
    itself, or a subresource's parent; None for a ``ResourceList`` or a kind-less resource (nothing to heal)."""
    if isinstance(resource, list_class):
        return None
    parent = resource.parent if isinstance(resource, subresource_class) else resource
    return parent if isinstance(parent, resource_class) and parent.kind else None


def report_gone(discoverer: Any, parent: Any) -> bool:
    """Report the group version of ``parent`` to the discoverer's mapper as not found (rate-limited like misses: a
    caller retrying on 404 must not cost a discovery request each time); False when the discoverer has no mapper
    (another library's: the caller invalidates its cache instead)."""
    mapper = getattr(discoverer, "mapper", None)
    if mapper is None:
        return False
    mapper.cache.report_not_found_limited(GroupVersion(parent.group or "", parent.api_version))
    return True


def mapping_of(resource: Any) -> RESTMapping:
    """The :class:`~restmapper.model.RESTMapping` of a drop-in ``Resource`` (any of the dynamic libraries')."""
    group = resource.group or ""
    return RESTMapping(GroupVersionResource(group, resource.api_version, resource.name),
                       GroupVersionKind(group, resource.api_version, resource.kind),
                       Scope.of(bool(resource.namespaced)))


def healing_questions(resource: Any) -> list[dict[str, str]]:
    """The discoverer ``get`` keywords that find the kind of ``resource`` after healing, asked in turn until one
    answers: at the request's version (where it may be resent), then at the group's preferred version (to name
    the new mapping). For core, only the version (``v1`` names the core group)."""
    at_version = {"api_version": resource.group_version, "kind": resource.kind}
    if not resource.group:
        return [at_version]
    return [at_version, {"group": resource.group, "kind": resource.kind}]


def resend_target(verb: str, resource: Any, fresh: Any | None, subresource_class: Any,
                  cause: BaseException) -> Any | None:
    """Where a request that answered 404 for its resource type may be sent again, by the rule of this module.

    Args:
        verb: the client method (``get``, ``create``, ``replace``, ``patch``, ``server_side_apply``, ``delete``).
        resource: the ``Resource`` (or ``Subresource``) the request was built for.
        fresh: the kind's ``Resource`` after healing: at the request's version when still served there, else at
            its group's preferred version; None when the kind is no longer served.
        subresource_class: the library's ``Subresource`` class.
        cause: the 404, chained to the error raised.

    Returns:
        The ``Resource`` (or ``Subresource``) to send the request to once more, or None when the 404 stands
        (the kind is gone, or a subresource request found its mapping unchanged).

    Raises:
        MappingChangedError: :func:`~restmapper.mapper.may_resend` refuses (another version or scope, or a write
            to a renamed resource); nothing was resent.
    """
    if fresh is None:
        return None
    subresource = isinstance(resource, subresource_class)
    old, new = mapping_of(resource.parent if subresource else resource), mapping_of(fresh)
    if not may_resend(old, new, writes=verb not in RESENT_VERBS):
        raise MappingChangedError(verb, old, new) from cause
    if old == new:
        # The same request again (the upgrade race). A subresource's 404 may mean only that it has none.
        return None if subresource else resource
    if subresource:
        fresh = fresh.subresources.get(resource.subresource)
        if fresh is None:
            return None
    log.info("%s: %s is now %s; resending once", verb, old.resource, new.resource)
    return fresh


def refuse_if_moved(verb: str, resource: Any, fresh: Any | None, answered: int, cause: BaseException) -> None:
    """After an answer a stale mapping may cause but that is never resent (a 405 Method Not Allowed: a create
    POSTed to the cluster-wide path of a kind recreated namespaced), by :func:`restmapper.mapper.has_moved`, the
    rule :class:`restmapper.client.Client` follows too.

    Args:
        verb: the client method.
        resource: the ``Resource`` the request was built for (not a subresource).
        fresh: the kind's ``Resource`` after healing (see :func:`resend_target`); None when the kind is gone.
        answered: the HTTP status of the answer (405).
        cause: that answer's error, chained to the error raised.

    Returns:
        None when the kind did not move (or is gone): the server's error stands.

    Raises:
        MappingChangedError: the kind is served under another resource or scope; nothing was resent.
    """
    if fresh is None:
        return
    old, new = mapping_of(resource), mapping_of(fresh)
    if has_moved(old, new):
        raise MappingChangedError(verb, old, new, answered=answered) from cause


_NOT_OBJECTS = frozenset({"Status", "Table", "PartialObjectMetadata", "PartialObjectMetadataList", "List"})
"""Answer kinds that are not the resource's objects (errors, ``Accept`` variants): never a mismatch."""


def answered_mapping(resource: Any, answer: Any) -> RESTMapping | None:
    """The mapping a read's answer shows when it is not the one of the ``Resource`` it was sent through; None when
    it agrees (the hot path: one string compared, plus, for a list, the first item's namespace).

    A read never answers 404 when a CRD was recreated under the same plural with another kind (``widgets`` now
    serves ``Gizmo``: the answer's ``kind`` is ``Gizmo``/``GizmoList``), or with another scope and the request
    still has a path (a namespaced ``Resource`` lists all namespaces at the path where the cluster-scoped kind
    lists its objects, which carry no ``metadata.namespace``; a cluster-scoped one lists at the path where a
    namespaced kind lists every namespace, whose objects carry one). Such an answer is for other objects.

    Args:
        resource: the ``Resource`` (not a subresource or a ``ResourceList``) the read was sent through.
        answer: what the library's ``get`` answered (a ``ResourceInstance``; anything without a ``kind``, such
            as a watch's unread response, agrees).

    Returns:
        The mapping the answer shows (the resource's, with the answered kind or the scope its objects have),
        or None.
    """
    kind = getattr(answer, "kind", None)
    if not isinstance(kind, str) or kind == resource.kind or kind in _NOT_OBJECTS:
        return None
    old = mapping_of(resource)
    if kind != f"{resource.kind}List":
        gvk = old.group_version_kind
        answered_kind = kind[:-4] if kind.endswith("List") else kind
        return RESTMapping(old.resource, GroupVersionKind(gvk.group, gvk.version, answered_kind), old.scope)
    items = getattr(answer, "items", None)
    if not items:
        return None
    namespace = getattr(getattr(items[0], "metadata", None), "namespace", None)
    if bool(namespace) == bool(resource.namespaced):
        return None
    return RESTMapping(old.resource, old.group_version_kind, Scope.of(bool(namespace)))


def resend_after_mismatch(verb: str, resource: Any, fresh: Any | None, answered: RESTMapping) -> Any:
    """Where a read whose answer showed another mapping (:func:`answered_mapping`) may be sent again, after the
    group was reported to the mapper (rate-limited) and the kind looked up again (``fresh``).

    Args:
        verb: the client method (``get``).
        resource: the ``Resource`` the read was sent through.
        fresh: the kind's ``Resource`` now; None when it is no longer served.
        answered: the mapping the answer showed.

    Returns:
        ``fresh``, when the kind is served under another mapping a read may follow
        (:func:`restmapper.mapper.may_resend`: a renamed resource at the same version and scope).

    Raises:
        MappingChangedError: otherwise (``new`` is the mapping the answer showed, ``answered`` 200); nothing was
            resent.
    """
    old = mapping_of(resource)
    if fresh is not None:
        new = mapping_of(fresh)
        if new != old and may_resend(old, new, writes=False):
            log.info("%s: %s answered as %s; resending once to %s", verb, old.resource,
                     answered.group_version_kind.kind, new.resource)
            return fresh
    raise MappingChangedError(verb, old, answered, answered=200)
