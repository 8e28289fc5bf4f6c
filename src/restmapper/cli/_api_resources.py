"""``restmapper api-resources``: the resources a server serves, as ``kubectl api-resources`` lists them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from restmapper.cli._choices import OUTPUT_FORMATS, SORT_FIELDS
from restmapper.errors import APIStatusError, DiscoveryError
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupResource, GroupVersion

if TYPE_CHECKING:
    from restmapper.discovery import DiscoveryClient

__all__ = [
    "OUTPUT_FORMATS",
    "SORT_FIELDS",
    "ResourceRow",
    "describe_failures",
    "discover",
    "filter_rows",
    "preferred_resources",
    "render",
    "sort_rows",
]

HEADERS = ("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND")
WIDE_HEADERS = (*HEADERS, "VERBS", "CATEGORIES")


@dataclass(frozen=True)
class ResourceRow:
    """One listed resource: a top-level resource at the group version kubectl would show.

    Attributes:
        group_version: the group version whose list served it (the group's preferred version when it serves
            the resource).
        resource: the resource as discovery described it.
    """

    group_version: GroupVersion
    resource: APIResource

    @property
    def group(self) -> str:
        """The API group (``""`` for core)."""
        return self.group_version.group

    @property
    def qualified_name(self) -> str:
        """``name.group`` (just ``name`` for core): what ``-o name`` prints and ``kubectl get`` accepts."""
        return f"{self.resource.name}.{self.group}" if self.group else self.resource.name

    def cells(self, wide: bool) -> tuple[str, ...]:
        """The table cells: NAME, SHORTNAMES, APIVERSION, NAMESPACED, KIND (+ VERBS, CATEGORIES when wide)."""
        r = self.resource
        namespaced = "true" if r.namespaced else "false"
        cells: tuple[str, ...] = (r.name, ",".join(r.short_names), str(self.group_version), namespaced, r.kind)
        if wide:
            cells += (",".join(r.verbs), ",".join(r.categories))
        return cells

    def to_json(self) -> dict[str, Any]:
        """The ``-o json`` object of this row.

        Keys: ``name``, ``singularName``, ``shortNames``, ``group``, ``apiVersion`` (``v1``, ``apps/v1``),
        ``namespaced``, ``kind``, ``verbs``, ``categories`` (lists are empty rather than absent).
        """
        r = self.resource
        return {
            "name": r.name,
            "singularName": r.singular_name,
            "shortNames": list(r.short_names),
            "group": self.group,
            "apiVersion": str(self.group_version),
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
            "categories": list(r.categories),
        }


def preferred_resources(groups: Sequence[APIGroup],
                        resources: Mapping[GroupVersion, APIResourceList]) -> list[ResourceRow]:
    """Return every top-level resource once, at the version kubectl would list it.

    Args:
        groups: the server's groups in priority order (core first).
        resources: the resource lists that could be discovered (failed group versions are simply absent).

    Returns:
        Rows grouped by group version in server order. A resource served by several versions of a group is
        listed at the group's preferred version when that version serves it, else at the first version (in
        server order) that does; subresources and resources without verbs are left out.

    Mirrors client-go ``discovery.ServerPreferredResources`` plus kubectl's empty-verbs filter.
    """
    chosen: dict[GroupResource, tuple[GroupVersion, APIResource]] = {}
    order: list[GroupVersion] = []
    for group in groups:
        for gv in group.group_versions:
            listing = resources.get(gv)
            if listing is not None:
                order.append(gv)
                _choose_from(group, gv, listing, chosen)
    by_gv: dict[GroupVersion, list[ResourceRow]] = {gv: [] for gv in order}
    for gv, res in chosen.values():
        if res.verbs:
            by_gv[gv].append(ResourceRow(gv, res))
    return [row for gv in order for row in by_gv[gv]]


def _choose_from(group: APIGroup, gv: GroupVersion, listing: APIResourceList,
                 chosen: dict[GroupResource, tuple[GroupVersion, APIResource]]) -> None:
    """Record in ``chosen`` the top-level resources ``listing`` (version ``gv`` of ``group``) serves: each one no
    earlier version listed, and each one at all when ``gv`` is the group's preferred version."""
    for res in listing.resources:
        if res.is_subresource or "/" in res.name:
            continue
        key = GroupResource(group.name, res.name)
        if key not in chosen or gv.version == group.preferred_version:
            chosen[key] = (gv, res)


