"""The asyncio drop-ins under test: ``kubernetes.aio`` and ``kubernetes_asyncio``, each with our discoverers."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

LIBRARIES = {
    "kubernetes.aio": ("kubernetes.aio", "restmapper.dynamic.kubernetes_aio", "SelfHealingAio"),
    "kubernetes_asyncio": ("kubernetes_asyncio", "restmapper.dynamic.kubernetes_asyncio", "SelfHealingAsyncio"),
}


class Lib:
    """One asyncio library and our drop-ins for it."""

    def __init__(self, name: str) -> None:
        base, ours, prefix = LIBRARIES[name]
        self.client: ModuleType = importlib.import_module(f"{base}.client")
        self.dynamic: ModuleType = importlib.import_module(f"{base}.dynamic")
        self.exceptions: ModuleType = importlib.import_module(f"{base}.dynamic.exceptions")
        self.resource: ModuleType = importlib.import_module(f"{base}.dynamic.resource")
        module = importlib.import_module(ours)
        self.discoverer = getattr(module, f"{prefix}Discoverer")
        self.healing_client = getattr(module, f"{prefix}DynamicClient")

    def api_client(self, url: str, **settings: Any) -> Any:
        cfg = self.client.Configuration(host=url)
        for key, value in settings.items():
            setattr(cfg, key, value)
        return self.client.ApiClient(cfg)


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(main())  # type: ignore[arg-type]
