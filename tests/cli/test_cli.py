"""The ``restmapper`` command line: api-resources, resolve, serve, errors, request costs."""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from restmapper.cli import Session, main, run
from restmapper.cli._api_resources import ResourceRow, filter_rows, preferred_resources, sort_rows
from restmapper.cli._embedded import EmbeddedTransport
from restmapper.cli._table import format_table
from restmapper.discovery import DiscoveryClient
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion
from restmapper.testing import FakeCluster
from restmapper.transport import RequestsTransport, RetryPolicy

SECRET = "s3cr3t-t0ken-value"
METRICS = [APIResource("pods", "pod", True, "PodMetrics", ("get", "list")),
           APIResource("nodes", "node", False, "NodeMetrics", ("get", "list"))]


def _run(argv: list[str], session: Session | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(argv, session=session, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _session(cluster: FakeCluster) -> Session:
    return Session(DiscoveryClient(EmbeddedTransport(cluster)))


def _table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


# --- api-resources -------------------------------------------------------------------------------------------


def test_api_resources_default_table() -> None:
    code, out, err = _run(["api-resources", "--embedded"])
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line.split()[-1] != "Event"}
    assert rows["deployments"] == ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    assert rows["namespaces"] == ["namespaces", "ns", "v1", "false", "Namespace"]
    assert rows["certificates"] == ["certificates", "cert,certs", "cert-manager.io/v1", "true", "Certificate"]
    # Preferred version only: autoscaling is listed once, at v2.
    assert rows["horizontalpodautoscalers"][2] == "autoscaling/v2"
    assert not any("/" in line.split()[0] for line in lines[1:]), "subresources are not listed"
    # Columns start at the same offset on every line (tab writer layout).
    start = lines[0].index("APIVERSION")
    assert all(line[start - 1] == " " and line[start] != " " for line in lines[1:])


def test_api_resources_sorted_by_group_then_name() -> None:
    _, out, _ = _run(["api-resources", "--embedded", "--no-headers", "-o", "json"])
    items = json.loads(out)
    keys = [(i["group"], i["name"]) for i in items]
    assert keys == sorted(keys)
    assert items[0]["group"] == "" and keys.count(("", "pods")) == 1


@pytest.mark.parametrize("sort_by, key", [("name", lambda i: i["name"]),
                                          ("kind", lambda i: (i["kind"], i["name"]))])
def test_api_resources_sort_by(sort_by: str, key: object) -> None:
    _, out, _ = _run(["api-resources", "--embedded", "-o", "json", "--sort-by", sort_by])
    items = json.loads(out)
    assert [key(i) for i in items] == sorted(key(i) for i in items)  # type: ignore[operator]
    # Ties keep discovery order: core events before events.k8s.io events.
    events = [i["apiVersion"] for i in items if i["name"] == "events"]
    assert events == ["v1", "events.k8s.io/v1"]


def test_api_resources_wide_and_name() -> None:
    _, wide, _ = _run(["api-resources", "--embedded", "-o", "wide"])
    header = wide.splitlines()[0].split()
    assert header[-2:] == ["VERBS", "CATEGORIES"]
    pods = next(line.split() for line in wide.splitlines() if line.startswith("pods "))
    assert pods[-1] == "all"
    assert "list" in pods[-2].split(",")
    _, names, _ = _run(["api-resources", "--embedded", "-o", "name"])
    lines = names.splitlines()
    assert "pods" in lines and "deployments.apps" in lines and "certificates.cert-manager.io" in lines
    assert "NAME" not in lines


def test_api_resources_json_objects() -> None:
    _, out, _ = _run(["api-resources", "--embedded", "-o", "json"])
    items = json.loads(out)
    deploy = next(i for i in items if i["name"] == "deployments")
    assert deploy == {"name": "deployments", "singularName": "deployment", "shortNames": ["deploy"],
                      "group": "apps", "apiVersion": "apps/v1", "namespaced": True, "kind": "Deployment",
                      "verbs": deploy["verbs"], "categories": ["all"]}
    assert {"create", "list", "watch"} <= set(deploy["verbs"])


@pytest.mark.parametrize("flags, check", [
    (["--namespaced=false"], lambda i: not i["namespaced"]),
    (["--namespaced"], lambda i: i["namespaced"]),
    (["--namespaced", "true"], lambda i: i["namespaced"]),
    (["--api-group", "apps"], lambda i: i["group"] == "apps"),
    (["--api-group="], lambda i: i["group"] == ""),
    (["--verbs", "list,watch", "--verbs", "create"], lambda i: {"list", "watch", "create"} <= set(i["verbs"])),
    (["--categories", "all"], lambda i: "all" in i["categories"]),
])
def test_api_resources_filters(flags: list[str], check: object) -> None:
    _, everything, _ = _run(["api-resources", "--embedded", "-o", "json"])
    code, out, _ = _run(["api-resources", "--embedded", "-o", "json", *flags])
    assert code == 0
    items, all_items = json.loads(out), json.loads(everything)
    assert items and len(items) < len(all_items)
    assert items == [i for i in all_items if check(i)]  # type: ignore[operator]


def test_api_resources_no_headers_and_empty_result() -> None:
    _, out, _ = _run(["api-resources", "--embedded", "--no-headers", "--api-group", "apps"])
    assert [row[0] for row in _table(out)] == ["controllerrevisions", "daemonsets", "deployments", "replicasets",
                                               "statefulsets"]
    code, out, _ = _run(["api-resources", "--embedded", "--api-group", "nope.example.com"])
    assert code == 0 and _table(out) == [["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]]


def test_preferred_resources_selection() -> None:
    group = APIGroup("g.example.com", ("v2", "v1"), "v2")
    v2, v1 = GroupVersion("g.example.com", "v2"), GroupVersion("g.example.com", "v1")
    both2 = APIResource("widgets", "widget", True, "Widget", ("list",))
    both1 = APIResource("widgets", "widget", True, "Widget", ("list", "get"))
    old = APIResource("gadgets", "gadget", True, "Gadget", ("list",))
    sub = APIResource("widgets/status", "", True, "Widget", ("get",))
    no_verbs = APIResource("things", "thing", False, "Thing", ())
    rows = preferred_resources([group], {v2: APIResourceList(v2, (both2, sub, no_verbs)),
                                         v1: APIResourceList(v1, (both1, old))})
    assert [(str(r.group_version), r.resource.name) for r in rows] == [
        ("g.example.com/v2", "widgets"), ("g.example.com/v1", "gadgets")]


def test_filter_and_sort_rows_are_stable() -> None:
    gv_a, gv_b = GroupVersion("a", "v1"), GroupVersion("b", "v1")
    rows = [ResourceRow(gv_b, APIResource("x", "x", True, "K", ("list",))),
            ResourceRow(gv_a, APIResource("x", "x", False, "K", ("get",)))]
    assert sort_rows(rows, "name") == rows
    assert sort_rows(rows) == rows[::-1]
    assert filter_rows(rows, namespaced=False, verbs=["get"]) == rows[1:]
    with pytest.raises(ValueError, match="sort-by"):
        sort_rows(rows, "group")


def test_format_table_matches_tabwriter_layout() -> None:
    # Go tabwriter(minwidth 6, padding 3): widths max(6, widest + 3); the last cell is not padded.
    assert format_table([("NAME", "", "K"), ("ab", "", "Kind")]) == "NAME   " "      " "K\n" "ab     " "      " "Kind\n"
    assert format_table([]) == ""


# --- partial discovery failure ----------------------------------------------------------------------------------


def _metrics_cluster(mode: str) -> FakeCluster:
    cluster = FakeCluster.embedded(mode=mode)
    cluster.add_api_resources("metrics.k8s.io/v1beta1", METRICS)
    return cluster


@pytest.mark.parametrize("mode", ["aggregated", "legacy"])
def test_partial_failure_lists_everything_else(mode: str) -> None:
    healthy = _metrics_cluster(mode)
    _, full, _ = _run(["api-resources"], _session(healthy))
    assert "metrics.k8s.io/v1beta1" in full
    broken = _metrics_cluster(mode)
    if mode == "aggregated":
        broken.set_stale("metrics.k8s.io/v1beta1")
        reason = "stale GroupVersion discovery: metrics.k8s.io/v1beta1"
    else:
        broken.inject("/apis/metrics.k8s.io/v1beta1", status=503,
                      body="the server is currently unable to handle the request", content_type="text/plain")
        reason = "the server is currently unable to handle the request"
    code, out, err = _run(["api-resources"], _session(broken))
    assert code == 1
    assert err == f"error: unable to retrieve the complete list of server APIs: metrics.k8s.io/v1beta1: {reason}\n"
    assert out.splitlines() == [line for line in full.splitlines() if "metrics.k8s.io" not in line]


def test_api_server_down_is_one_line() -> None:
    cluster = FakeCluster.embedded()
    cluster.inject("/apis", status=500, body="etcdserver: request timed out\nmore\n")
    code, out, err = _run(["api-resources"], _session(cluster))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and err.startswith("error: ") and "request timed out" in err


# --- request costs: 2 requests, then 304 revalidation ----------------------------------------------------------------


def test_aggregated_listing_costs_two_requests_then_revalidates() -> None:
    cluster = FakeCluster.embedded()
    with cluster.mock():
        transport = RequestsTransport(cluster.base_url, retry=RetryPolicy(max_attempts=1))
        session = Session(DiscoveryClient(transport))
        code, first, _ = _run(["api-resources"], session)
        assert code == 0
        assert sorted(r.path for r in cluster.requests) == ["/api", "/apis"]
        cluster.clear_requests()
        code, second, _ = _run(["api-resources"], session)
        assert code == 0
        assert sorted(r.path for r in cluster.requests) == ["/api", "/apis"]
        assert all("If-None-Match" in r.headers or "if-none-match" in r.headers for r in cluster.requests)
        # The answers were 304 Not Modified: the client knows, and the listing is unchanged.
        assert session.discovery.fetch_root().not_modified
    assert second == first


def test_resolve_reuses_the_session_cache() -> None:
    cluster = FakeCluster.embedded()
    session = _session(cluster)
    assert _run(["resolve", "deploy"], session)[0] == 0
    cluster.clear_requests()
    assert _run(["resolve", "deploy", "Deployment.apps"], session)[0] == 0
    assert cluster.requests == []


# --- resolve ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arg, expected", [
    ("deploy", ["deploy", "apps", "v1", "deployments", "Deployment", "true"]),
    ("Deployment", ["Deployment", "apps", "v1", "deployments", "Deployment", "true"]),
    ("DEPLOYMENTS", ["DEPLOYMENTS", "apps", "v1", "deployments", "Deployment", "true"]),
    ("deployments.v1.apps", ["deployments.v1.apps", "apps", "v1", "deployments", "Deployment", "true"]),
    ("hpa", ["hpa", "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "true"]),
    ("ns", ["ns", "v1", "namespaces", "Namespace", "false"]),
    ("certificates.cert-manager.io",
     ["certificates.cert-manager.io", "cert-manager.io", "v1", "certificates", "Certificate", "true"]),
])
def test_resolve_table(arg: str, expected: list[str]) -> None:
    code, out, err = _run(["resolve", "--embedded", arg])
    assert (code, err) == (0, "")
    assert _table(out) == [["INPUT", "GROUP", "VERSION", "RESOURCE", "KIND", "NAMESPACED"], expected]


def test_resolve_json_lists_categories_and_errors() -> None:
    code, out, err = _run(["resolve", "--embedded", "-o", "json", "svc,all", "nosuchthing"])
    assert code == 1 and err == ""
    items = json.loads(out)
    assert items[0] == {"input": "svc", "group": "", "version": "v1", "resource": "services", "kind": "Service",
                        "namespaced": True}
    members = [i["resource"] for i in items if i["input"] == "all"]
    assert members[:3] == ["pods", "replicationcontrollers", "services"] and "deployments" in members
    assert items[-1] == {"input": "nosuchthing", "error": 'the server doesn\'t have a resource type "nosuchthing"',
                         "reason": "NotFound"}


def test_resolve_error_and_warning_on_stderr() -> None:
    code, out, err = _run(["resolve", "--embedded", "ev", "nosuchthing"])
    assert code == 1
    assert _table(out)[1] == ["ev", "v1", "events", "Event", "true"]
    assert err.splitlines() == [
        'Warning: short name "ev" could also match lower priority resource events.events.k8s.io',
        'error: the server doesn\'t have a resource type "nosuchthing"',
    ]


@pytest.mark.parametrize("down", [False, True])
@pytest.mark.parametrize("argv", [["xyzzy"], ["xyzzy", "a/b"], ["--no-headers", "xyzzy"]])
def test_resolve_prints_no_header_when_nothing_resolved(argv: list[str], down: bool) -> None:
    """kubectl prints nothing on stdout when every argument failed; a header over no rows is not a table."""
    cluster = FakeCluster.embedded()
    if down:
        cluster.inject("/api*", status=503, body="down")
    code, out, err = _run(["resolve", *argv], _session(cluster))
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == len([a for a in argv if not a.startswith("-")]), err


# --- connection errors ---------------------------------------------------------------------------------------------


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": SECRET}}],
    }))
    return path


