"""The optional on-disk snapshot of a :class:`SelfHealingDiscoverer` (only when the caller names a file).

Written atomically (a private temporary file in the same directory, then ``os.replace``) with mode 0600, never
through a symlink; read tolerantly (anything unreadable, corrupt, of another format or of another server is a
miss). Upstream ``kubernetes.dynamic`` writes ``osrcp-<md5(host)>.json`` into the shared temp dir, world-readable
by default umask, follows symlinks and crashes or wipes on a bad file: docs/design.md §10 forbids all of that.

Persisting is best effort and never on a lookup's path: a :class:`Persister` thread merges snapshots under a
``filelock`` lock (``flock`` on POSIX, ``msvcrt`` on Windows) waited for at most ``lock_timeout`` seconds; a lock
held by another process, or a lock file another user created, skips the write with a log line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
from collections.abc import Callable, Collection, Iterable
from typing import Any

import filelock

from restmapper.cache import GroupEntry
from restmapper.model import APIGroup, APIResource, APIResourceList, GroupVersion

__all__ = ["DEFAULT_LOCK_TIMEOUT", "FORMAT", "CacheFile", "Persister", "merge_snapshot", "read_snapshot",
           "snapshot_doc", "snapshot_entries", "write_snapshot"]

DEFAULT_LOCK_TIMEOUT = 5.0
"""Seconds a write waits for the cache file's lock before it is skipped."""

log = logging.getLogger("restmapper.dynamic")

FORMAT = "restmapper.dynamic/v1"
_MAX_BYTES = 64 * 1024 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_snapshot(path: str, server: str) -> dict[str, Any] | None:
    """Return the snapshot stored at ``path`` for ``server``, or None (missing, corrupt, foreign, symlink).

    Args:
        path: the cache file.
        server: the server identity the snapshot must have been written for.

    Returns:
        The decoded document, or None for any kind of miss (logged at debug level; never raises).
    """
    try:
        # O_NONBLOCK: opening a FIFO planted at the path must not hang (it is then refused as not a regular file).
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        log.debug("no usable discovery cache file at %s: %s", path, exc.strerror)
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        log.warning("ignoring corrupt discovery cache file %s", path)
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("server") != server:
        return None
    return doc


