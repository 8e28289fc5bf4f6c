"""Per-namespace RBAC denial of the fake cluster: a ``403 Forbidden`` as kube-apiserver's authorizer answers.

:meth:`FakeCluster.forbid_namespace` marks a namespace forbidden for the client's identity (every resource, or the
ones named). A request in that namespace is refused, and so is a request of the same resource at the cluster scope
(all namespaces): a user whose grants are RoleBindings in some namespaces may not list across all of them. The
Status is the authorizer's (``k8s.io/apiserver/pkg/endpoints/handlers/responsewriters.ForbiddenStatusError``)::

    configmaps is forbidden: User "system:serviceaccount:ops:ctrl" cannot list resource "configmaps" in API group
    "" in the namespace "b"
"""

from __future__ import annotations

from dataclasses import dataclass

from restmapper.testing import _documents as docs
from restmapper.testing._router import Reply

__all__ = ["Denial", "forbidden_reply"]


@dataclass(frozen=True)
class Denial:
    """A namespace forbidden to the client.

    Attributes:
        user: the identity the message names (``system:serviceaccount:<ns>:<name>``).
        resources: the resources (``resource.group``, ``configmaps`` for core) denied; None: every resource.
    """

    user: str
    resources: frozenset[str] | None = None

    def covers(self, resource_key: str) -> bool:
        """True when ``resource_key`` (``deployments.apps``) is denied."""
        return self.resources is None or resource_key in self.resources


def forbidden_reply(user: str, verb: str, resource: str, group: str, namespace: str | None) -> Reply:
    """The 403 Status for ``user`` doing ``verb`` on ``resource`` of ``group`` in ``namespace`` (None: the cluster
    scope)."""
    qualified = f"{resource}.{group}" if group else resource
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    message = (f'{qualified} is forbidden: User "{user}" cannot {verb} resource "{resource}" in API group "{group}" '
               f"{where}")
    details = {"kind": resource, **({"group": group} if group else {})}
    return docs.json_reply(403, docs.status_doc(403, "Forbidden", message, details))
