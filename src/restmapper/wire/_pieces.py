"""Reading a large JSON text one piece at a time, so that no tree of the whole document is ever built.

The standard library's C decoder (:meth:`json.JSONDecoder.raw_decode`) reads every value; :class:`Cursor` reads
only the punctuation of the objects and arrays a caller walks into (``{``, ``"key"``, ``:``, ``,``, ``]``), with
the grammar of RFC 8259 as :func:`json.loads` applies it. Anything the walk does not accept (a syntax error, a
duplicate key in a walked object, a value of another type where the caller walks in) raises a ``ValueError``, as
the decoder does (or ``RecursionError``): the caller then re-reads the text whole with :func:`json.loads`, which
gives the precise error (or, for a valid document of an unusual shape, the same value).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, cast

__all__ = ["DECODER", "Cursor", "Piece", "decode_piece", "piece_text", "reject_constant"]

Piece = tuple[str, int, int] | str | bytes
"""The JSON text of one value. In an ASCII text (one byte a character: a real ``/apis``), where it is:
``(text, start, end)``, the value being ``text[start:end]`` and the text shared. In any other text (a single non-BMP
character makes every character of the decoded text four bytes), a copy of the value's own text: ``str`` when that
is ASCII, else its UTF-8 ``bytes``. Either way about what the value takes in the body."""


def reject_constant(name: str) -> Any:
    """``parse_constant`` hook: Python accepts NaN/Infinity; Go's ``encoding/json`` (kube-apiserver) never does."""
    raise ValueError(f"invalid JSON constant {name}")


DECODER = json.JSONDecoder(parse_constant=reject_constant)
"""The strict decoder every discovery document is read with (no NaN/Infinity, no control characters in strings)."""

_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's four whitespace characters, as json.decoder.WHITESPACE
# ``[...]*`` matches (possibly empty) at every position: never None.
_ws = cast("Callable[[str, int], re.Match[str]]", _WHITESPACE.match)
_raw_decode = DECODER.raw_decode


def decode_piece(piece: Piece) -> Any:
    """Decode ``piece`` (read by :meth:`Cursor.value_piece`, so known to be valid JSON)."""
    if isinstance(piece, tuple):
        return _raw_decode(piece[0], piece[1])[0]
    return _raw_decode(piece if isinstance(piece, str) else piece.decode())[0]


def piece_text(piece: Piece) -> str | bytes:
    """The JSON text of ``piece`` (a copy when it is a span of a shared text)."""
    if isinstance(piece, tuple):
        text, start, end = piece
        return text[start:end]
    return piece


class _Unreadable(ValueError):
    """The text is not in the shape the walk reads: re-read it whole."""


class Cursor:
    """A position in a JSON text, always just past whitespace.

    Walk into an object with :meth:`members` and into an array with :meth:`elements`; read every other value
    with :meth:`value` (or :meth:`value_span`). Each member or element must be read (or walked into) before the
    walk moves on.
    """

    __slots__ = ("compact", "pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.compact = text.isascii()  # one byte a character: pieces are spans of it (O(1), a flag of the str)
        self.pos = _ws(text, 0).end()

    def at(self, char: str) -> bool:
        """True when the next value starts with ``char`` (``"{"`` or ``"["``)."""
        return self.text.startswith(char, self.pos)

    def value(self) -> Any:
        """Decode the value here and move past it."""
        value, end = _raw_decode(self.text, self.pos)
        self.pos = _ws(self.text, end).end()
        return value

    def value_piece(self) -> tuple[Any, Piece]:
        """Decode the value here and move past it; return it with its JSON text (a :data:`Piece`: where it is in
        an ASCII text, else a copy)."""
        start = self.pos
        value, end = _raw_decode(self.text, start)
        self.pos = _ws(self.text, end).end()
        if self.compact:
            return value, (self.text, start, end)
        piece = self.text[start:end]
        return value, piece if piece.isascii() else piece.encode()

    def members(self) -> Iterator[str]:
        """Walk into the object here: yield each key with the cursor at its value, then move past the object.

        Raises:
            ValueError: not an object, a syntax error, or a key that appears twice (JSON's "last one wins" is
                left to the whole-text reading).
        """
        text = self.text
        if not text.startswith("{", self.pos):
            raise _Unreadable
        pos = _ws(text, self.pos + 1).end()
        if text.startswith("}", pos):
            self.pos = _ws(text, pos + 1).end()
            return
        seen: set[str] = set()
        while True:
            if not text.startswith('"', pos):
                raise _Unreadable
            key, pos = _raw_decode(text, pos)
            if key in seen:
                raise _Unreadable
            seen.add(key)
            pos = _ws(text, pos).end()
            if not text.startswith(":", pos):
                raise _Unreadable
            self.pos = _ws(text, pos + 1).end()
            yield key
            pos = self.pos
            if text.startswith(",", pos):
                pos = _ws(text, pos + 1).end()
            elif text.startswith("}", pos):
                self.pos = _ws(text, pos + 1).end()
                return
            else:
                raise _Unreadable

    def elements(self) -> Iterator[None]:
        """Walk into the array here: yield once per element with the cursor at it, then move past the array.

        Raises:
            ValueError: not an array, or a syntax error.
        """
        text = self.text
        if not text.startswith("[", self.pos):
            raise _Unreadable
        self.pos = _ws(text, self.pos + 1).end()
        if text.startswith("]", self.pos):
            self.pos = _ws(text, self.pos + 1).end()
            return
        while True:
            yield None
            pos = self.pos
            if text.startswith(",", pos):
                self.pos = _ws(text, pos + 1).end()
            elif text.startswith("]", pos):
                self.pos = _ws(text, pos + 1).end()
                return
            else:
                raise _Unreadable

    def finish(self) -> None:
        """Raise :class:`ValueError` unless the whole text was read (only whitespace may follow the value)."""
        if self.pos != len(self.text):
            raise _Unreadable
