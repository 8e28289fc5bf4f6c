"""The kit as a pytest plugin (registered through the ``pytest11`` entry point: installing the package is enough).

Fixtures, all sharing one :class:`~restmapper.testing.FakeCluster` per test:

- ``restmapper_cluster``: the cluster itself, not connected to anything (add CRDs, inject faults, read the
  request log).
- ``fake_cluster``: the same cluster with every ``requests`` call to ``cluster.base_url`` answered through
  ``responses`` (as pytest-httpx's ``httpx_mock``); needs the ``responses`` package.
- ``fake_cluster_server``: the cluster on a loopback server (a :class:`~restmapper.testing.ServedCluster`), with
  ``$KUBECONFIG`` pointing at its kubeconfig for the test and the ``kubernetes`` packages' import-time default
  kubeconfig location patched, so a no-argument ``kubernetes.config.load_kube_config()`` and
  ``LazyRESTMapper.from_kubeconfig()`` connect to it.
- ``manual_clock``: a :class:`~restmapper.testing.ManualClock`.
- ``mapper``: a :class:`~restmapper.LazyRESTMapper` over the cluster through the in-process transport, with
  ``clock=manual_clock`` and ``miss_refresh_interval=0``, so a lookup right after the cluster changed
  revalidates without any sleep.
- ``object_cache``: a :class:`~restmapper.store.ObjectCache` over the cluster served on loopback (informers watch,
  and the in-process transport of ``mapper`` cannot stream a watch); its own mapper (``object_cache.mapper``) is
  built as ``mapper`` is. Stopped, with every thread it started, after the test.

Choose the cluster with the ``restmapper`` marker, or for a whole run with options::

    @pytest.mark.restmapper(mode="legacy", crds=["deploy/crds/widget.yaml"], builtin=True, embedded=False)

    pytest --restmapper-mode=legacy --restmapper-crd=deploy/crds/widget.yaml

``mode`` is ``aggregated`` (default), ``aggregated-v2beta1`` or ``legacy``; ``crds`` are file paths (YAML, several
documents allowed) or manifests; ``embedded=True`` adds the kit's sample CRDs (cert-manager, gateway-api...).
A marker wins over the options; CRD files from both are installed. A relative path in the marker is read relative
to the test file's directory, else (when no such file is there) relative to the working directory, so a test
passes whichever directory pytest starts in; ``--restmapper-crd`` paths are relative to the directory pytest was
started in. A file found in neither place fails the test's set-up with a message naming each path tried.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from restmapper.mapper import LazyRESTMapper
    from restmapper.store import ObjectCache
    from restmapper.testing import FakeCluster, ManualClock, ServedCluster

# Modules whose KUBE_CONFIG_DEFAULT_LOCATION is read from $KUBECONFIG once, at import.
_KUBECONFIG_DEFAULT_HOLDERS = ("kubernetes.config.kube_config", "kubernetes.aio.config.kube_config",
                               "kubernetes_asyncio.config.kube_config")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("restmapper", "kube-restmapper testing kit")
    group.addoption("--restmapper-mode", default=None, choices=("aggregated", "aggregated-v2beta1", "legacy"),
                    help="discovery mode of the fake cluster fixtures (default: aggregated)")
    group.addoption("--restmapper-crd", action="append", default=[], metavar="PATH",
                    help="a CRD manifest file installed in every fake cluster (repeatable)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "restmapper(mode=..., crds=[...], builtin=True, embedded=False): the fake cluster of the "
                   "kube-restmapper fixtures (fake_cluster, fake_cluster_server, mapper, object_cache)")


def _crd_file(source: Any, bases: list[tuple[Path, str]], where: str) -> Path:
    """The file a relative CRD path names: the first of ``bases`` (``(directory, what it is)``) that holds it.

    Raises:
        pytest.fail: no such file; the message names each path tried.
    """
    path = Path(os.fspath(source))
    tried = [(path, "absolute")] if path.is_absolute() else [(base / path, what) for base, what in bases]
    for candidate, _ in tried:
        if candidate.is_file():
            return candidate
    pytest.fail(f"restmapper {where}: CRD file {os.fspath(source)!r} not found; tried "
                + ", ".join(f"{c} ({what})" for c, what in tried), pytrace=False)


def _manifests(source: Any, bases: list[tuple[Path, str]], where: str) -> list[Mapping[str, Any] | str]:
    if isinstance(source, Mapping):
        return [source]
    import yaml

    text = _crd_file(source, bases, where).read_text(encoding="utf-8")
    return [doc for doc in yaml.safe_load_all(text) if doc]


@pytest.fixture
def restmapper_cluster(request: pytest.FixtureRequest) -> FakeCluster:
    """The test's fake cluster, built from the ``restmapper`` marker and the ``--restmapper-*`` options."""
    from restmapper.testing import FakeCluster, embedded_crd_manifests

    marker = request.node.get_closest_marker("restmapper")
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    unknown = set(options) - {"mode", "crds", "builtin", "embedded"}
    if unknown:
        raise pytest.UsageError(f"unknown restmapper marker arguments: {sorted(unknown)}")
    mode = options.get("mode") or request.config.getoption("restmapper_mode") or "aggregated"
    crds: list[Mapping[str, Any] | str] = []
    if options.get("embedded", False):
        crds.extend(embedded_crd_manifests())
    invoked = request.config.invocation_params.dir
    for source in request.config.getoption("restmapper_crd"):
        crds.extend(_manifests(source, [(invoked, "relative to the directory pytest was started in")],
                               "--restmapper-crd"))
    test_dir = Path(request.node.path).parent
    marker_bases = [(test_dir, "relative to the test file"), (Path.cwd(), "relative to the working directory")]
    for source in options.get("crds", ()):
        crds.extend(_manifests(source, marker_bases, "marker crds"))
    return FakeCluster(builtin=options.get("builtin", True), crds=crds, mode=mode)


