"""Module attributes loaded on first use (PEP 562), so importing a package stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(namespace: MutableMapping[str, Any], package: str,
                 table: Mapping[str, str]) -> Callable[[str], Any]:
    """Return a module ``__getattr__`` that imports ``table[name]`` on first access and caches the attribute.

    Args:
        namespace: the package's ``globals()`` (the loaded attribute is stored there, so it is loaded once).
        package: the package's name, for the error message.
        table: attribute name -> the module defining it.

    Returns:
        A function to assign to the package's ``__getattr__``; it raises ``AttributeError`` for other names.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
