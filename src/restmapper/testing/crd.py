"""CustomResourceDefinition manifests: validation, stored-object bookkeeping and the discovery they produce.

Discovery of CRDs mirrors apiextensions-apiserver's ``DiscoveryController.sync``:

- only served versions are discovered; a group appears while at least one of its CRDs serves a version;
- resources come from ``status.acceptedNames`` (here: ``spec.names`` with the API server's defaults, the names
  being accepted at once), verbs are ``delete, deletecollection, get, list, patch, create, update, watch`` in
  that order (``delete, deletecollection, get, list, watch`` while the CRD is terminating);
- ``storageVersionHash`` is ``base64(sha256("<group>/<storage version>/<Kind>")[:8])`` on every served version;
- the ``status`` subresource answers with the CRD's kind, ``scale`` with ``autoscaling/v1 Scale``, both with
  verbs ``get, patch, update``;
- the legacy resource list keeps the CRDs' order with each resource followed by its ``/status`` and ``/scale``
  entries; aggregated discovery sorts resources by name and fills ``responseKind`` with the group version;
- versions are ordered by ``version.CompareKubeAwareVersionStrings`` (all CRD versions have version priority
  100), the first served one is the preferred version; every CRD group version has group priority 1000.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from restmapper.errors import InvalidArgumentError
from restmapper.testing._crd_rules import FieldError, check_crd, go_lower, summary
from restmapper.testing.profile import ResourceSpec, SubresourceSpec

__all__ = [
    "CRD_GROUP_PRIORITY",
    "CRD_VERSION_PRIORITY",
    "InvalidCRDError",
    "crd_resource",
    "parse_crd",
    "served_versions",
    "storage_version_hash",
]

CRD_GROUP_PRIORITY = 1000
CRD_VERSION_PRIORITY = 100
_CRD_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
_TERMINATING_VERBS = ("delete", "deletecollection", "get", "list", "watch")
_SUB_VERBS = ("get", "patch", "update")


class InvalidCRDError(InvalidArgumentError):
    """A CRD manifest is not a valid ``apiextensions.k8s.io/v1`` CustomResourceDefinition.

    Attributes:
        field: the JSON path of the offending field (``spec.names.plural``).
        reason: what is wrong with it.
        errors: for multi-document input (:func:`parse_crds`), ``(document number, error)`` per bad document.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"invalid CustomResourceDefinition: {field}: {reason}")
        self.field = field
        self.reason = reason
        self.errors: list[tuple[int, InvalidCRDError]] = []
        self.summary = f"{field}: {reason}"
        kind = "Required" if reason.startswith("Required value") else "Invalid"
        self.causes: list[dict[str, str]] = [{"reason": f"FieldValue{kind}", "message": reason, "field": field}]

    @classmethod
    def from_errors(cls, errors: Sequence[FieldError]) -> InvalidCRDError:
        """The error for what kube-apiserver's validation found (every error, in its order).

        Returns:
            An error whose ``field``/``reason`` are the first error's, ``summary`` the list as kube-apiserver's
            message prints it (``spec.group: Invalid value: "Example.com": ...``, several in ``[...]``) and
            ``causes`` the Status causes (``reason``, ``message``, ``field``), one per error.
        """
        error = cls(errors[0].field, errors[0].body())
        error.summary = summary(errors)
        error.args = (f"invalid CustomResourceDefinition: {error.summary}",)
        error.causes = [e.cause() for e in errors]
        return error


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Return the ``storageVersionHash`` kube-apiserver publishes (``discovery.StorageVersionHash``)."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode("ascii")


def _require(obj: Mapping[str, Any], key: str, path: str, kind: type = str) -> Any:
    if not isinstance(obj, Mapping):
        raise InvalidCRDError(path.rsplit(".", 1)[0] or path, "must be an object")
    value = obj.get(key)
    if value is None or (kind is str and value == ""):
        raise InvalidCRDError(f"{path}", "Required value")
    if not isinstance(value, kind):
        raise InvalidCRDError(path, f"must be a {kind.__name__}")
    return value


def _string_list(names: Mapping[str, Any], key: str) -> list[str]:
    value = names.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidCRDError(f"spec.names.{key}", "must be a list of non-empty strings")
    return list(value)


