"""Public classes own the methods they inherit from private helpers, so a call error names the public class.

Python words a bad call with the function's ``__qualname__``: ``mapper.resolve("deploy", namspace="x")`` said
``KubectlResolution.resolve() got an unexpected keyword argument``, naming an internal base the user never met.
:func:`own_methods` gives the public class a copy of each such method (same code, globals, closure and defaults:
``super()`` and behaviour are unchanged) whose ``__qualname__`` is ``PublicClass.method`` and ``__module__`` the
public class's, so that pickle (which looks a function up as ``module.qualname``) finds the copy itself.
"""

from __future__ import annotations

import functools
import os
import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["caller_stacklevel", "own_methods", "repr_when_unfinished"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def caller_stacklevel() -> int:
    """The ``stacklevel`` for a :func:`warnings.warn` made by the function calling this one that names the first
    frame outside restmapper: a warning points at the user's line whichever layer (the mapper, the object cache,
    the drop-in) the call went through, and Python's once-per-location filter works per user call site."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level

_T = TypeVar("_T", bound=type)


def _renamed(func: types.FunctionType, module: str, qualname: str) -> types.FunctionType:
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
    copy.__kwdefaults__ = func.__kwdefaults__
    copy.__dict__.update(func.__dict__)
    copy.__doc__ = func.__doc__
    copy.__module__ = module  # pickle finds a function as ``module.qualname``: here, the copy itself
    copy.__annotations__ = func.__annotations__
    copy.__qualname__ = qualname
    return copy


def own_methods(cls: _T) -> _T:
    """Class decorator: copy onto ``cls`` each public method (plain, class or static) it inherits from a
    restmapper class, renamed ``cls.__qualname__ + "." + name``, so ``TypeError`` for a bad call names ``cls``;
    its ``__module__`` is ``cls.__module__``, so it pickles by reference.

    Methods defined on ``cls`` itself, dunder and ``_private`` names, properties and methods of other packages'
    classes (``kubernetes``' ``DynamicClient``: their names are upstream's) are left as they are.

    Args:
        cls: the public class.

    Returns:
        ``cls``, changed in place.
    """
    for base in cls.__mro__[1:]:
        if not base.__module__.startswith("restmapper"):
            continue
        for name, attr in vars(base).items():
            if _uses_inherited(cls, base, name):
                wrapped = _renamed_method(attr, cls.__module__, f"{cls.__qualname__}.{name}")
                if wrapped is not None:
                    setattr(cls, name, wrapped)
    return cls


def _uses_inherited(cls: type, base: type, name: str) -> bool:
    """Whether ``name`` is a public attribute ``cls`` does not define and takes from ``base``."""
    if name.startswith("_") or name in vars(cls):
        return False
    return getattr(cls, name, None) is not None and not _defined_below(cls, base, name)


def _renamed_method(attr: object, module: str, qualname: str) -> Any:
    """A copy of the plain, class or static method ``attr`` under ``qualname`` in ``module``; None for anything
    else (a property, a builtin)."""
    if isinstance(attr, types.FunctionType):
        return _renamed(attr, module, qualname)
    if isinstance(attr, (classmethod, staticmethod)) and isinstance(attr.__func__, types.FunctionType):
        return type(attr)(_renamed(attr.__func__, module, qualname))
    return None


def _defined_below(cls: type, base: type, name: str) -> bool:
    """True when a class between ``cls`` and ``base`` in the MRO defines ``name`` (``base``'s is not the one
    ``cls`` uses)."""
    for klass in cls.__mro__[1:]:
        if klass is base:
            return False
        if name in vars(klass):
            return True
    return False


_Self = TypeVar("_Self")


def repr_when_unfinished(method: Callable[[_Self], str]) -> Callable[[_Self], str]:
    """Wrap a ``__repr__`` so that, on an object whose constructor raised before setting what it shows (left in
    the traceback's frames, where debuggers and ``pytest --showlocals`` repr it), it answers
    ``Name(<construction did not finish>)`` instead of raising AttributeError over the error being reported."""

    @functools.wraps(method)
    def wrapper(self: _Self) -> str:
        try:
            return method(self)
        except AttributeError:
            return f"{type(self).__name__}(<construction did not finish>)"

    return wrapper
