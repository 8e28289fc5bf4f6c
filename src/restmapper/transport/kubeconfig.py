"""Reading connection settings from kubeconfig files and ``kubernetes.client.Configuration`` objects.

Loading is delegated to the ``kubernetes`` package's own loader, so exec credential plugins, auth providers,
client certificates and inline CA data behave exactly as they do for ``kubernetes.client``; this module only turns
the result into transport options, adds what that loader lacks (``tokenFile`` re-reading, as client-go does for
projected service-account tokens) and turns its failures into one-line :class:`ConfigError` messages.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import sys
import threading
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from restmapper._redact import REDACTED, sanitize
from restmapper.errors import ConfigError

__all__ = ["ConfigError", "api_key_of", "configuration_options", "kubeconfig_paths", "load_kubeconfig"]


def kubeconfig_paths(path: str | None = None) -> list[Path]:
    """Return the kubeconfig files to read, in precedence order, as kubectl chooses them.

    Args:
        path: an explicit file (``--kubeconfig``); wins over everything.

    Returns:
        ``[path]`` when given, else the existing entries of ``$KUBECONFIG`` (``os.pathsep``-separated), else
        ``~/.kube/config``.

    Raises:
        ConfigError: none of the candidate files exists.

    As client-go ``clientcmd.NewDefaultClientConfigLoadingRules``: missing files listed in ``$KUBECONFIG`` are
    skipped, an explicit path that does not exist is an error.
    """
    if path is not None:
        return [_explicit_path(path)]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        listed = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
        existing = [p for p in listed if p.is_file()]
        if not existing:
            raise ConfigError("no kubeconfig file found in $KUBECONFIG: " + os.pathsep.join(map(str, listed)))
        return existing
    default = Path("~/.kube/config").expanduser()
    if not default.is_file():
        raise ConfigError(f"no kubeconfig: $KUBECONFIG is not set and {default} does not exist")
    return [default]


def _explicit_path(path: str) -> Path:
    """``path`` (``~`` expanded) when it is a regular file, else ConfigError saying what it is instead."""
    candidate = Path(path).expanduser()
    if candidate.is_dir():
        raise ConfigError(f"kubeconfig path is a directory, not a file: {candidate}")
    if not candidate.exists():
        raise ConfigError(f"kubeconfig file not found: {candidate}")
    if not candidate.is_file():
        raise ConfigError(f"kubeconfig path is not a regular file: {candidate}")
    return candidate


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read kubeconfig {path}: {type(exc).__name__}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # The YAML error text quotes the offending line, which may be a token: keep only its position.
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"invalid kubeconfig {path}: not valid YAML{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"invalid kubeconfig {path}: expected a mapping at the top level")
    return data


def _named(entries: Any, name: str) -> tuple[dict[str, Any], bool]:
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, dict) and entry.get("name") == name:
                inner = entry.get(next((k for k in ("context", "user", "cluster") if k in entry), ""), {})
                return (inner if isinstance(inner, dict) else {}), True
    return {}, False


def _first_named(docs: list[tuple[Path, dict[str, Any]]], section: str, name: str
                 ) -> tuple[Path, dict[str, Any]] | None:
    """The first file (in merge order) whose ``section`` (``contexts``, ``clusters``, ``users``) has an entry
    called ``name``, and that entry's stanza; None when no file has one (the first file wins, as in clientcmd)."""
    for path, doc in docs:
        found, ok = _named(doc.get(section), name)
        if ok:
            return path, found
    return None


def _context_name(docs: list[tuple[Path, dict[str, Any]]], context: str | None) -> str:
    """``context``, else the first file's ``current-context`` (the first file that sets it wins, as in clientcmd's
    merge); ConfigError when neither names one."""
    current = context
    if current is None:
        current = next((str(d["current-context"]) for _, d in docs if d.get("current-context")), None)
    if not current:
        raise ConfigError("no context chosen: the kubeconfig has no current-context and none was given "
                          f"({', '.join(str(path) for path, _ in docs)})")
    return current