def parse_crds(manifests: Mapping[str, Any] | str) -> list[dict[str, Any]]:
    """Validate one or more CRD manifests and return normalized deep copies, in order.

    Args:
        manifests: a CRD as a dict, or YAML/JSON text with one or more documents separated by ``---`` (as projects
            such as istio ship their CRDs); empty documents are skipped.

    Returns:
        The normalized manifests (see :func:`parse_crd`).

    Raises:
        InvalidCRDError: when the text is not YAML, holds no document, or any document is invalid; the message has
            one line per bad document (``document 3 (name: x): spec.scope: ...``, counted from 1) and ``errors``
            holds ``(document number, error)`` pairs. Nothing is returned for a partly valid input.
    """
    if not isinstance(manifests, str):
        return [parse_crd(manifests)]
    import yaml  # only YAML input needs it; keeps importing the kit cheap

    try:
        documents = list(yaml.safe_load_all(manifests))
    except yaml.YAMLError as exc:
        raise InvalidCRDError("<document>", f"not valid YAML: {exc.__class__.__name__}: {exc}") from None
    parsed: list[dict[str, Any]] = []
    errors: list[tuple[int, InvalidCRDError]] = []
    for number, doc in enumerate(documents, start=1):
        if doc is None:
            continue
        try:
            parsed.append(parse_crd(doc))
        except InvalidCRDError as exc:
            errors.append((number, exc))
    if errors:
        raise _invalid_documents(documents, errors, len(parsed) + len(errors))
    if not parsed:
        raise InvalidCRDError("<document>", "expected at least one YAML document, got none")
    return parsed


def _invalid_documents(documents: list[Any], errors: list[tuple[int, InvalidCRDError]],
                       count: int) -> InvalidCRDError:
    """The error of ``parse_crds`` for the invalid ``documents`` in ``errors`` (``(document number, error)``, among
    ``count`` documents): one line per bad document."""
    lines = []
    for number, problem in errors:
        name = _document_name(documents[number - 1])
        lines.append(f"document {number}" + (f" (name: {name})" if name else "") + f": {problem.summary}")
    error = InvalidCRDError("<documents>", f"{len(errors)} of {count} documents are invalid:\n" + "\n".join(lines))
    error.errors = errors
    return error


def _document_name(doc: Any) -> Any:
    """The ``metadata.name`` of a YAML document, or None."""
    metadata = doc.get("metadata") if isinstance(doc, dict) else None
    return metadata.get("name") if isinstance(metadata, dict) else None


def _one_document(text: str) -> Any:
    """The one YAML (or JSON) document of ``text``.

    Raises:
        InvalidCRDError: when the text is not YAML or holds no or several documents.
    """
    import yaml  # only YAML input needs it; keeps importing the kit cheap

    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise InvalidCRDError("<document>", f"not valid YAML: {exc.__class__.__name__}") from None
    if len(docs) != 1:
        raise InvalidCRDError("<document>", f"expected exactly one YAML document, got {len(docs)}")
    return docs[0]


def parse_crd(manifest: Mapping[str, Any] | str,
              old_of: Callable[[str], Mapping[str, Any] | None] | None = None) -> dict[str, Any]:
    """Validate a CRD manifest and return a normalized deep copy.

    The copy has ``metadata.name`` set (``<plural>.<group>``) and ``spec.names`` defaulted as the API server
    does when they are absent, null or empty (``singular`` = the kind lower-cased as Go's ``strings.ToLower``,
    ``listKind`` = kind + ``List``). It is then checked as kube-apiserver
    checks a CRD (:mod:`restmapper.testing._crd_rules`: DNS-1123 group with a dot, DNS-1035 names and versions,
    kind/listKind, scope, one storage version, unique versions, the name), every error at once.

    Args:
        manifest: a CRD as a dict or as YAML/JSON text holding exactly one document.
        old_of: for an update, gives the stored CRD of a name (None: none): when there is one, the update rules
            apply (``spec.group`` and ``spec.names.plural`` immutable, and ``spec.scope`` and ``spec.names.kind``
            once Established) instead of the name rule.

    Returns:
        The normalized manifest (never the caller's object).

    Raises:
        InvalidCRDError: when a required field is missing or has the wrong type, or kube-apiserver's validation
            finds errors (``causes`` lists each, as the Status causes of its 422 answer).
    """
    if isinstance(manifest, str):
        manifest = _one_document(manifest)
    if not isinstance(manifest, Mapping):
        raise InvalidCRDError("<document>", "must be an object")
    crd: dict[str, Any] = copy.deepcopy(dict(manifest))
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1" or crd.get("kind") != "CustomResourceDefinition":
        raise InvalidCRDError("apiVersion/kind", "must be apiextensions.k8s.io/v1 CustomResourceDefinition")
    spec = _require(crd, "spec", "spec", dict)
    group = _require(spec, "group", "spec.group")
    names = _require(spec, "names", "spec.names", dict)
    plural = _require(names, "plural", "spec.names.plural")
    kind = _require(names, "kind", "spec.names.kind")
    _require(spec, "scope", "spec.scope")
    _default_names(names, kind)
    _check_versions(_require(spec, "versions", "spec.versions", list))
    name = _metadata_name(crd, f"{plural}.{group}")
    errors = check_crd(crd, old_of(name) if old_of is not None else None)
    if errors:
        raise InvalidCRDError.from_errors(errors)
    return crd


