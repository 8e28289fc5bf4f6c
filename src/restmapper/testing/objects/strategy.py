"""Object metadata as kube-apiserver's registry strategies set and check it: which names a kind accepts
(``ValidateObjectMeta`` with the kind's name function) and which kinds carry ``metadata.generation``.

Names (apimachinery ``util/validation``): most kinds take a DNS-1123 subdomain (at most 253 characters); a
Namespace takes a DNS-1123 label (63), a Service a DNS-1035 label (63, starting with a letter), and the RBAC kinds
any path segment (``system:controller:x``: not ``.`` or ``..``, no ``/`` or ``%``). Custom resources take a
subdomain, as apiextensions-apiserver checks them.

``generation`` is set (1 on create, bumped by spec changes) only by the strategies of kinds with spec/status
semantics: workloads, pods, policies and admission configuration among the built-ins, every CRD and every custom
resource; a ConfigMap, Secret, Namespace or Service has none.
"""

from __future__ import annotations

import re

from restmapper.testing.objects.writes import APIError, Resource

__all__ = ["BUILT_INS_WITH_GENERATION", "check_name"]

BUILT_INS_WITH_GENERATION = frozenset({
    "pods", "replicationcontrollers",
    "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps",
    "jobs.batch", "cronjobs.batch",
    "poddisruptionbudgets.policy",
    "ingresses.networking.k8s.io", "networkpolicies.networking.k8s.io",
    "endpointslices.discovery.k8s.io",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingadmissionpolicies.admissionregistration.k8s.io",
    "validatingadmissionpolicybindings.admissionregistration.k8s.io",
    "flowschemas.flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
    "customresourcedefinitions.apiextensions.k8s.io",
})
"""Storage keys (``resource.group``) of the built-in kinds whose strategy sets ``metadata.generation``."""

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_RULES = {  # name -> (regex, max length, message, examples)
    "subdomain": (_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric character",
                  ("example.com",)),
    "label": (_LABEL, 63, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character", ("my-name", "123-abc")),
    "dns1035": (_DNS1035, 63, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                "with an alphabetic character, and end with an alphanumeric character", ("my-name", "abc-123")),
}
_NAME_RULES = {("", "namespaces"): "label", ("", "services"): "dns1035"}
"""The name rule of the kinds that do not take a subdomain, by ``(group, resource)``."""
_RBAC = frozenset({"roles", "rolebindings", "clusterroles", "clusterrolebindings"})


def _problems(res: Resource, name: str) -> list[str]:
    """What is wrong with ``name`` for ``res`` (apimachinery's messages), empty when valid."""
    if res.group == "rbac.authorization.k8s.io" and res.plural in _RBAC:
        return _path_segment_problems(name)
    regex, limit, message, examples = _RULES[_NAME_RULES.get((res.group, res.plural), "subdomain")]
    problems = [f"must be no more than {limit} characters"] if len(name) > limit else []
    if not re.fullmatch(regex, name):
        shown = ",  or ".join(f"'{e}'" for e in examples)
        problems.append(f"{message} (e.g. {shown}, regex used for validation is '{regex}')")
    return problems


def _path_segment_problems(name: str) -> list[str]:
    """What is wrong with ``name`` as a path segment (the RBAC kinds' names), empty when valid."""
    problems = [f"may not be '{name}'"] if name in (".", "..") else []
    return problems + [f"may not contain '{c}'" for c in "/%" if c in name]


def check_name(res: Resource, name: str) -> None:
    """Refuse ``metadata.name`` when ``res``'s kind does not accept it, as kube-apiserver's ``ValidateObjectMeta``.

    Raises:
        APIError: 422 Invalid, one ``FieldValueInvalid`` cause on ``metadata.name`` per problem.
    """
    problems = _problems(res, name)
    if not problems:
        return
    causes = [{"reason": "FieldValueInvalid", "message": f"Invalid value: {_quoted(name)}: {p}",
               "field": "metadata.name"} for p in problems]
    errors = [f"metadata.name: {c['message']}" for c in causes]
    kind = f"{res.kind}.{res.group}" if res.group else res.kind
    listed = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    raise APIError(422, "Invalid", f'{kind} "{name}" is invalid: {listed}',
                   {**res.details(name), "kind": res.kind, "causes": causes})


def _quoted(value: str) -> str:
    """A string value as Go's ``%q`` shows it in a field error (JSON quoting agrees for names)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
