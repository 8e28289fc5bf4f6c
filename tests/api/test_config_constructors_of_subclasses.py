"""Rule: ``from_kubeconfig``/``from_incluster`` build an instance of the class they are called on, subclasses
included, take every option ``from_config`` takes, and are typed to return that class.

``ObjectCache``, ``AsyncObjectCache`` and ``DiscoveryClient`` are public classes users subclass (a controller's
cache with its own helpers); ``MyCache.from_kubeconfig(...)`` must give a ``MyCache``, for the type checker too.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest

from restmapper.aio import AsyncObjectCache
from restmapper.discovery import DiscoveryClient
from restmapper.store import ObjectCache
from restmapper.testing.server import kubeconfig_text


class GreetingCache(ObjectCache):
    """A user's cache: one keyword of its own, the rest forwarded to ``ObjectCache``."""

    def __init__(self, mapper: Any, *, greeting: str = "hi", **options: Any) -> None:
        super().__init__(mapper, **options)
        self.greeting = greeting


@pytest.fixture
def kubeconfig(tmp_path: Path) -> str:
    path = tmp_path / "config"
    path.write_text(kubeconfig_text("https://127.0.0.1:1"))
    return str(path)


def test_a_subclass_forwarding_its_keywords_takes_the_cache_options_from_kubeconfig(kubeconfig: str) -> None:
    cache = GreetingCache.from_kubeconfig(kubeconfig, greeting="yo", namespaces=["a"], relist_period=30.0)
    assert isinstance(cache, GreetingCache)
    assert cache.greeting == "yo"


def test_a_subclass_forwarding_its_keywords_still_refuses_a_misspelt_option(kubeconfig: str) -> None:
    with pytest.raises(TypeError, match=r"GreetingCache\.from_kubeconfig\(\).*'namespacez'"):
        GreetingCache.from_kubeconfig(kubeconfig, namespacez=["a"])


@pytest.mark.parametrize("cls", [ObjectCache, AsyncObjectCache, DiscoveryClient])
@pytest.mark.parametrize("method", ["from_kubeconfig", "from_incluster"])
def test_the_config_constructors_are_typed_to_return_the_class_they_are_called_on(cls: type, method: str) -> None:
    returned = typing.get_type_hints(getattr(cls, method))["return"]
    assert isinstance(returned, typing.TypeVar) or getattr(returned, "__name__", None) == "Self", returned
