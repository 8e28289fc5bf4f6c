"""The fast reading of an aggregated discovery document: plain type checks, one group at a time.

:func:`read_streamed` walks the text with a :class:`~restmapper.wire._pieces.Cursor`: each group (``items[i]``) is
decoded, checked and dropped before the next one, and each group version keeps only its version object's JSON text
(a :data:`~restmapper.wire._pieces.Piece`; the resources are converted from it on first use, see
:class:`~restmapper.wire.aggregated.LazyResourceLists`). A thousand-group ``/apis`` is then never a tree of every
resource at once: the document's text (2.7 MB, one block, shared by every version when it is ASCII; else each
version's own copy, UTF-8 where not ASCII, so about the body's size either way) instead of ~14 MiB of dicts, lists
and strings, whose freed arenas would stay in the process's resident set. :func:`read_items` checks an already
decoded ``items`` the same way.

Both accept exactly what :func:`~restmapper.wire.aggregated.parse_aggregated`'s field-by-field reading accepts, and
answer None for anything else: the caller then reads the whole document with precise errors.
"""

from __future__ import annotations

from typing import Any

from restmapper.model import APIGroup, GroupVersion
from restmapper.wire._pieces import Cursor, Piece

__all__ = ["SCOPES", "STALE", "Items", "read_items", "read_streamed", "resources_ok"]

SCOPES = {"Namespaced": True, "Cluster": False}
STALE = "Stale"

Items = tuple[list[APIGroup], dict[GroupVersion, object], list[GroupVersion], dict[str, tuple[str, ...]]]
"""Groups, each non-stale version's raw resources (decoded JSON, or the :data:`~restmapper.wire._pieces.Piece` of its
version object), stale versions and every listed version by group."""


def _str_or_null(value: object) -> bool:
    return value is None or type(value) is str


def _str_list_or_null(value: object) -> bool:
    if value is None:
        return True
    if type(value) is not list:
        return False
    for item in value:  # noqa: SIM110 -- a plain loop is faster than all() over a generator here
        if type(item) is not str:
            return False
    return True


def _response_kind_ok(value: object) -> bool:
    if value is None:
        return True
    if type(value) is not dict:
        return False
    return _str_or_null(value.get("kind")) and _str_or_null(value.get("group")) and _str_or_null(
        value.get("version"))


def _subresource_ok(sub: object) -> bool:
    if type(sub) is not dict:
        return False
    name = sub.get("subresource")
    return (type(name) is str and name != "" and _str_list_or_null(sub.get("verbs"))
            and _response_kind_ok(sub.get("responseKind")))


def _subresources_ok(subs: object) -> bool:
    return subs is None or (type(subs) is list and all(map(_subresource_ok, subs)))


def _name_and_scope_ok(entry: dict[str, Any]) -> bool:
    name, scope = entry.get("resource"), entry.get("scope")
    return type(name) is str and name != "" and type(scope) is str and scope in SCOPES


def _resource_ok(entry: object) -> bool:
    if type(entry) is not dict or not _name_and_scope_ok(entry):
        return False
    return (_str_list_or_null(entry.get("verbs")) and _str_list_or_null(entry.get("shortNames"))
            and _str_list_or_null(entry.get("categories")) and _str_or_null(entry.get("singularResource"))
            and _response_kind_ok(entry.get("responseKind")) and _subresources_ok(entry.get("subresources")))


def resources_ok(resources: object) -> bool:
    """True when ``resources`` (one version's raw ``resources``) converts without error: the fast check."""
    return resources is None or (type(resources) is list and all(map(_resource_ok, resources)))


def _group_name(meta: object) -> str | None:
    """The name in a group's decoded ``metadata`` (absent or null: ``""``, the core group); None if off."""
    if meta is None:
        return ""
    if type(meta) is not dict:
        return None
    name = meta.get("name")
    if name is None:
        return ""
    return name if type(name) is str else None


