"""Credential scrubbing: lives in :mod:`restmapper._redact` (below the wire layer, whose messages quote bodies)."""

from restmapper._redact import REDACTED, SecretBook, sanitize, strip_userinfo

__all__ = ["REDACTED", "SecretBook", "sanitize", "strip_userinfo"]
