"""Errors of the healing clients' requests (published by :mod:`restmapper.errors`, their one import path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from restmapper.errors._core import RestMapperError

if TYPE_CHECKING:
    from restmapper.model import RESTMapping


def _described(mapping: RESTMapping) -> str:
    """``example.com/v1beta1 widgets (Namespaced)``."""
    gvr = mapping.resource
    gv = f"{gvr.group}/{gvr.version}" if gvr.group else gvr.version
    return f"{gv} {gvr.resource} ({mapping.scope.value})"


class MappingChangedError(RestMapperError):
    """A request answered 404 for its resource type (or a write 405, or named a namespace for a kind held as
    cluster-scoped), and the kind is now served under another mapping that the request may not be sent to: nothing
    was (re)sent.

    After such a 404 the healing clients (:class:`~restmapper.dynamic.SelfHealingDynamicClient` and the asyncio
    drop-ins, and :class:`~restmapper.client.Client`) resolve the kind again. They resend the request only when the
    kind is still served at the version the request was built for (or, for a read or delete, the caller named
    none), in the same scope, and, unless the mapping is exactly the same, only reads (``get``, which lists and
    watches too) and deletes (:func:`restmapper.mapper.may_resend`). Any other request is refused with this
    error: a body built for one version is never sent to another
    (kube-apiserver answers 400 for a create, and applies a merge or JSON patch, which names no version, under the
    new version's schema, pruning renamed fields), and a namespace never silently means the whole cluster (a
    namespaced kind recreated cluster-scoped).

    Look the kind up again (``client.resources.get(...)``) and build the request for the new mapping.

    Attributes:
        verb: the client method that was not resent (``create``, ``get``, ``patch``, ...).
        old: the mapping the request was built for.
        new: the mapping the kind is served under now (at the request's version when still served there,
            else at the group's preferred version).
        answered: the HTTP status that revealed the move (404; 405 for a write to the cluster-wide path of a kind
            now namespaced; 200 for a read through a drop-in ``Resource`` answered with objects of another kind,
            or of another scope), None when it was found before sending (a namespace for a kind held as
            cluster-scoped).
    """

    def __init__(self, verb: str, old: RESTMapping, new: RESTMapping, *, answered: int | None = 404) -> None:
        self.verb = verb
        self.old = old
        self.new = new
        self.answered = answered
        kind = old.group_version_kind
        what = f"{kind.kind}.{kind.group}" if kind.group else kind.kind
        if new.group_version_kind.group_kind != kind.group_kind:
            why = (f"{old.resource.resource} now serves the kind {new.group_version_kind.kind}, not {kind.kind}, so "
                   "the request would address other objects")
        elif new.scope is not old.scope:
            why = (f"its scope changed from {old.scope.value} to {new.scope.value}, so the request would address "
                   "other objects")
        elif new.resource.group_version != old.resource.group_version:
            why = (f"it is no longer served at {old.resource.group_version}, the version the request was built "
                   "for")
        else:
            why = "only reads (get, list, watch) and deletes are resent to a renamed resource"
        if answered is None:  # found before sending
            head = (f"{verb} of {what} was not sent: it names a namespace, but the mapper held {_described(old)}; "
                    f"resolved again, the kind is now served as {_described(new)}, and {why}. Nothing was sent")
        elif answered == 200:  # a read's answer showed the change
            head = (f"{verb} of {what} was not resent: the server's answer for {_described(old)} holds "
                    f"{new.group_version_kind.kind} objects served as {_described(new)}, and {why}. Nothing was "
                    "resent")
        else:
            head = (f"{verb} of {what} was not resent: the server no longer serves {_described(old)} ({answered}), "
                    f"the kind is now served as {_described(new)}, and {why}. Nothing was resent")
        super().__init__(f"{head}: look the kind up again and build the request for the new mapping")
