"""Benchmark suite of kube-restmapper against ``kubernetes.dynamic`` (DESIGN.md section 7).

Run ``python -m bench`` (or ``python bench/run.py``) from the repository root; ``--help`` lists the options.
Everything runs in one process against the testing kit's loopback server on 127.0.0.1: a
:class:`restmapper.testing.FakeCluster` with the built-in API plus N synthetic CRD groups.
"""

from __future__ import annotations

__all__: list[str] = []
