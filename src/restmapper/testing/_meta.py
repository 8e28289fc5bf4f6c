"""Representations of resource responses: the full objects, or ``PartialObjectMetadata`` (metadata only).

kube-apiserver picks the representation from the ``Accept`` header (apiserver's ``targetEncodingForTransform``):
a JSON media range without ``as``/``g``/``v`` is the object itself; ``as=PartialObjectMetadata;g=meta.k8s.io;v=v1``
(``v1beta1`` too) turns a get or a watch event into ``{"apiVersion": "meta.k8s.io/v1", "kind":
"PartialObjectMetadata", "metadata": {...}}``, and ``as=PartialObjectMetadataList`` a list into a
``PartialObjectMetadataList`` of those. Ranges the kit cannot serve (``as=Table``, protobuf, YAML) are skipped;
when none is left the answer is ``406 NotAcceptable`` with the server's message (:func:`~._documents.not_acceptable`).
"""

from __future__ import annotations

from typing import Any, Literal

from restmapper.testing import _documents as docs

__all__ = ["Representation", "as_metadata", "metadata_list", "representation"]

Representation = Literal["object", "metadata"]
_META_GROUP = "meta.k8s.io"
_META_VERSIONS = ("v1", "v1beta1")


def representation(accept: str | None, *, collection: bool) -> Representation | None:
    """Return what a resource request with ``accept`` receives, or None (the caller answers 406).

    Args:
        accept: the ``Accept`` header.
        collection: a list (``PartialObjectMetadataList``) rather than a get or a watch (``PartialObjectMetadata``).
    """
    wanted = "PartialObjectMetadataList" if collection else "PartialObjectMetadata"
    for media in docs.parse_accept(accept):
        if media.type not in ("application/json", "application/*", "*/*"):
            continue
        g, v, as_ = media.param("g"), media.param("v"), media.param("as")
        if g is None and v is None and as_ is None:
            return "object"
        if g == _META_GROUP and v in _META_VERSIONS and as_ == wanted:
            return "metadata"
    return None


def as_metadata(obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    """The ``PartialObjectMetadata`` of ``obj`` (its ``metadata`` shared, not copied: callers copy what they keep)."""
    return {"kind": "PartialObjectMetadata", "apiVersion": f"{_META_GROUP}/{version}",
            "metadata": obj.get("metadata", {})}


def metadata_list(list_metadata: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``PartialObjectMetadataList`` of ``items`` (already :func:`as_metadata`)."""
    return {"kind": "PartialObjectMetadataList", "apiVersion": f"{_META_GROUP}/v1", "metadata": list_metadata,
            "items": items}