def _default_names(names: dict[str, Any], kind: str) -> None:
    """Check the optional ``spec.names`` fields' types and default ``singular`` and ``listKind`` (in place).

    Raises:
        InvalidCRDError: for a field of the wrong type.
    """
    for key, default in (("singular", go_lower(kind)), ("listKind", kind + "List")):
        if names.get(key) is not None and not isinstance(names[key], str):
            raise InvalidCRDError(f"spec.names.{key}", "must be a string")
        # SetDefaults_CustomResourceDefinitionSpec defaults each when its length is 0: absent, null and "" all
        # decode to Go's zero value.
        if not names.get(key):
            names[key] = default
    for key in ("shortNames", "categories"):
        _string_list(names, key)


def _check_versions(versions: list[Any]) -> None:
    """Check the required fields' types of each of ``spec.versions``.

    Raises:
        InvalidCRDError: for a missing field or one of the wrong type.
    """
    for i, v in enumerate(versions):
        _require(v, "name", f"spec.versions[{i}].name")
        for flag in ("served", "storage"):
            _require(v, flag, f"spec.versions[{i}].{flag}", bool)
        sub = v.get("subresources")
        if sub is not None and not isinstance(sub, Mapping):
            raise InvalidCRDError(f"spec.versions[{i}].subresources", "must be an object")


def _metadata_name(crd: dict[str, Any], default: str) -> str:
    """``metadata.name``, set to ``default`` (``plural.group``) when absent.

    Raises:
        InvalidCRDError: for metadata that is not an object or a name that is not a string.
    """
    metadata = crd.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise InvalidCRDError("metadata", "must be an object")
    metadata.setdefault("name", default)
    if not isinstance(metadata["name"], str):
        raise InvalidCRDError("metadata.name", "must be a str")
    return metadata["name"]


def served_versions(crd: Mapping[str, Any]) -> list[str]:
    """Return the names of the served versions of a normalized CRD, in manifest order."""
    return [str(v["name"]) for v in crd["spec"]["versions"] if v["served"]]


def _terminating(crd: Mapping[str, Any]) -> bool:
    conditions: Sequence[Mapping[str, Any]] = crd.get("status", {}).get("conditions", [])
    return any(c.get("type") == "Terminating" and c.get("status") == "True" for c in conditions)


def _served_version(spec: Mapping[str, Any], version: str) -> Mapping[str, Any] | None:
    """The entry of ``spec.versions`` for ``version`` when it is served, else None."""
    return next((v for v in spec["versions"] if v["name"] == version and v["served"]), None)


def _storage_version(spec: Mapping[str, Any]) -> str:
    return str(next(v["name"] for v in spec["versions"] if v["storage"]))


def _subresources(declared: Mapping[str, Any], kind: str) -> tuple[SubresourceSpec, ...]:
    """The subresources a CRD version declares (``status``, ``scale``)."""
    status = (SubresourceSpec("status", kind, _SUB_VERBS),) if declared.get("status") is not None else ()
    scale = (SubresourceSpec("scale", "Scale", _SUB_VERBS, "autoscaling", "v1"),) \
        if declared.get("scale") is not None else ()
    return status + scale


def crd_resource(crd: Mapping[str, Any], version: str) -> ResourceSpec | None:
    """Return the resource a normalized CRD serves at ``version``, or None when that version is not served.

    Names come from ``status.acceptedNames`` when present, else from ``spec.names``.
    """
    spec = crd["spec"]
    entry = _served_version(spec, version)
    if entry is None:
        return None
    names = crd.get("status", {}).get("acceptedNames") or spec["names"]
    group, kind = spec["group"], names["kind"]
    return ResourceSpec(
        name=names["plural"],
        singular_name=names.get("singular") or go_lower(kind),
        kind=kind,
        namespaced=spec["scope"] == "Namespaced",
        verbs=_TERMINATING_VERBS if _terminating(crd) else _CRD_VERBS,
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        storage_version_hash=storage_version_hash(group, _storage_version(spec), spec["names"]["kind"]),
        subresources=_subresources(entry.get("subresources") or {}, kind),
        response_group=group,
        response_version=version,
    )
