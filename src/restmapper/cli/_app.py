"""Argument parsing, connection set-up and error reporting for the ``restmapper`` command."""

from __future__ import annotations

import argparse
import contextlib
import gc
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from restmapper.cli._choices import OUTPUT_FORMATS, SORT_FIELDS

if TYPE_CHECKING:
    from restmapper.discovery import DiscoveryClient
    from restmapper.mapper import LazyRESTMapper
    from restmapper.transport import RetryPolicy

__all__ = ["Session", "build_parser", "cli_retry", "run", "run_command"]

# Start-up time matters on the command line (kubectl answers --help in ~0.07 s): the discovery, mapper and HTTP
# layers, the errors and the model types are imported by the commands that use them, not by `restmapper --help`.


def cli_retry() -> RetryPolicy:
    """The command line's retry policy: only 429 (with its Retry-After) is retried, briefly.

    A command-line user wants an answer now: an aggregated API answering 503 is reported at once, as kubectl
    does, instead of being retried with backoff.
    """
    from restmapper.transport import RetryPolicy

    return RetryPolicy(max_attempts=2, max_total_seconds=5.0, retry_statuses=frozenset({429}))

_EPILOG = """\
examples:
  restmapper api-resources --embedded              # the built-in cluster, no kubeconfig needed
  restmapper api-resources -o wide --api-group apps
  restmapper resolve deploy svc,cm all certificates.cert-manager.io
  restmapper serve --port 0                        # then: kubectl --kubeconfig PATH api-resources
"""


@dataclass
class Session:
    """The clients one invocation talks through (reusable across invocations, so caches carry over).

    Attributes:
        discovery: the discovery client.
        mapper: the REST mapper over ``discovery`` (built on first use when None).
    """

    discovery: DiscoveryClient
    mapper: LazyRESTMapper | None = field(default=None)

    def rest_mapper(self) -> LazyRESTMapper:
        """Return the mapper, building it over :attr:`discovery` on first use."""
        if self.mapper is None:
            from restmapper.mapper import LazyRESTMapper

            self.mapper = LazyRESTMapper(self.discovery)
        return self.mapper


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "t", "1"):
        return True
    if lowered in ("false", "f", "0"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r} (use true or false)")