class _Selection:
    """The context, user stanza and file it came from, as kubectl merges several kubeconfig files."""

    def __init__(self, paths: list[Path], context: str | None) -> None:
        docs = [(p, _read_yaml(p)) for p in paths]
        current = _context_name(docs, context)
        self.context_name = current
        found_context = _first_named(docs, "contexts", current)
        if found_context is None:
            raise ConfigError(f'context "{current}" not found in kubeconfig {", ".join(map(str, paths))}')
        _, ctx = found_context
        self.namespace = str(ctx.get("namespace") or "")
        self.user_name = str(ctx.get("user") or "")
        self.cluster_name = str(ctx.get("cluster") or "")
        found_cluster = _first_named(docs, "clusters", self.cluster_name)
        if found_cluster is None:
            raise ConfigError(f'cluster "{self.cluster_name}" of context "{current}" not found in kubeconfig')
        if not found_cluster[1].get("server"):
            # kubectl: "invalid configuration: no server found for cluster".
            raise ConfigError(f'invalid kubeconfig: no server found for cluster "{self.cluster_name}"')
        self.user_file: Path | None
        self.user: dict[str, Any]
        self.user_file, self.user = _first_named(docs, "users", self.user_name) or (None, {})

    def token_file(self) -> str | None:
        """The user's ``tokenFile`` (resolved against its kubeconfig's folder) when it is the credential in use."""
        raw = self.user.get("tokenFile")
        if not raw or self.user.get("token") or "exec" in self.user or "auth-provider" in self.user:
            return None
        base = self.user_file.parent if self.user_file is not None else Path.cwd()
        return str((base / str(raw)).resolve())

    def identity_material(self) -> str:
        """A stable string for the user: the stanza itself, which outlives rotating exec or file tokens."""
        return "kubeconfig-user:" + json.dumps(self.user, sort_keys=True, default=str)


