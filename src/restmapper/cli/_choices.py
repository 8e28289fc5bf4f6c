"""Option values the argument parser needs before any command module is loaded (``restmapper --help`` and
``restmapper resolve`` do not load the ``api-resources`` code)."""

from __future__ import annotations

__all__ = ["OUTPUT_FORMATS", "SORT_FIELDS"]

OUTPUT_FORMATS = ("wide", "name", "json")
"""Values of ``api-resources -o``: kubectl's ``wide`` and ``name``, plus ``json`` (kubectl 1.32 has no json here)."""

SORT_FIELDS = ("name", "kind")
"""Values of ``api-resources --sort-by`` (as kubectl)."""