def filter_rows(rows: Iterable[ResourceRow], *, api_group: str | None = None, namespaced: bool | None = None,
                verbs: Sequence[str] = (), categories: Sequence[str] = ()) -> list[ResourceRow]:
    """Return the rows kubectl's filters keep.

    Args:
        rows: the rows.
        api_group: keep only this group (``""`` is core; None keeps all).
        namespaced: keep only namespaced (True) or cluster-scoped (False) resources; None keeps both.
        verbs: keep resources supporting all of these verbs.
        categories: keep resources belonging to all of these categories.

    Returns:
        The kept rows, order unchanged.

    Mirrors ``kubectl api-resources --api-group --namespaced --verbs --categories``.
    """
    out = []
    for row in rows:
        r = row.resource
        if api_group is not None and row.group != api_group:
            continue
        if namespaced is not None and r.namespaced != namespaced:
            continue
        if verbs and not set(verbs) <= set(r.verbs):
            continue
        if categories and not set(categories) <= set(r.categories):
            continue
        out.append(row)
    return out


def sort_rows(rows: Iterable[ResourceRow], sort_by: str | None = None) -> list[ResourceRow]:
    """Return the rows in kubectl's order.

    Args:
        rows: the rows, in discovery order (ties keep it: the sort is stable).
        sort_by: None sorts by group then name; ``"name"`` by name; ``"kind"`` by kind then name.

    Returns:
        The sorted rows.

    Raises:
        ValueError: ``sort_by`` is not one of :data:`SORT_FIELDS`.

    Mirrors kubectl's ``sortableResource`` with ``sort.Stable`` (byte-wise string comparison).
    """
    if sort_by is None:
        return sorted(rows, key=lambda r: (r.group, r.resource.name))
    if sort_by == "name":
        return sorted(rows, key=lambda r: r.resource.name)
    if sort_by == "kind":
        return sorted(rows, key=lambda r: (r.resource.kind, r.resource.name))
    raise ValueError(f"--sort-by accepts only {' or '.join(SORT_FIELDS)}")


def render(rows: Sequence[ResourceRow], output: str | None = None, *, headers: bool = True) -> str:
    """Return the text kubectl would print for ``rows``.

    Args:
        rows: the rows, already filtered and sorted.
        output: None (table), ``"wide"`` (adds VERBS and CATEGORIES), ``"name"`` (``name.group`` per line) or
            ``"json"`` (a JSON list of :meth:`ResourceRow.to_json` objects).
        headers: print the header line (tables only; kubectl prints it even when there are no rows).

    Returns:
        The text, ending with a newline unless empty.

    Raises:
        ValueError: an unknown output format.
    """
    from restmapper.cli._table import format_table

    if output == "name":
        return "".join(row.qualified_name + "\n" for row in rows)
    if output == "json":
        return json.dumps([row.to_json() for row in rows], indent=2) + "\n"
    if output not in (None, "wide"):
        raise ValueError(f"--output {output} is not available")
    wide = output == "wide"
    table: list[tuple[str, ...]] = [WIDE_HEADERS if wide else HEADERS] if headers else []
    table.extend(row.cells(wide) for row in rows)
    return format_table(table)


def _reason(err: BaseException) -> str:
    if isinstance(err, APIStatusError):
        if err.reason:
            return err.reason
        if err.status == 404:
            return "the server could not find the requested resource"
    text = str(err)
    return " ".join(text.split())


def describe_failures(failed: Mapping[GroupVersion, BaseException]) -> str:
    """Return kubectl's message for group versions that could not be discovered.

    e.g. ``unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: the server is
    currently unable to handle the request`` (group versions sorted; the server's reason, one line each).

    Mirrors client-go ``ErrGroupDiscoveryFailed.Error``.
    """
    parts = sorted(f"{gv}: {_reason(err)}" for gv, err in failed.items())
    return "unable to retrieve the complete list of server APIs: " + ", ".join(parts)


def discover(discovery: DiscoveryClient) -> tuple[list[ResourceRow], DiscoveryError | None]:
    """Return the rows a discovery client can list and the partial failure, if any.

    Args:
        discovery: the client to ask (one ``server_groups_and_resources`` call).

    Returns:
        ``(rows, error)``; ``error`` is the :class:`DiscoveryError` naming failed group versions (the rows
        then hold everything else), or None.

    Raises:
        DiscoveryError: without a partial result (nothing could be listed).
        TransportError, MalformedDiscoveryError: ``/api`` or ``/apis`` could not be read.
    """
    try:
        groups, resources = discovery.server_groups_and_resources()
    except DiscoveryError as exc:
        if not isinstance(exc.partial, tuple) or not exc.failed:
            raise
        groups, resources = exc.partial
        return preferred_resources(groups, resources), exc
    return preferred_resources(groups, resources), None
