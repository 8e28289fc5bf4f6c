"""Credential scrubbing for every string a transport lets out (messages, logs, reprs).

Two passes: a structural one (userinfo in URLs, ``Authorization``-looking header values, query strings) and a
literal one that replaces any secret the transport knows about. The second pass is belt and braces: even a
library message we do not control cannot echo a token we hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

REDACTED = "<redacted>"

# scheme://user:pass@host -> scheme://host ; also bare user:pass@host after "//".
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'\"]+@")
# "Authorization: Bearer xxx", "'authorization': 'Basic xxx'", "Bearer xxx".
_AUTH_VALUE = re.compile(r"(?i)((?:proxy-)?authorization['\"]?\s*[:=]\s*['\"]?)[^'\"\s,}]+(?:\s+[^'\"\s,}]+)?")
_SCHEME_VALUE = re.compile(r"(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+")


def strip_userinfo(url: str) -> str:
    """Return ``url`` without its ``user:password@`` part (and unchanged when it has none)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _USERINFO.sub(r"\g<scheme>", url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def sanitize(text: str, secrets: Iterable[str] = ()) -> str:
    """Return ``text`` with URL userinfo, authorization values and every string in ``secrets`` replaced.

    Args:
        text: any message (often ``str()`` of a requests or urllib3 exception).
        secrets: literal secret values to remove (tokens, passwords, header values); empty strings ignored.

    Returns:
        The scrubbed text.
    """
    out = _USERINFO.sub(r"\g<scheme>", text)
    out = _AUTH_VALUE.sub(lambda m: m.group(1) + REDACTED, out)
    out = _SCHEME_VALUE.sub(lambda m: m.group(1) + " " + REDACTED, out)
    # Longest first, so a header value ("Bearer abc") is not half-replaced by its token ("abc").
    for secret in sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True):
        out = out.replace(secret, REDACTED)
    return out