@pytest.fixture
def fake_cluster(restmapper_cluster: FakeCluster) -> Iterator[FakeCluster]:
    """The fake cluster, answering every ``requests`` call to ``fake_cluster.base_url`` (needs ``responses``)."""
    with restmapper_cluster.mock():
        yield restmapper_cluster


@pytest.fixture
def fake_cluster_server(restmapper_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch,
                        tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedCluster]:
    """The fake cluster on a loopback server, made the default kubeconfig for the test (see the module doc)."""
    path = tmp_path_factory.mktemp("restmapper-kubeconfig") / "kubeconfig"
    with restmapper_cluster.serve(kubeconfig_path=path) as served:
        monkeypatch.setenv("KUBECONFIG", str(served.kubeconfig_path))
        for name in _KUBECONFIG_DEFAULT_HOLDERS:
            module = sys.modules.get(name)  # a module imported later reads the variable set above
            if module is not None and hasattr(module, "KUBE_CONFIG_DEFAULT_LOCATION"):
                monkeypatch.setattr(module, "KUBE_CONFIG_DEFAULT_LOCATION", str(served.kubeconfig_path))
        yield served


@pytest.fixture
def manual_clock() -> ManualClock:
    """A clock that moves only with ``manual_clock.advance(seconds)``."""
    from restmapper.testing import ManualClock

    return ManualClock()


@pytest.fixture
def mapper(restmapper_cluster: FakeCluster, manual_clock: ManualClock) -> LazyRESTMapper:
    """A mapper over the fake cluster (in-process transport), ``clock=manual_clock``, ``miss_refresh_interval=0``."""
    from restmapper.discovery import DiscoveryClient
    from restmapper.mapper import LazyRESTMapper
    from restmapper.testing import InProcessTransport

    return LazyRESTMapper(DiscoveryClient(InProcessTransport(restmapper_cluster)), miss_refresh_interval=0,
                          clock=manual_clock)


@pytest.fixture
def object_cache(fake_cluster_server: ServedCluster, manual_clock: ManualClock) -> Iterator[ObjectCache]:
    """An ObjectCache over the cluster on a loopback server (watches need one), stopped after the test."""
    from restmapper.discovery import DiscoveryClient
    from restmapper.mapper import LazyRESTMapper
    from restmapper.store import ObjectCache
    from restmapper.transport import RequestsTransport

    mapper = LazyRESTMapper(DiscoveryClient(RequestsTransport(fake_cluster_server.url)), miss_refresh_interval=0,
                            clock=manual_clock)
    cache = ObjectCache(mapper)
    try:
        yield cache
    finally:
        cache.stop()
