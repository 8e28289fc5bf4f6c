"""The ``restmapper`` command: ``api-resources``, ``resolve`` and ``serve`` (see ``restmapper -h``).

``restmapper api-resources`` prints what ``kubectl api-resources`` prints (same rows, order, columns and
filters, plus ``-o json``); ``restmapper resolve ARG...`` shows the group, version, resource, kind and scope
``kubectl get ARG`` would use; ``restmapper serve`` runs the embedded fake cluster on loopback for kubectl.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from restmapper.cli._app import Session, build_parser, run, run_command

__all__ = ["Session", "build_parser", "main", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code (the ``restmapper`` console script).

    Args:
        argv: the arguments after the program name; None reads ``sys.argv[1:]``.

    Returns:
        0 on success, 1 on a reported error, 2 on a usage error, 130 when interrupted.

    With ``argv`` None (the console script and ``python -m restmapper``, which exit next) the objects the command
    loaded are frozen out of the garbage collector (``gc.freeze()``) when it ends, so that shutdown does not traverse
    them (tens of milliseconds with the ``kubernetes`` package loaded); embed the command with :func:`run`.
    """
    try:
        return run_command(argv, session=None, stdout=None, stderr=None, exiting=argv is None)
    except BrokenPipeError:
        # `restmapper api-resources | head`: the reader left. Point stdout at /dev/null so that the
        # interpreter's final flush does not raise again, and stay quiet (Python's documented recipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
