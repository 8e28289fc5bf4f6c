"""List and watch options of the fake cluster: ``resourceVersion``, ``resourceVersionMatch``, ``limit``/``continue``.

Validation follows apimachinery's ``ValidateListOptions`` (422 ``ListOptions.meta.k8s.io "" is invalid``), the
continue token and its checks apiserver's ``storage.ValidateListOptions``/``EncodeContinue``; which state a list
reads follows the API concepts' "Semantics for get and list" and "Retrieving large results sets in chunks"
(https://kubernetes.io/docs/reference/using-api/api-concepts/):

- ``resourceVersion`` unset: the most recent state (a consistent read);
- ``"0"`` (any) and ``NotOlderThan``: the most recent state too (the kit never lags), or ``504 Timeout`` "Too large
  resource version" (cause ``ResourceVersionTooLarge``) when X is newer than the cluster's, as the watch cache after
  its wait (the kit answers at once);
- ``Exact`` (and the legacy unset match with ``limit`` and X != "0"): the state at X exactly, ``410 Expired``
  ("The resourceVersion for the provided list is too old.") once X was compacted;
- ``limit``: at most that many items, in key order (``namespace/name``), with ``metadata.continue`` and
  ``remainingItemCount`` (only without selectors, as etcd3's store); every page reads the first page's snapshot;
  a continue token whose resourceVersion was compacted gets ``410 Expired`` with a fresh token in
  ``metadata.continue`` that continues at the latest state (an inconsistent continuation); so does every token
  while ``FakeCluster.expire_continue_tokens()`` is on (compaction faster than a client reads its pages); a token
  holds the key relative to the listed namespace (``storage.EncodeContinue`` trims the key prefix), so sent to
  another namespace's list it continues after the same name there;
- ``continue`` together with a ``resourceVersion`` other than "0" is ``400``.

Watches with ``sendInitialEvents`` (WatchList, KEP-3157) depend on what the server supports (:data:`WatchListSupport`):
``"served"`` validates them as ``validateWatchOptions`` with the ``WatchList`` feature gate on (1.32, 1.34+);
``"gate-off"`` as a 1.27-1.31 or 1.33 server with the gate off, which adds ``sendInitialEvents: Forbidden:
sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`` to the 422; ``"unknown"``
as a server before 1.27, which has no ``sendInitialEvents`` (the parameter is ignored, on lists too) and forbids
``resourceVersionMatch`` on every watch (422 ``resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden
for watch``, the answer to a WatchList request, which always carries ``resourceVersionMatch=NotOlderThan``).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from restmapper.testing import _documents as docs
from restmapper.testing._router import Reply
from restmapper.testing._store import SortedState

__all__ = ["ListOptionsError", "ListSource", "WatchListSupport", "WatchOptions", "encode_continue", "list_page",
           "too_large", "too_large_status", "watch_list_by_default", "watch_list_support", "watch_options"]

WatchListSupport = Literal["served", "gate-off", "unknown"]
"""How a server treats ``sendInitialEvents`` (see the module docstring)."""

_WATCH_LIST_SINCE = (1, 27)  # the first release whose ListOptions have sendInitialEvents (the WatchList gate, alpha)

_TOKEN_VERSION = "meta.k8s.io/v1"
_LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")
_RV_TOO_LARGE_RETRY_SECONDS = 1


class ListOptionsError(Exception):
    """Invalid or unservable list/watch options; ``reply`` is the Status the API server answers with."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply[0])
        self.reply = reply


