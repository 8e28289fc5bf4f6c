"""A one-shot command runs without cyclic garbage collection (its heap is long-lived) and leaves the collector as it
found it; the console script, which exits next, freezes that heap so that shutdown does not traverse it."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping

import pytest

from restmapper.cli import Session, run
from restmapper.discovery import DiscoveryClient
from restmapper.testing import FakeCluster, InProcessTransport
from restmapper.transport import Response


class _Recording(InProcessTransport):
    """Records whether the collector was enabled at each request of the command."""

    def __init__(self, cluster: FakeCluster) -> None:
        super().__init__(cluster)
        self.collecting: list[bool] = []

    def get(self, path: str, headers: Mapping[str, str] | None = None, *, params: Mapping[str, str] | None = None,
            timeout: float | None = None) -> Response:
        self.collecting.append(gc.isenabled())
        return super().get(path, headers, params=params, timeout=timeout)


@pytest.fixture
def frozen_before() -> Iterator[int]:
    count = gc.get_freeze_count()
    yield count
    # run() never freezes this process's heap (freezing moves every tracked object: the count would grow by
    # thousands). The suite froze what collection loaded, and frozen objects freed since only lower the count.
    assert gc.get_freeze_count() <= count


@pytest.mark.parametrize("argv", [["resolve", "deploy"], ["api-resources"]])
def test_command_runs_without_collection_and_restores_it(argv: list[str], frozen_before: int) -> None:
    transport = _Recording(FakeCluster(builtin=True))
    assert gc.isenabled()
    code = run(argv, session=Session(DiscoveryClient(transport)), stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0 and transport.collecting and not any(transport.collecting)
    assert gc.isenabled()


def test_a_caller_that_turned_collection_off_keeps_it_off(frozen_before: int) -> None:
    transport = _Recording(FakeCluster(builtin=True))
    gc.disable()
    try:
        code = run(["resolve", "deploy"], session=Session(DiscoveryClient(transport)), stdout=io.StringIO(),
                   stderr=io.StringIO())
        assert code == 0 and not gc.isenabled()
    finally:
        gc.enable()


def test_failed_command_restores_collection(frozen_before: int) -> None:
    transport = _Recording(FakeCluster(builtin=True))
    err = io.StringIO()
    code = run(["resolve", "nosuchthing"], session=Session(DiscoveryClient(transport)), stdout=io.StringIO(),
               stderr=err)
    assert code == 1 and err.getvalue().startswith("error: ") and gc.isenabled()


def test_console_entry_freezes_the_heap_at_the_end_and_keeps_collecting() -> None:
    code = (
        "import gc, json, sys\n"
        "from restmapper.cli import main\n"
        "sys.argv = ['restmapper', 'resolve', '--embedded', 'deploy']\n"
        "before = gc.get_freeze_count()\n"
        "code = main()\n"
        "print(json.dumps([code, before, gc.get_freeze_count(), gc.isenabled()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    code_, before, after, enabled = json.loads(out.stdout.strip().splitlines()[-1])
    assert code_ == 0 and before == 0 and after > 10_000 and enabled


def test_main_with_arguments_does_not_freeze(frozen_before: int, capsys: pytest.CaptureFixture[str]) -> None:
    from restmapper.cli import main

    assert main(["resolve", "--embedded", "deploy"]) == 0
    assert "deployments" in capsys.readouterr().out and gc.isenabled()