@pytest.mark.parametrize("command", [["api-resources"], ["resolve", "pods"]])
def test_missing_kubeconfig_is_one_line(tmp_path: Path, command: list[str]) -> None:
    code, out, err = _run([*command, "--kubeconfig", str(tmp_path / "absent")])
    assert (code, out) == (1, "")
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "absent" in err


def test_unknown_context_names_it_without_credentials(tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path, "https://127.0.0.1:1")
    code, _, err = _run(["api-resources", "--kubeconfig", str(config), "--context", "nope"])
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1
    assert "nope" in err and SECRET not in err


def test_unreachable_server_is_one_line_without_credentials(tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path, "http://127.0.0.1:9")
    code, _, err = _run(["resolve", "pods", "--kubeconfig", str(config)])
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1
    assert SECRET not in err


def test_embedded_excludes_kubeconfig() -> None:
    code, _, err = _run(["api-resources", "--embedded", "--context", "x"])
    assert code == 2 and err == "error: --embedded cannot be combined with --kubeconfig or --context\n"
    code, _, err = _run(["resolve", "--embedded", "--kubeconfig", "/nonexistent", "deploy"])
    assert code == 2 and "cannot be combined" in err  # a usage error, as the README says


# --- help, version, usage ----------------------------------------------------------------------------------------


