"""Reading connection settings from kubeconfig files and ``kubernetes.client.Configuration`` objects.

Loading is delegated to the ``kubernetes`` package's own loader, so exec credential plugins, auth providers,
client certificates and inline CA data behave exactly as they do for ``kubernetes.client``; this module only turns
the result into transport options, adds what that loader lacks (``tokenFile`` re-reading, as client-go does for
projected service-account tokens) and turns its failures into one-line :class:`ConfigError` messages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

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
        candidate = Path(path).expanduser()
        if candidate.is_dir():
            raise ConfigError(f"kubeconfig path is a directory, not a file: {candidate}")
        if not candidate.exists():
            raise ConfigError(f"kubeconfig file not found: {candidate}")
        if not candidate.is_file():
            raise ConfigError(f"kubeconfig path is not a regular file: {candidate}")
        return [candidate]
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


class _Selection:
    """The context, user stanza and file it came from, as kubectl merges several kubeconfig files."""

    def __init__(self, paths: list[Path], context: str | None) -> None:
        docs = [(p, _read_yaml(p)) for p in paths]
        current = context
        if current is None:
            # First file that sets current-context wins, as in clientcmd's merge.
            current = next((str(d["current-context"]) for _, d in docs if d.get("current-context")), None)
        if not current:
            raise ConfigError("no context chosen: the kubeconfig has no current-context and none was given "
                              f"({', '.join(map(str, paths))})")
        self.context_name = current
        ctx: dict[str, Any] | None = None
        for _, doc in docs:
            found, ok = _named(doc.get("contexts"), current)
            if ok:
                ctx = found
                break
        if ctx is None:
            raise ConfigError(f'context "{current}" not found in kubeconfig {", ".join(map(str, paths))}')
        self.namespace = str(ctx.get("namespace") or "")
        self.user_name = str(ctx.get("user") or "")
        self.cluster_name = str(ctx.get("cluster") or "")
        cluster: dict[str, Any] | None = None
        for _, doc in docs:
            found, ok = _named(doc.get("clusters"), self.cluster_name)
            if ok:
                cluster = found
                break
        if cluster is None:
            raise ConfigError(f'cluster "{self.cluster_name}" of context "{current}" not found in kubeconfig')
        if not cluster.get("server"):
            # kubectl: "invalid configuration: no server found for cluster".
            raise ConfigError(f'invalid kubeconfig: no server found for cluster "{self.cluster_name}"')
        self.user: dict[str, Any] = {}
        self.user_file: Path | None = None
        for path, doc in docs:
            found, ok = _named(doc.get("users"), self.user_name)
            if ok:
                self.user, self.user_file = found, path
                break

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
        ConfigError: no file, unknown context, invalid content, or an exec plugin that yields no credential.
    """
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    paths = kubeconfig_paths(path)
    selection = _Selection(paths, context)
    cfg = k8s_client.Configuration()
    try:
        k8s_config.load_kube_config(config_file=os.pathsep.join(map(str, paths)), context=selection.context_name,
                                    client_configuration=cfg,
                                    persist_config=False)  # type: ignore[no-untyped-call]
    except k8s_config.ConfigException as exc:
        raise ConfigError(f"invalid kubeconfig {', '.join(map(str, paths))} (context \"{selection.context_name}\"): "
                          f"{_first_line(str(exc))}") from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ConfigError(f"invalid kubeconfig {', '.join(map(str, paths))} (context \"{selection.context_name}\"): "
                          f"{type(exc).__name__}") from None
    if "exec" in selection.user and not api_key_of(cfg) and not getattr(cfg, "cert_file", None):
        raise ConfigError(f'exec credential plugin of user "{selection.user_name}" returned no credential')
    extra: dict[str, Any] = {"identity_material": selection.identity_material(), "context": selection.context_name,
                             "namespace": selection.namespace, "location": os.pathsep.join(map(str, paths))}
    token_file = selection.token_file()
    if token_file is not None:
        extra["token_file"] = token_file
    return cfg, extra


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
    options: dict[str, Any] = {"base_url": host}
    if not getattr(cfg, "verify_ssl", True):
        options["verify"] = False
    elif getattr(cfg, "ssl_ca_cert", None):
        options["verify"] = str(cfg.ssl_ca_cert)
    cert_file, key_file = getattr(cfg, "cert_file", None), getattr(cfg, "key_file", None)
    if cert_file and key_file:
        options["cert"] = (str(cert_file), str(key_file))
    if getattr(cfg, "proxy", None):
        options["proxy"] = str(cfg.proxy)
    if getattr(cfg, "tls_server_name", None):
        options["tls_server_name"] = str(cfg.tls_server_name)
    has_key = bool(getattr(cfg, "api_key", None)) or getattr(cfg, "refresh_api_key_hook", None) is not None
    if has_key:
        options["auth_provider"] = _configuration_auth(cfg)
    elif getattr(cfg, "username", None) or getattr(cfg, "password", None):
        options["username"] = cfg.username or ""
        options["password"] = cfg.password or ""
    return options


def _configuration_auth(cfg: Any) -> Callable[[], dict[str, str]]:
    def provider() -> dict[str, str]:
        value = api_key_of(cfg)
        return {"Authorization": value} if value else {}
    return provider
