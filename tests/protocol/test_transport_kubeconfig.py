"""RequestsTransport.from_kubeconfig / from_configuration with kubeconfig files written by the tests."""

from __future__ import annotations

import base64
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import responses
import yaml
from kubernetes import client as k8s_client

from restmapper.errors import RestMapperError
from restmapper.transport import ConfigError, RequestsTransport, RetryPolicy

SERVER = "https://k8s.example.test:6443"
TOKEN = "sekrit-token-123"
PASSWORD = "hunter2-pass-xyz"


def kw(request: Any) -> dict[str, Any]:
    """The keyword arguments requests was called with (recorded by `responses`)."""
    return dict(request.req_kwargs)
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBfakeCA\n-----END CERTIFICATE-----\n"
CERT_PEM = "-----BEGIN CERTIFICATE-----\nMIIBfakeClient\n-----END CERTIFICATE-----\n"
KEY_PEM = "-----BEGIN PRIVATE KEY-----\nMIIBfakeKey\n-----END PRIVATE KEY-----\n"


@pytest.fixture
def mocked() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.get(f"{SERVER}/api", body=b"{}")
        yield rsps


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def kubeconfig(path: Path, user: dict[str, Any], *, cluster: dict[str, Any] | None = None,
               name: str = "dev", current: str | None = "dev") -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": f"{name}-cluster", "cluster": cluster or {"server": SERVER}}],
        "users": [{"name": f"{name}-user", "user": user}],
        "contexts": [{"name": name, "context": {"cluster": f"{name}-cluster", "user": f"{name}-user"}}],
    }
    if current is not None:
        doc["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def sent_auth(rsps: responses.RequestsMock, index: int = -1) -> str | None:
    value = rsps.calls[index].request.headers.get("Authorization")
    return str(value) if value is not None else None


def test_token_user(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"token": TOKEN})
    transport = RequestsTransport.from_kubeconfig(str(path))
    assert transport.base_url == SERVER
    transport.get("/api")
    assert sent_auth(mocked) == f"Bearer {TOKEN}"
    assert TOKEN not in repr(transport)


def test_token_file_user_is_reread_when_rotated(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    (tmp_path / "sa").mkdir()
    (tmp_path / "sa" / "token").write_text("projected-1")
    path = kubeconfig(tmp_path / "config", {"tokenFile": "sa/token"})  # relative to the kubeconfig's folder
    now = [0.0]
    transport = RequestsTransport.from_kubeconfig(str(path), clock=lambda: now[0])
    transport.get("/api")
    (tmp_path / "sa" / "token").write_text("projected-2")
    now[0] += 61
    transport.get("/api")
    assert [sent_auth(mocked, 0), sent_auth(mocked, 1)] == ["Bearer projected-1", "Bearer projected-2"]


def test_basic_auth_user(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"username": "admin", "password": PASSWORD})
    transport = RequestsTransport.from_kubeconfig(str(path))
    transport.get("/api")
    assert sent_auth(mocked) == "Basic " + b64(f"admin:{PASSWORD}")
    assert PASSWORD not in repr(transport)


def test_insecure_skip_tls_verify(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", {"token": TOKEN},
                      cluster={"server": SERVER, "insecure-skip-tls-verify": True})
    RequestsTransport.from_kubeconfig(str(path)).get("/api")
    assert kw(mocked.calls[0].request)["verify"] is False


def test_inline_ca_and_client_certificate_data(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config",
                      {"client-certificate-data": b64(CERT_PEM), "client-key-data": b64(KEY_PEM)},
                      cluster={"server": SERVER, "certificate-authority-data": b64(CA_PEM)})
    transport = RequestsTransport.from_kubeconfig(str(path))
    transport.get("/api")
    kwargs = kw(mocked.calls[0].request)
    assert Path(kwargs["verify"]).read_text() == CA_PEM
    cert_file, key_file = kwargs["cert"]
    assert (Path(cert_file).read_text(), Path(key_file).read_text()) == (CERT_PEM, KEY_PEM)
    assert sent_auth(mocked) is None
    assert "client-cert" in repr(transport) and KEY_PEM not in repr(transport)


