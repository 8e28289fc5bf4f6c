"""64 reader threads while the kit churns objects and CRDs: only documented errors, no deadlock, and once the
churn stops the cache equals the server. Churns 2 s; set RESTMAPPER_CHURN_SECONDS (e.g. 30) for a longer run."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator

import pytest
from helpers.store import WIDGETS, Mirror, cm, converged, key, object_cache, widget_cluster, widget_obj
from helpers.watch import widget

from restmapper.errors import is_no_match
from restmapper.store import CacheSyncTimeoutError, ObjectNotFoundError
from restmapper.testing import ServedCluster

SECONDS = float(os.environ.get("RESTMAPPER_CHURN_SECONDS", "2"))
READERS = 64


@pytest.fixture
def served() -> Iterator[ServedCluster]:
    with widget_cluster() as s:
        yield s


def test_readers_during_object_and_crd_churn(served: ServedCluster) -> None:
    cluster = served.cluster
    names = [f"o{i}" for i in range(20)]
    for name in names[:10]:
        cluster.apply_object(cm(name))
        cluster.apply_object(widget_obj(name))
    with object_cache(served, sync_timeout=30) as cache:
        mirrors = {"configmaps": Mirror(), WIDGETS: Mirror()}
        mirrors["configmaps"].attach(cache.informer("cm"))
        mirrors[WIDGETS].attach(cache.informer(WIDGETS))
        converged(mirrors["configmaps"], cluster, "configmaps")
        stop = threading.Event()
        unexpected: list[BaseException] = []
        reads = [0] * READERS

        def reader(n: int) -> None:
            rng = random.Random(n)
            while not stop.is_set():
                kind = rng.choice(("cm", WIDGETS, "Widget.example.com"))
                try:
                    if rng.random() < 0.8:
                        cache.get(kind, rng.choice(names), "default")
                    else:
                        cache.list(kind, label_selector="x!=y")
                except ObjectNotFoundError:
                    pass
                except Exception as exc:  # documented: the kind is not served while its CRD is gone
                    if not (kind != "cm" and (is_no_match(exc) or isinstance(exc, CacheSyncTimeoutError))):
                        unexpected.append(exc)
                        return
                reads[n] += 1

        threads = [threading.Thread(target=reader, args=(n,), daemon=True) for n in range(READERS)]
        for t in threads:
            t.start()
        rng = random.Random(0)
        deadline = time.monotonic() + SECONDS
        scope = "Namespaced"
        crd_changes = 0
        while time.monotonic() < deadline and not unexpected:
            roll = rng.random()
            name = rng.choice(names)
            if roll < 0.4:
                cluster.apply_object(cm(name, v=str(rng.random())))
            elif roll < 0.55 and cluster.get_object("configmaps", name, "default") is not None:
                cluster.delete_object("configmaps", name, "default")
            elif roll < 0.9 and cluster.get_crd(WIDGETS) is not None:
                ns = "default" if scope == "Namespaced" else None
                cluster.apply_object(widget_obj(name, namespace=ns, size=rng.randrange(5)))
            elif roll < 0.95:
                if cluster.get_crd(WIDGETS) is not None:
                    cluster.delete_crd(WIDGETS)
                else:
                    scope = rng.choice(("Namespaced", "Cluster"))
                    cluster.add_crd(widget(scope=scope))
                crd_changes += 1
        if cluster.get_crd(WIDGETS) is None:
            cluster.add_crd(widget(scope=scope))
        stop.set()
        for t in threads:
            t.join(30)
        assert not [t for t in threads if t.is_alive()], "a reader is stuck"
        assert not unexpected, unexpected[:3]
        assert min(reads) > 0
        for resource, mirror in mirrors.items():
            converged(mirror, cluster, resource, timeout=30)
            assert not mirror.errors, mirror.errors[:5]
        cached = {key(o): o["metadata"]["resourceVersion"] for o in cache.list(WIDGETS)}
        assert cached == {key(o): o["metadata"]["resourceVersion"] for o in cluster.list_objects(WIDGETS)}
        assert len(cache.list("cm")) == len(cluster.list_objects("configmaps"))
        assert crd_changes > 0
