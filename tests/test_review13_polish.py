"""Review 13 (new user): suggestions that resolve to what was meant, CLI messages in CLI terms, kubectl's refusal of
empty and space-padded types, marker CRD paths relative to the test file, clear argument errors."""

from __future__ import annotations

import io
import json
import re

import pytest

from restmapper import LazyRESTMapper
from restmapper.cli import run
from restmapper.discovery import DiscoveryClient
from restmapper.errors import InvalidArgumentError, is_no_match
from restmapper.mapper._args import require_resource_type
from restmapper.testing import FakeCluster, InProcessTransport

CLUSTER = FakeCluster.embedded()


def _mapper() -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(CLUSTER)))


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(["resolve", "--embedded", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# --- F2, F3: an apiVersion with a type is told the one argument that names that type ----------------------------

def _served() -> list[tuple[str, str, str, str]]:
    """(group, version, plural, Kind) of every resource the embedded cluster serves (preferred versions)."""
    out = io.StringIO()
    assert run(["api-resources", "--embedded", "-o", "json"], stdout=out, stderr=io.StringIO()) == 0
    return [(r["group"], r["apiVersion"].rpartition("/")[2], r["name"], r["kind"]) for r in json.loads(out.getvalue())]


@pytest.mark.parametrize("shape", ["{gv}/{name}", "{gv} {name}"])
def test_every_suggestion_for_an_api_version_and_type_resolves_to_that_type(shape: str) -> None:
    mapper = _mapper()
    served = _served()
    assert len(served) > 90
    for group, version, plural, kind in served:
        gv = f"{group}/{version}" if group else version
        for name in (plural, kind):
            arg = shape.format(gv=gv, name=name)
            if " " in arg and name == plural:
                continue  # a manifest's pair carries a kind
            for command in ("restmapper resolve", ""):
                with pytest.raises(InvalidArgumentError) as info:
                    require_resource_type("resolve", arg, command=command)
                text = str(info.value)
                if command:
                    assert "()" not in text and "rest_mapping" not in text, text
                    suggestion = text.rsplit("restmapper resolve ", 1)[1]
                else:
                    suggestion = re.findall(r'resolve\("([^"]+)"\)', text)[0]
                got = mapper.resolve(suggestion).group_version_kind
                assert (got.group, got.version, got.kind) == (group, version, kind), (arg, text)


@pytest.mark.parametrize(("argv", "suggestion"), [
    (["apps/v1/Deployment"], "Deployment.v1.apps"), (["apps/v1/deployments"], "deployments.v1.apps"),
    (["apps/v1 Deployment"], "Deployment.v1.apps"), (["apps/v1", "Deployment"], "Deployment.v1.apps"),
    (["v1/pods"], "pods"), (["v1 Pod"], "Pod"),
])
def test_cli_suggests_a_command_that_resolves_to_the_meant_type(argv: list[str], suggestion: str) -> None:
    code, out, err = _cli(*argv)
    assert code == 1 and f"restmapper resolve {suggestion}\n" in err, err
    assert "resolve_all" not in err and "rest_mapping" not in err and "()" not in err, err
    assert "Application" not in out
    code, out, err = _cli("--no-headers", suggestion)
    assert code == 0 and err == ""
    kind = "Deployment" if "apps" in suggestion else "Pod"
    assert out.split()[4 if "apps" in suggestion else 3] == kind, out
    code, out, _ = _cli("-o", "json", *argv)
    [row] = json.loads(out)
    assert row["reason"] == "InvalidArgument" and row["error"].endswith(f"restmapper resolve {suggestion}")


def test_an_api_version_alone_is_not_read_as_type_name() -> None:
    code, _, err = _cli("apps/v1")
    assert code == 1 and "restmapper resolve KIND.v1.apps" in err and "restmapper resolve apps\n" not in err, err


def test_library_messages_keep_naming_python_calls() -> None:
    with pytest.raises(InvalidArgumentError, match=r'resolve\("Deployment\.v1\.apps"\)') as info:
        _mapper().resolve("apps/v1/Deployment")
    assert not is_no_match(info.value)
    with pytest.raises(InvalidArgumentError, match=r'from_api_version_and_kind\("apps/v1", "Deployment"\)'):
        _mapper().resolve("apps/v1 Deployment")


# --- F8: empty and space-padded types fail as kubectl fails them ---------------------------------------------------

@pytest.mark.parametrize(("arg", "kubectl"), [
    ("deploy ", "deploy "), (" deploy", " deploy"), ("svc,,cm", ""), ("svc,", ""), (",svc", ""), (",", ""),
    ("svc, cm", " cm"), ("deploy , svc", "deploy "),
])
def test_empty_or_padded_types_fail_as_a_whole_with_kubectls_message(arg: str, kubectl: str) -> None:
    # kubectl 1.32 (kubectl get ARG -A against restmapper serve): error: the server doesn't have a resource type "X"
    message = f'the server doesn\'t have a resource type "{kubectl}"'
    code, out, err = _cli("--no-headers", arg)
    assert code == 1 and out == "", out
    assert err.startswith(f"error: {message}"), err
    for method in ("resolve_all", "resolve"):
        if method == "resolve" and "," in arg:
            continue
        with pytest.raises(InvalidArgumentError) as info:
            getattr(_mapper(), method)(arg)
        assert str(info.value).startswith(message) and not is_no_match(info.value), str(info.value)


def test_an_empty_element_is_refused_before_any_request() -> None:
    cluster = FakeCluster.embedded()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)))
    with pytest.raises(InvalidArgumentError, match=r'resolve_all\("svc,cm"\)'):
        mapper.resolve_all("svc,,cm")
    assert cluster.requests == []