def _invalid(errors: list[tuple[str, str, str]]) -> ListOptionsError:
    """422 for ``(field, reason, detail)`` errors, as ``errors.NewInvalid(ListOptions.meta.k8s.io, "")``."""
    texts = [f"{f}: {kind}: {detail}" for f, kind, detail in errors]
    summary = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    causes = [{"reason": "FieldValue" + kind.replace(" ", ""), "message": f"{kind}: {detail}", "field": f}
              for f, kind, detail in errors]
    doc = docs.status_doc(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {summary}',
                          {"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes})
    return ListOptionsError(docs.json_reply(422, doc))


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None,
            list_meta: dict[str, Any] | None = None) -> ListOptionsError:
    doc = docs.status_doc(code, reason, message, details)
    if list_meta:
        doc["metadata"] = list_meta
    if not details:
        del doc["details"]
    return ListOptionsError(docs.json_reply(code, doc))


def _bad_request(message: str) -> ListOptionsError:
    return _status(400, "BadRequest", message)


def too_large_status(requested: int, current: int) -> dict[str, Any]:
    """The Status of 504 Timeout "Too large resource version" (``storage.NewTooLargeResourceVersionError``): the
    body of a list's answer, the object of a watch's ``ERROR`` event (the watch cache's error watcher)."""
    return docs.status_doc(504, "Timeout", f"Too large resource version: {requested}, current: {current}", {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": _RV_TOO_LARGE_RETRY_SECONDS})


def too_large(requested: int, current: int) -> ListOptionsError:
    """504 Timeout "Too large resource version" as a list's answer."""
    return ListOptionsError(docs.json_reply(504, too_large_status(requested, current)))


def _release_number(release: str) -> tuple[int, int]:
    major, _, minor = release.partition(".")
    return int(major), int(minor)


def watch_list_by_default(release: str) -> bool:
    """True when kube-apiserver ``release`` (``"1.35"``) serves WatchList by default: its ``WatchList`` feature
    gate is on by default in 1.32 and from 1.34 (alpha, off, in 1.27-1.31; off again in 1.33)."""
    number = _release_number(release)
    return number == (1, 32) or number >= (1, 34)


def watch_list_support(release: str, enabled: bool) -> WatchListSupport:
    """What a kube-apiserver of ``release`` (``"1.35"``) does with ``sendInitialEvents``: ``"served"`` when
    ``enabled`` (its ``WatchList`` feature gate on), else ``"gate-off"``, or ``"unknown"`` before 1.27."""
    if enabled:
        return "served"
    return "unknown" if _release_number(release) < _WATCH_LIST_SINCE else "gate-off"


def _parse_rv(text: str) -> int:
    if not text.isdigit():
        raise _bad_request(f'invalid resource version: strconv.ParseUint: parsing "{text}": invalid syntax')
    return int(text)


def _flag(query: Any, name: str) -> bool | None:
    value = query.get(name)
    if value is None:
        return None
    if value.lower() in ("1", "true", "t"):
        return True
    if value.lower() in ("", "0", "false", "f"):
        return False
    raise _bad_request(f'{name}: invalid value "{value}": expected a boolean')


def encode_continue(resource_version: int, last_key: str, prefix: str = "") -> str:
    """Return a continue token for the items after ``last_key`` at ``resource_version`` (-1: the latest state),
    shaped as apiserver's ``storage.EncodeContinue`` (URL-safe base64 of ``{"v", "rv", "start"}``): ``start`` is
    the key relative to the listed ``prefix`` (``"ns/"``, see :class:`ListSource`), so a token sent to another
    namespace's list continues after the same name there."""
    start = last_key.removeprefix(prefix) + "\x00"
    raw = json.dumps({"v": _TOKEN_VERSION, "rv": resource_version, "start": start},
                     separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _decode_continue(token: str, prefix: str) -> tuple[int, str]:
    """The resourceVersion and the absolute start key of a continue token sent to the list of ``prefix``, as
    apiserver's ``storage.DecodeContinue`` (a start key that is not a clean path cannot climb above the prefix).

    Raises:
        ListOptionsError: 400 for a token apiserver would not decode.
    """
    try:
        rv, start = _token_fields(_token_document(token))
    except ValueError as exc:
        raise _bad_request(f"invalid continue token: continue key is not valid: {exc}") from None
    rooted = start if start.startswith("/") else "/" + start
    if posixpath.normpath(rooted) != rooted or rooted.startswith("//"):  # Go's path.Clean changes it
        raise _bad_request(f"invalid continue token: continue key is not valid: {start}")
    return rv, prefix + rooted[1:]


def _token_document(token: str) -> Any:
    """The JSON document of a continue token (unpadded URL-safe base64).

    Raises:
        ValueError: for a token that is not base64 or not JSON (the message says which).
    """
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True)
    except (ValueError, binascii.Error):
        raise ValueError("illegal base64 data") from None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError("invalid JSON") from None


def _token_fields(doc: Any) -> tuple[int, str]:
    """The resourceVersion and start key of a decoded continue token.

    Raises:
        ValueError: for another token version, a missing or zero resourceVersion, or a missing or empty start key.
    """
    if not isinstance(doc, dict) or doc.get("v") != _TOKEN_VERSION:
        raise ValueError("server does not recognize this encoded version")
    rv, start = doc.get("rv"), doc.get("start")
    if not isinstance(rv, int) or rv == 0 or not isinstance(start, str):
        raise ValueError("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not start:
        raise ValueError("encoded start key empty")
    return rv, start


@dataclass(frozen=True)
class ListSource:
    """Where a list reads: the store's sorted states, the current and oldest resourceVersions, and the key prefix
    of the namespace listed (``"ns/"``; empty across namespaces or for cluster-scoped resources)."""

    sorted_state: Callable[[int], SortedState | None]
    current: int
    oldest: int
    expire_continue_tokens: bool = False  # every continue token answers 410 (compaction outpaces the pages)
    prefix: str = ""


def list_page(query: Any, source: ListSource, matches: Callable[[dict[str, Any]], bool],
              has_selectors: bool, watch_list: WatchListSupport = "served",
              ) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """Return ``(resourceVersion, items, extra list metadata)`` of one list request (see the module docstring);
    ``watch_list`` says whether the server knows ``sendInitialEvents`` (forbidden for lists) or ignores it.

    A page reads the items from its start key in the sorted state of its resourceVersion, as etcd's range read
    at a revision: its cost is the items it scans (the page, and the objects a selector skips), plus a binary
    search for its start, not the collection's size.

    Raises:
        ListOptionsError: for invalid options or a resourceVersion that is compacted or too large.
    """
    _check_list(query, watch_list)
    try:
        limit = max(int(query.get("limit") or 0), 0)
    except ValueError:
        raise _bad_request(f"limit: invalid value {query.get('limit')!r}") from None
    at, start = _read_point(query, source, limit)
    state = source.sorted_state(at)
    if state is None:
        raise _status(410, "Expired", _LIST_TOO_OLD)
    items, last, rest = _scan(state, max(start, source.prefix), _prefix_end(source.prefix), limit, matches)
    meta: dict[str, Any] = {}
    if rest is not None:
        meta["continue"] = encode_continue(at, last, source.prefix)
        if not has_selectors:
            meta["remainingItemCount"] = rest
    return at, items, meta


def _check_list(query: Any, watch_list: WatchListSupport) -> None:
    """apimachinery's ``ValidateListOptions`` for a list (422)."""
    rv_text = query.get("resourceVersion") or ""
    match = query.get("resourceVersionMatch") or ""
    errors = _match_errors(query, rv_text, match) if match else []
    if query.get("sendInitialEvents") is not None and watch_list != "unknown":
        errors.append(("sendInitialEvents", "Forbidden", "sendInitialEvents is forbidden for list"))
    if errors:
        raise _invalid(errors)


def _read_point(query: Any, source: ListSource, limit: int) -> tuple[int, str]:
    """The resourceVersion a list reads and the key it starts at (the continue token's; "" for a first page).

    Raises:
        ListOptionsError: 400 for a bad token, 410 for a compacted one or an exact resourceVersion compacted,
            504 for a resourceVersion newer than the current one.
    """
    rv_text = query.get("resourceVersion") or ""
    token = query.get("continue") or ""
    if token:
        if rv_text not in ("", "0"):
            raise _bad_request("specifying resource version is not allowed when using continue")
        return _continue_point(token, source)
    if not rv_text:
        return source.current, ""
    return _version_point(_parse_rv(rv_text), query.get("resourceVersionMatch") or "", source, limit), ""


def _version_point(requested: int, match: str, source: ListSource, limit: int) -> int:
    """The resourceVersion a first page asking for ``requested`` reads: exactly it with ``match`` Exact (and the
    legacy unset match with a ``limit`` and a version other than 0), else the current one.

    Raises:
        ListOptionsError: 504 for a version newer than the current one, 410 for an exact one compacted.
    """
    if requested > source.current:
        raise too_large(requested, source.current)
    exact = match == "Exact" or (not match and limit > 0 and requested > 0)
    if not exact:
        return source.current
    if requested < source.oldest:
        raise _status(410, "Expired", _LIST_TOO_OLD)
    return requested


def _continue_point(token: str, source: ListSource) -> tuple[int, str]:
    """The resourceVersion and start key a continue token reads at (a token of resourceVersion -1: the latest).

    Raises:
        ListOptionsError: 400 for a bad token, 410 (with a fresh token at the latest state) for a compacted one
            or while every token expires.
    """
    token_rv, start = _decode_continue(token, source.prefix)
    if token_rv <= 0:
        return source.current, start
    if token_rv < source.oldest or source.expire_continue_tokens:
        raise _status(410, "Expired", _CONTINUE_TOO_OLD,
                      list_meta={"continue": encode_continue(-1, start.rstrip("\x00"), source.prefix)})
    return min(token_rv, source.current), start


def _prefix_end(prefix: str) -> str | None:
    """The first key after every key that starts with ``prefix`` (None: no end)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else None


def _scan(state: SortedState, start: str, end: str | None, limit: int, matches: Callable[[dict[str, Any]], bool],
          ) -> tuple[list[dict[str, Any]], str, int | None]:
    """The matching objects of keys in ``[start, end)`` (at most ``limit``; 0: all), the last one's key, and when
    more match after it, how many keys remain in the range (else None)."""
    keys, objects = state.keys, state.objects
    stop = len(keys) if end is None else bisect.bisect_left(keys, end)
    items: list[dict[str, Any]] = []
    last = -1
    for i in range(bisect.bisect_left(keys, start), stop):
        obj = objects[i]
        if not matches(obj):
            continue
        if limit and len(items) == limit:
            return items, keys[last], stop - last - 1
        items.append(obj)
        last = i
    return items, keys[last] if last >= 0 else "", None


@dataclass(frozen=True)
class WatchOptions:
    """What a watch request asked for, validated."""

    since: int | None  # None: start from the current state
    initial_events: bool  # synthetic ADDED events for the current state first
    initial_end_bookmark: bool  # sendInitialEvents=true: the k8s.io/initial-events-end bookmark
    bookmarks: bool


def watch_options(query: Any, current: int, watch_list: WatchListSupport = "served") -> WatchOptions:
    """Validate a watch's options (``validateWatchOptions``, or before 1.27 ``ValidateListOptions``, as
    ``watch_list`` says: see the module docstring) and say where it starts (see :mod:`._watch`).

    Raises:
        ListOptionsError: for invalid options.
    """
    rv_text = query.get("resourceVersion") or ""
    match = query.get("resourceVersionMatch") or ""
    if watch_list == "unknown":
        _check_watch_before_watch_list(query, rv_text, match)
        send_initial = None
    else:
        send_initial = _flag(query, "sendInitialEvents")
        _check_watch(send_initial, match, watch_list)
    bookmarks = bool(_flag(query, "allowWatchBookmarks"))
    requested = _parse_rv(rv_text) if rv_text else 0
    if send_initial:
        return WatchOptions(None, True, bookmarks, bookmarks)
    if requested == 0:
        return WatchOptions(None, send_initial is None, False, bookmarks)
    return WatchOptions(requested, False, False, bookmarks)


def _check_watch(send_initial: bool | None, match: str, watch_list: WatchListSupport) -> None:
    """apimachinery's ``validateWatchOptions`` (1.27+; ``watch_list`` says whether the WatchList gate is on)."""
    errors: list[tuple[str, str, str]] = []
    if send_initial is not None and match != "NotOlderThan":
        errors.append(("resourceVersionMatch", "Forbidden",
                       "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if send_initial is not None and watch_list == "gate-off":
        errors.append(("sendInitialEvents", "Forbidden",
                       "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
    if match:
        if send_initial is None:
            errors.append(("resourceVersionMatch", "Forbidden",
                           "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != "NotOlderThan":
            errors.append(("resourceVersionMatch", "Unsupported value", f'"{match}": supported values: '
                                                                         '"NotOlderThan"'))
    if errors:
        raise _invalid(errors)


def _check_watch_before_watch_list(query: Any, rv_text: str, match: str) -> None:
    """apimachinery's ``ValidateListOptions`` for a watch before 1.27: no ``resourceVersionMatch`` on a watch."""
    if not match:
        return
    raise _invalid([("resourceVersionMatch", "Forbidden", "resourceVersionMatch is forbidden for watch"),
                    *_match_errors(query, rv_text, match)])


def _match_errors(query: Any, rv_text: str, match: str) -> list[tuple[str, str, str]]:
    """apimachinery's checks of a given ``resourceVersionMatch`` against the other list options (422 causes)."""
    errors: list[tuple[str, str, str]] = []
    if not rv_text:
        errors.append(("resourceVersionMatch", "Forbidden",
                       "resourceVersionMatch is forbidden unless resourceVersion is provided"))
    if query.get("continue"):
        errors.append(("resourceVersionMatch", "Forbidden", "resourceVersionMatch is forbidden when continue is "
                                                             "provided"))
    if match not in ("Exact", "NotOlderThan"):
        errors.append(("resourceVersionMatch", "Unsupported value",
                       f'"{match}": supported values: "Exact", "NotOlderThan", ""'))
    if match == "Exact" and rv_text == "0":
        errors.append(("resourceVersionMatch", "Forbidden",
                       'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
    return errors

