"""``python -m restmapper.cli``: the same as the ``restmapper`` console script."""

from __future__ import annotations

import sys

from restmapper.cli import main

sys.exit(main())
