"""A singular guessed from a kind is no real name for the shortcut guard, on every lookup path.

Rule (client-go ``shortcutExpander.expandResourceShortcut`` over ``NewDiscoveryRESTMapper``): a short name is not
expanded when a resource has the argument as its ``name`` or its server-given ``singularName``; a singular the
mapper guesses from the kind (the server left ``singularName`` empty) does not count. Once the guard let a short
name through, the guessed singular still matches by the resource reading (the discovery mapper registers it).

Every place that asks "is this a real name" is checked here: the static shortcut expander, the direct path of a
no-dot argument, the precomputed answer table, the core-first shortcut of ``resolve``, a dotted argument's group,
and rule 5 (an answer by a guessed singular came after the short-name step: an unreadable short-name holder makes
it unsure). kubectl is the oracle where installed.
"""

from __future__ import annotations

import shutil
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from restmapper import GroupDiscoveryError, LazyRESTMapper, PartialDiscoveryWarning
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import StaticRESTMapper
from restmapper.mapper.resolve import resolve
from restmapper.model import APIResource, GroupVersionResource
from restmapper.testing import FakeCluster, InProcessTransport

MODES = ("legacy", "aggregated")
KUBECTL = shutil.which("kubectl")


def _res(name: str, kind: str, singular: str, short: tuple[str, ...] = ()) -> APIResource:
    return APIResource(name, singular, True, kind, ("get", "list"), short)


def _cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster(builtin=True, mode=mode)
    # a.example.com ranks first and leaves singularName empty: its guessed singular is "gadget".
    cluster.add_api_resources("a.example.com/v1", [_res("gadgets", "Gadget", "")], priority=100)
    cluster.add_api_resources("b.example.com/v1", [_res("widgets", "Widget", "widget", ("gadget",))], priority=50)
    # Core with a resource whose singular is guessed ("gizmo"), claimed as a short name by another group.
    cluster.add_api_resources("v1", [_res("gizmos", "Gizmo", "")])
    cluster.add_api_resources("d.example.com/v1", [_res("things", "Thing", "thing", ("gizmo",))], priority=40)
    # One group with both: a guessed singular and another resource's short name of the same spelling.
    cluster.add_api_resources("e.example.com/v1", [_res("sprockets", "Sprocket", ""),
                                                   _res("cogs", "Cog", "cog", ("sprocket",))], priority=30)
    return cluster


def _mapper(cluster: FakeCluster) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))


def kubectl_paths(cluster: FakeCluster, arg: str, tmp: Path) -> list[str]:
    """The list URLs ``kubectl get ARG -v=6`` requests against ``cluster`` served on loopback (its answer)."""
    assert KUBECTL is not None
    with cluster.serve() as served:
        proc = subprocess.run([KUBECTL, "get", arg, "-v=6", "--kubeconfig", str(served.kubeconfig_path),
                               "--cache-dir", str(tmp / "cache")], capture_output=True, text=True, timeout=60,
                              check=False)
    return [urlsplit(line.split(" GET ", 1)[1].split()[0]).path for line in proc.stderr.splitlines()
            if " GET " in line and "limit=500" in line]


def list_path(want: GroupVersionResource) -> str:
    """The URL kubectl lists ``want`` at in namespace ``default`` (the fake cluster's resources are namespaced)."""
    prefix = "/api/v1" if not want.group else f"/apis/{want.group}/{want.version}"
    return f"{prefix}/namespaces/default/{want.resource}"


def outcome(call: Callable[[], object]) -> tuple[object, bool]:
    """``(value, unsure)``: what ``call`` returned (or the GroupDiscoveryError it raised), and whether it raised one
    or emitted a PartialDiscoveryWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
        except GroupDiscoveryError as exc:
            return exc, True
    return value, any(issubclass(w.category, PartialDiscoveryWarning) for w in caught)


EXPECTED = {
    "gadget": GroupVersionResource("b.example.com", "v1", "widgets"),  # the short name: no real "gadget"
    "gadgets": GroupVersionResource("a.example.com", "v1", "gadgets"),
    "gizmo": GroupVersionResource("d.example.com", "v1", "things"),  # beats core's guessed singular
    "gizmos": GroupVersionResource("", "v1", "gizmos"),
    "gadget.a.example.com": GroupVersionResource("a.example.com", "v1", "gadgets"),  # no short name in a
    "gadget.b.example.com": GroupVersionResource("b.example.com", "v1", "widgets"),
    # The guard and short names compare case-sensitively; the resource reading lower-cases: the guessed singular.
    "Gadget": GroupVersionResource("a.example.com", "v1", "gadgets"),
    "sprocket": GroupVersionResource("e.example.com", "v1", "cogs"),
    "sprocket.e.example.com": GroupVersionResource("e.example.com", "v1", "cogs"),
    "sprocket.v1.e.example.com": GroupVersionResource("e.example.com", "v1", "cogs"),
    "sprockets.e.example.com": GroupVersionResource("e.example.com", "v1", "sprockets"),
}


@pytest.mark.parametrize("mode", MODES)
def test_static_expander_and_every_lookup_path_agree(mode: str) -> None:
    cluster = _cluster(mode)
    mapper = _mapper(cluster)
    for arg, want in EXPECTED.items():  # cold, one fresh mapper each: the full path (and the core-first gate)
        assert _mapper(cluster).resolve(arg).resource == want, arg
    mapper.expand_category("all")  # every group indexed
    for arg, want in EXPECTED.items():  # first time on a loaded index
        assert mapper.resolve(arg).resource == want, arg
    for arg, want in EXPECTED.items():  # memoized
        assert mapper.resolve(arg).resource == want, arg


@pytest.mark.parametrize("mode", MODES)
def test_the_static_mapper_applies_the_same_guard(mode: str) -> None:
    mapper = _mapper(_cluster(mode))
    mapper.expand_category("all")
    static = StaticRESTMapper([i for n in mapper._groups.index.names
                               if (i := mapper._groups.index.index(n)) is not None])
    for arg, want in EXPECTED.items():
        assert resolve(arg, static).mapping.resource == want, arg


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_by_a_guessed_singular_is_unsure_while_a_short_name_holder_is_unreadable(mode: str) -> None:
    cluster = _cluster(mode)
    cluster.set_stale("b.example.com/v1")
    found, unsure = outcome(lambda: _mapper(cluster).resolve("gadget"))
    assert unsure, "a guessed singular answered quietly"
    if not isinstance(found, GroupDiscoveryError):  # refused is as good as warned
        assert found == _mapper(_cluster(mode)).resolve("gadgets")  # a.example.com's gadgets, all it could read
    # A real name stays quiet: the short-name step comes after it.
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialDiscoveryWarning)
        assert _mapper(cluster).resolve("gadgets").resource.group == "a.example.com"


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed (it is the oracle here)")
@pytest.mark.parametrize("mode", MODES)
def test_kubectl_agrees(mode: str, tmp_path: Path) -> None:
    assert KUBECTL is not None
    cluster = _cluster(mode)
    for arg, want in EXPECTED.items():
        assert kubectl_paths(cluster, arg, tmp_path) == [list_path(want)], arg
