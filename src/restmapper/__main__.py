"""``python -m restmapper``: the same as the ``restmapper`` console script."""

from __future__ import annotations

import sys

from restmapper.cli import main

if __name__ == "__main__":
    sys.exit(main())
