"""A missing optional dependency is a ModuleNotFoundError naming the extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from restmapper.adapters import kr8s_class, lightkube_resource
from restmapper.model import GroupVersionKind, GroupVersionResource, RESTMapping, Scope

MAPPING = RESTMapping(GroupVersionResource("example.com", "v1", "widgets"),
                      GroupVersionKind("example.com", "v1", "Widget"), Scope.NAMESPACED)


@pytest.mark.parametrize("module, absent, extra", [
    ("restmapper.dynamic.kubernetes_asyncio", "kubernetes_asyncio", "asyncio"),
    ("restmapper.dynamic.kubernetes_aio", "kubernetes.aio", "aio"),
    ("restmapper.metrics", "prometheus_client", "prometheus"),
])
def test_importing_a_module_without_its_extra_names_the_extra(module: str, absent: str, extra: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m in (module, absent) or m.startswith(absent + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, absent, None)  # "not installed"
    with pytest.raises(ModuleNotFoundError, match=rf"needs {absent}: pip install 'kube-restmapper\[{extra}\]'") as info:
        importlib.import_module(module)
    assert info.value.name is not None and info.value.name.startswith(absent.partition(".")[0])


@pytest.mark.parametrize("adapter, absent, extra", [(kr8s_class, "kr8s", "kr8s"),
                                                    (lightkube_resource, "lightkube", "lightkube")])
def test_an_adapter_without_its_package_names_the_extra(adapter: object, absent: str, extra: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == absent or m.startswith(absent + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, absent, None)
    with pytest.raises(ModuleNotFoundError, match=rf"pip install 'kube-restmapper\[{extra}\]'"):
        adapter(MAPPING)  # type: ignore[operator]