def test_version_and_help() -> None:
    from restmapper import __version__

    assert _run(["--version"])[:2] == (0, f"restmapper {__version__}\n")
    code, out, _ = _run(["-h"])
    assert code == 0 and all(c in out for c in ("api-resources", "resolve", "serve", "--embedded"))
    code, out, _ = _run([])
    assert code == 0 and "usage: restmapper" in out
    code, _, err = _run(["api-resources", "-o", "yaml"])
    assert code == 2 and "invalid choice" in err


def test_console_entry_point_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "restmapper.cli", "resolve", "--embedded", "-o", "json", "po"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["resource"] == "pods"
    assert main(["--version"]) == 0


# --- serve -----------------------------------------------------------------------------------------------------------


def _line_reader(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    """Lines of the child's stdout, read by a daemon thread (a pipe read must not hang the test)."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        with proc.stdout:  # closed at the end of the output: the pipe is not left to the collector
            for line in proc.stdout:
                lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _read_until(lines: queue.Queue[str], prefix: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        if not line:
            raise AssertionError(f"serve exited before printing {prefix!r}")
        if line.startswith(prefix):
            return line[len(prefix):].strip()


@pytest.mark.parametrize("sig, legacy", [(signal.SIGINT, False), (signal.SIGTERM, True)])
def test_serve_until_signal(tmp_path: Path, sig: signal.Signals, legacy: bool) -> None:
    kubeconfig = tmp_path / "kc"
    argv = [sys.executable, "-m", "restmapper.cli", "serve", "--port", "0", "--kubeconfig-out", str(kubeconfig)]
    proc = subprocess.Popen([*argv, *(["--legacy"] if legacy else [])], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        lines = _line_reader(proc)
        url = _read_until(lines, "url: ")
        assert url.startswith("http://127.0.0.1:")
        assert Path(_read_until(lines, "kubeconfig: ")) == kubeconfig
        assert _read_until(lines, "try: ") == f"kubectl --kubeconfig {kubeconfig} api-resources"
        assert oct(kubeconfig.stat().st_mode & 0o777) == "0o600"
        code, out, err = _run(["resolve", "-o", "json", "deploy", "--kubeconfig", str(kubeconfig)])
        assert (code, err) == (0, "")
        assert json.loads(out)[0]["resource"] == "deployments"
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 0
        assert _read_until(lines, "stopped") == ""
        assert proc.stderr is not None
        with proc.stderr:
            stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in stderr


def test_serve_rejects_an_impossible_port_and_kubeconfig_paths_that_are_not_files(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad_port = subprocess.run([sys.executable, "-m", "restmapper.cli", "serve", "--port", "99999"],
                              capture_output=True, text=True, timeout=60)
    assert bad_port.returncode == 2 and "between 0 and 65535" in bad_port.stderr
    assert "Traceback" not in bad_port.stderr
    out, err = io.StringIO(), io.StringIO()
    assert run(["api-resources", "--kubeconfig", str(tmp_path)], stdout=out, stderr=err) == 1
    assert "is a directory" in err.getvalue()


@pytest.mark.parametrize("after", ["Serving the embedded cluster", "url: ", "try: "])
def test_serve_cleans_up_when_sigterm_comes_right_after_the_banner(after: str) -> None:
    """The handler is installed before the banner: a SIGTERM at any line of it removes the temporary kubeconfig."""
    argv = [sys.executable, "-m", "restmapper.cli", "serve", "--port", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        lines = _line_reader(proc)
        seen: list[str] = []
        while not seen or not seen[-1].startswith(after):
            line = lines.get(timeout=20)
            assert line, f"serve exited early: {seen}"
            seen.append(line)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        while (line := lines.get(timeout=20)) != "":
            seen.append(line)
        assert proc.stderr is not None
        with proc.stderr:
            stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    kubeconfig = Path(next(s for s in seen if s.startswith("kubeconfig: "))[len("kubeconfig: "):].strip())
    assert not kubeconfig.exists() and not kubeconfig.parent.exists()
    assert seen[-1] == "stopped\n" and "Traceback" not in stderr


def test_misses_confirmed_by_the_command_itself_read_alike_in_any_order() -> None:
    """A no-match the command confirmed with an earlier argument is as fresh as the command: no ``(as of 0.0 s
    ago; ...)`` on the second one (it depended on the arguments' order alone), in text and in ``-o json``."""
    code, _, err = _run(["resolve", "--embedded", "xyzzy", "foo", "bar.example.com"])
    assert code == 1
    assert err.splitlines() == ['error: the server doesn\'t have a resource type "xyzzy"',
                                'error: the server doesn\'t have a resource type "foo"',
                                'error: the server doesn\'t have a resource type "bar"'], err
    code, out, _ = _run(["resolve", "--embedded", "-o", "json", "foo", "xyzzy"])
    assert [item["error"] for item in json.loads(out)] == [
        'the server doesn\'t have a resource type "foo"', 'the server doesn\'t have a resource type "xyzzy"']


def test_serve_on_a_busy_port_names_host_and_port() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out, err = io.StringIO(), io.StringIO()
        assert run(["serve", "--port", str(port)], stdout=out, stderr=err) == 1
    assert f"127.0.0.1:{port}" in err.getvalue() and "Address already in use" in err.getvalue(), err.getvalue()


@pytest.mark.parametrize(("arg", "instead"), [("deploy/web", "deploy"), ("deployments/scale", "deployments"),
                                              ("deployments.apps/web", "deployments.apps")])
def test_cli_tells_a_shell_user_what_to_type_for_type_name(arg: str, instead: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["resolve", "--embedded", arg], stdout=out, stderr=err) == 1
    assert f"restmapper resolve {instead}" in err.getvalue(), err.getvalue()
    assert "resolve_all(" not in err.getvalue() and "resolve(" not in err.getvalue()
    out = io.StringIO()
    assert run(["resolve", "--embedded", "-o", "json", arg], stdout=out, stderr=io.StringIO()) == 1
    [row] = json.loads(out.getvalue())
    assert row["reason"] == "InvalidArgument" and f"restmapper resolve {instead}" in row["error"]
