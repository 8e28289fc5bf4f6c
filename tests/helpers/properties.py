"""How many examples a property test runs: a bounded number in the default run, many with the long-run flag.

``HYPOTHESIS_PROFILE=explore python -m pytest`` is the flag for long runs (see ``tests/conftest.py``): random
examples, 2,000 per property. A test that names its own ``max_examples`` in a decorator would keep that number
under every profile, so the expensive ones ask :func:`examples` instead: their bounded number by default, the
profile's own under ``explore``.
"""

from __future__ import annotations

import os

from hypothesis import settings

EXPLORE = os.environ.get("HYPOTHESIS_PROFILE", "default") != "default"
"""True when a long-run profile (``explore``) is loaded instead of the default, derandomized one."""


def examples(bounded: int) -> settings:
    """``settings(max_examples=bounded)`` in the default run; the loaded profile's settings under ``explore``."""
    return settings() if EXPLORE else settings(max_examples=bounded)
