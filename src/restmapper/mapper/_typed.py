"""What to tell someone who typed an apiVersion and a type (``apps/v1 svc``, ``apps/v1/svc``): an argument that
resolves, checked against the server.

:func:`~restmapper.mapper._args.require_resource_type` refuses those forms before any request and reads them as
``TYPE.VERSION.GROUP`` (``svc.v1.apps``). That reading names nothing when the type is not served there (``svc``
is a core short name). :func:`checked_reading` asks the server: the reading stands when it resolves at that
group version; otherwise the message says that the group version serves no such type and names what does
resolve (``TYPE.GROUP`` when the group serves it at another version, else ``TYPE`` alone), or says that the
server has no such type. When the server cannot be read, the plain reading is kept (nothing is called missing).
"""

from __future__ import annotations

from collections.abc import Callable

from restmapper.errors import AmbiguousKindError, AmbiguousResourceError, InvalidArgumentError, is_no_match
from restmapper.mapper._args import api_version_parts, typed_at_version
from restmapper.model import GroupVersion, RESTMapping

__all__ = ["api_version_and_type", "checked_reading"]


def api_version_and_type(arg: str) -> tuple[str, str, str, bool] | None:
    """``(group, version, type, manifest)`` when ``arg`` reads as an apiVersion and a type, as
    :func:`~restmapper.mapper._args.require_resource_type` reads it: ``apps/v1 Deployment`` (``manifest`` True:
    a manifest's apiVersion and kind), ``apps/v1/Deployment`` or ``v1/pods`` (False); else None."""
    words = arg.split()
    if len(words) == 2 and "/" not in words[1] and (parts := api_version_parts(words[0])) is not None:
        return parts[0], parts[1], words[1], True
    if len(words) == 1 and "/" in arg:
        head, _, name = arg.rpartition("/")
        parts = api_version_parts(head)
        if parts is not None and name and (parts[0] or arg.count("/") == 1):
            return parts[0], parts[1], name, False
    return None


class _Unchecked(Exception):
    """The server could not tell (a discovery failure, an ambiguity): keep the plain reading."""


def _found(resolve: Callable[[str], RESTMapping], arg: str) -> RESTMapping | None:
    """What ``arg`` resolves to; None for a no-match or an argument refused as such (a category)."""
    try:
        return resolve(arg)
    except (AmbiguousResourceError, AmbiguousKindError) as exc:
        raise _Unchecked from exc
    except InvalidArgumentError:
        return None
    except Exception as exc:
        if is_no_match(exc):
            return None
        raise _Unchecked from exc


def _checked_slash(refused: InvalidArgumentError, arg: str, caller: str, instead: Callable[[str], str],
                   resolve: Callable[[str], RESTMapping], served: Callable[[str], tuple[str, ...]] | None,
                   ) -> InvalidArgumentError:
    """The error for ``GROUP/VERSION`` alone (``deployment.apps/v1``) or ``TYPE/NAME`` (``xyzzy/web``), read as
    :func:`~restmapper.mapper._args.require_resource_type` reads them, its suggestion checked (may raise
    :class:`_Unchecked`)."""
    parts = api_version_parts(arg)
    if parts is None or not parts[0]:  # TYPE/NAME or a subresource: "pass the type alone, TYPE"
        kind = arg.partition("/")[0]
        if not kind or _found(resolve, kind) is not None:
            return refused
        return InvalidArgumentError(f'{caller} takes a resource type; "{arg}" names an object (kubectl\'s TYPE/NAME) '
                                    f'or a subresource, not a type, and the server doesn\'t have a resource type '
                                    f'"{kind}"')
    group, version = parts
    if served is None:
        return refused
    try:
        versions = served(group)
    except Exception as exc:  # the server cannot tell: keep the plain reading
        raise _Unchecked from exc
    if version in versions:
        return refused  # an apiVersion the server serves: "for a kind of it, pass KIND.VERSION.GROUP" holds
    found = _found(resolve, group)  # kubectl reads it as TYPE/NAME: the type "deployment.apps", the object "v1"
    start = f'{caller} takes a resource type; "{arg}" reads as kubectl\'s TYPE/NAME or an apiVersion, not a type'
    if found is not None:
        what = f'"{group}" is {found.resource.group_resource} ({found.group_version_kind.group_version})'
        served_group = found.resource.group
        typed = group[: -len(served_group) - 1] if served_group and group.endswith(f".{served_group}") else ""
        if typed and "." not in typed:
            at = typed_at_version(served_group, version, typed)
            there = _found(resolve, at)
            if there is not None and there.group_version_kind.group_version == GroupVersion(served_group, version):
                return InvalidArgumentError(f"{start}; {what}, at {served_group}/{version}: {instead(at)}")
        return InvalidArgumentError(f"{start}; {what}: pass the type alone, {instead(group)}")
    if versions:
        return InvalidArgumentError(f'{start}; the server doesn\'t have a resource type "{group}", and its API group '
                                    f'"{group}" serves no version "{version}" (it serves {", ".join(versions)})')
    return InvalidArgumentError(f'{start}; the server doesn\'t have a resource type "{group}" nor an API group '
                                f'"{group}"')


