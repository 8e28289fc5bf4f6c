"""Credential scrubbing for every string restmapper lets out (messages, logs, reprs).

Two passes: a structural one (userinfo in URLs, ``Authorization``-looking header values, query strings) and a
literal one that replaces any secret the transport knows about. The second pass is belt and braces: even a
library message we do not control cannot echo a token we hold.

Server text quoted in an error is scrubbed *before* it is cut to a short excerpt (:func:`excerpt`): cutting first
would leave the head of a credential that no longer matches anything. Code that parses server bytes below the
transport layer (``wire``) learns the transport's secrets through :func:`scrubbing`, set by the caller.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import urlsplit, urlunsplit

REDACTED = "<redacted>"

# scheme://user:pass@host -> scheme://host ; also bare user:pass@host after "//".
# The lookbehind makes a scheme start at the beginning of a run of scheme characters only: without it, a long run
# of letters (a hostile body) costs quadratic time.
_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'\"]+@")
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


_SCRUB: contextvars.ContextVar[Callable[[str], str] | None] = contextvars.ContextVar("restmapper_scrub", default=None)
# Server text scrubbed around an excerpt: any credential overlapping the excerpt lies wholly inside this margin.
_MARGIN = 16 * 1024


@contextlib.contextmanager
def scrubbing(scrub: Callable[[str], str]) -> Iterator[None]:
    """Within this block (this thread or task), :func:`scrub` also applies ``scrub`` (a transport's secrets)."""
    token = _SCRUB.set(scrub)
    try:
        yield
    finally:
        _SCRUB.reset(token)


def scrub(text: str) -> str:
    """Return ``text`` scrubbed structurally and of the secrets of the enclosing :func:`scrubbing` block."""
    active = _SCRUB.get()
    if active is not None:
        text = active(text)
    return sanitize(text)


def excerpt(text: str, limit: int, *, start: int = 0) -> str:
    """Return at most ``limit`` characters of ``text`` from ``start``, scrubbed before they are cut.

    The scrubbed window reaches :data:`_MARGIN` characters beyond both ends of the excerpt, so a credential
    straddling a cut is replaced whole, never left half-visible.
    """
    start = max(0, min(start, len(text)))
    lo = max(0, start - _MARGIN)
    window = scrub(text[lo:start + limit + _MARGIN])
    # Where ``start`` lands in the scrubbed window: after the scrubbed text before it. A secret straddling
    # ``start`` is redacted whole in ``window``; the offset then falls inside or after its marker, never on it.
    offset = len(scrub(text[lo:start])) if start > lo else 0
    return window[offset:offset + limit]