def test_ca_file_relative_to_the_kubeconfig(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text(CA_PEM)
    path = kubeconfig(tmp_path / "config", {"token": TOKEN},
                      cluster={"server": SERVER, "certificate-authority": "ca.crt"})
    RequestsTransport.from_kubeconfig(str(path)).get("/api")
    assert kw(mocked.calls[0].request)["verify"] == str(tmp_path / "ca.crt")


EXEC_SCRIPT = """
import json, pathlib, sys, datetime
counter = pathlib.Path(sys.argv[1])
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
status = {"token": f"exec-token-{n}"}
if len(sys.argv) > 2:
    # Expiring within client-side skew: the kubernetes loader refreshes it before each request.
    exp = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=int(sys.argv[2]))
    status["expirationTimestamp"] = exp.strftime("%Y-%m-%dT%H:%M:%SZ")
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": status}))
"""


def exec_user(tmp_path: Path, *args: str) -> dict[str, Any]:
    script = tmp_path / "plugin.py"
    script.write_text(EXEC_SCRIPT)
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": [str(script), str(tmp_path / "counter"), *args]}}


def test_exec_plugin_token(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", exec_user(tmp_path))
    transport = RequestsTransport.from_kubeconfig(str(path))
    transport.get("/api")
    transport.get("/api")
    # A token without expiry is fetched once and reused.
    assert [sent_auth(mocked, 0), sent_auth(mocked, 1)] == ["Bearer exec-token-1"] * 2
    assert "exec-token" not in repr(transport)


def test_exec_plugin_expiring_token_is_refreshed(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "config", exec_user(tmp_path, "60"))
    transport = RequestsTransport.from_kubeconfig(str(path))
    identity = transport.identity
    transport.get("/api")
    transport.get("/api")
    first, second = sent_auth(mocked, 0), sent_auth(mocked, 1)
    assert first is not None and second is not None and first != second
    assert first.startswith("Bearer exec-token-") and second.startswith("Bearer exec-token-")
    assert RequestsTransport.from_kubeconfig(str(path)).identity == identity  # stable across token rotation


def test_failing_exec_plugin_is_config_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit(3)\n")
    path = kubeconfig(tmp_path / "config", {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                                                     "command": sys.executable, "args": [str(script)]}})
    with pytest.raises(ConfigError, match="exec credential plugin"):
        RequestsTransport.from_kubeconfig(str(path))


def exec_config(command: str, *args: str, **more: Any) -> dict[str, Any]:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": command, "args": list(args),
                     **more}}


def failing_plugin(tmp_path: Path, code: int, stderr: str, stdout: str = "") -> dict[str, Any]:
    script = tmp_path / "plugin.py"
    script.write_text(f"import sys\nsys.stdout.write({stdout!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n")
    return exec_config(sys.executable, str(script), env=[{"name": "PLUGIN_API_KEY", "value": "env-secret-4711"}])


def load_error(path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> str:
    """The ConfigError's message; nothing else printed or logged (the loader's log record is the error)."""
    with pytest.raises(ConfigError) as info:
        RequestsTransport.from_kubeconfig(str(path))
    assert capsys.readouterr() == ("", "")
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    return str(info.value)


def test_exec_plugin_not_installed_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            caplog: pytest.LogCaptureFixture) -> None:
    """As kubectl ("exec: executable no-such-plugin not found ... a client-go credential plugin that is not
    installed"), not "returned no credential" after the loader's own ``ERROR:root:[Errno 2] ...`` line."""
    path = kubeconfig(tmp_path / "config", exec_config("no-such-plugin-zz"))
    text = load_error(path, capsys, caplog)
    assert 'exec credential plugin of user "dev-user": executable "no-such-plugin-zz" not found' in text, text
    assert "not installed" in text and "no credential" not in text, text
    hinted = kubeconfig(tmp_path / "hinted", exec_config("no-such-plugin-zz", installHint="brew install zz\nmore"))
    assert load_error(hinted, capsys, caplog).endswith("not found: brew install zz")