def checked_reading(refused: InvalidArgumentError, arg: str, method: str, resolve: Callable[[str], RESTMapping],
                    *, command: str = "", served: Callable[[str], tuple[str, ...]] | None = None,
                    told: Callable[[str], str] | None = None) -> InvalidArgumentError:
    """The error to raise for ``arg`` instead of ``refused`` (what ``require_resource_type`` raised for it).

    Args:
        refused: the error of the argument check.
        arg: the argument as typed.
        method: the Python method called (named in the message unless ``command`` is given).
        resolve: resolves one resource type argument (``mapper.resolve``; may do I/O).
        command: the shell command to name instead (``restmapper resolve``).
        served: the versions the server lists for a group (``()``: no such group; may do I/O), to check
            ``GROUP/VERSION`` alone (None: such an argument keeps ``refused``).
        told: writes the caller's own call for a type, as for ``require_resource_type`` (the object cache's).

    Returns:
        ``refused`` when ``arg`` is not an apiVersion and a type, when ``TYPE.VERSION.GROUP`` resolves at that
        group version, or when the server cannot tell; else an :class:`InvalidArgumentError` saying that the
        group version serves no such type and ending with an argument that resolves (``restmapper resolve svc``,
        ``resolve("svc")``), or saying that the server has no such type. Likewise ``GROUP/VERSION`` alone
        (``deployment.apps/v1``: ``deployment.v1.apps`` when the group version serves it, else the type alone,
        ``deployment.apps``; ``refused``, whose ``KIND.v1.apps`` holds, when the server serves that apiVersion)
        and ``TYPE/NAME`` (``refused``, "pass the type alone", when ``TYPE`` resolves; else the server has no
        such type).
    """
    parsed = api_version_and_type(arg)
    if parsed is None:
        if "/" not in arg or "," in arg or arg.split() != [arg]:
            return refused

        def slash_told(what: str) -> str:
            if told is not None:
                return told(what)
            return f"{command} {what}" if command else f'{method}("{what}")'

        try:
            return _checked_slash(refused, arg, command or f"{method}()", slash_told, resolve, served)
        except _Unchecked:
            return refused
    group, version, name, manifest = parsed
    gv = f"{group}/{version}" if group else version
    caller = command or f"{method}()"
    form = "a manifest's apiVersion and kind" if manifest else "an apiVersion and a type"
    start = f'{caller} takes a resource type; "{arg}" reads as {form}, but '
    wanted = GroupVersion(group, version)

    def instead(what: str) -> str:
        if told is not None:
            return told(what)
        return f"{command} {what}" if command else f'{method}("{what}")'

    try:
        there = _found(resolve, typed_at_version(group, version, name))
        if there is not None and there.group_version_kind.group_version == wanted:
            kind = there.group_version_kind.kind
            if not manifest or command or told or kind == name:
                return refused
            # cj: the manifest's kind is CronJob, which is what rest_mapping needs
            typed = instead(typed_at_version(group, version, name))
            return InvalidArgumentError(
                f'{caller} takes a resource type; "{arg}" reads as {form}: {typed}'
                f'; for a manifest use rest_mapping(GroupVersionKind.from_api_version_and_kind("{gv}", "{kind}"))')
        for candidate in ([f"{name}.{group}"] if group else []) + [name]:
            found = _found(resolve, candidate)
            if found is None:
                continue
            if group and found.resource.group == group:
                # A short name of the group (hpa): its plural at the version asked, when served there.
                plural = typed_at_version(group, version, found.resource.resource)
                at = _found(resolve, plural)
                if at is not None and at.group_version_kind.group_version == wanted:
                    return InvalidArgumentError(f'{caller} takes a resource type; "{arg}" reads as {form} ("{name}" '
                                                f"is {found.resource.group_resource}): {instead(plural)}")
            what = (f'"{candidate}" {"alone " if candidate == name else ""}is '
                    f"{found.resource.group_resource} ({found.group_version_kind.group_version})")
            return InvalidArgumentError(f'{start}{gv} serves no resource type "{name}"; {what}: {instead(candidate)}')
    except _Unchecked:
        return refused
    return InvalidArgumentError(f'{start}the server doesn\'t have a resource type "{name}"')
