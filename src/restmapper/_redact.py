"""Credential scrubbing for every string restmapper lets out (messages, logs, reprs).

Two passes: a structural one (userinfo in URLs, ``Authorization``-looking header values, query strings) and a
literal one that replaces any secret the transport knows about. The second pass is belt and braces: even a
library message we do not control cannot echo a token we hold.

Server text quoted in an error is scrubbed *before* it is cut to a short excerpt (:func:`excerpt`): cutting first
would leave the head of a credential that no longer matches anything. Code that parses server bytes below the
transport layer (``wire``) learns the transport's secrets through :func:`scrubbing`, set by the caller.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import quote, quote_plus, unquote_to_bytes, urlsplit, urlunsplit

REDACTED = "<redacted>"

# scheme://user:pass@host -> scheme://host ; also bare user:pass@host after "//".
# The lookbehind makes a scheme start at the beginning of a run of scheme characters only: without it, a long run
# of letters (a hostile body) costs quadratic time.
_USERINFO = re.compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s'\"]+@")
# "Authorization: Bearer xxx", "'authorization': 'Basic xxx'": the whole value, whatever it holds (a quoted or
# escaped password has spaces and quotes), up to its closing quote (escapes skipped) or else to the end of the line.
# Each branch is a loop over disjoint single characters: linear time whatever the text.
_AUTH_VALUE = re.compile(r"""(?i)((?:proxy-)?authorization['"]?\s*[:=][ \t]*)"""
                         r"""("(?:[^"\\\r\n]|\\.)*"?|'(?:[^'\\\r\n]|\\.)*'?|[^\r\n]*)""")
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


def _redact_auth_value(match: re.Match[str]) -> str:
    value = match.group(2)
    quote_char = value[:1] if value[:1] in ("'", '"') else ""
    return match.group(1) + quote_char + REDACTED + (quote_char if len(value) > 1 and value[-1] == quote_char else "")


def derived_forms(secret: str) -> tuple[str, ...]:
    """``secret`` and every form in which a server or proxy may echo it.

    Base64 (standard and URL-safe, with and without padding), a JSON string's content (ASCII-escaped or not),
    Python ``repr``'s content, hex (lower and upper case) and percent-encoding (``quote`` and ``quote_plus``);
    forms shorter than 3 characters are left out (they would redact ordinary text). Every other percent-encoded
    form (any hex case, any subset of characters encoded) is caught by :func:`sanitize`'s decoding pass.
    """
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret)[1:-1],
             quote(secret, safe=""), quote_plus(secret, safe=""), raw.hex(), raw.hex().upper()}
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.update((text, text.rstrip("=")))
    return tuple(sorted((f for f in forms if len(f) >= 3), key=len, reverse=True))


class SecretBook:
    """The credentials a transport has handed out, each with its derived forms, kept only to scrub text (bounded).

    Thread-safe. The newest :attr:`MAX` credentials are kept: rotating exec or file tokens must not grow it
    without bound, and the newest are the ones in flight.
    """

    MAX = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards _values and _forms
        self._values: dict[str, tuple[str, ...]] = {}
        self._forms: tuple[str, ...] = ()

    def add(self, *values: str | None) -> None:
        """Remember each non-empty value (a token, a password, a header value) and its :func:`derived_forms`."""
        with self._lock:
            for value in values:
                if not value:
                    continue
                self._values.pop(value, None)
                self._values[value] = derived_forms(value)
                while len(self._values) > self.MAX:
                    self._values.pop(next(iter(self._values)))
            self._forms = tuple({f: None for forms in self._values.values() for f in forms})

    def scrub(self, text: str) -> str:
        """``text`` with every remembered form replaced (and scrubbed structurally, as :func:`sanitize`)."""
        with self._lock:
            forms = self._forms
        return sanitize(text, forms)


def sanitize(text: str, secrets: Iterable[str] = ()) -> str:
    """Return ``text`` with URL userinfo, authorization values and every string in ``secrets`` replaced.

    Args:
        text: any message (often ``str()`` of a requests or urllib3 exception).
        secrets: literal secret values to remove (tokens, passwords, header values); empty strings ignored.

    Returns:
        The scrubbed text.
    """
    out = _USERINFO.sub(r"\g<scheme>", text)
    out = _AUTH_VALUE.sub(_redact_auth_value, out)
    out = _SCHEME_VALUE.sub(lambda m: m.group(1) + " " + REDACTED, out)
    # Longest first, so a header value ("Bearer abc") is not half-replaced by its token ("abc").
    wanted = sorted({s for s in secrets if s and len(s) >= 3}, key=len, reverse=True)
    for secret in wanted:
        out = out.replace(secret, REDACTED)
    if wanted and "%" in out:
        out = _scrub_percent_encoded(out, wanted)
    return out


