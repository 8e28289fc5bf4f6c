"""``import restmapper`` offers the write client, the work queues and every error a write, a wait or a stopped cache
raises, as the same objects their packages define, loaded on first use (importing the package loads none of them);
``dir(restmapper)`` lists what loads lazily, not the module's own imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import restmapper

NAMES = {
    "Client": "restmapper.client", "AsyncClient": "restmapper.client",
    "RateLimitingQueue": "restmapper.workqueue", "AsyncRateLimitingQueue": "restmapper.workqueue",
    **{name: "restmapper.errors" for name in (
        "ConflictError", "AlreadyExistsError", "InvalidObjectError", "ForbiddenError", "WriteNotObservedError",
        "MappingChangedError", "InformerStoppedError", "ObjectWaitTimeoutError", "TransformError")},
}


@pytest.mark.parametrize(("name", "module"), sorted(NAMES.items()))
def test_exported_at_the_top_as_the_same_object(name: str, module: str) -> None:
    assert name in restmapper.__all__ and name in dir(restmapper)
    value = getattr(restmapper, name)
    assert value is getattr(sys.modules[module], name)


def test_importing_the_package_loads_none_of_them() -> None:
    code = ("import json, sys, restmapper; "
            "print(json.dumps([m for m in ('restmapper.client', 'restmapper.workqueue', 'restmapper.errors') "
            "if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_dir_lists_what_loads_lazily_and_not_the_modules_imports() -> None:
    names = dir(restmapper)
    for name in ("LazyRESTMapper", "ObjectCache", "Watcher", "AsyncRESTMapper", "GroupKind", "__version__"):
        assert name in names
    for name in ("logging", "TYPE_CHECKING", "annotations", "lazy_getattr"):
        assert name not in names
