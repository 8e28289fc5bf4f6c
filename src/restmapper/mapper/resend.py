"""The one rule for sending a request again after healing, for every client that heals (the drop-ins' healing
clients in :mod:`restmapper.dynamic`, the writing :mod:`restmapper.client`).

A request answered 404 for its resource *type*; the group was reported to the mapper and the kind resolved
again. The request may be sent once more only where it keeps its meaning: the same kind in the same scope (a
namespace must never silently become the whole cluster), at the version the caller asked for when it named one,
and, for a request carrying a body or a patch written for that mapping (create, replace/update, patch, apply),
only to the very same mapping (it was not applied: sending it again is the same request; anywhere else the body
would be read under another version's schema or path). Reads (get, list, watch) and deletes may follow a renamed
resource, and, when the caller named no version, another version.
"""

from __future__ import annotations

from restmapper.model import RESTMapping

__all__ = ["has_moved", "may_resend"]


def may_resend(old: RESTMapping, new: RESTMapping, *, writes: bool, version_named: bool = True) -> bool:
    """Whether a request built for ``old`` that answered 404 for its type may be sent again under ``new``.

    Args:
        old: the mapping the request was built for.
        new: the kind's mapping after healing (at the caller's version when still served there).
        writes: the request carries a body or a patch written for ``old`` (not a read or a delete).
        version_named: the caller named the version (a ``Resource`` of a group version, a body's
            ``apiVersion``); False for a read or delete of a kind named without one.

    Returns:
        True when sending the request again under ``new`` means what the caller asked for; otherwise the caller
        raises :class:`~restmapper.errors.MappingChangedError` and sends nothing.
    """
    if new.group_version_kind.group_kind != old.group_version_kind.group_kind or new.scope is not old.scope:
        return False
    if writes:
        return new == old
    return not version_named or new.resource.group_version == old.resource.group_version


def has_moved(old: RESTMapping, new: RESTMapping) -> bool:
    """Whether the kind of ``old`` moved, after an answer a stale mapping may cause but that is never resent (a 405
    Method Not Allowed: a create POSTed to the cluster-wide path of a kind recreated namespaced).

    The group was reported to the mapper and the kind resolved again (``new``). A kind served under another
    resource (version or plural) or in another scope moved: the caller raises
    :class:`~restmapper.errors.MappingChangedError` naming both, and sends nothing again. Otherwise the server's
    error stands.

    Args:
        old: the mapping the request was built for.
        new: the kind's mapping after resolving again (at ``old``'s version when still served there).

    Returns:
        True when the request was sent under a mapping that is no longer the kind's.
    """
    return new.resource != old.resource or new.scope is not old.scope
