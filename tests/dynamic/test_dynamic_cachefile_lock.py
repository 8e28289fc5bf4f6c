"""Bounded time (DESIGN 6): with ``cache_file``, lookups never wait on the file.

Another process holding the cache file's lock, or a lock file another user left behind, used to block every lookup
of a :class:`SelfHealingDiscoverer` forever (``flock`` without a timeout inside ``get()``). Now the file is written
by a background thread that waits a bounded time for the lock and logs when it skips.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import filelock
import pytest
from helpers.dynamic import api_client
from kubernetes.dynamic import DynamicClient

from restmapper.dynamic import SelfHealingDiscoverer, _cachefile
from restmapper.testing import FakeCluster

SAFETY = 10.0


def _lookup_in_thread(dc: DynamicClient) -> threading.Thread:
    result: dict[str, str] = {}

    def run() -> None:
        result["name"] = dc.resources.get(api_version="apps/v1", kind="Deployment").name

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.result = result  # type: ignore[attr-defined]
    return thread


def test_a_lookup_never_waits_for_a_lock_another_process_holds(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="restmapper.dynamic")
    path = tmp_path / "cache.json"
    holder = filelock.FileLock(str(path) + ".lock", thread_local=False)  # another process, as far as flock knows
    with FakeCluster.embedded().serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        with holder:
            # The write waits far longer than the lookup may take: only a lookup that does not wait can finish.
            dc = DynamicClient(api_client(s.url), cache_file=str(path),
                               discoverer=lambda c, f: SelfHealingDiscoverer(c, f, cache_file_lock_timeout=60.0))
            thread = _lookup_in_thread(dc)
            thread.join(SAFETY)
            assert not thread.is_alive(), "the lookup waited on the cache file's lock"
            assert thread.result == {"name": "deployments"}  # type: ignore[attr-defined]
            assert not path.exists()
        # Released: the pending write goes through.
        assert dc.resources.flush_cache_file(SAFETY)
        assert path.exists()


def test_a_busy_lock_skips_the_write_after_a_bounded_wait_logs_it_and_retries_later(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="restmapper.dynamic")
    path = tmp_path / "cache.json"
    holder = filelock.FileLock(str(path) + ".lock", thread_local=False)
    with FakeCluster.embedded().serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), cache_file=str(path),
                           discoverer=lambda c, f: SelfHealingDiscoverer(c, f, cache_file_lock_timeout=0.05))
        with holder:
            assert dc.resources.get(kind="Pod").name == "pods"
            assert dc.resources.flush_cache_file(SAFETY)
        assert not path.exists()
        assert "stayed busy" in caplog.text and str(path) in caplog.text
        # The skipped snapshot is written by a later lookup, once the lock is free.
        assert dc.resources.get(api_version="apps/v1", kind="Deployment").name == "deployments"
        assert dc.resources.flush_cache_file(SAFETY)
    doc = _cachefile.read_snapshot(str(path), dc.resources._file.server)
    assert doc is not None and {g["name"] for g in doc["groups"]} >= {"", "apps"}


@pytest.mark.parametrize("planted", ["directory", "symlink", "unreadable"])
def test_a_lock_file_left_by_another_user_skips_the_write(tmp_path: Path, planted: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="restmapper.dynamic")
    path = tmp_path / "cache.json"
    lock = Path(str(path) + ".lock")
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    if planted == "directory":
        lock.mkdir()
    elif planted == "symlink":
        lock.symlink_to(victim)
    else:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            pytest.skip("root reads any file: an unreadable lock file cannot be planted")
        lock.write_text("")
        lock.chmod(0)
    with FakeCluster.embedded().serve(kubeconfig_path=tmp_path / "kubeconfig") as s:
        dc = DynamicClient(api_client(s.url), cache_file=str(path),
                           discoverer=lambda c, f: SelfHealingDiscoverer(c, f, cache_file_lock_timeout=0.05))
        thread = _lookup_in_thread(dc)
        thread.join(SAFETY)
        assert not thread.is_alive() and thread.result == {"name": "deployments"}  # type: ignore[attr-defined]
        assert dc.resources.flush_cache_file(SAFETY)
    assert not path.exists()
    assert "not writing the discovery cache file" in caplog.text
    assert victim.read_text() == "keep me"


def test_restmapper_dynamic_imports_without_fcntl() -> None:
    """The drop-in imports on every platform (the lock is filelock's, not a bare ``fcntl``)."""
    code = ("import sys, warnings; warnings.simplefilter('ignore'); sys.modules['fcntl'] = None; "
            "import restmapper.dynamic; print('imported')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "imported", done.stderr
