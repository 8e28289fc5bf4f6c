"""Hand a mapping to kr8s and lightkube: their generic-resource constructors need plural, scope and version.

Both libraries can talk to any resource type, but only once told its plural name, whether it is namespaced and
which version to use; guessing them (``kind.lower() + "s"``, always namespaced, the first version) is what breaks
on ``Gateway``/``gateways`` vs ``NetworkPolicy``/``networkpolicies``, cluster-scoped CRDs and removed versions.
These two functions take a :class:`~restmapper.model.RESTMapping` from our mapper (the server's own answer) and
build the library's class. The libraries are imported when called, never by ``import restmapper``.

Example::

    mapping = mapper.resolve("certificates.cert-manager.io")
    Certificate = kr8s_class(mapping)                       # kr8s.objects.APIObject subclass
    for cert in Certificate.list(namespace="default"): ...
    Certificate = lightkube_resource(mapping)               # lightkube generic resource
    for cert in lightkube.Client().list(Certificate, namespace="default"): ...
"""

from __future__ import annotations

from typing import Any

from restmapper._optional import require
from restmapper.model import RESTMapping

__all__ = ["kr8s_class", "lightkube_resource"]


def kr8s_class(mapping: RESTMapping, *, asyncio: bool = False) -> Any:
    """Return a kr8s ``APIObject`` class for ``mapping`` (``kr8s.objects.new_class`` with the served names).

    Args:
        mapping: from :meth:`LazyRESTMapper.rest_mapping` or :meth:`LazyRESTMapper.resolve`.
        asyncio: build the class for kr8s's asyncio API (``kr8s.asyncio``) instead of the sync one.

    Returns:
        The class: ``kind``, ``version`` (``group/version``, or ``v1`` for core), ``namespaced`` and ``plural``
        come from the mapping.

    Raises:
        ModuleNotFoundError: kr8s is not installed (``pip install 'kube-restmapper[kr8s]'``; from a checkout
            ``pip install '.[kr8s]'``).
        TypeError: ``mapping`` is not a RESTMapping.
    """
    if not isinstance(mapping, RESTMapping):
        raise TypeError(f"kr8s_class takes a RESTMapping, not {type(mapping).__name__}")
    new_class = require("kr8s_class", "kr8s.objects", "kr8s").new_class
    gvk = mapping.group_version_kind
    return new_class(kind=gvk.kind, version=str(gvk.group_version), asyncio=asyncio, namespaced=mapping.namespaced,
                     plural=mapping.resource.resource)


def lightkube_resource(mapping: RESTMapping) -> Any:
    """Return a lightkube generic resource class for ``mapping``.

    Args:
        mapping: from :meth:`LazyRESTMapper.rest_mapping` or :meth:`LazyRESTMapper.resolve`.

    Returns:
        ``lightkube.generic_resource.create_namespaced_resource`` or ``create_global_resource`` (by the mapping's
        scope) called with the served group, version, kind and plural.

    Raises:
        ModuleNotFoundError: lightkube is not installed (``pip install 'kube-restmapper[lightkube]'``; from a
            checkout ``pip install '.[lightkube]'``).
        TypeError: ``mapping`` is not a RESTMapping.
    """
    if not isinstance(mapping, RESTMapping):
        raise TypeError(f"lightkube_resource takes a RESTMapping, not {type(mapping).__name__}")
    generic = require("lightkube_resource", "lightkube.generic_resource", "lightkube")
    factory = generic.create_namespaced_resource if mapping.namespaced else generic.create_global_resource
    gvr = mapping.resource
    return factory(gvr.group, gvr.version, mapping.group_version_kind.kind, gvr.resource)
