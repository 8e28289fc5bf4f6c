"""Where the connection settings come from: a kubeconfig, or the pod's service account.

:func:`resolve_config` is the one place that decides, in controller-runtime's ``config.GetConfig`` order:

1. an explicit kubeconfig path (``--kubeconfig``),
2. ``$KUBECONFIG`` (several files merged, as kubectl does),
3. the in-cluster service account (``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` and the files under
   ``/var/run/secrets/kubernetes.io/serviceaccount``), as client-go ``rest.InClusterConfig``,
4. ``~/.kube/config``.

An explicit path or a set ``$KUBECONFIG`` is used or fails: nothing falls through past a source the user named.
When nothing is usable, the :class:`~restmapper.errors.ConfigError` lists each source tried and why it was skipped.
Every ``from_kubeconfig`` and ``from_incluster`` constructor and the command line go through this module.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from restmapper.errors import ConfigError
from restmapper.transport.kubeconfig import configuration_options, load_kubeconfig

__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "ClientConfig",
    "ConfigConstructors",
    "incluster_config",
    "kubeconfig_config",
    "resolve_config",
]

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where kubelet mounts the pod's service-account token, CA bundle and namespace (read at call time)."""

_TOKEN, _CA, _NAMESPACE = "token", "ca.crt", "namespace"


@dataclass(frozen=True)
class ClientConfig:
    """Resolved connection settings: what :class:`~restmapper.transport.RequestsTransport` is built from.

    Attributes:
        source: ``"kubeconfig"`` or ``"in-cluster"``.
        location: the kubeconfig file(s) (``os.pathsep``-joined) or the service-account directory.
        namespace: the default namespace: the context's ``namespace`` (else ``"default"``), or in a pod
            ``$POD_NAMESPACE``, then the service account's ``namespace`` file, else ``"default"`` (as client-go
            ``clientcmd``'s in-cluster config).
        context: the kubeconfig context used, None in-cluster.
        options: :class:`RequestsTransport` keyword options (``base_url``, ``verify``, credentials...). Never
            printed: ``repr()`` shows only the other fields.
    """

    source: str
    location: str
    namespace: str
    context: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def server(self) -> str:
        """The API server URL."""
        return str(self.options["base_url"])


def _join_host_port(host: str, port: str) -> str:
    """``host:port``, with an IPv6 literal bracketed (Go ``net.JoinHostPort``, as ``rest.InClusterConfig``)."""
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return f"{host}:{port}"
    return f"[{literal}]:{port}" if literal.version == 6 else f"{literal}:{port}"


def incluster_config(service_account_dir: str | os.PathLike[str] | None = None,
                     environ: Mapping[str, str] | None = None) -> ClientConfig:
    """Return the settings of the pod this process runs in, as client-go ``rest.InClusterConfig``.

    Args:
        service_account_dir: the folder holding ``token``, ``ca.crt`` and ``namespace``; None uses
            :data:`SERVICE_ACCOUNT_DIR` (read when called, so tests can point it at a simulated folder).
        environ: the environment to read ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``/``POD_NAMESPACE``
            from; None uses ``os.environ``.

    Returns:
        A ``ClientConfig`` with ``source == "in-cluster"``: ``https://<host>:<port>`` (an IPv6 host bracketed),
        the CA bundle ``ca.crt`` as ``verify`` (system CAs when the file is absent), the ``token`` file as
        ``token_file`` (re-read every minute, so a rotated projected token is followed, as client-go's cached
        file token source does).

    Raises:
        ConfigError: not in a pod (the variables are unset) or the token file is missing or unreadable; the
            message names what is missing and never holds the token.
    """
    env = os.environ if environ is None else environ
    folder = Path(SERVICE_ACCOUNT_DIR if service_account_dir is None else service_account_dir)
    base_url = _service_url(env)
    token = folder / _TOKEN
    _check_token_file(token)
    options: dict[str, Any] = {
        "base_url": base_url,
        "token_file": str(token),
        # The file's path, not its content: the identity must survive token rotation.
        "identity_material": f"in-cluster:{folder.resolve()}",
    }
    ca = folder / _CA
    if ca.is_file():
        options["verify"] = str(ca)
    return ClientConfig("in-cluster", str(folder), _pod_namespace(env, folder), None, options)


