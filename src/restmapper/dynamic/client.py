"""``SelfHealingDynamicClient``: a ``DynamicClient`` that survives a resource type changing under a request."""

from __future__ import annotations

from typing import Any

from kubernetes.client import ApiClient, Configuration
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import (
    MethodNotAllowedError,
    NotFoundError,
    ResourceNotFoundError,
    ResourceNotUniqueError,
)
from kubernetes.dynamic.resource import Resource, ResourceList, Subresource

from restmapper.dynamic._config import api_client_for
from restmapper.dynamic._notfound import is_resource_type_not_found
from restmapper.dynamic._resend import (
    HEALED_VERBS,
    answered_mapping,
    healed_doc,
    healing_questions,
    refuse_if_moved,
    report_gone,
    resend_after_mismatch,
    resend_target,
    resolved_parent,
)
from restmapper.dynamic.discoverer import SelfHealingDiscoverer
from restmapper.transport import incluster_config, resolve_config

__all__ = ["SelfHealingDynamicClient", "is_resource_type_not_found"]

class SelfHealingDynamicClient(DynamicClient):
    """A ``kubernetes.dynamic.DynamicClient`` whose default discoverer is :class:`SelfHealingDiscoverer` and whose
    requests heal when the resource type vanished under them, never changing what a request means.

    When ``get``/``create``/``replace``/``patch``/``server_side_apply``/``delete`` (and ``watch``, which lists
    through ``get``) answer 404 for the resource *type* (see :func:`is_resource_type_not_found`), the group is
    reported to the mapper (evicted) and the kind is resolved again: at the request's version, else at the
    group's preferred version. The request is sent once more only where it keeps its meaning
    (:func:`restmapper.mapper.may_resend`): the same request when nothing changed (the upgrade race), or a read
    (``get``: get, list, watch) or delete to a renamed resource at the same version and scope (a CRD recreated
    with another plural). Otherwise (another version, another scope, or a write to a renamed resource)
    :class:`~restmapper.errors.MappingChangedError` names the old and new mapping and nothing is resent; when the
    kind is gone, the 404 is raised as it came. A missing *object* is never retried.
    Mirrors controller-runtime's reaction to a NoKindMatch after a CRD change (re-resolve, then the caller rebuilds
    the request), done at the request instead of at the next reconcile.
    """

    def __init__(self, client: Any, cache_file: str | None = None, discoverer: Any = None) -> None:
        """Create a client over a ``kubernetes.client.ApiClient``.

        Args:
            client: the ApiClient (auth, TLS, host).
            cache_file: passed to the discoverer (None: no file).
            discoverer: a discoverer class taking ``(dynamic_client, cache_file)``; default
                :class:`SelfHealingDiscoverer`.

        Raises:
            InvalidArgumentError: the ApiClient's Configuration has no host.
            TypeError: ``client`` is not an ApiClient (a Configuration or a URL must be wrapped in one).
        """
        if not isinstance(client, ApiClient):
            hint = ("; wrap it: SelfHealingDynamicClient(kubernetes.client.ApiClient(configuration))"
                    if isinstance(client, Configuration) else "")
            raise TypeError(f"SelfHealingDynamicClient() takes a kubernetes.client.ApiClient, "
                            f"not {type(client).__name__}{hint}")
        super().__init__(client, cache_file=cache_file,  # type: ignore[no-untyped-call]
                         discoverer=discoverer or SelfHealingDiscoverer)

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, context: str | None = None, *, cache_file: str | None = None,
                        discoverer: Any = None) -> SelfHealingDynamicClient:
        """Build a client from a kubeconfig, or the pod's service account when there is none.

        Args:
            path: the kubeconfig file, or None to resolve as :func:`~restmapper.transport.resolve_config`
                (``$KUBECONFIG``, in-cluster, ``~/.kube/config``: controller-runtime's ``GetConfig`` order).
            context: the context, or None for the current one.
            cache_file: passed to the discoverer.
            discoverer: as the constructor.

        Raises:
            ConfigError: no usable source (the message lists those tried), or the settings are invalid.
        """
        return cls(api_client_for(resolve_config(path, context)), cache_file=cache_file, discoverer=discoverer)

    @classmethod
    def from_incluster(cls, service_account_dir: str | None = None, *, cache_file: str | None = None,
                       discoverer: Any = None) -> SelfHealingDynamicClient:
        """Build a client from the pod's service account (``kubernetes.config.load_incluster_config``).

        Args:
            service_account_dir: the service-account folder (default
                ``/var/run/secrets/kubernetes.io/serviceaccount``).
            cache_file: passed to the discoverer.
            discoverer: as the constructor.

        Raises:
            ConfigError: not in a pod, or the token or CA file is missing or empty.
        """
        return cls(api_client_for(incluster_config(service_account_dir)), cache_file=cache_file,
                   discoverer=discoverer)

    def _heal(self, verb: str, resource: Any, cause: BaseException) -> Any | None:
        """The resource to resend ``verb`` to after a resource-type 404 (:func:`resend_target`), or None.

        Raises:
            MappingChangedError: the kind moved where the request may not follow (nothing was resent).
        """
        parent = resolved_parent(resource, Resource, ResourceList, Subresource)
        return None if parent is None else resend_target(verb, resource, self._resolve_again(parent), Subresource,
                                                         cause)

    def _resolve_again(self, parent: Any) -> Any | None:
        """Report the group of ``parent`` to the mapper (:func:`report_gone`) and look its kind up again
        (:func:`healing_questions`); None when the kind is no longer served."""
        discoverer = self.resources
        if not report_gone(discoverer, parent):
            discoverer.invalidate_cache()
        for question in healing_questions(parent):
            try:
                return discoverer.get(**question)
            except (ResourceNotFoundError, ResourceNotUniqueError):
                continue
        return None

    def _call(self, verb: str, resource: Any, *args: Any, **kwargs: Any) -> Any:
        method = getattr(DynamicClient, verb)
        fresh = None
        try:
            result = method(self, resource, *args, **kwargs)
        except MethodNotAllowedError as exc:
            # A write to the cluster-wide path of a kind recreated namespaced: never resent.
            if type(resource) is Resource and resource.kind:  # not a ResourceList or a Subresource
                refuse_if_moved(verb, resource, self._resolve_again(resource), 405, exc)
            raise
        except NotFoundError as exc:
            # A subresource's 404 may mean only that this resource has no such subresource (a /scale probe).
            if isinstance(resource, Subresource) or not is_resource_type_not_found(exc):
                raise
            fresh = self._heal(verb, resource, exc)
            if fresh is None:
                raise
        if fresh is not None:  # resent once, outside the handler: the 404 is not the context of what it raises
            result = method(self, fresh, *args, **kwargs)
        return self._read_checked(resource, result, args, kwargs) if verb == "get" else result

    def _read_checked(self, resource: Any, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A read's ``result``, or the read resent once when it answered for another kind or scope
        (:func:`answered_mapping`, :func:`resend_after_mismatch`)."""
        if type(resource) is not Resource or not resource.kind:  # a ResourceList or a Subresource
            return result
        answered = answered_mapping(resource, result)
        if answered is None:
            return result
        fresh = resend_after_mismatch("get", resource, self._resolve_again(resource), answered)
        return DynamicClient.get(self, fresh, *args, **kwargs)  # type: ignore[no-untyped-call]


def _healed(verb: str) -> Any:
    def method(self: SelfHealingDynamicClient, resource: Any, *args: Any, **kwargs: Any) -> Any:
        return self._call(verb, resource, *args, **kwargs)

    method.__name__, method.__qualname__, method.__doc__ = verb, f"SelfHealingDynamicClient.{verb}", healed_doc(verb)
    return method


for _verb in HEALED_VERBS:
    setattr(SelfHealingDynamicClient, _verb, _healed(_verb))