_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\+")


def _scrub_percent_encoded(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every percent-encoded form of ``secrets`` replaced: any hex case, any subset of the characters
    encoded, ``+`` for a space (``quote``, ``quote_plus``, ``encodeURIComponent``, lower-case-hex proxies...).

    Normalises instead of listing variants: ``text`` is percent-decoded to bytes (each byte remembering the span of
    ``text`` it came from, ``+`` read both as itself and as a space) and the secrets are searched in it ignoring
    ASCII case. Linear in ``len(text)`` per secret.
    """
    needles = {s.encode("utf-8", "surrogatepass").lower() for s in secrets}
    spaces = "+" in text and any(b" " in n for n in needles)
    if _surely_absent(text, needles, spaces):
        return text  # the usual case: nothing to map back
    spans: list[tuple[int, int]] = []
    for plus in (False, True) if spaces else (False,):
        decoded, origin = _decoded(text, plus)
        spans.extend(_found_spans(decoded.lower(), origin, needles))
    return _redacted_spans(text, spans) if spans else text


def _surely_absent(text: str, needles: Iterable[bytes], spaces: bool) -> bool:
    """Whether no needle (lower-case bytes) can be in ``text`` percent-decoded (and, with ``spaces``, with ``+``
    read as a space): a quick test before mapping bytes back; False when ``text`` holds a lone surrogate."""
    try:
        quick = unquote_to_bytes(text).lower() + b"\n" + (unquote_to_bytes(text.replace("+", " ")).lower()
                                                          if spaces else b"")
    except UnicodeEncodeError:  # a lone surrogate: no quick check, map every byte
        return False
    return not any(n in quick for n in needles)


def _decoded(text: str, plus: bool) -> tuple[bytes, list[tuple[int, int]]]:
    """``text`` percent-decoded to UTF-8 bytes (``+`` as a space when ``plus``, else as itself), and per decoded
    byte the span of ``text`` it came from."""
    decoded = bytearray()
    origin: list[tuple[int, int]] = []
    pos = 0
    for m in _ESCAPE.finditer(text):
        _add_literal(text[pos:m.start()], pos, decoded, origin)
        escape = m.group()
        decoded += (b" " if plus else b"+") if escape == "+" else bytes.fromhex(escape[1:])
        origin.append((m.start(), m.end()))
        pos = m.end()
    _add_literal(text[pos:], pos, decoded, origin)
    return bytes(decoded), origin


def _add_literal(literal: str, pos: int, decoded: bytearray, origin: list[tuple[int, int]]) -> None:
    """Append ``literal`` (found at ``pos`` in the text) to ``decoded`` as UTF-8, each byte's span to ``origin``."""
    if literal.isascii():
        decoded += literal.encode("ascii")
        origin.extend(zip(range(pos, pos + len(literal)), range(pos + 1, pos + len(literal) + 1), strict=True))
        return
    for i, ch in enumerate(literal, pos):
        b = ch.encode("utf-8", "surrogatepass")
        decoded += b
        origin.extend([(i, i + 1)] * len(b))


def _found_spans(lowered: bytes, origin: list[tuple[int, int]], needles: Iterable[bytes]
                 ) -> list[tuple[int, int]]:
    """The spans of the original text that every occurrence of each needle in ``lowered`` came from."""
    spans: list[tuple[int, int]] = []
    for needle in needles:
        at = lowered.find(needle)
        while at >= 0:
            spans.append((origin[at][0], origin[at + len(needle) - 1][1]))
            at = lowered.find(needle, at + 1)
    return spans


def _redacted_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of ``spans`` (overlapping ones merged) replaced by one :data:`REDACTED`."""
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if end <= pos:
            continue
        if start >= pos:
            out.append(text[pos:start])
            out.append(REDACTED)
        pos = max(pos, end)
    out.append(text[pos:])
    return "".join(out)


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
