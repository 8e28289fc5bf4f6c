"""The optional on-disk snapshot of a :class:`SelfHealingDiscoverer` (only when the caller names a file).

Written atomically (a private temporary file in the same directory, then ``os.replace``) with mode 0600, never
through a symlink; read tolerantly (anything unreadable, corrupt, of another format or of another server is a
miss). Upstream ``kubernetes.dynamic`` writes ``osrcp-<md5(host)>.json`` into the shared temp dir, world-readable
by default umask, follows symlinks and crashes or wipes on a bad file: DESIGN.md section 6 forbids all of that.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import stat
from typing import Any

__all__ = ["FORMAT", "merge_snapshot", "read_snapshot", "write_snapshot"]

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


def merge_snapshot(path: str, server: str, doc: dict[str, Any]) -> bool:
    """Merge ``doc`` into the snapshot at ``path`` under an exclusive lock, then replace it atomically.

    Several processes may share one cache file, each knowing only the groups it looked up. Readers never see a
    torn file (writes are a rename); writers take ``<path>.lock`` (``flock``, mode 0600, never a symlink) so that
    none of them loses another's groups: groups in ``doc`` replace those of the same name, the others are kept.

    Args:
        path: the cache file; its directory must exist.
        server: the server identity both snapshots must be for (another server's file is replaced, not merged).
        doc: the new snapshot (``{"format", "server", "version", "groups": [{"name", ...}, ...]}``).

    Returns:
        True when written; False when the lock or the write failed (logged, never raised).
    """
    lock_path = os.path.abspath(path) + ".lock"
    try:
        lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
    except OSError as exc:
        log.warning("cannot lock the discovery cache file %s: %s", path, exc.strerror)
        return False
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        current = read_snapshot(path, server)
        merged = dict(doc)
        if current is not None and isinstance(current.get("groups"), list):
            mine = {g.get("name") for g in doc.get("groups", ()) if isinstance(g, dict)}
            kept = [g for g in current["groups"] if isinstance(g, dict) and g.get("name") not in mine]
            merged["groups"] = list(doc.get("groups", ())) + kept
            if merged.get("version") is None:
                merged["version"] = current.get("version")
        return write_snapshot(path, merged)
    finally:
        os.close(lock_fd)  # releases the flock
