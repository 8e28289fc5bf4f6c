"""``python -m bench``: run the benchmark suite and print the table."""

from __future__ import annotations

from bench.run import main

raise SystemExit(main())
