"""DESIGN 8.10: eight processes sharing one on-disk cache see no torn reads and no lost updates."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import stat
from pathlib import Path

from restmapper.dynamic import _cachefile

SERVER = "server-identity"
ROUNDS = 25


def _writer(path: str, n: int, start: mp.synchronize.Event) -> None:  # type: ignore[name-defined]
    start.wait(30)
    for r in range(ROUNDS):
        doc = {"format": _cachefile.FORMAT, "server": SERVER, "version": {"gitVersion": "v1.35.0"},
               "groups": [{"name": f"g{n}.example.com", "versions": ["v1"], "preferred": "v1",
                           "resources": {"v1": [{"name": f"things{r}", "kind": "Thing"}]}}]}
        assert _cachefile.merge_snapshot(path, SERVER, doc)


def _reader(path: str, start: mp.synchronize.Event, torn: mp.Value) -> None:  # type: ignore[name-defined]
    start.wait(30)
    for _ in range(ROUNDS * 8):
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            continue
        try:
            json.loads(data)
        except ValueError:
            with torn.get_lock():
                torn.value += 1


def test_eight_processes_share_one_cache_file(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    path = str(tmp_path / "discovery.json")
    start = ctx.Event()
    torn = ctx.Value("i", 0)
    procs = [ctx.Process(target=_writer, args=(path, n, start)) for n in range(8)]
    procs += [ctx.Process(target=_reader, args=(path, start, torn)) for _ in range(2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    assert torn.value == 0
    doc = _cachefile.read_snapshot(path, SERVER)
    assert doc is not None
    names = sorted(g["name"] for g in doc["groups"])
    assert names == sorted(f"g{n}.example.com" for n in range(8))  # nobody's groups were lost
    assert all(g["resources"]["v1"][0]["name"] == f"things{ROUNDS - 1}" for g in doc["groups"])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_a_fifo_or_a_deeply_nested_file_is_a_miss_not_a_hang_or_crash(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert _cachefile.read_snapshot(str(fifo), SERVER) is None  # opening a FIFO without O_NONBLOCK blocks forever
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert _cachefile.read_snapshot(str(deep), SERVER) is None
