"""``restmapper resolve``: what ``kubectl get ARG`` would request, one row per resource type."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from restmapper.errors import InvalidArgumentError, RestMapperError, is_ambiguous, is_no_match, remembered_suffix
from restmapper.mapper import (
    LazyRESTMapper,
    PartialDiscoveryWarning,
    ShortNameConflictWarning,
    api_version_parts,
    checked_reading,
    require_resource_type,
    require_resource_types,
)
from restmapper.model import RESTMapping

__all__ = ["HEADERS", "Resolution", "render", "resolve_args"]

COMMAND = "restmapper resolve"
HEADERS = ("INPUT", "GROUP", "VERSION", "RESOURCE", "KIND", "NAMESPACED")


@dataclass(frozen=True)
class Resolution:
    """The answer for one resource type argument (one element of a comma list).

    Attributes:
        input: the argument as typed (one comma-separated element).
        mappings: the mappings kubectl would use: one, or several for a category; empty on error.
        error: a one-line message when the argument could not be resolved, else None.
        reason: why, for scripts (with ``error``): ``NotFound`` (the server said it has no such type),
            ``DiscoveryFailed`` (could not check: unreachable server, a group that could not be read),
            ``Ambiguous`` (several groups match), ``InvalidArgument`` (not a resource type argument).
        failed: for a category whose answer is partial, the group versions that could not be read (sorted
            ``group/version`` strings; members may be missing); empty for a complete answer.
    """

    input: str
    mappings: tuple[RESTMapping, ...] = ()
    error: str | None = None
    reason: str | None = None
    failed: tuple[str, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        """The ``-o json`` objects: ``{input, group, version, resource, kind, namespaced}`` per mapping, or
        ``{input, error, reason}``; each also has ``partial: true`` and ``failedGroupVersions`` (a list of
        ``group/version``) when :attr:`failed` is not empty (a partial category), and only then."""
        mark: dict[str, Any] = {"partial": True, "failedGroupVersions": list(self.failed)} if self.failed else {}
        if self.error is not None:
            return [{"input": self.input, "error": self.error, "reason": self.reason, **mark}]
        return [{"input": self.input, "group": m.resource.group, "version": m.resource.version,
                 "resource": m.resource.resource, "kind": m.group_version_kind.kind, "namespaced": m.namespaced,
                 **mark} for m in self.mappings]


def _one_line(err: BaseException | str) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _unremembered(err: RestMapperError, mapper: LazyRESTMapper, started: float) -> str:
    """The message of ``err``, without the age a remembered no-match carries (``(as of 0.0 s ago; misses are
    cached for up to 1 s)``) when this command confirmed that miss itself (with an earlier argument): in one
    command the answer is as fresh as the command, and the suffix would depend on the arguments' order alone (one
    condition, two wordings in ``-o json``). kubectl words it so."""
    age = getattr(err, "remembered_age", None)
    text = str(err)
    if isinstance(age, float) and age <= mapper.cache.clock() - started:
        text = text.removesuffix(remembered_suffix(age, mapper.cache.miss_refresh_interval))
    return text


def reason_of(err: BaseException) -> str:
    """The machine-readable ``reason`` of a failed argument (see :class:`Resolution`)."""
    if isinstance(err, InvalidArgumentError):
        return "InvalidArgument"
    if is_no_match(err):
        return "NotFound"
    return "Ambiguous" if is_ambiguous(err) else "DiscoveryFailed"


def resolve_args(mapper: LazyRESTMapper, args: Iterable[str]) -> tuple[list[Resolution], list[str]]:
    """Resolve each ``kubectl get`` argument as kubectl would.

    Args:
        mapper: the mapper to ask.
        args: arguments as typed; each may be a comma list (``deploy,svc``) whose elements may be categories.

    Returns:
        ``(resolutions, warnings)``: one :class:`Resolution` per comma-separated element, in order, each with
        all its mappings (kubectl requests a type named twice, as in ``all,deploy``, once; here each element
        shows what it names). ``warnings`` are the short-name conflict messages and, as kubectl warns, the
        group versions that could not be read while expanding a category (the category's rows are then what
        could be found), each once, in order.

    Errors of one element (no such resource type, ambiguity, a group that could not be discovered) become its
    ``error``; the others are still resolved. Mirrors kubectl's ``ReplaceAliases`` then ``mappingFor``.
    """
    out: list[Resolution] = []
    seen_warnings: dict[str, None] = {}
    started = mapper.cache.clock()
    for arg in _pair_manifest_words(list(args)):
        refused = _refused_list(arg)
        if refused is not None:  # kubectl lists nothing for svc,,cm: the argument fails as a whole
            out.append(refused)
            continue
        for part in arg.split(","):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ShortNameConflictWarning)
                warnings.simplefilter("always", PartialDiscoveryWarning)
                try:
                    _require_resource_type(mapper, part)
                    mappings = mapper.resolve_all(part)
                except RestMapperError as exc:
                    out.append(Resolution(part, error=_one_line(_unremembered(exc, mapper, started)),
                                          reason=reason_of(exc)))
                    mappings = None
            for w in caught:
                if issubclass(w.category, (ShortNameConflictWarning, PartialDiscoveryWarning)):
                    seen_warnings.setdefault(str(w.message), None)
            if mappings is None:
                continue
            out.append(Resolution(part, tuple(mappings), failed=tuple(sorted(str(gv) for gv in mappings.failed))))
    return out, list(seen_warnings)


def _require_resource_type(mapper: LazyRESTMapper, part: str) -> None:
    """Refuse what is not a resource type (as ``resolve_all``), in CLI terms; an apiVersion and a type is told an
    argument that resolves (``apps/v1 svc``: ``restmapper resolve svc``), checked with the server."""
    try:
        require_resource_type("resolve_all", part, command=COMMAND)
    except InvalidArgumentError as exc:
        def quiet(arg: str) -> RESTMapping:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # checking a suggestion: its short-name conflicts are not news
                return mapper.resolve(arg)

        raise checked_reading(exc, part, "resolve_all", quiet, command=COMMAND,
                              served=mapper.cache.served_versions) from None


def _pair_manifest_words(args: list[str]) -> Iterator[str]:
    """The arguments, with a manifest's ``apps/v1 Deployment`` typed as two words joined into one (refused with
    what to type instead, rather than ``apps/v1`` read as TYPE/NAME and ``Deployment`` resolved alone)."""
    i = 0
    while i < len(args):
        arg = args[i]
        parts = api_version_parts(arg) if "/" in arg else None
        if parts is not None and i + 1 < len(args) and args[i + 1] and not set(args[i + 1]) & set("/, "):
            yield f"{arg} {args[i + 1]}"
            i += 2
            continue
        yield arg
        i += 1


def _refused_list(arg: str) -> Resolution | None:
    """The error of a comma list with an empty or space-padded element (``svc,,cm``, ``svc, cm``), or None."""
    if "," not in arg:
        return None  # one element: refused with its own message below
    try:
        require_resource_types("resolve_all", arg, command=COMMAND)
    except InvalidArgumentError as exc:
        if any(not part or part.split() != [part] for part in arg.split(",")):
            return Resolution(arg, error=_one_line(exc), reason=reason_of(exc))
    return None


def render(resolutions: Sequence[Resolution], output: str | None = None, *, headers: bool = True) -> str:
    """Return the text for ``resolutions``.

    Args:
        resolutions: as :func:`resolve_args` returns them.
        output: None for a table (INPUT GROUP VERSION RESOURCE KIND NAMESPACED; failed elements are left out,
            their errors go to stderr; nothing at all, not even the header, when no element resolved), ``"json"``
            for a JSON list of :meth:`Resolution.to_json` objects.
        headers: print the table's header line.

    Returns:
        The text.

    Raises:
        ValueError: an unknown output format.
    """
    from restmapper.cli._table import format_table

    if output == "json":
        return json.dumps([obj for r in resolutions for obj in r.to_json()], indent=2) + "\n"
    if output is not None:
        raise ValueError(f"--output {output} is not available")
    rows = [(r.input, m.resource.group, m.resource.version, m.resource.resource, m.group_version_kind.kind,
             "true" if m.namespaced else "false") for r in resolutions for m in r.mappings]
    # No rows, no header: kubectl prints nothing on stdout when every argument failed.
    return format_table([HEADERS, *rows] if headers and rows else rows)