# --- F6, F7: the object-cache and adapters snippets run as written against the embedded cluster ----------------

def _readme_block(marker: str) -> str:
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    return next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if marker in b)


@pytest.mark.parametrize("adapters", [False, True])
def test_readme_object_cache_and_adapters_snippets_run_as_written(monkeypatch: pytest.MonkeyPatch,
                                                                   adapters: bool) -> None:
    if adapters:
        pytest.importorskip("kr8s")
        pytest.importorskip("lightkube")
    from kubernetes import config, dynamic

    with FakeCluster.embedded().serve() as served:
        monkeypatch.setenv("KUBECONFIG", str(served.kubeconfig_path))
        dc = dynamic.DynamicClient(config.new_client_from_config(config_file=str(served.kubeconfig_path)))
        certs = dc.resources.get(api_version="cert-manager.io/v1", kind="Certificate")
        updated = dc.create(certs, namespace="default", body={
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c1", "labels": {
                "tier": "gold"}}, "spec": {"secretName": "s", "issuerRef": {"name": "i"}}}).to_dict()
        ns: dict[str, object] = {"updated": updated}
        if adapters:
            exec(_readme_block("kr8s_class(mapping)"), ns)
            assert [c.metadata.name for c in ns["certs"]] == ["c1"]  # type: ignore[attr-defined]
            assert any("/apis/cert-manager.io/v1/namespaces/default/certificates" in r.path
                       for r in served.cluster.requests if r.method == "GET")
        else:
            exec(_readme_block("ObjectCache.from_kubeconfig"), ns)
            assert ns["web"] is None
            assert [g["metadata"]["name"] for g in ns["gold"]] == ["c1"]  # type: ignore[attr-defined]


# --- F11: a busy port is named ----------------------------------------------------------------------------------

def test_serve_on_a_busy_port_names_host_and_port() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out, err = io.StringIO(), io.StringIO()
        assert run(["serve", "--port", str(port)], stdout=out, stderr=err) == 1
    assert f"127.0.0.1:{port}" in err.getvalue() and "Address already in use" in err.getvalue(), err.getvalue()


# --- F9: the drop-in refuses a list where upstream takes one string -----------------------------------------------

def _drop_in() -> object:
    from kubernetes import client as kclient
    from kubernetes.dynamic import DynamicClient

    from restmapper.dynamic import SelfHealingDiscoverer
    from restmapper.testing import ManualClock

    config = kclient.Configuration(host="https://kube.restmapper.test")
    return DynamicClient(kclient.ApiClient(config), discoverer=lambda c, f: SelfHealingDiscoverer(
        c, f, transport=InProcessTransport(CLUSTER), observe_requests=False, clock=ManualClock())).resources


@pytest.mark.parametrize("kwargs", [{"api_version": "apps/v1", "kind": ["Deployment"]}, {"kind": ("Deployment",)},
                                    {"api_version": ["apps/v1"], "kind": "Deployment"}, {"group": ["apps"]},
                                    {"kind": 5}])
def test_drop_in_refuses_a_non_string_where_upstream_takes_one(kwargs: dict[str, object]) -> None:
    resources = _drop_in()
    for method in ("get", "search"):
        with pytest.raises(TypeError, match=r"takes .* as a str"):
            getattr(resources, method)(**kwargs)


def test_drop_in_still_accepts_what_upstream_accepts() -> None:
    resources: object = _drop_in()
    assert resources.get(api_version="apps/v1", short_names=["deploy"]).kind == "Deployment"  # type: ignore[attr-defined]
    assert resources.get(api_version="apps/v1", kind="Deployment", group=None).kind == "Deployment"  # type: ignore[attr-defined]
    assert resources.search(kind="Deployment", api_version="", prefix="*")  # type: ignore[attr-defined]