def load_kubeconfig(path: str | None = None, context: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Load a kubeconfig with the ``kubernetes`` package's loader.

    Args:
        path: the kubeconfig file, or None for ``$KUBECONFIG`` / ``~/.kube/config``.
        context: the context name, or None for ``current-context``.

    Returns:
        ``(configuration, extra)``: a fresh ``kubernetes.client.Configuration`` and what it cannot express:
        transport options (``token_file``, ``identity_material``) and the ``context`` name, its ``namespace``
        (empty when unset) and the ``location`` (the files read, ``os.pathsep``-joined).

    Raises:
        ConfigError: no file, unknown context, invalid content, or an exec plugin that yields no credential: the
            message says why as kubectl does (executable not found, with its ``installHint``; ``failed with exit
            code N``, never with its stderr; what is wrong in its output). The loader's own log records of that
            failure are taken in, not logged: loading never changes global logging state (root logger, handlers).
            A plugin failing at a later token refresh, once its token expired, raises ``ConfigError`` from the
            Configuration's ``refresh_api_key_hook`` (the transport's ``credential refresh failed``).
    """
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    paths = kubeconfig_paths(path)
    selection = _Selection(paths, context)
    cfg = k8s_client.Configuration()
    where = f"{', '.join(map(str, paths))} (context \"{selection.context_name}\")"
    try:
        loader = _quiet_loader(os.pathsep.join(map(str, paths)), selection.context_name)
        loader.load_and_set(cfg)
    except k8s_config.ConfigException as exc:
        raise ConfigError(f"invalid kubeconfig {where}: {_first_line(str(exc))}") from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConfigError(f"invalid kubeconfig {where}: {_loader_failure(exc, selection)}") from None
    exec_config = selection.user.get("exec")
    if exec_config is not None:
        exec_config = exec_config if isinstance(exec_config, dict) else {}
        subject = f'exec credential plugin of user "{selection.user_name}"'
        if not loader.__dict__.get("token") and not getattr(cfg, "cert_file", None):
            raise ConfigError(subject + _plugin_failure(exec_config, loader.plugin_log.take()))
        loader.plugin_log.take()  # a failure already outlived by a credential is not kept
        hook = getattr(cfg, "refresh_api_key_hook", None)
        if hook is not None:
            cfg.refresh_api_key_hook = _refresh_hook(hook, loader, subject, exec_config)  # type: ignore[assignment]
    extra: dict[str, Any] = {"identity_material": selection.identity_material(), "context": selection.context_name,
                             "namespace": selection.namespace, "location": os.pathsep.join(map(str, paths))}
    token_file = selection.token_file()
    if token_file is not None:
        extra["token_file"] = token_file
    return cfg, extra


class _PluginLog:
    """Stands for the ``logging`` module in the ``kubernetes`` loader's ``_load_from_exec_plugin``, which catches
    every plugin failure and only ``logging.error``s it on the root logger (``[Errno 2] No such file or directory:
    'x'``, ``exec: process returned 3. <stderr>``): those calls are kept here as the failure, said once by a
    :class:`ConfigError`, and never logged (the plugin's stderr may hold a credential). Nothing global is touched:
    the root logger, its handlers and other threads' logging are as they were (``basicConfig`` elsewhere works).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.failures: list[tuple[str, BaseException | None]] = []

    def error(self, msg: object, *args: object, **_: object) -> None:
        message = str(msg) % args if args else str(msg)
        # Logged as ``logging.error(str(e))`` inside ``except Exception as e``: the exception being handled.
        handled = sys.exc_info()[1]
        with self._lock:
            self.failures.append((message, handled if handled is not None and str(handled) == message else None))

    warning = exception = critical = error

    def take(self) -> list[tuple[str, BaseException | None]]:
        """The failures logged since the last call, forgotten here (the plugin's stderr is kept no longer than the
        refresh that reads it, and a plugin failing on every request holds no more than one run's records)."""
        with self._lock:
            taken, self.failures = self.failures, []
        return taken

    def __getattr__(self, name: str) -> Any:  # anything else the method may use (levels, getLogger)
        return getattr(logging, name)


def _quiet_loader(config_file: str, context: str) -> Any:
    """A ``KubeConfigLoader`` as ``load_kube_config(config_file, context, persist_config=False)`` builds it, whose
    exec-plugin step (at the load and at every token refresh) logs into its ``plugin_log`` (:class:`_PluginLog`):
    the upstream method's own code, run with ``logging`` bound to that log instead of the module."""
    from kubernetes.config import ConfigException, kube_config

    merged = kube_config.KubeConfigMerger(config_file)  # type: ignore[no-untyped-call]
    if merged.config is None:
        raise ConfigException("Invalid kube-config file. No configuration found.")
    loader: Any = kube_config.KubeConfigLoader(  # type: ignore[no-untyped-call]
        config_dict=merged.config, config_base_path=None, active_context=context)
    upstream = kube_config.KubeConfigLoader._load_from_exec_plugin
    log = _PluginLog()
    quiet = types.FunctionType(upstream.__code__, {**upstream.__globals__, "logging": log}, upstream.__name__,
                               upstream.__defaults__, upstream.__closure__)
    loader.plugin_log = log
    loader._load_from_exec_plugin = types.MethodType(quiet, loader)
    return loader


def _refresh_hook(upstream: Callable[[Any], None], loader: Any, subject: str,
                  exec_config: Mapping[str, Any]) -> Callable[[Any], None]:
    """The Configuration's refresh hook, saying why when the plugin fails once its token expired.

    Upstream refreshes 5 minutes before expiry and, when the plugin fails, keeps the token it has; client-go runs
    the plugin once the token expired and fails the request ("getting credentials: exec: executable x failed with
    exit code 1"). Here: a failure before expiry keeps the still-valid token, as both do; after expiry it raises
    :class:`ConfigError`, worded as at the load (never with the plugin's stderr), which the transport turns into
    the request's ``credential refresh failed`` error instead of a request sent with an expired token (a 401 that
    does not say why).
    """
    lock = threading.Lock()

    def refresh(cfg: Any) -> None:
        with lock:  # one plugin run at a time; the failures it logs are its own
            loader.plugin_log.take()
            try:
                upstream(cfg)
            finally:
                # Upstream's ``_set_config`` installs its own hook again on every run: this one stays in its place.
                cfg.refresh_api_key_hook = refresh
            failures = loader.plugin_log.take()
            expiry = loader.__dict__.get("expiry")
        if failures and (not isinstance(expiry, datetime.datetime) or expiry <= _now()):
            raise ConfigError(f"{subject}, refreshing an expired token{_plugin_failure(exec_config, failures)}")

    return refresh


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


_PROCESS_RETURNED = re.compile(r"exec: process returned (-?\d+)(?:\. (.*))?", re.DOTALL)
# A run that looks like a token (base64, base64url, hex, a JWT part) of 20 characters or more with a digit.
_TOKEN_LIKE = re.compile(r"(?=[A-Za-z0-9+/_=-]*[0-9])[A-Za-z0-9+/_=-]{20,}")
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x1f\x7f-\x9f]")
_STDERR_LIMIT = 200


