"""A kit cluster served from its own process: ``python -m bench.served_proc (--groups N | --configmaps N)``.

Builds either the benchmark cluster of ``N`` CRD groups (:func:`bench.cluster.build_cluster`, root documents
primed in ``--mode``) or ``N`` ConfigMaps (:func:`bench.store_bench.build`), serves it on 127.0.0.1 and prints one
JSON line ``{"url": ..., "kubeconfig": ...}``. Then it reads commands from stdin, one a line, and answers each
with one JSON line:

- ``watchers K``: wait (up to 30 s) until ``K`` watch streams are open; ``{"ok": true|false}``;
- ``preload K``: encode ``K`` MODIFIED events of the ConfigMaps now (as the store bench's scripted transport
  does) and answer the next watch of ConfigMaps with exactly those lines, sent as fast as the socket takes them,
  then hold the stream open; ``{"ok": true}``;
- ``write K``: make ``K`` modifications (their ``data.INDEX``) to the ConfigMaps in turn, as fast as the kit
  writes; ``{"seconds": S}`` (the time the writes took in this process).

It exits at the end of stdin. The client under test then talks to it over a real socket, with no thread of the
server sharing its interpreter (its GIL).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _reply(value: dict[str, Any]) -> None:
    print(json.dumps(value), flush=True)


class _Preloaded:
    """A watch body: pre-encoded event lines, then an open stream until the client goes (a kit StreamBody)."""

    def __init__(self, lines: list[bytes]) -> None:
        self.lines = lines

    def stream(self, should_stop: Callable[[], bool]) -> Iterator[bytes]:
        yield from self.lines
        while not should_stop():
            time.sleep(0.05)

    def collect(self) -> bytes:
        return b"".join(self.lines)


def _arm(cluster: Any, count: int) -> None:
    """Answer the next ConfigMap watch of ``cluster`` with ``count`` pre-encoded MODIFIED events."""
    objs = cluster.list_objects("configmaps")
    base = int(cluster.resource_version)
    lines = []
    for i in range(count):
        obj = json.loads(json.dumps(objs[i % len(objs)]))
        obj["metadata"]["resourceVersion"] = str(base + 1 + i)
        obj["data"]["INDEX"] = str(i)
        lines.append(json.dumps({"type": "MODIFIED", "object": obj}).encode() + b"\n")
    inner = cluster.handle_stream

    def handle_stream(method: str, path: str, query: Any, headers: Any, body: bytes = b"") -> Any:
        if path == "/api/v1/configmaps" and query.get("watch") in ("1", "true"):
            cluster.handle_stream = inner
            return 200, {"Content-Type": "application/json"}, _Preloaded(lines)
        return inner(method, path, query, headers, body)

    cluster.handle_stream = handle_stream


def main(argv: list[str] | None = None) -> int:
    """Serve until stdin ends; return 0."""
    parser = argparse.ArgumentParser(prog="python -m bench.served_proc")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--groups", type=int, help="serve the benchmark cluster of this many CRD groups")
    what.add_argument("--configmaps", type=int, help="serve this many ConfigMaps (the store bench's cluster)")
    parser.add_argument("--mode", choices=("aggregated", "legacy"), default="aggregated")
    ns = parser.parse_args(argv)
    if ns.groups is not None:
        from bench.cluster import build_cluster, prime

        cluster = build_cluster(ns.groups).cluster
        cluster.mode = ns.mode
        prime(cluster)
    else:
        from bench.store_bench import build

        cluster = build(ns.configmaps)
    with tempfile.TemporaryDirectory(prefix="restmapper-bench-served-") as tmp, \
            cluster.serve(host="127.0.0.1", kubeconfig_path=Path(tmp) / "kubeconfig") as served:
        _reply({"url": served.url, "kubeconfig": str(served.kubeconfig_path)})
        for line in sys.stdin:
            command, _, arg = line.strip().partition(" ")
            if command == "watchers":
                _reply({"ok": cluster.wait_for_watchers(int(arg), 30)})
            elif command == "preload":
                _arm(cluster, int(arg))
                _reply({"ok": True})
            elif command == "write":
                objs = cluster.list_objects("configmaps")
                for obj in objs:
                    obj["metadata"].pop("resourceVersion", None)
                t0 = time.perf_counter()
                for i in range(int(arg)):
                    obj = objs[i % len(objs)]
                    obj["data"]["INDEX"] = f"s{i}"
                    cluster.apply_object(obj)
                _reply({"seconds": time.perf_counter() - t0})
            else:
                _reply({"error": f"unknown command {line.strip()!r}"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
