"""Module attributes loaded on first use (PEP 562), so importing a package stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_dir", "lazy_getattr"]


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


def lazy_dir(namespace: Mapping[str, Any], table: Mapping[str, str]) -> Callable[[], list[str]]:
    """Return a module ``__dir__`` (PEP 562) listing the public names, loaded or not, and the module's dunders
    (``__version__``, ``__file__``): ``__all__`` when the module has one, else its public globals, plus ``table``'s
    names (autocompletion offers what loads lazily, not the module's own imports such as ``logging``)."""

    def __dir__() -> list[str]:
        public = namespace.get("__all__")
        names = set(public) if public is not None else {n for n in namespace if not n.startswith("_")}
        return sorted(names | set(table) | {n for n in namespace if n.startswith("__") and n.endswith("__")})

    return __dir__
