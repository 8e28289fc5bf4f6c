"""The one rule for resending a request after healing, shared by every healing client (sync and asyncio).

A request that answered 404 for its resource *type* reports the group to the mapper (evicting it) and the kind is
looked up again. The request is then sent once more only when that cannot change what it means:

- the kind is still served at the version the request was built for (a body names that version; a merge or JSON
  patch names none and would be applied under another version's schema, pruning renamed fields), and
- in the same scope (a namespace must not silently become the whole cluster, nor a cluster-wide request a
  namespaced one), and
- the request is a read (``get``, which lists and, through ``DynamicClient.watch``, watches) or a delete (the
  object it names is the same at any plural).

So what is resent is the same request at a renamed resource (a CRD recreated with another plural). When nothing
changed (the upgrade race: a version still listed but 404 on its own path) or the kind is no longer served, the
404 is raised as it came. Every other case raises :class:`~restmapper.errors.MappingChangedError` naming the old
and the new mapping: nothing was resent.
"""

from __future__ import annotations

import logging
from typing import Any

from restmapper.errors import MappingChangedError
from restmapper.model import GroupVersionKind, GroupVersionResource, RESTMapping, Scope

__all__ = ["RESENT_VERBS", "healing_questions", "mapping_of", "resend_target"]

log = logging.getLogger("restmapper.dynamic")

RESENT_VERBS = frozenset({"get", "delete"})
"""The client methods that may be resent after healing: reads (``get`` also lists, and ``DynamicClient.watch``
streams through it) and deletes."""


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
        (nothing changed, or the kind is gone).

    Raises:
        MappingChangedError: the kind moved to another version or scope, or (at the same version and scope) the
            request is not a read or a delete; nothing was resent.
    """
    if fresh is None:
        return None
    parent = resource.parent if isinstance(resource, subresource_class) else resource
    old, new = mapping_of(parent), mapping_of(fresh)
    if old == new:
        return None
    if (new.resource.group_version != old.resource.group_version or new.scope is not old.scope
            or verb not in RESENT_VERBS):
        raise MappingChangedError(verb, old, new) from cause
    if isinstance(resource, subresource_class):
        fresh = fresh.subresources.get(resource.subresource)
        if fresh is None:
            return None
    log.info("%s: %s is now %s; resending once", verb, old.resource, new.resource)
    return fresh
