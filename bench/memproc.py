"""One memory measurement in a fresh interpreter: ``python -m bench.memproc URL SIDE STATE METHOD [...]``.

SIDE is ``ours`` or ``peer``; STATE is ``one`` (a new client after one lookup) or ``all`` (every group loaded:
ours asks one question per group and expands the ``all`` category; the peer is an EagerDiscoverer's init); both
sides start with empty caches (the peer's cache file is new, in a private temporary directory). METHOD is ``rss``
(growth of the resident set from "modules imported" to "client built", ``/proc/self/statm``) or ``tracemalloc``
(growth of traced memory over a second build, the first one untraced so lazy imports and one-time caches are not
charged). Prints ``{"bytes": N}``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _builder(ns: argparse.Namespace, tmp: str) -> Callable[[], Any]:
    from kubernetes import client as k8s_client
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.discovery import EagerDiscoverer, LazyDiscoverer

    from bench.cluster import our_mapper
    from bench.shapes import group_shapes
    from restmapper.model import GroupKind, GroupVersionResource

    counter = iter(range(1_000_000))

    def peer_client(eager: bool) -> Any:
        path = os.path.join(tmp, f"peer-{next(counter)}.json")
        api = k8s_client.ApiClient(k8s_client.Configuration(host=ns.url))
        discoverer = EagerDiscoverer if eager else LazyDiscoverer
        return DynamicClient(api, cache_file=path, discoverer=discoverer)  # type: ignore[no-untyped-call]

    if ns.side == "ours" and ns.state == "one":
        def build() -> Any:
            mapper = our_mapper(ns.url)
            mapper.rest_mapping(GroupKind(ns.group, ns.kind), ns.version)
            return mapper
    elif ns.side == "ours":
        shapes = group_shapes(ns.groups)

        def build() -> Any:
            mapper = our_mapper(ns.url)
            for g in shapes:
                k = g.kinds[0]
                mapper.kind_for(GroupVersionResource(g.name, k.versions[0], k.plural))
            mapper.expand_category("all")
            mapper.resolve("namespaces")  # a question naming no group: the table of such answers is built too
            return mapper
    elif ns.state == "one":
        def build() -> Any:
            client = peer_client(False)
            client.resources.get(api_version=f"{ns.group}/{ns.version}", kind=ns.kind)
            return client
    else:
        def build() -> Any:
            return peer_client(True)
    return build


def measure(ns: argparse.Namespace) -> int:
    """Return the bytes the built client holds, per ``ns.method``."""
    with tempfile.TemporaryDirectory(prefix="restmapper-bench-mem-") as tmp:
        build = _builder(ns, tmp)
        if ns.method == "rss":
            gc.collect()
            before = _rss()
            obj = build()
            gc.collect()
            after = _rss()
            del obj
            return after - before
        obj = build()
        del obj
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            obj = build()
            gc.collect()
            alive = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        del obj
        return alive - base


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, measure, print ``{"bytes": N}``."""
    parser = argparse.ArgumentParser(prog="python -m bench.memproc")
    parser.add_argument("url")
    parser.add_argument("side", choices=("ours", "peer"))
    parser.add_argument("state", choices=("one", "all"))
    parser.add_argument("method", choices=("rss", "tracemalloc"))
    parser.add_argument("--groups", type=int, default=0)
    parser.add_argument("--group", default="")
    parser.add_argument("--kind", default="")
    parser.add_argument("--version", default="")
    ns = parser.parse_args(argv)
    print(json.dumps({"bytes": measure(ns)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