def test_exec_plugin_failure_leaves_an_unconfigured_root_logger_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A program that configured no logging (the CLI): the loader's ``logging.error`` would call ``basicConfig``
    (a stderr handler on the root logger for good) and print ``ERROR:root:...``; neither happens."""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    path = kubeconfig(tmp_path / "config", exec_config("no-such-plugin-zz"))
    with pytest.raises(ConfigError, match="not found"):
        RequestsTransport.from_kubeconfig(str(path))
    assert root.handlers == [] and root.filters == []
    assert capsys.readouterr() == ("", "")


def logging_state() -> list[tuple[str, list[logging.Handler], list[Any], bool, int]]:
    """Handlers, filters, propagation and level of the root logger and of every logger there is."""
    loggers = [logging.getLogger(), *(v for v in logging.Logger.manager.loggerDict.values()
                                      if isinstance(v, logging.Logger))]
    return [(lg.name, list(lg.handlers), list(lg.filters), lg.propagate, lg.level) for lg in loggers]


@pytest.mark.parametrize("case", ["token", "exit-code", "not-installed", "bad-output"])
def test_loading_a_kubeconfig_never_changes_global_logging_state(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The rule: loading a kubeconfig never changes global logging state, not even for the length of the load.
    Another thread's ``basicConfig`` made while the exec plugin runs (here: from inside the plugin call, a
    thread joined before it returns) takes effect, and receives nothing of the load."""
    from kubernetes.config.exec_provider import ExecProvider

    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    seen: list[Any] = []
    users = {"token": lambda: exec_user(tmp_path), "exit-code": lambda: failing_plugin(tmp_path, 3, "password=x\n"),
             "not-installed": lambda: exec_config("no-such-plugin-zz"),
             "bad-output": lambda: failing_plugin(tmp_path, 0, "", stdout="token-in-plain-text-0815")}
    path = kubeconfig(tmp_path / "config", users[case]())
    real_run = ExecProvider.run
    configured = logging.StreamHandler(__import__("io").StringIO())

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(logging_state())
        other = __import__("threading").Thread(target=logging.basicConfig, kwargs={"handlers": [configured]})
        other.start()
        other.join()
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(ExecProvider, "run", run)
    before = logging_state()
    if case == "token":
        RequestsTransport.from_kubeconfig(str(path))
    else:
        with pytest.raises(ConfigError):
            RequestsTransport.from_kubeconfig(str(path))
    assert seen == [before]  # during the plugin call, before basicConfig
    assert root.handlers == [configured], "the other thread's basicConfig was a no-op"
    root.handlers = []
    assert logging_state() == before
    assert configured.stream.getvalue() == "" and capsys.readouterr() == ("", "")


REFRESH_SCRIPT = """
import datetime, json, pathlib, sys
if pathlib.Path(sys.argv[1]).exists():
    sys.stderr.write("password=hunter2 login expired\\n")
    sys.exit(4)
exp = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=int(sys.argv[2]))
status = {"token": "refreshable-token-1", "expirationTimestamp": exp.strftime("%Y-%m-%dT%H:%M:%SZ")}
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}))
"""


def refreshing_plugin(tmp_path: Path, expires_in: int) -> tuple[Path, Path]:
    """A kubeconfig whose plugin gives a token expiring in ``expires_in`` s, and the file that makes it fail."""
    script, failing = tmp_path / "refresh.py", tmp_path / "now-failing"
    script.write_text(REFRESH_SCRIPT)
    return kubeconfig(tmp_path / "config", exec_config(sys.executable, str(script), str(failing),
                                                       str(expires_in))), failing


