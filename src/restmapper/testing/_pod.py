"""A simulated pod: a service-account folder, its rotating token, and the environment kubelet sets.

Used with a TLS loopback server (``FakeCluster.serve(tls=True, authorize=account.authorize)``), it lets a test
run code exactly as it runs in a pod: no kubeconfig, ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` set,
``token``, ``ca.crt`` and ``namespace`` under the service-account folder, and a server that answers 401 to any
token it did not issue (or revoked).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from restmapper.testing.server import ServedCluster

__all__ = ["ServiceAccount"]

_POD_VARIABLES = ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG", "POD_NAMESPACE")


class ServiceAccount:
    """A pod's service account: the files kubelet mounts and the tokens the API server accepts.

    Args:
        directory: the folder to create (0700) and fill with ``token`` (0600), ``namespace`` and, once
            :meth:`simulate_pod` runs, ``ca.crt``.
        namespace: what the ``namespace`` file says.

    Attributes:
        directory: the service-account folder.
        namespace: the pod's namespace.
        token: the current token (projected tokens rotate: see :meth:`rotate`).

    Thread-safe: the server's threads call :meth:`authorize` while the test rotates.
    """

    def __init__(self, directory: str | os.PathLike[str], *, namespace: str = "default") -> None:
        self.directory = Path(directory)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.namespace = namespace
        (self.directory / "namespace").write_text(namespace, encoding="utf-8")
        self._lock = threading.Lock()  # guards _accepted and token
        self._accepted: set[str] = set()
        self.token = ""
        self.rotate()

    def rotate(self, *, revoke_previous: bool = True) -> str:
        """Issue a new token and swap it into the ``token`` file atomically, as kubelet does.

        Args:
            revoke_previous: stop accepting the old token at once (a real server accepts it until it expires;
                revoking makes a test prove the client followed the rotation).

        Returns:
            The new token.
        """
        fresh = "sa-" + secrets.token_urlsafe(24)
        staging = self.directory / ".token.tmp"
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(fresh)
        with self._lock:
            os.replace(staging, self.directory / "token")
            if revoke_previous:
                self._accepted.clear()
            self._accepted.add(fresh)
            self.token = fresh
        return fresh

    def authorize(self, headers: Mapping[str, str]) -> bool:
        """Return True when ``headers`` carry ``Authorization: Bearer <a token this account issued>``."""
        value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        scheme, _, token = value.partition(" ")
        with self._lock:
            return scheme.lower() == "bearer" and token.strip() in self._accepted

    @contextlib.contextmanager
    def simulate_pod(self, served: ServedCluster) -> Iterator[dict[str, str]]:
        """Make this process look like a pod of ``served`` until the context exits.

        Copies the served CA to ``ca.crt``, sets ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` to the
        server's address, unsets ``KUBECONFIG`` and ``POD_NAMESPACE``, and points
        :data:`restmapper.transport.config.SERVICE_ACCOUNT_DIR` at this folder; everything is restored on exit.

        Args:
            served: a running server (``tls=True``, so that ``ca.crt`` exists).

        Yields:
            The variables set.

        Raises:
            ValueError: ``served`` is not a TLS server (pods always reach the API server over HTTPS).
        """
        from restmapper.transport import config

        if served.ca_file is None:
            raise ValueError("simulate_pod needs a TLS server: FakeCluster.serve(tls=True, ...)")
        (self.directory / "ca.crt").write_bytes(served.ca_file.read_bytes())
        parts = urlsplit(served.url)
        variables = {"KUBERNETES_SERVICE_HOST": str(parts.hostname), "KUBERNETES_SERVICE_PORT": str(parts.port)}
        saved = {name: os.environ.get(name) for name in _POD_VARIABLES}
        saved_dir = config.SERVICE_ACCOUNT_DIR
        try:
            for name in _POD_VARIABLES:
                os.environ.pop(name, None)
            os.environ.update(variables)
            config.SERVICE_ACCOUNT_DIR = str(self.directory)
            yield variables
        finally:
            config.SERVICE_ACCOUNT_DIR = saved_dir
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    def __repr__(self) -> str:
        return f"ServiceAccount(directory={str(self.directory)!r}, namespace={self.namespace!r})"
