"""JSON decoding and typed field access for discovery documents.

Every failure becomes a :class:`~restmapper.errors.MalformedDiscoveryError` naming the document, the JSON path of
the field (``items[3].versions[0].resources[2].scope``) and the reason, so nothing half-parsed leaks out as a
``KeyError``/``TypeError``/``JSONDecodeError``.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from restmapper._redact import excerpt
from restmapper.errors import MalformedDiscoveryError
from restmapper.wire._pieces import DECODER

__all__ = ["decode_json", "quote", "shared"]

_SNIPPET_CHARS = 32
# Only this much of the body is inspected to recognise an HTML page: proxies put the doctype first.
_HTML_SNIFF_BYTES = 1024
_UTF8_BOM = b"\xef\xbb\xbf"


_SHARED: dict[tuple[str, ...], tuple[str, ...]] = {}
_SHARED_LIMIT = 4096


def shared(values: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """``values`` as a tuple, the same tuple for every equal list: verb and category lists are the same few
    across thousands of resources (each decoded list would otherwise hold its own copy of every string).

    At most ``_SHARED_LIMIT`` distinct lists are remembered (then the memory starts over): a server sending
    ever new lists costs a bounded table, never a growing one.
    """
    if not values:
        return ()
    key = tuple(values)
    held = _SHARED.get(key)
    if held is None:
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        held = _SHARED[key] = key
    return held


def fail(document: str, path: str, reason: str) -> NoReturn:
    """Raise the typed error for ``path`` of ``document``."""
    raise MalformedDiscoveryError(document, path, reason)


def _snippet(text: str, start: int = 0) -> str:
    # Short and scrubbed before it is cut: an error message must never carry the body (nor a token a proxy
    # echoed into it, nor the head of one).
    cut = excerpt(text, _SNIPPET_CHARS, start=start)
    clean = "".join(ch if ch.isprintable() else "?" for ch in cut)
    return repr(clean) + ("..." if len(text) - start > _SNIPPET_CHARS else "")


def quote(text: str, limit: int = 100) -> str:
    """``repr`` of at most ``limit`` characters of server text, scrubbed of credentials before it is cut."""
    return repr(excerpt(text, limit)) + ("..." if len(text) > limit else "")


def decode_json(body: bytes, *, document: str) -> dict[str, Any]:
    """Decode a discovery response body into a JSON object.

    Args:
        body: the raw response body (bytes, as received).
        document: what is being parsed, for error messages (a path such as ``/apis/apps/v1``).

    Returns:
        The top-level JSON object.

    Raises:
        MalformedDiscoveryError: empty body, an HTML page (a proxy answered instead of kube-apiserver), bytes that
            are not UTF-8, invalid or truncated JSON (the message gives the position and at most a short,
            sanitized snippet, never the body), or a top level that is not an object.

    Mirrors the strictness of Go's ``encoding/json`` as used by client-go (no NaN/Infinity); a UTF-8 byte order
    mark is tolerated.
    """
    return loads_text(body_text(body, document=document), document=document)


def body_text(body: bytes, *, document: str) -> str:
    """The text of a discovery response body: the checks of :func:`decode_json` that come before JSON.

    Raises:
        MalformedDiscoveryError: not bytes, empty, an HTML page, or not UTF-8 (a byte order mark is dropped).
    """
    if not isinstance(body, (bytes, bytearray, memoryview)):
        fail(document, "", f"body must be bytes, not {type(body).__name__}")
    raw = bytes(body)
    if raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM):]
    stripped = raw.lstrip()
    if not stripped:
        fail(document, "", "empty body")
    head = stripped[:_HTML_SNIFF_BYTES].lower()
    if head.startswith(b"<") and (b"<!doctype" in head or b"<html" in head):
        fail(document, "", "got an HTML page, probably from a proxy, instead of a JSON discovery document")
    # Every failure is raised *after* its except block: the decoder's exception keeps the whole body (``doc``,
    # ``object``), and an implicit ``__context__`` would keep it (and any credential in it) alive in the error.
    reason = ""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        reason = f"body is not valid UTF-8 (byte {exc.start})"
    if reason:
        fail(document, "", reason)
    return text


def loads_text(text: str, *, document: str) -> dict[str, Any]:
    """Decode the text of a discovery document (from :func:`body_text`) into a JSON object, as :func:`decode_json`.

    Raises:
        MalformedDiscoveryError: invalid or truncated JSON, or a top level that is not an object.
    """
    reason = ""
    try:
        value = DECODER.decode(text)  # json.loads(text, parse_constant=...) without a new decoder per call
    except json.JSONDecodeError as exc:
        start = max(0, exc.pos - _SNIPPET_CHARS // 2)
        where = f"line {exc.lineno} column {exc.colno} (char {exc.pos})"
        if exc.pos >= len(text.rstrip()):
            reason = f"truncated JSON: {exc.msg} at {where}"
        else:
            reason = f"invalid JSON: {exc.msg} at {where} near {_snippet(text, start)}"
        if not text.lstrip().startswith(("{", "[")):
            reason = f"body is not JSON (starts with {_snippet(text.lstrip())}): {exc.msg} at {where}"
    except RecursionError:
        reason = "invalid JSON: nested too deeply"
    except ValueError as exc:
        # Out-of-range integers (int max str digits) and NaN/Infinity constants.
        reason = f"invalid JSON: {exc}"
    if reason:
        fail(document, "", reason)
    if not isinstance(value, dict):
        fail(document, "", f"top level must be a JSON object, not {json_type(value)}")
    return value


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def join(path: str, key: str | int) -> str:
    """The JSON path of ``key`` under ``path`` (``items[3].versions``)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class Reader:
    """Typed access to the fields of one JSON object, failing with the field's JSON path.

    Absent and ``null`` optional fields read as their default, as Go's ``encoding/json`` leaves zero values.
    """

    __slots__ = ("document", "obj", "path")

    def __init__(self, obj: object, *, document: str, path: str) -> None:
        if not isinstance(obj, dict):
            fail(document, path, f"expected an object, got {json_type(obj)}")
        self.obj: dict[str, Any] = obj
        self.document = document
        self.path = path

    def fail(self, key: str | int | None, reason: str) -> NoReturn:
        """Raise the typed error for ``key`` of this object (the object itself when ``key`` is None)."""
        fail(self.document, self.path if key is None else join(self.path, key), reason)

    def get_str(self, key: str, *, required: bool = False, non_empty: bool = False, default: str = "") -> str:
        """The string at ``key``; absent or null gives ``default`` unless ``required``."""
        value = self.obj.get(key)
        if value is None:
            if required:
                self.fail(key, "required field is missing" if key not in self.obj else "must be a string, not null")
            value = default
        if not isinstance(value, str):
            self.fail(key, f"must be a string, not {json_type(value)}")
        if non_empty and not value:
            self.fail(key, "must not be empty")
        return value

    def get_opt_str(self, key: str) -> str | None:
        """The string at ``key``, or None when absent, null or empty."""
        return self.get_str(key) or None

    def get_bool(self, key: str, *, default: bool = False) -> bool:
        """The boolean at ``key``; absent or null gives ``default``."""
        value = self.obj.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail(key, f"must be a boolean, not {json_type(value)}")
        return value

    def get_list(self, key: str, *, required: bool = False) -> list[Any]:
        """The array at ``key``; absent or null gives ``[]`` unless ``required``."""
        value = self.obj.get(key)
        if value is None:
            if required:
                self.fail(key, "required field is missing" if key not in self.obj else "must be an array, not null")
            return []
        if not isinstance(value, list):
            self.fail(key, f"must be an array, not {json_type(value)}")
        return value

    def get_str_list(self, key: str) -> tuple[str, ...]:
        """The array of strings at ``key`` as a tuple; absent or null gives ``()``."""
        items = self.get_list(key)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                fail(self.document, join(join(self.path, key), i), f"must be a string, not {json_type(item)}")
        return tuple(items)

    def get_objects(self, key: str, *, required: bool = False) -> list[Reader]:
        """Readers for the array of objects at ``key``; absent or null gives ``[]`` unless ``required``."""
        base = join(self.path, key)
        return [Reader(item, document=self.document, path=join(base, i))
                for i, item in enumerate(self.get_list(key, required=required))]

    def get_object(self, key: str) -> Reader | None:
        """A reader for the object at ``key``, or None when absent or null."""
        value = self.obj.get(key)
        if value is None:
            return None
        return Reader(value, document=self.document, path=join(self.path, key))

    def check_kind(self, *expected: str) -> None:
        """Fail when the document names a ``kind`` other than ``expected`` (an absent kind is accepted)."""
        kind = self.get_str("kind")
        if kind and kind not in expected:
            what = " or ".join(expected)
            if kind == "Status":
                message = self.obj.get("message")
                detail = f" ({_snippet(message)})" if isinstance(message, str) and message else ""
                self.fail("kind", f"expected {what}, got a Status object{detail}")
            self.fail("kind", f"expected {what}, got {_snippet(kind)}")
