"""How a :class:`~restmapper.store.ObjectCache` given a CRD :class:`~restmapper.watch.Watcher` wakes the informers
waiting for their kind to be served: :class:`CrdWake`, an object the cache holds (``ObjectCache._crds``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from restmapper.store._informer import Informer
    from restmapper.watch.watcher import Watcher

__all__ = ["CrdWake"]

_CRD = "CustomResourceDefinition"


class CrdWake:
    """The cache's handler of the watcher's CRD events: a CRD of a group changed, so the informers of that group
    that wait for their kind to be served look again (instead of at their next probe).

    Args:
        watcher: the cache's watcher, or None (then nothing is watched).
        informers_of_group: the cache's informers of a group (by its name).
    """

    __slots__ = ("_handler", "_informers_of_group", "_watcher")

    def __init__(self, watcher: Watcher | None, informers_of_group: Callable[[object], list[Informer]]) -> None:
        self._watcher = watcher
        self._informers_of_group = informers_of_group
        self._handler = self.on_event  # one bound-method object: the watcher removes handlers by identity

    def watched(self) -> bool:
        """True when a running watcher will tell us about CRD changes (re-registers our handler if it was dropped
        by a watcher restart)."""
        watcher = self._watcher
        if watcher is None or not watcher.watching(_CRD):
            return False
        watcher.add_handler(self._handler, once=True)  # never removed meanwhile: no event slips through
        return True

    def stop(self) -> None:
        """Unregister from the watcher (the cache stopped)."""
        if self._watcher is not None:
            self._watcher.remove_handler(self._handler)

    def on_event(self, event_type: str, kind: str, obj: Mapping[str, Any]) -> None:
        """The watcher's handler (on its thread, after it invalidated the group): only wake informers, no I/O."""
        if kind != _CRD:
            return
        spec = obj.get("spec")
        for informer in self._informers_of_group(spec.get("group") if isinstance(spec, Mapping) else None):
            # Only an informer waiting for its kind to be served needs the event: a served one learns of a change
            # that moves it from its own watch (ended by the storage teardown), and a poke racing that move could
            # let the relist of the old version land after the new one.
            if informer.state == "not_served":
                informer._poke()
