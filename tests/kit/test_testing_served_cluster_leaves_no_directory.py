"""A served cluster removes the temporary directory holding its kubeconfig (and TLS material) when it stops:
when its block exits, normally or by an exception, and at interpreter exit when the block never exits (a server
held open by a daemon thread)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from restmapper.testing import FakeCluster


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_the_kubeconfig_directory_is_removed_when_the_block_exits(tls: bool) -> None:
    with FakeCluster().serve(tls=tls) as served:
        directory = served.kubeconfig_path.parent
        assert served.kubeconfig_path.is_file()
    assert not directory.exists()


def test_the_kubeconfig_directory_is_removed_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError, match="boom"), FakeCluster().serve() as served:
        directory = served.kubeconfig_path.parent
        raise RuntimeError("boom")
    assert not directory.exists()


def test_a_server_still_open_at_interpreter_exit_leaves_no_directory(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import threading
        from restmapper.testing import FakeCluster

        ready = threading.Event()

        def hold():
            with FakeCluster().serve() as served:
                print(served.kubeconfig_path, flush=True)
                ready.set()
                threading.Event().wait()

        threading.Thread(target=hold, daemon=True).start()
        ready.wait(60)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    kubeconfig = Path(done.stdout.strip())
    assert kubeconfig.parent.parent == tmp_path
    assert not kubeconfig.parent.exists()
    assert list(tmp_path.iterdir()) == []
