"""Credential scrubbing: lives in :mod:`restmapper._redact` (below the wire layer, whose messages quote bodies)."""

from restmapper._redact import REDACTED, sanitize, strip_userinfo

__all__ = ["REDACTED", "sanitize", "strip_userinfo"]
