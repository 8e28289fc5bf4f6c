"""Public methods pickle by reference (``module.qualname`` finds them), though ``own_methods`` renames them so that
a bad call names the public class (``pickle.dumps(LazyRESTMapper.resolve)`` failed: the copy kept its base's
module, where ``LazyRESTMapper.resolve`` does not exist). Every public method of the entry classes names the public
class, in its ``__qualname__`` and in a bad call's TypeError."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import types

import pytest

import restmapper
from restmapper import LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, InProcessTransport


def _public_classes() -> list[type]:
    """Every public class of every importable restmapper module (optional extras not installed are skipped)."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(restmapper.__path__, "restmapper."):
        if info.name.endswith(".__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for name, value in vars(module).items():
            if (isinstance(value, type) and not name.startswith("_") and value.__module__ == info.name
                    and not value.__qualname__.startswith("_")):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


def _own_functions(cls: type) -> list[tuple[str, types.FunctionType]]:
    """The restmapper functions ``cls.name`` gives for each public name (plain, static and class methods)."""
    out = []
    for name in dir(cls):
        if name.startswith("_") or isinstance(inspect.getattr_static(cls, name), property):
            continue
        attr = getattr(cls, name, None)
        func = getattr(attr, "__func__", attr)
        if isinstance(func, types.FunctionType) and func.__module__.startswith("restmapper"):
            out.append((name, attr))
    return out


CLASSES = _public_classes()


def test_the_walk_finds_the_classes_own_methods_decorates() -> None:
    from restmapper.discovery import DiscoveryClient
    from restmapper.mapper.lazy import LazyRESTMapper
    from restmapper.store import ObjectCache

    assert {LazyRESTMapper, DiscoveryClient, ObjectCache} <= set(CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_public_method_pickles_by_reference(cls: type) -> None:
    failed = []
    for name, attr in _own_functions(cls):
        try:
            if pickle.loads(pickle.dumps(attr)) != attr:
                failed.append(f"{name}: another object")
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            failed.append(f"{name}: {exc}")
    assert failed == []


def test_lazy_restmapper_resolve_pickles() -> None:
    from restmapper import LazyRESTMapper

    assert pickle.loads(pickle.dumps(LazyRESTMapper.resolve)) is LazyRESTMapper.resolve
    assert LazyRESTMapper.resolve.__qualname__ == "LazyRESTMapper.resolve"


def test_unknown_keyword_names_lazy_restmapper() -> None:
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())))
    with pytest.raises(TypeError, match=r"^LazyRESTMapper\.resolve\(\) got an unexpected keyword argument"):
        mapper.resolve("deploy", namspace="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^LazyRESTMapper\.resolve_all\(\)"):
        mapper.resolve_all("deploy", bogus=1)  # type: ignore[call-arg]
    assert mapper.resolve("deploy").resource.resource == "deployments"


def _entry_classes() -> list[type]:
    from restmapper.discovery import DiscoveryClient
    from restmapper.dynamic import SelfHealingDiscoverer, SelfHealingDynamicClient
    classes: list[type] = [LazyRESTMapper, DiscoveryClient, ObjectCache, SelfHealingDiscoverer,
                           SelfHealingDynamicClient]
    try:
        from restmapper.dynamic.kubernetes_aio import SelfHealingAioDiscoverer, SelfHealingAioDynamicClient
        classes += [SelfHealingAioDiscoverer, SelfHealingAioDynamicClient]
    except ImportError:
        pass
    try:
        from restmapper.dynamic.kubernetes_asyncio import (
            SelfHealingAsyncioDiscoverer,
            SelfHealingAsyncioDynamicClient,
        )
        classes += [SelfHealingAsyncioDiscoverer, SelfHealingAsyncioDynamicClient]
    except ImportError:
        pass
    return classes


@pytest.mark.parametrize("cls", _entry_classes(), ids=lambda c: c.__name__)
def test_every_public_method_of_restmapper_names_the_public_class(cls: type) -> None:
    wrong = []
    for name, attr in inspect.getmembers(cls):
        if name.startswith("_") or isinstance(inspect.getattr_static(cls, name), property):
            continue
        func = getattr(attr, "__func__", attr)
        if not inspect.isfunction(func) or not func.__module__.startswith("restmapper"):
            continue
        if func.__qualname__ != f"{cls.__qualname__}.{name}":
            wrong.append(f"{name}: {func.__qualname__}")
    assert wrong == []