def _plugin_text(text: str, secrets: list[str]) -> str:
    """Plugin output fit for a one-line message: control characters and terminal escapes out, lines joined with
    ``" | "``, credentials redacted (structurally, token-like runs, the values given to the plugin), cut."""
    lines = [" ".join(_CONTROL.sub(" ", line).split()) for line in text.splitlines()]
    joined = " | ".join(line for line in lines if line)
    scrubbed = _TOKEN_LIKE.sub(REDACTED, sanitize(joined, secrets))
    return scrubbed if len(scrubbed) <= _STDERR_LIMIT else scrubbed[:_STDERR_LIMIT - 3] + "..."


def _plugin_failure(exec_config: Mapping[str, Any], failures: list[tuple[str, BaseException | None]]) -> str:
    """Why the plugin gave no credential (the end of the message, after the user), as kubectl says it (client-go's
    ``exec`` authenticator): the executable not found (kubectl: "a client-go credential plugin that is not
    installed", and its ``installHint``), or ``failed with exit code N`` (never with its stderr, which may hold a
    credential), or what the loader found wrong in its output; ``returned no credential`` when the loader said nothing.
    """
    command = str(exec_config.get("command") or "")
    secrets = _plugin_env_values(exec_config)
    if not failures:
        return " returned no credential"
    message, exc = failures[-1]
    if _not_found(exc, message):
        return f': executable "{command}" not found: {_install_hint(exec_config, secrets)}'
    if isinstance(exc, OSError):
        return f': executable "{command}" cannot be run: {exc.strerror or type(exc).__name__}'
    if match := _PROCESS_RETURNED.fullmatch(message):
        # Its stderr is never repeated: no redaction can tell every credential a plugin may print (``password=x``,
        # a JSON token without digits) from the reason, and this message is printed and logged by callers.
        said = " (its stderr is not repeated here: run the command to see it)" if match.group(2) else ""
        return f': executable "{command}" failed with exit code {match.group(1)}{said}'
    reason = message.removeprefix("exec: ")
    if reason.startswith("malformed request"):  # the kubeconfig's exec stanza, not the plugin
        return f": invalid exec configuration: {_plugin_text(reason, secrets)}"
    return f" returned no credential: {_plugin_text(reason, secrets)}"


def _not_found(exc: BaseException | None, message: str) -> bool:
    """Whether the loader's failure says the plugin's executable does not exist (ENOENT, raised or as text)."""
    return isinstance(exc, FileNotFoundError) or (exc is None and message.startswith("[Errno 2] "))


def _plugin_env_values(exec_config: Mapping[str, Any]) -> list[str]:
    """The values the exec stanza's ``env`` gives the plugin: secrets to keep out of messages."""
    env = exec_config.get("env")
    if not isinstance(env, list):
        return []
    return [str(e["value"]) for e in env if isinstance(e, dict) and e.get("value")]


def _install_hint(exec_config: Mapping[str, Any], secrets: list[str]) -> str:
    """The first line of the stanza's ``installHint`` (cleaned), else kubectl's generic "not installed" words."""
    hint = str(exec_config.get("installHint") or "").strip()
    if not hint:
        return "it is not installed, or not on $PATH (a client-go credential plugin)"
    return _plugin_text(hint.splitlines()[0], secrets)


