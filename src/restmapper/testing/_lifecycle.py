"""CRD lifecycle of :class:`~restmapper.testing.FakeCluster` (a mixin, see cluster.py).

CRDs follow apiextensions-apiserver: the stored object has ``metadata.uid``, ``generation`` (bumped by spec changes
only), ``resourceVersion`` (the cluster-wide counter), ``status.acceptedNames`` (what discovery serves) and the
``NamesAccepted``/``Established`` conditions; discovery serves a CRD only once it is Established. A CRD's group
versions get APIService objects (see :mod:`restmapper.testing._apiservices`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from restmapper.errors import InvalidArgumentError
from restmapper.model import GroupVersion
from restmapper.testing._apiservices import condition, keep_transition_times
from restmapper.testing._crd_rules import check_accepted_names
from restmapper.testing._store import CRD_KEY, now_timestamp
from restmapper.testing.crd import (
    InvalidCRDError,
    parse_crd,
    parse_crds,
)

if TYPE_CHECKING:
    import threading

    from restmapper.testing._store import ObjectStore

_NAME_FIELDS = {"plural": "plural", "singular": "singular", "kind": "kind", "list_kind": "listKind",
                "listKind": "listKind", "short_names": "shortNames", "shortNames": "shortNames",
                "categories": "categories"}
_LIST_NAME_FIELDS = frozenset({"shortNames", "categories"})
EstablishedAfter = int | Callable[[], bool] | None


def _accepted_name(key: str, value: object) -> tuple[str, str | list[str]]:
    """One ``set_accepted_names`` argument as its ``acceptedNames`` field and value.

    Raises:
        InvalidArgumentError: for an unknown field or a value of the wrong type.
    """
    field = _NAME_FIELDS.get(key)
    if field is None:
        raise InvalidArgumentError(f"unknown acceptedNames field {key!r}")
    if field not in _LIST_NAME_FIELDS:
        if not isinstance(value, str) or not value:
            raise InvalidArgumentError(f"acceptedNames.{field} must be a non-empty string")
        return field, value
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidArgumentError(f"acceptedNames.{field} must be a list of non-empty strings")
    return field, list(value)


def _is_established(crd: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in crd.get("status", {}).get("conditions", ()))


def _names_condition(crd: Mapping[str, Any] | None) -> tuple[bool, str, str]:
    """The NamesAccepted condition a CRD has now (True/NoConflicts for a new one)."""
    for c in (crd or {}).get("status", {}).get("conditions", ()):
        if c.get("type") == "NamesAccepted":
            return c.get("status") == "True", str(c.get("reason", "")), str(c.get("message", ""))
    return True, "NoConflicts", "no conflicts found"


def accept_names(requested: Mapping[str, Any], accepted: Mapping[str, Any],
                 used: tuple[set[str], set[str]]) -> tuple[dict[str, Any], bool, str, str]:
    """Accept a CRD's requested names as apiextensions' naming controller does.

    Each of plural, singular, short names, kind and listKind is accepted when it equals the name accepted before
    or no other CRD of the group holds it (plural/singular/short names share one namespace, kind/listKind
    another); a refused name keeps its previously accepted value. Categories are always accepted.

    Args:
        requested: ``spec.names``.
        accepted: ``status.acceptedNames`` so far (empty for a new CRD).
        used: (resource names, kinds) other CRDs of the group hold.

    Returns:
        ``(accepted names, all accepted, NamesAccepted reason, message)``; the reason is that of the last refused
        field in the controller's order (``PluralConflict``, ``SingularConflict``, ``ShortNamesConflict``,
        ``KindConflict``, ``ListKindConflict``), ``NoConflicts`` when none.
    """
    out: dict[str, Any] = dict(accepted)
    ok, reason, message = True, "NoConflicts", "no conflicts found"
    for field, pool, why, accept in _NAME_CHECKS:
        conflict = accept(field, requested, accepted, used[pool], out)
        if conflict is not None:
            ok, reason, message = False, why, conflict
    if requested.get("categories") is not None:
        out["categories"] = list(requested["categories"])
    return out, ok, reason, message


def _accept_name(field: str, requested: Mapping[str, Any], accepted: Mapping[str, Any], taken: set[str],
                 out: dict[str, Any]) -> str | None:
    """Accept name ``field`` into ``out`` unless it is new and in ``taken`` (held by another CRD of the group);
    return the conflict message, or None."""
    value = requested.get(field)
    if value is None:
        return None
    if value != accepted.get(field) and value in taken:
        return f'"{value}" is already in use'
    out[field] = value
    return None


def _accept_short_names(field: str, requested: Mapping[str, Any], accepted: Mapping[str, Any], taken: set[str],
                        out: dict[str, Any]) -> str | None:
    """Accept the requested ``shortNames`` into ``out`` unless a new one is in ``taken``; return the conflict
    message (every such name), or None."""
    wanted = list(requested.get(field) or [])
    before = list(accepted.get(field) or [])
    if wanted == before:
        return None
    in_use = [n for n in wanted if n not in before and n in taken]
    if in_use:
        return ", ".join(f'"{n}" is already in use' for n in in_use)
    out[field] = wanted
    return None


_RESOURCE_NAMES, _KINDS = 0, 1  # the pools of ``accept_names``'s ``used``
_NAME_CHECKS = (
    ("plural", _RESOURCE_NAMES, "PluralConflict", _accept_name),
    ("singular", _RESOURCE_NAMES, "SingularConflict", _accept_name),
    ("shortNames", _RESOURCE_NAMES, "ShortNamesConflict", _accept_short_names),
    ("kind", _KINDS, "KindConflict", _accept_name),
    ("listKind", _KINDS, "ListKindConflict", _accept_name),
)
"""The names the naming controller accepts, in its order: field, the pool of names it must not take, the
NamesAccepted reason of a conflict, and how it is accepted."""


_ESTABLISHED_REASONS = {
    (True, True): ("InitialNamesAccepted", "the initial names have been accepted"),
    (True, False): ("InitialNamesAccepted", "the initial names have been accepted"),
    (False, True): ("Installing", "the initial names have been accepted"),
    (False, False): ("NotAccepted", "not all names are accepted"),
}
"""The reason and message of a CRD's Established condition, by (established, names accepted)."""