def test_exec_plugin_failing_at_token_refresh_says_why(
        mocked: responses.RequestsMock, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    """A long-running controller whose plugin starts failing once its token expired: each request fails as
    client-go's do ("getting credentials: exec: executable x failed with exit code 4"), saying why, never with
    the plugin's stderr, and nothing is logged (the loader would log the stderr on the root logger)."""
    caplog.set_level(logging.DEBUG)
    path, failing = refreshing_plugin(tmp_path, -60)
    transport = RequestsTransport.from_kubeconfig(str(path))  # its token already expired
    failing.touch()  # from now on the plugin fails
    with pytest.raises(RestMapperError) as info:
        transport.get("/api")
    text = str(info.value)
    assert "credential refresh failed" in text and 'exec credential plugin of user "dev-user"' in text, text
    assert f'executable "{sys.executable}" failed with exit code 4' in text and "expired token" in text, text
    assert "hunter2" not in text and "login expired" not in text, text
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert capsys.readouterr() == ("", "")
    failing.unlink()  # the plugin works again: so do requests
    transport.get("/api")
    assert sent_auth(mocked) == "Bearer refreshable-token-1"


def test_exec_plugin_failing_early_refresh_keeps_the_valid_token(
        mocked: responses.RequestsMock, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The loader refreshes 5 minutes before expiry; a failure then keeps the token, still valid (client-go runs
    the plugin only once its token expired), and is not logged."""
    caplog.set_level(logging.DEBUG)
    path, failing = refreshing_plugin(tmp_path, 240)
    transport = RequestsTransport.from_kubeconfig(str(path))
    failing.touch()
    transport.get("/api")
    assert sent_auth(mocked) == "Bearer refreshable-token-1"
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_exec_plugin_exit_code_is_said_and_its_stderr_never_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """As kubectl ("executable x failed with exit code 3"). The plugin's stderr is not repeated in the message,
    which callers print and log: no redaction tells every credential a plugin may print (``password=hunter2``, a
    JSON token without digits, an AWS secret) from the reason."""
    stderr = ("\x1b[31mlogin expired\x1b[0m\nAuthorization: Bearer abc.def.ghi\n"
              "key eyJhbGciOiJSUzI1NiJ9xyzxyzxyzxyz env-secret-4711\npassword=hunter2\n"
              '{"token": "kubeTokenForDevUserNotRotatedYet"}\n'
              "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIKMDENGbPxRfiCYEXAMPLEKEY\n")
    path = kubeconfig(tmp_path / "config", failing_plugin(tmp_path, 3, stderr))
    text = load_error(path, capsys, caplog)
    assert f'executable "{sys.executable}" failed with exit code 3 (its stderr is not repeated here' in text, text
    for secret in ("login expired", "abc.def.ghi", "eyJhbGciOiJSUzI1NiJ9", "env-secret-4711", "hunter2",
                   "kubeTokenForDevUserNotRotatedYet", "wJalrXUtnFEMIKMDENGbPxRfiCYEXAMPLEKEY"):
        assert secret not in text, text
    quiet = kubeconfig(tmp_path / "quiet", failing_plugin(tmp_path, 3, ""))
    assert load_error(quiet, capsys, caplog).endswith("failed with exit code 3")


def test_exec_plugin_output_that_is_no_credential_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """Exit code 0 but no ExecCredential: the reason (never the output itself, which may hold a token)."""
    path = kubeconfig(tmp_path / "config", failing_plugin(tmp_path, 0, "", stdout="token-in-plain-text-0815"))
    text = load_error(path, capsys, caplog)
    assert "returned no credential: failed to decode process output" in text, text
    assert "token-in-plain-text-0815" not in text
    stanza = kubeconfig(tmp_path / "stanza", {"exec": {"apiVersion": "client.authentication.k8s.io/v1"}})
    assert load_error(stanza, capsys, caplog).endswith(": invalid exec configuration: malformed request. missing "
                                                       "key 'command'")


def test_kubeconfig_env_merges_files_and_picks_context(monkeypatch: pytest.MonkeyPatch,
                                                       mocked: responses.RequestsMock, tmp_path: Path) -> None:
    first = kubeconfig(tmp_path / "a" / "config", {"token": "token-a"}, name="a", current="b")
    second = kubeconfig(tmp_path / "b" / "config", {"token": "token-b"}, name="b", current=None)
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'missing'}:{second}")
    RequestsTransport.from_kubeconfig().get("/api")
    RequestsTransport.from_kubeconfig(context="a").get("/api")
    assert [sent_auth(mocked, 0), sent_auth(mocked, 1)] == ["Bearer token-b", "Bearer token-a"]


def test_default_location_is_home_kube_config(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    kubeconfig(tmp_path / "home" / ".kube" / "config", {"token": TOKEN})
    RequestsTransport.from_kubeconfig().get("/api")
    assert sent_auth(mocked) == f"Bearer {TOKEN}"


def test_identity_differs_between_users_of_one_server(tmp_path: Path) -> None:
    a = RequestsTransport.from_kubeconfig(str(kubeconfig(tmp_path / "a", {"token": "token-a"})))
    b = RequestsTransport.from_kubeconfig(str(kubeconfig(tmp_path / "b", {"token": "token-b"})))
    assert a.base_url == b.base_url and a.identity != b.identity


def test_options_override_the_file(tmp_path: Path, mocked: responses.RequestsMock) -> None:
    path = kubeconfig(tmp_path / "config", {"token": TOKEN})
    transport = RequestsTransport.from_kubeconfig(str(path), read_timeout=2.0, retry=RetryPolicy.no_retry())
    transport.get("/api")
    assert kw(mocked.calls[0].request)["timeout"] == (10.0, 2.0)


@pytest.mark.parametrize(("setup", "match"), [
    ("missing-file", "kubeconfig file not found"),
    ("unknown-context", 'context "nope" not found'),
    ("no-current-context", "no context chosen"),
    ("no-default", "no kubeconfig"),
    ("empty-env", "no kubeconfig file found in \\$KUBECONFIG"),
    ("bad-yaml", "not valid YAML"),
    ("not-a-mapping", "expected a mapping"),
    ("no-server", 'no server found for cluster "dev-cluster"'),
    ("no-cluster", 'cluster "dev-cluster" of context "dev" not found'),
    ("missing-client-cert", "File does not exist"),
])
def test_unusable_kubeconfig_is_a_one_line_config_error(setup: str, match: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path: str | None = str(tmp_path / "config")
    context = None
    if setup == "missing-file":
        path = str(tmp_path / "absent")
    elif setup == "unknown-context":
        kubeconfig(tmp_path / "config", {"token": TOKEN})
        context = "nope"
    elif setup == "no-current-context":
        kubeconfig(tmp_path / "config", {"token": TOKEN}, current=None)
    elif setup == "no-default":
        path = None
    elif setup == "empty-env":
        monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
        path = None
    elif setup == "bad-yaml":
        (tmp_path / "config").write_text(f"users:\n- name: x\n  user: {{token: {TOKEN}\n  : : [\n")
    elif setup == "not-a-mapping":
        (tmp_path / "config").write_text("- a\n- b\n")
    elif setup == "no-cluster":
        data = yaml.safe_load(kubeconfig(tmp_path / "config", {"token": TOKEN}).read_text())
        data["clusters"] = []
        (tmp_path / "config").write_text(yaml.safe_dump(data))
    elif setup == "missing-client-cert":
        kubeconfig(tmp_path / "config", {"client-certificate": "absent.crt", "client-key": "absent.key"})
    elif setup == "no-server":
        kubeconfig(tmp_path / "config", {"token": TOKEN}, cluster={"insecure-skip-tls-verify": True})
    with pytest.raises(ConfigError, match=match) as info:
        RequestsTransport.from_kubeconfig(path, context)
    message = str(info.value)
    assert isinstance(info.value, RestMapperError)
    assert "\n" not in message and TOKEN not in message
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__


# --- from_configuration --------------------------------------------------------------------------------------


def configuration(**attrs: Any) -> Any:
    cfg = k8s_client.Configuration()
    cfg.host = SERVER
    for key, value in attrs.items():
        setattr(cfg, key, value)
    return cfg


def test_configuration_api_key_with_prefix_and_refresh_hook(mocked: responses.RequestsMock) -> None:
    calls: list[int] = []

    def hook(cfg: Any) -> None:
        calls.append(1)
        cfg.api_key["authorization"] = f"refreshed-{len(calls)}"

    cfg = configuration(api_key={"authorization": TOKEN}, api_key_prefix={"authorization": "Bearer"})
    cfg.refresh_api_key_hook = hook
    transport = RequestsTransport.from_configuration(cfg, identity_material="svc")
    transport.get("/api")
    transport.get("/api")
    assert [sent_auth(mocked, 0), sent_auth(mocked, 1)] == ["Bearer refreshed-1", "Bearer refreshed-2"]


def test_configuration_tls_proxy_and_basic(mocked: responses.RequestsMock, tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text(CA_PEM)
    cfg = configuration(ssl_ca_cert=str(ca), username="admin", password=PASSWORD,
                        proxy="http://proxy.test:3128")
    transport = RequestsTransport.from_configuration(cfg)
    transport.get("/api")
    request = mocked.calls[0].request
    assert kw(request)["verify"] == str(ca)
    assert kw(request)["proxies"] == {"http": "http://proxy.test:3128", "https": "http://proxy.test:3128"}
    assert sent_auth(mocked) == "Basic " + b64(f"admin:{PASSWORD}")
    assert PASSWORD not in repr(transport)


def test_configuration_verify_ssl_false_wins_over_ca(mocked: responses.RequestsMock) -> None:
    RequestsTransport.from_configuration(configuration(verify_ssl=False, ssl_ca_cert="/x.pem")).get("/api")
    assert kw(mocked.calls[0].request)["verify"] is False


def test_configuration_without_host_is_config_error() -> None:
    with pytest.raises(ConfigError, match="no host"):
        RequestsTransport.from_configuration(configuration(host=""))


def test_configuration_hook_failure_is_a_scrubbed_transport_error(mocked: responses.RequestsMock) -> None:
    def hook(cfg: Any) -> None:
        raise RuntimeError(json.dumps({"token": TOKEN, "header": f"Bearer {TOKEN}"}))

    cfg = configuration(api_key={"authorization": f"Bearer {TOKEN}"})
    cfg.refresh_api_key_hook = hook
    transport = RequestsTransport.from_configuration(cfg, identity_material="svc")
    with pytest.raises(RestMapperError) as info:
        transport.get("/api")
    assert "Bearer <redacted>" in str(info.value)
    assert f"Bearer {TOKEN}" not in str(info.value)


def test_exec_refresh_failure_after_expiry_fails_every_request_not_only_the_first(
        mocked: responses.RequestsMock, tmp_path: Path) -> None:
    """Upstream's ``_set_config`` installs its own refresh hook again on every run; ours must stay
    (else the second request after expiry is sent with the expired token, silently)."""
    path, failing = refreshing_plugin(tmp_path, -60)
    transport = RequestsTransport.from_kubeconfig(str(path))
    failing.touch()
    for _ in range(3):
        with pytest.raises(RestMapperError, match="credential refresh failed"):
            transport.get("/api")
    # What carries a credential (responses records every thread's requests: a thread left by another test may send
    # one meanwhile, without ours).
    sent = [c for c in mocked.calls if c.request.headers.get("Authorization")]
    assert sent == [], "a request was sent with the expired token"


def test_exec_refresh_failure_is_said_after_requests_ran_while_the_token_was_valid(
        mocked: responses.RequestsMock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-running controller: requests succeed while the token is valid (each runs the refresh hook); hours
    later the token expired and the plugin fails: the request fails saying why, and is not sent."""
    import datetime

    import kubernetes.config.kube_config as upstream

    from restmapper.transport import kubeconfig as ours

    path, failing = refreshing_plugin(tmp_path, 3600)
    transport = RequestsTransport.from_kubeconfig(str(path))
    for _ in range(2):
        transport.get("/api")
    assert sent_auth(mocked) == "Bearer refreshable-token-1"
    failing.touch()
    later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=2)
    monkeypatch.setattr(ours, "_now", lambda: later)
    monkeypatch.setattr(upstream, "_is_expired", lambda expiry: True)  # two hours later, for upstream too
    for _ in range(2):
        with pytest.raises(RestMapperError, match="credential refresh failed"):
            transport.get("/api")
    sent = [c for c in mocked.calls if c.request.headers.get("Authorization") == "Bearer refreshable-token-1"]
    assert len(sent) == 2, "a request was sent with the expired token"


def test_a_kubernetes_client_user_of_our_configuration_sees_every_refresh_failure(tmp_path: Path) -> None:
    """``kubernetes.client.ApiClient`` reads ``auth_settings()`` per request: each raises once the token expired and
    the plugin fails, and what the failures said is not kept (the plugin's stderr may hold a credential)."""
    from restmapper.transport.kubeconfig import load_kubeconfig

    path, failing = refreshing_plugin(tmp_path, -60)
    cfg, _ = load_kubeconfig(str(path))
    failing.touch()
    for _ in range(4):
        with pytest.raises(RestMapperError, match="refreshing an expired token"):
            cfg.auth_settings()
    hook = cfg.refresh_api_key_hook
    cells = [c.cell_contents for c in (hook.__closure__ or ())]  # type: ignore[union-attr]
    logs = [c.plugin_log for c in cells if hasattr(c, "plugin_log")]
    assert logs and all(log.failures == [] for log in logs)


# --- a loader failure says what failed, never the credential ---------------------------------------------------


def test_missing_token_file_names_the_file_and_why(tmp_path: Path) -> None:
    absent = tmp_path / "nope" / "token"
    config = kubeconfig(tmp_path / "config", {"tokenFile": str(absent)})
    with pytest.raises(ConfigError) as info:
        RequestsTransport.from_kubeconfig(str(config))
    assert f"token file {absent}: No such file or directory" in str(info.value)
    assert 'context "dev"' in str(info.value)


def test_auth_provider_failure_carries_the_loader_message_without_credentials(tmp_path: Path) -> None:
    config = kubeconfig(tmp_path / "config", {"auth-provider": {"name": "gcp", "config": {"x": TOKEN}}})
    with pytest.raises(ConfigError) as info:
        RequestsTransport.from_kubeconfig(str(config))
    message = str(info.value)
    assert "has no attribute" in message, message
    assert TOKEN not in message and "\n" not in message


def test_empty_kubeconfig_path_is_unset_as_kubectl_treats_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             mocked: responses.RequestsMock) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig(tmp_path / "config", {"token": TOKEN})))
    RequestsTransport.from_kubeconfig("").get("/api")
    assert sent_auth(mocked) == f"Bearer {TOKEN}"


def test_kubeconfig_path_of_the_wrong_type_is_a_type_error_naming_the_argument() -> None:
    with pytest.raises(TypeError, match="path"):
        RequestsTransport.from_kubeconfig(123)  # type: ignore[arg-type]
