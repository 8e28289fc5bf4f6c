"""Server-side apply and ``metadata.managedFields`` as kube-apiserver keeps them (structured-merge-diff, simplified).

Follows the "Server-Side Apply" reference (https://kubernetes.io/docs/reference/using-api/server-side-apply/):

- every write records which manager set which fields, as ``managedFields`` entries (``manager``, ``operation``
  ``Apply``/``Update``, ``apiVersion``, ``time``, ``fieldsType: FieldsV1``, ``fieldsV1``); a non-apply write is
  attributed to its ``fieldManager`` or, without one, to the User-Agent's product name (``kubectl``,
  ``OpenAPI-Generator``), and takes the fields it changed away from other managers;
- an apply merges the applied configuration into the object; a field it sets to a different value than another
  manager's is a **conflict** (409, reason ``Conflict``, one ``FieldManagerConflict`` cause per field) unless
  ``force=true``, which moves the field to the applier; equal values are shared;
- fields the applier set last time and omits now are removed, unless another manager also owns them;
- ``kubectl`` (the manager ``kubectl apply --server-side`` uses) takes over, without a conflict, fields listed in
  the ``kubectl.kubernetes.io/last-applied-configuration`` annotation (the upgrade from client-side apply);
- lists whose Kubernetes type declares a merge key (see :mod:`.patch`) are associative (items ``k:{"name":...}``),
  ``finalizers`` is a set (``v:"..."``); every other list is atomic (owned and replaced as a whole).

Simplifications (documented, since the kit has no Go schemas): custom resources use the same rules (a CRD's
``x-kubernetes-list-type`` is not read), and ``status`` is not tracked on the main resource.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from restmapper.testing.objects.patch import merge_key

__all__ = ["ApplyConflict", "apply", "manager_from_user_agent", "record_update"]

_UNTRACKED_META = frozenset({"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                             "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink",
                             "generateName"})
_SET_LISTS = frozenset({"finalizers"})
_MISSING = object()
Path = tuple[str, ...]


class ApplyConflict(Exception):
    """An apply that would change fields another manager owns: ``conflicts`` is ``[(manager, apiVersion, field)]``,
    ``paths`` the conflicting field paths."""

    def __init__(self, conflicts: list[tuple[str, str, str]], paths: set[Path] | None = None) -> None:
        self.conflicts = conflicts
        self.paths = paths or set()
        n = len(conflicts)
        managers = sorted({m for m, _, _ in conflicts})
        if n == 1:
            manager, version, field = conflicts[0]
            message = f'Apply failed with 1 conflict: conflict with "{manager}" using {version}: {field}'
        else:
            lines = "".join(f"\n- {f}" for _, _, f in conflicts)
            who = ", ".join(f'"{m}"' for m in managers)
            message = f"Apply failed with {n} conflicts: conflicts with {who}:{lines}"
        super().__init__(message)
        self.message = message


def manager_from_user_agent(user_agent: str | None) -> str:
    """The manager name of a write without ``fieldManager``: the User-Agent up to its first ``/`` (as the API
    server's ``managerOrUserAgent``)."""
    agent = (user_agent or "").split("/")[0].strip()
    return agent[:128] or "unknown"


def _item_keys(field: str, items: list[Any], context: list[Any]) -> list[str | None]:
    """The ``k:{"name":...}`` token of each of ``items`` in list ``field`` (None for an item without its merge key,
    or every item when the list has no merge key); ``context`` is the list the merge key is looked up for."""
    key = merge_key(field, context)
    return [None if key is None or not isinstance(item, dict) or key not in item
            else "k:" + json.dumps({key: item[key]}, separators=(",", ":"), sort_keys=True) for item in items]


def fields_of(obj: Mapping[str, Any], *, top: bool = True) -> dict[str, Any]:
    """Return the ``fieldsV1`` set of the fields ``obj`` sets (nested ``f:``/``k:``/``v:`` keys, ``.`` for items)."""
    out: dict[str, Any] = {}
    for name, value in obj.items():
        if top and name in ("apiVersion", "kind", "status"):
            continue
        if top and name == "metadata" and isinstance(value, dict):
            sub = fields_of({k: v for k, v in value.items() if k not in _UNTRACKED_META}, top=False)
            if sub:
                out["f:metadata"] = sub
            continue
        out[f"f:{name}"] = _fields_of_value(name, value)
    return out


def _fields_of_value(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return fields_of(value, top=False)
    if not isinstance(value, list):
        return {}
    if name in _SET_LISTS and not any(isinstance(v, (dict, list)) for v in value):
        return {"v:" + json.dumps(v, separators=(",", ":")): {} for v in value}
    keys = _item_keys(name, value, value)
    if not value or not all(keys):
        return {}  # an atomic list: owned as a whole
    return {k: {".": {}, **fields_of(v, top=False)} for k, v in zip(keys, value, strict=True)}  # type: ignore[misc]


def leaves(tree: Mapping[str, Any], prefix: Path = ()) -> set[Path]:
    """Flatten a ``fieldsV1`` tree into paths (an item's own path ends with ``"."``)."""
    out: set[Path] = set()
    for key, sub in tree.items():
        if key == ".":
            out.add((*prefix, "."))
        elif not sub:
            out.add((*prefix, key))
        else:
            out |= leaves(sub, (*prefix, key))
    return out


def tree(paths: Iterable[Path]) -> dict[str, Any]:
    """Build a ``fieldsV1`` tree from paths (the inverse of :func:`leaves`)."""
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for token in path:
            node = node.setdefault(token, {})
    return root


def _field_step(value: Any, name: str) -> Any:
    return value.get(name, _MISSING) if isinstance(value, dict) else _MISSING


def _item_step(value: Any, key: str) -> Any:
    if not isinstance(value, list):
        return _MISSING
    want = json.loads(key)
    return next((i for i in value if isinstance(i, dict) and all(i.get(k) == v for k, v in want.items())), _MISSING)


def _set_member_step(value: Any, member: str) -> Any:
    if not isinstance(value, list):
        return _MISSING
    wanted = json.loads(member)
    return wanted if wanted in value else _MISSING


_STEPS = {"f:": _field_step, "k:": _item_step, "v:": _set_member_step}
"""How each kind of ``fieldsV1`` token (``f:`` field, ``k:`` list item by merge key, ``v:`` set member) steps
into a value, by the token's prefix."""


def _step(value: Any, token: str) -> Any:
    """The part of ``value`` the ``fieldsV1`` path token ``token`` names (a sentinel when absent)."""
    step = _STEPS.get(token[:2])
    return step(value, token[2:]) if step is not None else _MISSING


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in ``obj`` (a sentinel when absent)."""
    value = obj
    for token in path:
        if token == ".":
            break
        value = _step(value, token)
        if value is _MISSING:
            break
    return value


def _delete_at(obj: Any, path: Path) -> None:
    if path and path[-1] == ".":
        path = path[:-1]
    if not path:
        return
    parent = value_at(obj, path[:-1])
    last = path[-1]
    if last.startswith("f:") and isinstance(parent, dict):
        parent.pop(last[2:], None)
    elif isinstance(parent, list):
        target = _step(parent, last)
        if target is not _MISSING:
            parent.remove(target)


def _merge(current: Any, config: Any, field: str = "") -> Any:
    """``config`` merged into (a copy of) ``current``: maps field by field, lists as :func:`_merge_list`."""
    if isinstance(config, dict) and isinstance(current, dict):
        out = copy.deepcopy(current)
        for key, value in config.items():
            out[key] = _merge(out.get(key), value, key)
        return out
    if isinstance(config, list) and isinstance(current, list):
        return _merge_list(current, config, field)
    return copy.deepcopy(config)


def _merge_list(current: list[Any], config: list[Any], field: str) -> list[Any]:
    """List ``field`` of ``config`` merged into ``current``: a set gains the new members, an associative list
    merges items by merge key, an atomic list is replaced."""
    if field in _SET_LISTS:
        return current + [v for v in config if v not in current]
    keys = _item_keys(field, config, current + config)
    if not config or not all(keys):
        return copy.deepcopy(config)
    out = copy.deepcopy(current)
    for key, item in zip(keys, config, strict=True):
        existing = _step(out, key)  # type: ignore[arg-type]
        if existing is _MISSING:
            out.append(copy.deepcopy(item))
        else:
            out[out.index(existing)] = _merge(existing, item, field)
    return out


def _entries(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [dict(e) for e in (obj.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]


def _entry_of(entries: list[dict[str, Any]], **fields: str | None) -> dict[str, Any] | None:
    """The first managedFields entry whose ``fields`` (``manager``, ``operation``, ...) have these values."""
    return next((e for e in entries if all(e.get(k) == v for k, v in fields.items())), None)


def _owned(entry: Mapping[str, Any] | None) -> set[Path]:
    """The field paths a managedFields entry owns (none for no entry)."""
    return leaves(entry.get("fieldsV1") or {}) if entry is not None else set()


def _entry(manager: str, operation: str, api_version: str, paths: set[Path], now: str,
           subresource: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now,
                             "fieldsType": "FieldsV1", "fieldsV1": tree(paths)}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _field_text(path: Path) -> str:
    out = ""
    for token in path:
        if token == ".":
            continue
        out += "." + token[2:] if token.startswith("f:") else f"[{token[2:]}]"
    return out


def _set_entries(obj: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    kept = [e for e in entries if e.get("fieldsV1")]
    meta = obj.setdefault("metadata", {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def _last_applied_fields(obj: Mapping[str, Any]) -> set[Path]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    try:
        last = json.loads(annotations.get("kubectl.kubernetes.io/last-applied-configuration") or "null")
    except ValueError:
        return set()
    return leaves(fields_of(last)) if isinstance(last, dict) else set()


def apply(current: dict[str, Any] | None, config: dict[str, Any], *, manager: str, force: bool, api_version: str,
          now: str, subresource: str | None = None) -> dict[str, Any]:
    """Return the object after ``manager`` applies ``config`` to ``current`` (None: the object is created).

    Raises:
        ApplyConflict: when ``config`` changes fields other managers own and ``force`` is false.
    """
    applied = leaves(fields_of(config))
    base: dict[str, Any] = copy.deepcopy(current) if current is not None else {}
    entries = _entries(base)
    mine = _entry_of(entries, manager=manager, operation="Apply", subresource=subresource)
    others = [e for e in entries if e is not mine]
    taken = _taken_fields(base, config, applied, others, manager=manager, force=force)
    out: dict[str, Any] = _merge(base, config)
    _drop_unapplied(out, _owned(mine) - applied, applied, others)
    new_entries = [{**entry, "fieldsV1": tree(_owned(entry) - taken)} for entry in others]
    new_entries.append(_entry(manager, "Apply", api_version, applied, now, subresource))
    _set_entries(out, new_entries)
    return out


def _taken_fields(base: dict[str, Any], config: dict[str, Any], applied: set[Path], others: list[dict[str, Any]],
                  *, manager: str, force: bool) -> set[Path]:
    """The fields ``config`` sets to another value than the one other managers (``others``) own: they move to
    ``manager``.

    Raises:
        ApplyConflict: there are such fields and ``force`` is false (kubectl taking over what its client-side
            apply set excepted).
    """
    conflicts: list[tuple[str, str, str]] = []
    taken: set[Path] = set()
    for entry in others:
        for path in sorted(_owned(entry) & applied):
            if path[-1] == "." or value_at(base, path) == value_at(config, path):
                continue
            conflicts.append((str(entry.get("manager")), str(entry.get("apiVersion")), _field_text(path)))
            taken.add(path)
    if conflicts and not force and not (manager == "kubectl" and taken <= _last_applied_fields(base)):
        # kubectl's server-side apply takes over fields its client-side apply set (the last-applied-configuration
        # annotation) without conflicts, as apimachinery's lastAppliedManager; any other manager must force.
        raise ApplyConflict(conflicts, taken)
    return taken


def _drop_unapplied(out: dict[str, Any], dropped: set[Path], applied: set[Path],
                    others: list[dict[str, Any]]) -> None:
    """Delete from ``out`` (in place) the fields the manager applied before and no longer does (``dropped``),
    deepest first, unless another manager owns them (or something under them) or the new apply does."""
    owned_by_others = set().union(*(_owned(e) for e in others))
    for path in sorted(dropped, key=len, reverse=True):
        prefix = path[:-1] if path[-1] == "." else path
        if any(p[:len(prefix)] == prefix for p in owned_by_others | applied):
            continue
        _delete_at(out, path)


def record_update(old: Mapping[str, Any] | None, new: dict[str, Any], *, manager: str, api_version: str, now: str,
                  subresource: str | None = None) -> None:
    """Update ``new``'s ``managedFields`` for a non-apply write by ``manager`` (in place): the fields it changed
    become its own (operation ``Update``) and leave the other managers; removed fields leave everyone.

    A write whose body carries ``managedFields`` different from the stored ones sets them as sent (how clients
    migrate ownership); an empty list resets them.
    """
    if _sets_managed_fields(old, new):
        return
    before = old or {}
    now_paths = leaves(fields_of(new))
    changed = _changed_fields(before, new, now_paths)
    removed = leaves(fields_of(before)) - now_paths
    entries = _entries(before)
    mine = _entry_of(entries, manager=manager, operation="Update", apiVersion=api_version, subresource=subresource)
    result = [{**entry, "fieldsV1": tree(_owned(entry) - removed - changed)} for entry in entries if entry is not mine]
    if changed:
        result.append(_entry(manager, "Update", api_version, (_owned(mine) - removed) | changed, now, subresource))
    elif mine is not None:
        result.append({**mine, "fieldsV1": tree(_owned(mine) - removed)})
    _set_entries(new, result)


def _sets_managed_fields(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether a write's body carries ``managedFields`` other than the stored ones (it sets them as sent)."""
    sent = (new.get("metadata") or {}).get("managedFields")
    stored = (old.get("metadata") or {}).get("managedFields") if old is not None else None
    return sent is not None and sent != stored


def _changed_fields(before: Mapping[str, Any], new: Mapping[str, Any], paths: set[Path]) -> set[Path]:
    """The ``paths`` of ``new`` whose value differs from ``before`` (an item's own path: the item is new)."""
    return {p for p in paths if value_at(before, p) != value_at(new, p)
            or (p[-1] == "." and value_at(before, p[:-1]) is _MISSING)}