def _add_connection(p: argparse.ArgumentParser, *, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    g = p.add_argument_group("connection")
    g.add_argument("--kubeconfig", metavar="PATH", default=default,
                   help="kubeconfig file (default: $KUBECONFIG, then the pod's service account, then "
                        "~/.kube/config)")
    g.add_argument("--context", metavar="NAME", default=default, help="kubeconfig context (default: current)")
    g.add_argument("--embedded", action="store_true", default=argparse.SUPPRESS if suppress else False,
                   help="talk to the embedded fake cluster (built-in APIs and sample CRDs) in-process")
    g.add_argument("--request-timeout", metavar="DURATION", type=_duration, default=default,
                   help="give up on a single server request after this long (e.g. 10s, 1m; 0 = never; "
                        "default: 32s, as kubectl's discovery)")


def _csv_list(value: str) -> list[str]:
    return [v for v in value.split(",") if v]


def build_parser() -> argparse.ArgumentParser:
    """Return the ``restmapper`` argument parser (sub-commands ``api-resources``, ``resolve``, ``serve``)."""
    from restmapper import __version__

    parser = argparse.ArgumentParser(
        prog="restmapper",
        description="Map what you type (deploy, Deployment, certificates.cert-manager.io) to Kubernetes API "
                    "resources through discovery, as kubectl does.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"restmapper {__version__}")
    _add_connection(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ar = sub.add_parser(
        "api-resources", help="list the resources the server serves (as kubectl api-resources)",
        description="Print the supported API resources on the server, one row per resource at its group's "
                    "preferred version, sorted by group then name, as `kubectl api-resources` does. "
                    "-o json prints a list of objects with name, singularName, shortNames, group, apiVersion, "
                    "namespaced, kind, verbs and categories.")
    ar.add_argument("-o", "--output", choices=OUTPUT_FORMATS,
                    help="wide (adds VERBS, CATEGORIES), name (resource.group per line) or json")
    ar.add_argument("--namespaced", type=_bool, nargs="?", const=True, default=None, metavar="BOOL",
                    help="only namespaced (true, the value when none is given) or cluster-scoped (false) resources")
    ar.add_argument("--api-group", metavar="GROUP", help='only resources of this API group ("" for core)')
    ar.add_argument("--verbs", type=_csv_list, action="extend", default=[], metavar="VERB[,VERB]",
                    help="only resources supporting all these verbs (repeatable)")
    ar.add_argument("--categories", type=_csv_list, action="extend", default=[], metavar="CAT[,CAT]",
                    help="only resources in all these categories (repeatable)")
    ar.add_argument("--sort-by", choices=SORT_FIELDS,
                    help="sort by resource name or kind (default: by group, then name)")
    ar.add_argument("--no-headers", action="store_true", help="do not print the header line")
    _add_connection(ar, suppress=True)

    rs = sub.add_parser(
        "resolve", help="show what kubectl get ARG would request",
        description="For each argument (plural, singular, kind, short name, resource.group, "
                    "resource.version.group, comma lists, categories such as all), print the group, version, "
                    "resource, kind and scope `kubectl get ARG` would use. -o json prints a list of objects with "
                    "input, group, version, resource, kind and namespaced (or input, error and reason: NotFound "
                    "when the server has no such type, DiscoveryFailed when it could not be checked, Ambiguous, "
                    "InvalidArgument). Exit status: 0 all resolved, 1 any argument failed (as kubectl), 2 usage.")
    rs.add_argument("args", nargs="+", metavar="ARG",
                    help="a resource type as you would pass to kubectl get (for TYPE/NAME, pass the TYPE)")
    rs.add_argument("-o", "--output", choices=("json",), help="json instead of a table")
    rs.add_argument("--no-headers", action="store_true", help="do not print the header line")
    _add_connection(rs, suppress=True)

    sv = sub.add_parser(
        "serve", help="serve the embedded fake cluster on loopback and print a kubeconfig for it",
        description="Serve the embedded fake cluster over plain HTTP until SIGINT or SIGTERM: discovery of the "
                    "built-in APIs and sample CRDs, and an in-memory API server for their objects (get, list, "
                    "watch, create, update, patch, server-side apply, delete; CRDs you create are served too). "
                    "Prints the URL and a kubeconfig path usable with kubectl. No authentication: keep it on "
                    "loopback.")
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    sv.add_argument("--port", type=_port, default=0, help="port (default: 0, any free port)")
    sv.add_argument("--legacy", action="store_true", help="serve legacy discovery only (a pre-1.26 server)")
    sv.add_argument("--kubeconfig-out", metavar="PATH",
                    help="write the kubeconfig here (default: a private temporary file removed on exit)")
    return parser


@contextlib.contextmanager
def _open_session(args: argparse.Namespace) -> Iterator[Session]:
    from restmapper.discovery import DiscoveryClient

    kubeconfig = getattr(args, "kubeconfig", None)
    context = getattr(args, "context", None)
    if getattr(args, "embedded", False):
        if kubeconfig is not None or context is not None:
            raise _UsageError("--embedded cannot be combined with --kubeconfig or --context")
        from restmapper.cli._embedded import EmbeddedTransport
        from restmapper.testing import FakeCluster

        yield Session(DiscoveryClient(EmbeddedTransport(FakeCluster.embedded())))
        return
    from restmapper.transport import DEFAULT_REQUEST_TIMEOUT, RequestsTransport

    timeout: float | None = getattr(args, "request_timeout", None)
    transport = RequestsTransport.from_kubeconfig(
        kubeconfig, context, retry=cli_retry(),
        request_timeout=DEFAULT_REQUEST_TIMEOUT if timeout is None else (timeout or None))
    try:
        yield Session(DiscoveryClient(transport))
    finally:
        transport.close()


class _UsageError(Exception):
    """A flag combination that cannot work; reported as ``error: ...`` with exit 2 (a usage error)."""


def _api_resources_cmd(args: argparse.Namespace, session: Session, out: TextIO, err: TextIO) -> int:
    from restmapper.cli import _api_resources

    rows, partial = _api_resources.discover(session.discovery)
    rows = _api_resources.filter_rows(rows, api_group=args.api_group, namespaced=args.namespaced,
                                      verbs=args.verbs, categories=args.categories)
    rows = _api_resources.sort_rows(rows, args.sort_by)
    out.write(_api_resources.render(rows, args.output, headers=not args.no_headers))
    out.flush()
    if partial is not None and (args.api_group is None
                                or any(gv.group == args.api_group for gv in partial.failed)):
        # As kubectl: everything that could be listed is printed, then the failure, and the exit code is 1;
        # unless --api-group names a group that was read (kubectl drops the failures of the other groups: they
        # cannot hold rows of the filtered list, which is then complete).
        err.write(f"error: {_api_resources.describe_failures(partial.failed)}\n")
        return 1
    return 0


def _resolve_cmd(args: argparse.Namespace, session: Session, out: TextIO, err: TextIO) -> int:
    from restmapper.cli import _resolve

    resolutions, warnings = _resolve.resolve_args(session.rest_mapper(), args.args)
    for text in warnings:
        err.write(f"Warning: {text}\n")
    out.write(_resolve.render(resolutions, args.output, headers=not args.no_headers))
    out.flush()
    failed = [r for r in resolutions if r.error is not None]
    if args.output != "json":
        for r in failed:
            err.write(f"error: {r.error}\n")
    return 1 if failed else 0


@contextlib.contextmanager
def _collection_paused(*, exiting: bool) -> Iterator[None]:
    """No cyclic garbage collection while a one-shot command (``api-resources``, ``resolve``) runs.

    A command builds a large heap that lives until it ends (the ``kubernetes`` package alone is ~40,000 tracked
    objects, the discovery documents and indexes as many again) and little cyclic garbage: the generational
    collector would traverse that heap again and again for nothing (~40 ms of a ~550 ms ``resolve --kubeconfig``
    here). It is paused for the command and enabled again after it (unless the caller had it off); the garbage
    of the command is collected then. Not for ``serve``, which runs until interrupted.

    ``exiting`` (the console script, which exits next): the heap is moved to the permanent generation
    (``gc.freeze()``) before collection is enabled again, so that neither that first collection nor those of
    interpreter shutdown traverse it (~70 ms more). Exit handlers run as before (``kubernetes`` removes the
    certificate files it wrote from inline kubeconfig data); only garbage cycles left by the command are not
    reclaimed before the process ends (``gc.unfreeze()`` would return them to the collector).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if exiting:
            gc.freeze()
        if enabled:
            gc.enable()


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def run(argv: Sequence[str] | None = None, *, session: Session | None = None, stdout: TextIO | None = None,
        stderr: TextIO | None = None) -> int:
    """Run the ``restmapper`` command and return its exit code (never raises for a bad cluster or input).

    Args:
        argv: the arguments after the program name (None: ``sys.argv[1:]``).
        session: clients to use instead of connecting per ``--kubeconfig``/``--embedded`` (lets a caller run
            several commands over one cache, e.g. to observe ETag revalidation).
        stdout: where results go (default ``sys.stdout``).
        stderr: where warnings and errors go (default ``sys.stderr``).

    Returns:
        0 on success; 1 when an error was reported (``error: ...`` on one line of stderr: unreadable
        kubeconfig, unreachable server, partial discovery, an unresolvable argument); 2 for usage errors
        (argparse's, and flags that cannot be combined such as ``--embedded --kubeconfig``); 130 when
        interrupted.
    """
    return run_command(argv, session=session, stdout=stdout, stderr=stderr, exiting=False)


def run_command(argv: Sequence[str] | None, *, session: Session | None, stdout: TextIO | None,
                stderr: TextIO | None, exiting: bool) -> int:
    """:func:`run`; ``exiting``: the process ends after the command (the console script, see
    :func:`_collection_paused`)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    parser = build_parser()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        out.write(parser.format_help())
        return 0
    from restmapper.errors import RestMapperError  # every command loads it; --help does not

    try:
        return _run_parsed(args, session=session, out=out, err=err, exiting=exiting)
    except _UsageError as exc:  # flags argparse cannot check alone: a usage error, exit 2 as argparse's
        err.write(f"error: {_one_line(exc)}\n")
        return 2
    except (RestMapperError, OSError, ValueError) as exc:
        err.write(f"error: {_one_line(exc)}{_embedded_hint(args, exc, session)}\n")
        return 1
    except KeyboardInterrupt:
        return 130


def _run_parsed(args: argparse.Namespace, *, session: Session | None, out: TextIO, err: TextIO,
                exiting: bool) -> int:
    """Run the command ``args`` name (not None): ``serve``, or a lookup command in ``session`` (None: the one
    the flags describe, opened here and closed after). Raises what the command raises."""
    if args.command == "serve":
        from restmapper.cli._serve import serve_forever

        return serve_forever(host=args.host, port=args.port, legacy=args.legacy,
                             kubeconfig_out=args.kubeconfig_out, out=out)
    command = _api_resources_cmd if args.command == "api-resources" else _resolve_cmd
    with _collection_paused(exiting=exiting):
        if session is not None:
            return command(args, session, out, err)
        with _open_session(args) as opened:
            return command(args, opened, out, err)


def _embedded_hint(args: argparse.Namespace, exc: BaseException, session: Session | None) -> str:
    """After a configuration error ``exc`` of a lookup command run with no session and no cluster named (no
    ``--kubeconfig``, no ``--context``): how to try it without a cluster; else ""."""
    from restmapper.errors import ConfigError

    if not isinstance(exc, ConfigError) or session is not None or args.command == "serve":
        return ""
    if getattr(args, "kubeconfig", None) is not None:
        return ""
    if getattr(args, "context", None) is not None:
        return ""
    return f" (to try it without a cluster: restmapper {args.command} --embedded)"


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|ms|m|s|us|µs|ns)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def _duration(text: str) -> float:
    """argparse type for ``--request-timeout`` as kubectl reads it: a Go duration (``1m30s``) or whole seconds
    (0 means no timeout)."""
    value = text.strip()
    if re.fullmatch(r"\d+", value):
        seconds = float(value)
    else:
        parts = _DURATION_PART.findall(value)
        if not parts or "".join(n + u for n, u in parts) != value:
            raise argparse.ArgumentTypeError(f"invalid duration {text!r} (use e.g. 10s, 1m or 0)")
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    return seconds


def _port(text: str) -> int:
    """argparse type for a TCP port (0 = any free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be between 0 and 65535, got {port}")
    return port
