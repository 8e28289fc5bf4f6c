"""Shared pytest fixtures.

The tests are laid out by behaviour, one folder per area:
``mapper/`` (mapper semantics, kubectl's readings of an argument, question shapes), ``healing/`` (404 eviction,
refetch, resend), ``certainty/`` (never confidently wrong, partial discovery: DESIGN 5.10), ``cache/`` (discovery
cache, freshness, single flights, renewal), ``protocol/`` (discovery client, wire, transport, credentials),
``dynamic/`` (the ``kubernetes.dynamic`` drop-ins), ``store/`` (object cache, informers, reflector), ``watch/``
(CRD/APIService watcher), ``client/`` (the write client), ``leader/`` (leader election), ``workqueue/``, ``kit/``
(``restmapper.testing`` and the pytest plugin), ``cli/``, ``api/`` (public surface: exports, errors, options,
layer interfaces), ``integrations/`` (kr8s/lightkube adapters, metrics), ``docs/`` (README, examples, release) and
``benchmarks/`` (the bench runs and reports). Helpers shared across areas are the ``helpers`` package
(``from helpers.store import object_cache``; pytest puts ``tests/`` on the path).

Fixture data (real discovery documents and CRD manifests) lives outside the repository, in ``<repo>/../shared/
fixtures``; it is read from there, never copied in. In a fresh clone without that folder, tests that need it skip.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests run the same examples on every run (derandomize) and never fail on the machine's speed: a loaded
# CI machine tripped the "input generation is slow" health check in round-trip tests. A longer, random run is
# ``HYPOTHESIS_PROFILE=explore python -m pytest``.
settings.register_profile("default", derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("explore", deadline=None, max_examples=2000,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

FIXTURES_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
"""``<repo>/../shared/fixtures``: CI always has it; a user's fresh clone usually does not."""


def require_fixtures() -> Path:
    """Return the fixtures folder, or skip the calling test with a reason when it is absent."""
    if not FIXTURES_DIR.is_dir():
        pytest.skip(f"fixture folder {FIXTURES_DIR} is absent (it sits next to the repository in CI; "
                    "see the README, Set-up)")
    return FIXTURES_DIR


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Path to ``<repo>/../shared/fixtures`` (``discovery/`` and ``crds/`` under it); skips when absent."""
    return require_fixtures()


@pytest.fixture(autouse=True)
def _not_in_a_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide whether they run "in a pod": a CI runner that really is one must not change their answers."""
    for name in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session", autouse=True)
def _private_tempdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point ``tempfile`` (and child processes, through ``TMPDIR``) at a folder of this session's own.

    Other test sessions on the machine then cannot make :func:`_no_leaked_temp_dirs` see their folders.
    """
    private = tmp_path_factory.mktemp("tempdir")
    saved_env, saved_tempdir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(private)
    tempfile.tempdir = str(private)
    try:
        yield private
    finally:
        tempfile.tempdir = saved_tempdir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env


@pytest.fixture(autouse=True)
def _no_leaked_temp_dirs(_private_tempdir: Path) -> Iterator[None]:
    """A test must leave no ``restmapper-*`` temporary folder behind (the kit's and ``serve``'s kubeconfigs)."""
    before = set(_private_tempdir.glob("restmapper-*"))
    yield
    left = sorted(set(_private_tempdir.glob("restmapper-*")) - before)
    for path in left:
        shutil.rmtree(path, ignore_errors=True)
    if left:
        pytest.fail(f"the test left temporary folders behind: {[p.name for p in left]}")


@pytest.fixture(params=[pytest.param(True, id="watch-list"), pytest.param(False, id="list")])
def watch_list(request: pytest.FixtureRequest) -> bool:
    """The object cache's ``watch_list`` option, both ways: a test taking it runs once syncing by WatchList and once
    by paginated lists (a relist must tell handlers the same story in both modes)."""
    return bool(request.param)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection loaded (every module of the package, kubernetes, hypothesis...) out of the cyclic
    garbage collector's reach (``gc.freeze()``): it lives as long as the session, and without this every full
    collection a test causes or asks for (``gc.collect()`` before a memory measurement) traverses all of it again."""
    gc.collect()
    gc.freeze()