def _version_name(version: object, seen: list[str]) -> str | None:
    """The ``version`` of one decoded version object, new among ``seen``; None if anything is off."""
    if type(version) is not dict or not _str_or_null(version.get("freshness")):
        return None
    v = version.get("version")
    return v if type(v) is str and v != "" and v not in seen else None


def _add_version(out: Items, name: str, version: Any, piece: Piece | None, listed: list[str],
                 fresh: list[str]) -> bool:
    """Add one decoded version object of group ``name`` to ``out``, ``listed`` and (unless stale) ``fresh``;
    False if anything is off. ``piece``: its JSON text, kept instead of its decoded resources when given."""
    v = _version_name(version, listed)
    if v is None:
        return False
    listed.append(v)
    gv = GroupVersion(name, v)
    if version.get("freshness") == STALE:
        out[2].append(gv)
        return True
    resources = version.get("resources")
    if not resources_ok(resources):
        return False
    fresh.append(v)
    out[1][gv] = resources if piece is None or not resources else piece
    return True


def _add_group(out: Items, meta: object, versions: object, pieces: list[Piece] | None) -> bool:
    """Add one group (its decoded ``metadata`` and ``versions``) to ``out``; False if anything is off.

    ``pieces``, when given, is the JSON text of each element of ``versions``: a version keeps that, not its decoded
    resources.
    """
    groups, _, _, listed = out
    name = _group_name(meta)
    versions = [] if versions is None else versions
    if name is None or name in listed or type(versions) is not list:
        return False
    fresh: list[str] = []
    all_versions: list[str] = []
    for i, version in enumerate(versions):
        if not _add_version(out, name, version, None if pieces is None else pieces[i], all_versions, fresh):
            return False
    listed[name] = tuple(all_versions)
    groups.append(APIGroup(name=name, versions=tuple(fresh), preferred_version=fresh[0] if fresh else None))
    return True


def _empty() -> Items:
    return [], {}, [], {}


def read_items(items: object) -> Items | None:
    """``items`` (decoded) split into groups, raw resources, stale and listed versions; None if anything is off."""
    if items is None:
        items = []
    if type(items) is not list:
        return None
    out = _empty()
    for item in items:
        if type(item) is not dict or not _add_group(out, item.get("metadata"), item.get("versions"), None):
            return None
    return out


def _read_group(cur: Cursor, out: Items) -> bool:
    meta: object = None
    versions: object = None
    pieces: list[Piece] | None = None
    for key in cur.members():
        if key == "versions" and cur.at("["):
            decoded: list[Any] = []
            pieces = []
            for _ in cur.elements():
                version, piece = cur.value_piece()
                decoded.append(version)
                pieces.append(piece)
            versions = decoded
        else:
            value = cur.value()
            if key == "metadata":
                meta = value
            elif key == "versions":
                versions, pieces = value, None
    return _add_group(out, meta, versions, pieces)


def read_streamed(text: str) -> tuple[dict[str, Any], Items] | None:
    """Read a whole ``APIGroupDiscoveryList`` text one group at a time.

    Returns:
        The top-level fields other than ``items`` (decoded), and what :func:`read_items` returns for ``items``;
        None when the text is not valid JSON, the top level is not an object, a walked object (the top level, a
        group) repeats a key, or anything fails the fast checks: read it whole then.
    """
    cur = Cursor(text)
    top: dict[str, Any] = {}
    out: Items | None = None
    try:
        for key in cur.members():
            if key == "items" and cur.at("["):
                out = _empty()
                for _ in cur.elements():
                    if not cur.at("{") or not _read_group(cur, out):
                        return None
            else:
                top[key] = cur.value()
        cur.finish()
    except (ValueError, RecursionError):
        return None  # the whole reading raises the precise error; nothing of this one is kept
    if out is None:
        out = read_items(top.pop("items", None))
        if out is None:
            return None
    return top, out
