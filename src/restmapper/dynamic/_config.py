"""A ``kubernetes.client.ApiClient`` for resolved settings, loaded by the ``kubernetes`` package's own loaders."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from restmapper.errors import ConfigError
from restmapper.transport import ClientConfig

__all__ = ["api_client_for"]


def api_client_for(config: ClientConfig) -> Any:
    """Return a ``kubernetes.client.ApiClient`` connected as ``config`` says.

    Args:
        config: settings from :func:`~restmapper.transport.resolve_config` or
            :func:`~restmapper.transport.incluster_config`.

    Returns:
        The ApiClient. A kubeconfig is loaded by ``kubernetes.config.load_kube_config`` (exec plugins, auth
        providers and client certificates as in ``kubernetes.client``); a service account by
        ``kubernetes.config``'s in-cluster loader, which re-reads the token file every minute.

    Raises:
        ConfigError: the ``kubernetes`` loader rejects the settings (one line, no credential).
    """
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.config.incluster_config import InClusterConfigLoader

    cfg = k8s_client.Configuration()
    try:
        if config.source == "in-cluster":
            folder, server = Path(config.location), urlsplit(config.server)
            environ = {"KUBERNETES_SERVICE_HOST": str(server.hostname), "KUBERNETES_SERVICE_PORT": str(server.port)}
            InClusterConfigLoader(token_filename=str(folder / "token"), cert_filename=str(folder / "ca.crt"),
                                  environ=environ).load_and_set(cfg)  # type: ignore[no-untyped-call]
        else:
            k8s_config.load_kube_config(config_file=config.location, context=config.context,
                                        client_configuration=cfg,
                                        persist_config=False)  # type: ignore[no-untyped-call]
    except k8s_config.ConfigException as exc:
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else "unknown error"
        raise ConfigError(f"cannot use {config.source} settings from {config.location}: {line[:300]}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot use {config.source} settings from {config.location}: "
                          f"{type(exc).__name__}") from None
    return k8s_client.ApiClient(cfg)