def _loader_failure(exc: Exception, selection: _Selection) -> str:
    """What the ``kubernetes`` loader's own exception says, on one line and without the user's credentials: a file
    it could not read as ``token file PATH: No such file or directory``, anything else as ``Type: message``."""
    if isinstance(exc, OSError) and exc.filename is not None:
        token_file = selection.user.get("tokenFile")
        base = selection.user_file.parent if selection.user_file is not None else Path.cwd()
        named = token_file and os.path.normpath(base / str(token_file)) == os.path.normpath(str(exc.filename))
        text = f"{'token file' if named else 'file'} {exc.filename}: {exc.strerror or type(exc).__name__}"
    else:
        text = f"{type(exc).__name__}: {_first_line(str(exc))}"
    return sanitize(text, _strings_in(selection.user))


_FILE_KEYS = frozenset({"tokenFile", "client-certificate", "client-key"})


def _strings_in(value: object) -> list[str]:
    """Every string value in a kubeconfig stanza (nested) but its file paths: the secrets a message must not
    repeat (tokens, passwords, key data, auth-provider and exec settings)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for key, item in value.items() if key not in _FILE_KEYS for s in _strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings_in(item)]
    return []


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return line[:300]


def api_key_of(cfg: Any) -> str | None:
    """The Authorization value a Configuration holds (prefix applied), after running its refresh hook."""
    hook = getattr(cfg, "refresh_api_key_hook", None)
    if hook is not None:
        hook(cfg)
    keys: Mapping[str, str] = getattr(cfg, "api_key", None) or {}
    prefixes: Mapping[str, str] = getattr(cfg, "api_key_prefix", None) or {}
    # kubernetes >= 33 loads kubeconfig tokens under "BearerToken"; older releases and users use "authorization".
    for name in ("BearerToken", "authorization"):
        value = keys.get(name)
        if value:
            prefix = prefixes.get(name)
            return f"{prefix} {value}" if prefix else str(value)
    return None


def configuration_options(cfg: Any) -> dict[str, Any]:
    """Translate a ``kubernetes.client.Configuration`` into :class:`RequestsTransport` keyword options.

    Args:
        cfg: the Configuration (host, ssl_ca_cert, verify_ssl, cert_file/key_file, api_key + api_key_prefix,
            username/password, proxy, tls_server_name, refresh_api_key_hook).

    Returns:
        Options including ``base_url``; the bearer token is supplied through ``auth_provider`` so that the
        Configuration's refresh hook (exec plugins, expiring tokens) runs before each request, as ``ApiClient``
        does.

    Raises:
        ConfigError: the Configuration has no host.
    """
    host = getattr(cfg, "host", None)
    if not host or not isinstance(host, str):
        raise ConfigError("the kubernetes Configuration has no host")
    options: dict[str, Any] = {"base_url": host, **_tls_options(cfg)}
    if getattr(cfg, "proxy", None):
        options["proxy"] = str(cfg.proxy)
    has_key = bool(getattr(cfg, "api_key", None)) or getattr(cfg, "refresh_api_key_hook", None) is not None
    if has_key:
        options["auth_provider"] = _configuration_auth(cfg)
    elif getattr(cfg, "username", None) or getattr(cfg, "password", None):
        options["username"] = cfg.username or ""
        options["password"] = cfg.password or ""
    return options


def _tls_options(cfg: Any) -> dict[str, Any]:
    """The Configuration's TLS settings as transport options: ``verify``, ``cert`` and ``tls_server_name``."""
    options: dict[str, Any] = {}
    if not getattr(cfg, "verify_ssl", True):
        options["verify"] = False
    elif getattr(cfg, "ssl_ca_cert", None):
        options["verify"] = str(cfg.ssl_ca_cert)
    cert_file, key_file = getattr(cfg, "cert_file", None), getattr(cfg, "key_file", None)
    if cert_file and key_file:
        options["cert"] = (str(cert_file), str(key_file))
    if getattr(cfg, "tls_server_name", None):
        options["tls_server_name"] = str(cfg.tls_server_name)
    return options


def _configuration_auth(cfg: Any) -> Callable[[], dict[str, str]]:
    def provider() -> dict[str, str]:
        value = api_key_of(cfg)
        return {"Authorization": value} if value else {}
    return provider
