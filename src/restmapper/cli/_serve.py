"""``restmapper serve``: the embedded cluster on loopback until SIGINT or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["serve_forever"]


_POLL = 0.2  # seconds between looks at the stop flag (a signal also cuts the sleep short)


@contextmanager
def _signals_stop(stopping: list[int]) -> Iterator[None]:
    """While inside, SIGTERM and SIGINT only record themselves in ``stopping``: nothing interrupts the cleanup.

    Installed before the server starts and the banner is printed, so a SIGTERM at any moment after launch ends in
    a clean shutdown (the temporary kubeconfig removed) instead of the default action killing the process.
    """

    def handler(signum: int, frame: Any) -> None:
        stopping.append(signum)

    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:
        # Not the main thread (an embedding caller): only the caller's wait stops us.
        pass
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


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

    stopping: list[int] = []
    with _signals_stop(stopping):
        cluster = FakeCluster.embedded(mode="legacy" if legacy else "aggregated")
        with cluster.serve(host=host, port=port, kubeconfig_path=kubeconfig_out) as served:
            flavour = "legacy" if legacy else "aggregated"
            out.write(f"Serving the embedded cluster ({flavour} discovery); stop with Ctrl-C or SIGTERM.\n")
            out.write(f"url: {served.url}\n")
            out.write(f"kubeconfig: {served.kubeconfig_path}\n")
            out.write(f"try: kubectl --kubeconfig {served.kubeconfig_path} api-resources\n")
            out.flush()
            if wait is not None:
                with contextlib.suppress(KeyboardInterrupt):
                    wait()
            else:
                while not stopping:
                    time.sleep(_POLL)
        out.write("stopped\n")
        out.flush()
    return 0