def write_snapshot(path: str, doc: dict[str, Any]) -> bool:
    """Atomically replace ``path`` with ``doc`` as JSON (mode 0600); refuse to write through a symlink.

    Args:
        path: the cache file; its directory must exist.
        doc: a JSON-serializable document.

    Returns:
        True when written; False when the write failed or ``path`` is a symlink (logged, never raised:
        a cache that cannot be written is not worth failing a lookup for, as upstream).
    """
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            log.warning("not writing the discovery cache through the symlink %s", path)
            return False
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{id(doc):x}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except OSError as exc:
        log.warning("cannot write the discovery cache file %s: %s", path, exc.strerror)
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            if hasattr(os, "fchmod"):  # not on Windows before 3.13, where the mode bits mean little anyway
                os.fchmod(f.fileno(), 0o600)
            json.dump(doc, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        return True
    except (OSError, TypeError, ValueError) as exc:
        log.warning("cannot write the discovery cache file %s: %s", path, exc)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def _api_resource_doc(r: APIResource) -> dict[str, Any]:
    return {"name": r.name, "singularName": r.singular_name, "namespaced": r.namespaced, "kind": r.kind,
            "verbs": list(r.verbs), "shortNames": list(r.short_names), "categories": list(r.categories),
            "group": r.group, "version": r.version, "storageVersionHash": r.storage_version_hash}


def _api_resource(d: dict[str, Any]) -> APIResource:
    return APIResource(str(d["name"]), str(d.get("singularName") or ""), bool(d["namespaced"]), str(d["kind"]),
                       tuple(map(str, d.get("verbs") or ())), tuple(map(str, d.get("shortNames") or ())),
                       tuple(map(str, d.get("categories") or ())), d.get("group"), d.get("version"),
                       d.get("storageVersionHash"))


def snapshot_doc(server: str, version: dict[str, Any] | None, entries: Iterable[GroupEntry]) -> dict[str, Any]:
    """The snapshot document of the groups ``entries`` (and the ``/version`` document) of ``server``."""
    groups = [{"name": e.name, "versions": list(e.group.versions), "preferred": e.group.preferred_version,
               "resources": {gv.version: [_api_resource_doc(r) for r in rl.resources]
                             for gv, rl in e.resources.items()}}
              for e in entries]
    return {"format": FORMAT, "server": server, "version": version, "groups": groups}


def snapshot_entries(doc: dict[str, Any], names: Collection[str] | None) -> list[GroupEntry]:
    """The cache entries of the groups ``names`` (None: all) a snapshot holds (never fresh: generation < 0).

    Raises:
        KeyError, TypeError, ValueError, AttributeError: the snapshot has an unexpected shape.
    """
    entries = []
    for i, g in enumerate(doc["groups"]):
        if names is not None and g["name"] not in names:
            continue
        group = APIGroup(str(g["name"]), tuple(map(str, g["versions"])), g.get("preferred"))
        resources = {GroupVersion(group.name, v): APIResourceList(
            GroupVersion(group.name, v), tuple(_api_resource(r) for r in rs))
            for v, rs in g["resources"].items()}
        entries.append(GroupEntry(group, resources, {}, 0.0, -1 - i))
    return entries


def _merged(doc: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
    """``doc`` with the groups of ``current`` it lacks (and its version, when ``doc`` has none)."""
    if current is None or not isinstance(current.get("groups"), list):
        return doc
    mine = {g.get("name") for g in doc.get("groups", ()) if isinstance(g, dict)}
    kept = [g for g in current["groups"] if isinstance(g, dict) and g.get("name") not in mine]
    return {**doc, "groups": [*doc.get("groups", ()), *kept], "version": doc.get("version") or current.get("version")}


def merge_snapshot(path: str, server: str, doc: dict[str, Any], *,
                   lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> bool:
    """Merge ``doc`` into the snapshot at ``path`` under an exclusive lock, then replace it atomically.

    Several processes may share one cache file, each knowing only the groups it looked up. Readers never see a
    torn file (writes are a rename); writers take ``<path>.lock`` (``filelock``: mode 0600, never through a
    symlink) so that none of them loses another's groups: groups in ``doc`` replace those of the same name, the
    others are kept.

    Args:
        path: the cache file; its directory must exist.
        server: the server identity both snapshots must be for (another server's file is replaced, not merged).
        doc: the new snapshot (``{"format", "server", "version", "groups": [{"name", ...}, ...]}``).
        lock_timeout: seconds to wait for the lock (0: one attempt).

    Returns:
        True when written; False when the lock was not had in time, could not be taken (a lock file another user
        created, a read-only directory) or the write failed: logged, never raised.
    """
    lock_path = os.path.abspath(path) + ".lock"
    lock = filelock.FileLock(lock_path, timeout=lock_timeout, mode=0o600, thread_local=False)
    try:
        with lock:
            return write_snapshot(path, _merged(doc, read_snapshot(path, server)))
    except filelock.Timeout:
        log.warning("not writing the discovery cache file %s: its lock %s stayed busy for %gs", path, lock_path,
                    lock_timeout)
    except (OSError, NotImplementedError) as exc:
        log.warning("not writing the discovery cache file %s: cannot lock %s: %s", path, lock_path,
                    getattr(exc, "strerror", None) or type(exc).__name__)
    return False


class Persister:
    """Writes snapshots on its own thread, so that a lookup never waits on the file, its lock or the disk.

    Only the newest pending snapshot is written (an older one still waiting is replaced). The thread exists only
    while there is something to write; it is not a daemon, so a snapshot handed over before the interpreter exits is
    written (or skipped after ``lock_timeout``), never cut half-way.

    Args:
        path: the cache file.
        server: the server identity of the snapshots.
        lock_timeout: seconds one write waits for the file's lock before it is skipped (logged).
        on_skip: called (on the writer thread) after a write was skipped, so the owner submits it again later.
    """

    def __init__(self, path: str, server: str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                 on_skip: Callable[[], None] | None = None) -> None:
        self.path = path
        self.server = server
        self.lock_timeout = lock_timeout
        self._on_skip = on_skip
        self._cond = threading.Condition()  # guards _pending, _busy, _written, _skipped
        self._pending: dict[str, Any] | None = None
        self._busy = False
        self.written = 0
        self.skipped = 0

    def submit(self, doc: dict[str, Any]) -> None:
        """Hand ``doc`` over for writing and return at once."""
        with self._cond:
            self._pending = doc
            if self._busy:
                return
            self._busy = True
        threading.Thread(target=self._run, name="restmapper-cache-file", daemon=False).start()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until nothing is pending or being written; False when ``timeout`` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                doc, self._pending = self._pending, None
                if doc is None:
                    self._busy = False
                    self._cond.notify_all()
                    return
            ok = False
            try:
                ok = merge_snapshot(self.path, self.server, doc, lock_timeout=self.lock_timeout)
            except Exception:  # a bug must not leave _busy set forever: log it, count it as skipped
                log.exception("writing the discovery cache file %s failed", self.path)
            with self._cond:
                if ok:
                    self.written += 1
                else:
                    self.skipped += 1
            if not ok and self._on_skip is not None:
                self._on_skip()


class CacheFile:
    """A discoverer's cache file: the snapshot read when it is opened (answers when discovery fails) and the
    background writes (:class:`Persister`) of what was discovered since.

    Args:
        path: the file.
        server: the server identity the snapshot is for (another server's snapshot is not read).
        lock_timeout: seconds a background write waits for the file's lock before it is skipped.

    Attributes:
        path: the file.
        server: the server identity its snapshots are for.
    """

    def __init__(self, path: str, server: str, lock_timeout: float) -> None:
        self.path = path
        self.server = server
        self._snapshot = read_snapshot(path, server)
        self._lock = threading.Lock()  # guards _written
        self._written = -1  # the cache generation last handed over for writing
        self._persister = Persister(path, server, lock_timeout, on_skip=self.write_again)

    @property
    def version(self) -> dict[str, Any] | None:
        """The ``/version`` document the snapshot holds, or None."""
        version = None if self._snapshot is None else self._snapshot.get("version")
        return version if isinstance(version, dict) else None

    def entries(self, names: Collection[str] | None) -> list[GroupEntry] | None:
        """The snapshot's cache entries of the groups ``names`` (None: all); None without a usable snapshot."""
        doc = self._snapshot
        if doc is None:
            return None
        try:
            return snapshot_entries(doc, names)
        except (KeyError, TypeError, ValueError, AttributeError):
            log.warning("ignoring a cache file of an unexpected shape: %s", self.path)
            self._snapshot = None
            return None

    def write_again(self) -> None:
        """Write at the next :meth:`write`, whatever its generation (a write was skipped, or the version read)."""
        with self._lock:
            self._written = -1

    def write(self, generation: int, version: dict[str, Any] | None, entries: Iterable[GroupEntry]) -> None:
        """Hand the snapshot of ``entries`` (and the ``/version`` document) over for writing in the background,
        unless the one of cache ``generation`` already was."""
        with self._lock:
            if generation == self._written:
                return
            self._written = generation
        self._persister.submit(snapshot_doc(self.server, version, entries))

    def flush(self, timeout: float | None) -> bool:
        """:meth:`Persister.flush`."""
        return self._persister.flush(timeout)