def _version_names(crd: Mapping[str, Any]) -> list[str]:
    return [v["name"] for v in crd["spec"]["versions"]]


def _stored_versions(crd: Mapping[str, Any], stored: list[str]) -> list[str]:
    """``status.storedVersions``: the versions stored before and the current storage version."""
    storage = next(v["name"] for v in crd["spec"]["versions"] if v["storage"])
    return list(stored) if storage in stored else [*stored, storage]


class CRDLifecycleMixin:
    """CRD operations of FakeCluster; state lives on the cluster (see cluster.py)."""

    if TYPE_CHECKING:
        _lock: threading.RLock
        _store: ObjectStore
        _crds: dict[str, dict[str, Any]]
        _pending: dict[str, int | Callable[[], bool]]

        def _changed(self) -> None: ...

    # --- CRDs ----------------------------------------------------------------------------------------------

    def add_crds(self, manifests: Mapping[str, Any] | str, *, established_after: EstablishedAfter = None
                 ) -> list[str]:
        """Install every CRD of ``manifests`` (a dict, or YAML text with one or more ``---``-separated documents)
        and return their names, in order; see :meth:`add_crd`.

        Args:
            manifests: one CRD as a dict, or YAML text of one or more CRDs.
            established_after: as :meth:`add_crd` (delays each new CRD's ``Established`` condition; None: at once).

        Returns:
            The CRD names (``plural.group``), in document order.

        Raises:
            InvalidCRDError: when any document is invalid (one line per bad document); nothing is installed then.
            InvalidArgumentError: for a negative ``established_after``.
        """
        crds = parse_crds(manifests)
        with self._lock:
            return [self.add_crd(crd, established_after=established_after) for crd in crds]

    def add_crd(self, manifest: Mapping[str, Any] | str, *, established_after: EstablishedAfter = None) -> str:
        """Install or replace a CRD and return its name (``plural.group``), as a ``create``/``update`` would.

        The stored object gets ``metadata.uid``/``generation``/``resourceVersion``/``creationTimestamp`` and a
        status with ``acceptedNames`` (= ``spec.names``, as the naming controller accepts non-conflicting names),
        ``storedVersions`` and the ``NamesAccepted``/``Established`` conditions. Replacing keeps the UID, bumps
        ``generation`` only when ``spec`` changed and is a no-op (no new resourceVersion, no watch event) when
        nothing changed. The CRD's group versions appear in discovery once it is Established.

        Args:
            manifest: an ``apiextensions.k8s.io/v1`` CRD as a dict or YAML text; text with several documents
                installs all of them (as :meth:`add_crds`) and returns the first name. A ``status`` is ignored
                (controllers own it).
            established_after: for a new CRD, delay ``Established``: an int N keeps it ``Established=False``
                (reason ``Installing``) for the next N requests the cluster answers and establishes it before
                answering request N+1; a callable is asked before each request and establishes it once it returns
                True; None or 0 establishes at once. See also :meth:`establish`.

        Returns:
            The CRD name.

        Raises:
            InvalidCRDError: (an :class:`InvalidArgumentError`) when a required field is missing or invalid.
            InvalidArgumentError: for a negative ``established_after``.
        """
        if isinstance(manifest, str) and len(crds := parse_crds(manifest)) > 1:
            return self.add_crds(manifest, established_after=established_after)[0]
        crd = parse_crd(crds[0] if isinstance(manifest, str) else manifest)
        if isinstance(established_after, int) and established_after < 0:
            raise InvalidArgumentError("established_after must not be negative")
        crd.pop("status", None)
        name = str(crd["metadata"]["name"])
        with self._lock:
            old = self._crds.get(name)
            for key in ("uid", "creationTimestamp", "generation", "resourceVersion"):
                crd["metadata"].pop(key, None)
            before = dict(old["status"].get("acceptedNames") or {}) if old is not None else {}
            accepted, names_ok, reason, message = accept_names(crd["spec"]["names"], before,
                                                               self._names_in_group(crd["spec"]["group"], name))
            established = self._establishes(name, old, names_ok, established_after)
            self._write_crd(crd, established, accepted, old, names=(names_ok, reason, message))
        return name

    def _establishes(self, name: str, old: dict[str, Any] | None, names_ok: bool,
                     established_after: EstablishedAfter) -> bool:
        """Whether CRD ``name`` is Established once written (``old``: its stored state, None when new); a new CRD
        whose names are accepted and whose establishment is delayed becomes pending instead (lock held)."""
        if old is not None:
            return _is_established(old) or (names_ok and name not in self._pending)
        if names_ok and established_after:  # not None, not 0
            self._pending[name] = established_after
            return False
        return names_ok

    def _names_in_group(self, group: str, exclude: str) -> tuple[set[str], set[str]]:
        """The resource names and kinds other CRDs of ``group`` hold (their accepted names; lock held)."""
        resources: set[str] = set()
        kinds: set[str] = set()
        for other_name, other in self._crds.items():
            if other_name == exclude or other["spec"]["group"] != group:
                continue
            names = other.get("status", {}).get("acceptedNames") or {}
            resources.update(n for n in (names.get("plural"), names.get("singular"), *(names.get("shortNames") or ()))
                             if n)
            kinds.update(n for n in (names.get("kind"), names.get("listKind")) if n)
        return resources, kinds

    def _reconsider_names(self, group: str) -> None:
        """Re-run name acceptance for the CRDs of ``group`` with ``NamesAccepted=False`` (a CRD freed its names, as
        the naming controller requeues the group's CRDs)."""
        for crd in list(self._crds.values()):
            if crd["spec"]["group"] == group and not _names_condition(crd)[0]:
                self.add_crd({k: v for k, v in crd.items() if k != "status"})

    def update_crd(self, manifest: Mapping[str, Any] | str) -> str:
        """Replace an existing CRD (as :meth:`add_crd`) and return its name.

        A test's control, like :meth:`add_crd`: the manifest is validated as a new CRD is, without the rules of an
        update through the API (an ``update``/``patch`` request of the CRD also refuses a new ``spec.group`` or
        ``spec.names.plural``, and once Established a new ``spec.scope`` or ``spec.names.kind``, as
        kube-apiserver does), so a test can change what a real cluster changes by deleting and recreating.

        Args:
            manifest: the CRD, a dict or YAML text; its ``metadata.name`` names the CRD replaced.

        Returns:
            The CRD name (``plural.group``).

        Raises:
            KeyError: when no CRD of that name exists.
            InvalidCRDError: when the manifest is invalid.
        """
        name = str(parse_crd(manifest)["metadata"]["name"])
        with self._lock:
            if name not in self._crds:
                raise KeyError(name)
            return self.add_crd(manifest)

    def _write_crd(self, crd: dict[str, Any], established: bool, accepted: dict[str, Any],
                   old: dict[str, Any] | None, names: tuple[bool, str, str] | None = None) -> None:
        """Store ``crd`` with its status: the conditions (``names``: the NamesAccepted condition's status, reason and
        message, None: ``old``'s), ``accepted`` names and stored versions; a change of spec or accepted names ends
        the watches of its resource, as its storage is torn down (lock held)."""
        since = now_timestamp()
        names_ok, reason, message = names if names is not None else _names_condition(old)
        conditions = [condition("NamesAccepted", names_ok, reason, message, since),
                      condition("Established", established, *_ESTABLISHED_REASONS[established, names_ok], since)]
        old_status = old["status"] if old is not None else {}
        keep_transition_times(conditions, old_status.get("conditions", []))
        crd["status"] = {"conditions": conditions, "acceptedNames": accepted,
                         "storedVersions": _stored_versions(crd, old_status.get("storedVersions", []))}
        _, event = self._store.put(CRD_KEY, crd)
        if not event:
            return
        self._changed()
        if old is not None and (old["spec"] != crd["spec"] or old_status.get("acceptedNames") != accepted):
            self._store.end_watches(str(crd["metadata"]["name"]))

    def delete_crd(self, name: str) -> None:
        """Delete the CRD called ``name`` and every object of its resource (each gets a ``DELETED`` event, then
        the CRD); its versions leave discovery (the group too, if it was the last), its APIServices go.

        Args:
            name: the CRD name, ``plural.group`` (``"widgets.example.com"``).

        Raises:
            KeyError: when no such CRD exists.
        """
        with self._lock:
            if name not in self._crds:
                raise KeyError(name)
            for obj in list(self._store.bucket(name).values()):
                meta = obj["metadata"]
                self._store.remove(name, meta.get("namespace"), meta["name"])
            self._store.buckets.pop(name, None)
            self._pending.pop(name, None)
            group = self._crds[name]["spec"]["group"]
            self._store.remove(CRD_KEY, None, name)
            self._store.end_watches(name)
            self._changed()
            self._reconsider_names(group)

    def remove_crd(self, name: str) -> None:
        """Alias of :meth:`delete_crd` (kept for existing callers).

        Raises:
            KeyError: when no such CRD exists.
        """
        self.delete_crd(name)

    def crds(self) -> list[dict[str, Any]]:
        """Return deep copies of the stored CRD objects, in creation order."""
        with self._lock:
            return [copy.deepcopy(c) for c in self._crds.values()]

    def get_crd(self, name: str) -> dict[str, Any] | None:
        """Return a deep copy of the stored CRD called ``name``, or None."""
        with self._lock:
            crd = self._crds.get(name)
            return copy.deepcopy(crd) if crd is not None else None

    def establish(self, name: str) -> None:
        """Set ``Established=True`` on a CRD added with ``established_after`` now (no-op when already established).

        Raises:
            KeyError: when no such CRD exists.
        """
        with self._lock:
            crd = self._crds.get(name)
            if crd is None:
                raise KeyError(name)
            if self._pending.pop(name, None) is None:
                return
            new = copy.deepcopy(crd)
            self._write_crd(new, True, new["status"]["acceptedNames"], crd)

    def _tick_establishment(self) -> None:
        """Count one request towards every pending ``established_after`` (called before a request is answered)."""
        with self._lock:
            for name, rule in list(self._pending.items()):
                if callable(rule):
                    due = bool(rule())
                else:
                    due = rule <= 0
                    if not due:
                        self._pending[name] = rule - 1
                if due:
                    self.establish(name)

    def set_accepted_names(self, name: str, **names: str | list[str]) -> None:
        """Change ``status.acceptedNames`` of a CRD without touching its spec (no ``generation`` bump).

        Discovery serves accepted names, not ``spec.names``, as apiextensions' discovery controller does, so
        this is how a test makes the served plural/kind/short names differ from the spec (a naming conflict).

        Args:
            name: the CRD name.
            **names: any of ``plural``, ``singular``, ``kind``, ``list_kind``/``listKind`` (str) and
                ``short_names``/``shortNames``, ``categories`` (list of str).

        Raises:
            KeyError: when no such CRD exists.
            InvalidArgumentError: for an unknown field or a value of the wrong type; an
                :class:`InvalidCRDError` for names kube-apiserver refuses (``Widgets``: not a DNS-1035 label).
        """
        update = dict(_accepted_name(key, value) for key, value in names.items())
        with self._lock:
            crd = self._crds.get(name)
            if crd is None:
                raise KeyError(name)
            new = copy.deepcopy(crd)
            new["status"]["acceptedNames"].update(update)
            errors = check_accepted_names(new["status"]["acceptedNames"])  # as kube-apiserver's status validation
            if errors:
                raise InvalidCRDError.from_errors(errors)
            _, event = self._store.put(CRD_KEY, new)
            if event:
                self._changed()
                self._store.end_watches(name)

    def _edit_spec(self, name: str, edit: Callable[[dict[str, Any]], None]) -> None:
        with self._lock:
            crd = self._crds.get(name)
            if crd is None:
                raise KeyError(name)
            new = copy.deepcopy(crd)
            edit(new["spec"])
            try:
                parse_crd({k: v for k, v in new.items() if k != "status"})
            except InvalidCRDError as exc:
                raise InvalidArgumentError(f"the change would make CRD {name!r} invalid: {exc}") from None
            self._write_crd(new, _is_established(crd), new["status"]["acceptedNames"], crd)

    def set_served(self, target: str, served: bool, *, version: str | None = None) -> None:
        """Flip ``spec.versions[].served`` (a spec change: ``generation`` is bumped), changing discovery.

        Args:
            target: a CRD name (``certificates.cert-manager.io``; with ``version`` None every version of it) or a
                group version (``cert-manager.io/v1``: that version of every CRD of the group).
            served: the new flag.
            version: with a CRD name, only this version.

        Raises:
            KeyError: when no CRD (or no CRD version) matches.
        """
        with self._lock:
            for name, ver in self._crd_versions(target, version):
                def edit(spec: dict[str, Any], ver: str = ver) -> None:
                    for v in spec["versions"]:
                        if v["name"] == ver:
                            v["served"] = served
                self._edit_spec(name, edit)

    def _crd_versions(self, target: str, version: str | None) -> list[tuple[str, str]]:
        """The ``(CRD name, version)`` pairs ``set_served``'s ``target`` and ``version`` name (lock held).

        Raises:
            KeyError: when none match.
        """
        if "/" in target:
            gv = GroupVersion.parse(target)
            matches = [(n, gv.version) for n, c in self._crds.items()
                       if c["spec"]["group"] == gv.group and gv.version in _version_names(c)]
        else:
            matches = self._versions_of(target, version)
        if not matches:
            raise KeyError(target)
        return matches

    def _versions_of(self, name: str, version: str | None) -> list[tuple[str, str]]:
        """``(name, v)`` for version ``version`` of CRD ``name`` (None: every version; lock held).

        Raises:
            KeyError: when the CRD exists without that version.
        """
        if name not in self._crds:
            return []
        versions = _version_names(self._crds[name])
        if version is None:
            return [(name, v) for v in versions]
        if version not in versions:
            raise KeyError(f"{name} has no version {version!r}")
        return [(name, version)]

    def set_storage(self, name: str, version: str) -> None:
        """Make ``version`` the storage version of a CRD (spec change; ``status.storedVersions`` gains it).

        Raises:
            KeyError: when the CRD or the version does not exist.
        """
        with self._lock:
            crd = self._crds.get(name)
            if crd is None or version not in _version_names(crd):
                raise KeyError(f"{name} version {version}")

            def edit(spec: dict[str, Any]) -> None:
                for v in spec["versions"]:
                    v["storage"] = v["name"] == version
            self._edit_spec(name, edit)
