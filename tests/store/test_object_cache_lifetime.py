"""The object cache's lifetime: ``stop()`` ends every thread the cache started (found by enumerating threads,
the shared ``restmapper-deadlines`` request watchdog included), and ``AsyncObjectCache`` has the lifecycle of
``ObjectCache``: ``aclose()``, ``async with`` and ``from_kubeconfig``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from helpers.store import cm

from restmapper.aio import AsyncObjectCache
from restmapper.errors import InformerStoppedError
from restmapper.store import ObjectCache
from restmapper.testing import FakeCluster, ServedCluster


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    cluster = FakeCluster()
    cluster.apply_object(cm("a", x="1"))
    with cluster.serve() as s:
        yield s


def client_threads() -> set[threading.Thread]:
    """Every thread but the loopback server's own (one per connection, ended by the server, not the client)."""
    return {t for t in threading.enumerate() if "process_request_thread" not in t.name}


def test_stop_ends_every_thread_the_cache_started(served: ServedCluster) -> None:
    before = client_threads()
    cache = ObjectCache.from_kubeconfig(str(served.kubeconfig_path), resync=60.0)
    assert cache.get("cm", "a", "default")["data"] == {"x": "1"}
    assert cache.list("ns")  # a second informer
    started = client_threads() - before
    assert {t.name for t in started} >= {"restmapper-informer-ConfigMap", "restmapper-informer-ConfigMap-handlers",
                                         "restmapper-informer-Namespace"}
    assert "restmapper-deadlines" in {t.name for t in threading.enumerate()}  # ours, or left by earlier requests
    assert cache.stop()
    assert not [t.name for t in started if t.is_alive()]
    assert "restmapper-deadlines" not in {t.name for t in threading.enumerate()}
    # Started again, it starts what it needs again, and stopping again ends it again.
    assert cache.start().get("cm", "a", "default")["data"] == {"x": "1"}
    assert cache.stop()
    assert not [t.name for t in client_threads() - before]


def test_async_cache_closes_with_aclose_and_async_with(served: ServedCluster) -> None:
    async def main() -> None:
        before = client_threads()
        async with AsyncObjectCache.from_kubeconfig(str(served.kubeconfig_path)) as cache:
            assert (await cache.get("cm", "a", "default"))["data"] == {"x": "1"}
            seen: list[str] = []
            await cache.add_handler("cm", on_add=lambda obj: seen.append(obj["metadata"]["name"]))
            informer = await cache.informer("cm")
        assert informer.state == "stopped" and not cache._tasks
        assert not [t.name for t in client_threads() - before if t.name.startswith("restmapper-")]
        with pytest.raises(InformerStoppedError):
            informer.get("a", "default")

        again = AsyncObjectCache(ObjectCache.from_kubeconfig(str(served.kubeconfig_path)))
        assert (await again.get("cm", "a", "default"))["data"] == {"x": "1"}
        assert await again.aclose()
        assert not again.cache.informers()

    asyncio.run(main())


def test_async_from_kubeconfig_takes_the_cache_options_and_names_itself_for_a_misspelt_one(
        served: ServedCluster) -> None:
    cache = AsyncObjectCache.from_kubeconfig(str(served.kubeconfig_path), namespace="default", sync_timeout=5.0,
                                             miss_refresh_interval=0.0)
    assert cache.cache.namespace == "default"
    with pytest.raises(TypeError, match=r"AsyncObjectCache\.from_kubeconfig.*sync_timout"):
        AsyncObjectCache.from_kubeconfig(str(served.kubeconfig_path), sync_timout=5.0)
