"""Every error and warning restmapper raises or emits is importable from ``restmapper.errors``.

Users write ``except restmapper.errors.X``; an error that only its own subpackage exports is one they cannot
find. The subpackages re-export the same classes (``restmapper.store.ObjectNotFoundError is
restmapper.errors.ObjectNotFoundError``), and every "waited and gave up" error is a ``WaitTimeoutError``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import restmapper
from restmapper import errors


def _public_exception_classes() -> dict[str, type[BaseException]]:
    """Every public exception or warning class defined anywhere in the package, by name."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(restmapper.__path__, "restmapper."):
        if ".testing" in info.name or info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError:  # an optional extra (kubernetes_asyncio, prometheus_client) is absent
            continue
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and not name.startswith("_")
                    and obj.__module__.startswith("restmapper.")):
                found[name] = obj
    return found


def test_every_public_error_and_warning_is_in_restmapper_errors() -> None:
    classes = _public_exception_classes()
    assert {"ObjectNotFoundError", "CacheSyncTimeoutError", "PartialDiscoveryWarning",
            "ShortNameConflictWarning"} <= classes.keys()
    missing = sorted(name for name in classes if getattr(errors, name, None) is not classes[name])
    assert missing == [], f"defined outside restmapper.errors or not re-exported as the same class: {missing}"
    assert set(classes) <= set(errors.__all__)


def test_every_timeout_of_a_wait_is_a_wait_timeout_error() -> None:
    for cls in (errors.CacheSyncTimeoutError, errors.ObjectWaitTimeoutError):
        assert issubclass(cls, errors.WaitTimeoutError)
        assert issubclass(cls, TimeoutError)
    cause = ConnectionRefusedError("connection refused")
    exc = errors.CacheSyncTimeoutError("Widget.example.com", 2.5, cause)
    assert (exc.target, exc.kind, exc.timeout, exc.last_error) == ("Widget.example.com", "Widget.example.com", 2.5,
                                                                    cause)
    assert str(exc) == ("timed out after 2.5s waiting for the Widget.example.com informer to sync: "
                        "connection refused")
