"""``restmapper serve``: the embedded cluster on loopback until SIGINT or SIGTERM."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["serve_forever"]


class _Stop(Exception):
    """Raised in the main thread by the SIGTERM handler to leave the wait loop."""


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    def handler(signum: int, frame: Any) -> None:
        raise _Stop

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:
        # Not the main thread (an embedding caller): only KeyboardInterrupt or the caller's wait stops us.
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve_forever(*, host: str, port: int, legacy: bool, kubeconfig_out: str | None, out: TextIO,
                  wait: Callable[[], None] | None = None) -> int:
    """Serve :meth:`FakeCluster.embedded` over HTTP until interrupted, printing its URL and kubeconfig path.

    Args:
        host: the address to bind (loopback by default; the server has no authentication).
        port: the port (0 picks a free one; the chosen one is printed).
        legacy: serve legacy discovery only (a pre-1.26 server) instead of aggregated discovery.
        kubeconfig_out: where to write the kubeconfig (mode 0600); None writes it in a private temporary
            directory removed on exit.
        out: where to print the ``url:``/``kubeconfig:`` lines (flushed at once, for a reading parent process).
        wait: blocks until the server should stop (for embedding and tests); default: until SIGINT or SIGTERM.

    Returns:
        0 after a clean shutdown.

    Raises:
        OSError: the address cannot be bound or the kubeconfig cannot be written.
    """
    from restmapper.testing import FakeCluster

    cluster = FakeCluster.embedded(mode="legacy" if legacy else "aggregated")
    with cluster.serve(host=host, port=port, kubeconfig_path=kubeconfig_out) as served:
        flavour = "legacy" if legacy else "aggregated"
        out.write(f"Serving the embedded cluster ({flavour} discovery); stop with Ctrl-C or SIGTERM.\n")
        out.write(f"url: {served.url}\n")
        out.write(f"kubeconfig: {served.kubeconfig_path}\n")
        out.write(f"try: kubectl --kubeconfig {served.kubeconfig_path} api-resources\n")
        out.flush()
        try:
            if wait is not None:
                wait()
            else:
                with _sigterm_stops():
                    while True:
                        time.sleep(3600)
        except (KeyboardInterrupt, _Stop):
            pass
    out.write("stopped\n")
    out.flush()
    return 0
