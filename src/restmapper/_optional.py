"""Optional dependencies: a missing one is a ``ModuleNotFoundError`` that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["install_hint", "missing", "require"]


def install_hint(extra: str) -> str:
    """How to install the kube-restmapper extra ``extra``: from the package index and from a source checkout (the
    project's name means nothing to pip inside a checkout that is not installed).

    Returns:
        ``"pip install 'kube-restmapper[<extra>]' (from a checkout: pip install '.[<extra>]')"``.
    """
    return f"pip install 'kube-restmapper[{extra}]' (from a checkout: pip install '.[{extra}]')"


def missing(user: str, package: str, extra: str, cause: ModuleNotFoundError | None = None) -> ModuleNotFoundError:
    """The error for ``user`` (e.g. ``restmapper.metrics``) when ``package`` is absent.

    Args:
        user: what needs it, for the message.
        package: what to name as missing (``prometheus_client``, ``kubernetes.aio``).
        extra: the kube-restmapper extra that installs it.
        cause: the original error (its ``name``, the module that failed, is kept).

    Returns:
        ``ModuleNotFoundError("<user> needs <package>: " + install_hint(extra))``.
    """
    name = cause.name if cause is not None and cause.name else package
    return ModuleNotFoundError(f"{user} needs {package}: {install_hint(extra)}", name=name)


def require(user: str, module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise :func:`missing`'s error from the original one.

    Raises:
        ModuleNotFoundError: the module is not installed; the message names the extra.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise missing(user, module.partition(".")[0], extra, exc) from exc