def _service_url(env: Mapping[str, str]) -> str:
    """``https://<host>:<port>`` of the API server's service, from the variables the kubelet sets in a pod.

    Raises:
        ConfigError: a variable is unset, or the port is not a port number.
    """
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise ConfigError("not running in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"invalid KUBERNETES_SERVICE_PORT {port[:20]!r}: expected a port number")
    return f"https://{_join_host_port(host, port)}"


def _check_token_file(token: Path) -> None:
    """Raise ConfigError unless the service account's ``token`` file can be read and is not blank."""
    try:
        readable = bool(token.read_bytes().strip())
    except OSError as exc:
        raise ConfigError(f"in-cluster token file {token} cannot be read: {type(exc).__name__}") from None
    if not readable:
        raise ConfigError(f"in-cluster token file {token} is empty")


def _pod_namespace(env: Mapping[str, str], folder: Path) -> str:
    """The pod's namespace: ``$POD_NAMESPACE``, else the service account's ``namespace`` file, else "default"."""
    namespace = env.get("POD_NAMESPACE", "").strip()
    if not namespace:
        try:
            namespace = (folder / _NAMESPACE).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            namespace = ""
    return namespace or "default"


def kubeconfig_config(path: str | os.PathLike[str] | None = None, context: str | None = None) -> ClientConfig:
    """Return the settings a kubeconfig gives, as kubectl reads it (no in-cluster fallback).

    Args:
        path: the kubeconfig file; None reads ``$KUBECONFIG`` (several files merged) or ``~/.kube/config``.
        context: the context; None uses ``current-context``.

    Returns:
        A ``ClientConfig`` with ``source == "kubeconfig"``.

    Raises:
        ConfigError: no file, unknown context, invalid content, or an exec plugin that fails.
    """
    cfg, extra = load_kubeconfig(_kubeconfig_path(path), context)
    options = configuration_options(cfg)
    if "token_file" in extra:
        options.pop("auth_provider", None)
        options["token_file"] = extra["token_file"]
    options["identity_material"] = extra["identity_material"]
    return ClientConfig("kubeconfig", extra["location"], extra["namespace"] or "default", extra["context"], options)


def _kubeconfig_path(path: object) -> str | None:
    """``path`` as a string, None when unset: an empty path is unset, as kubectl treats ``--kubeconfig ""``.

    Raises:
        TypeError: ``path`` is neither a string, an ``os.PathLike`` nor None.
    """
    if path is None:
        return None
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"kubeconfig path must be a str, os.PathLike or None, not {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise TypeError(f"kubeconfig path must be a str path, not {type(text).__name__}")
    return text or None


def resolve_config(path: str | os.PathLike[str] | None = None, context: str | None = None, *,
                   service_account_dir: str | os.PathLike[str] | None = None) -> ClientConfig:
    """Return the connection settings to use, in controller-runtime ``config.GetConfig`` order.

    Args:
        path: an explicit kubeconfig file: used or fails, nothing else is tried. Empty is unset (kubectl).
        context: a kubeconfig context. A pod's service account has no contexts, so naming one skips the in-cluster
            step (controller-runtime would ignore the name there; we prefer not to ignore what was asked).
        service_account_dir: the service-account folder for the in-cluster step (default
            :data:`SERVICE_ACCOUNT_DIR`).

    Returns:
        The first usable source: ``path``; else ``$KUBECONFIG`` when set; else the in-cluster service account;
        else ``~/.kube/config``.

    Raises:
        ConfigError: the named source (``path``, ``$KUBECONFIG``) is unusable (its own message), or nothing
            is usable: then the message lists every source tried and why each was skipped.
        TypeError: ``path`` is not a str, ``os.PathLike`` or None.
    """
    path = _kubeconfig_path(path)
    if path is not None or os.environ.get("KUBECONFIG"):
        return kubeconfig_config(path, context)
    tried = ["$KUBECONFIG: not set"]
    if context is None:
        try:
            return incluster_config(service_account_dir)
        except ConfigError as exc:
            tried.append(f"in-cluster: {exc}")
    else:
        tried.append(f'in-cluster: skipped, context "{context}" was asked for')
    default = Path("~/.kube/config").expanduser()
    if default.is_file():
        return kubeconfig_config(default, context)
    tried.append(f"{default}: does not exist")
    raise ConfigError("no kubeconfig and not in a cluster: tried " + "; ".join(tried))


_C = TypeVar("_C", bound="ConfigConstructors")


class ConfigConstructors:
    """``from_kubeconfig`` and ``from_incluster``, written once for every class built ``from_config``.

    A subclass defines :meth:`from_config` (what to build from resolved settings) and may override
    :meth:`_check_config_options` so that a misspelt keyword fails before any configuration is read.
    """

    @classmethod
    def from_config(cls: type[_C], config: ClientConfig, **options: Any) -> _C:
        """Build an instance from resolved settings (:func:`resolve_config`); defined by each subclass."""
        raise NotImplementedError(f"{cls.__name__}.from_config")

    @classmethod
    def _check_config_options(cls, method: str, options: Mapping[str, Any]) -> None:
        """Raise TypeError naming ``method`` for a keyword :meth:`from_config` would reject (default: none)."""

    @classmethod
    def from_kubeconfig(cls: type[_C], path: str | None = None, context: str | None = None, **options: Any) -> _C:
        """Build an instance from a kubeconfig, or the pod's service account when there is none.

        Args:
            path: the kubeconfig file, or None to resolve as :func:`resolve_config` (``$KUBECONFIG``, in-cluster,
                ``~/.kube/config``: controller-runtime's ``GetConfig`` order).
            context: the context, or None for the current one.
            **options: as the class's :meth:`from_config`.

        Raises:
            ConfigError: no usable source (the message lists those tried), or the kubeconfig is invalid.
            TypeError: an option :meth:`from_config` does not take, or ``path`` is not a str or None (the
                message names this method).
        """
        cls._check_config_options(f"{cls.__name__}.from_kubeconfig", options)
        try:
            config = resolve_config(path, context)
        except TypeError as exc:
            raise TypeError(f"{cls.__name__}.from_kubeconfig(): {exc}") from None
        return cls.from_config(config, **options)

    @classmethod
    def from_incluster(cls: type[_C], service_account_dir: str | None = None, **options: Any) -> _C:
        """Build an instance from the pod's service account (client-go ``rest.InClusterConfig``).

        Args:
            service_account_dir: the service-account folder (default :data:`SERVICE_ACCOUNT_DIR`).
            **options: as the class's :meth:`from_config`.

        Raises:
            ConfigError: not in a pod, or the token file is missing or empty.
            TypeError: an option :meth:`from_config` does not take (the message names this method).
        """
        cls._check_config_options(f"{cls.__name__}.from_incluster", options)
        return cls.from_config(incluster_config(service_account_dir), **options)
