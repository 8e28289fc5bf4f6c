"""Rule: moving ``GenerationCache`` to :mod:`restmapper.generation` changed no name users hold.

``restmapper.GenerationCache``, ``restmapper.store.GenerationCache`` and ``restmapper.generation.GenerationCache``
are one class; its stats snapshot pickled by an earlier release (module ``restmapper.store._generation``) still
loads, as the errors' older pickles do; the logger is still ``restmapper.store``.
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import pickle
from pathlib import Path

import pytest

import restmapper
import restmapper.generation
import restmapper.store
from restmapper.generation import GenerationCache, GenerationCacheStats


def test_every_import_path_names_the_same_classes() -> None:
    assert restmapper.GenerationCache is restmapper.store.GenerationCache is GenerationCache
    assert restmapper.store.GenerationCacheStats is GenerationCacheStats


def test_a_failing_dispose_is_logged_under_the_store_logger(caplog: pytest.LogCaptureFixture) -> None:
    def dispose(value: int) -> None:
        raise RuntimeError("boom")

    cache: GenerationCache[dict[str, object], int] = GenerationCache(lambda obj: 1, dispose=dispose)
    obj: dict[str, object] = {"metadata": {"uid": "u1", "generation": 1}}
    cache.get(obj)
    with caplog.at_level(logging.DEBUG, logger="restmapper.store"):
        cache.clear()
    assert cache.stats.dispose_errors == 1
    assert [r.name for r in caplog.records] and {r.name for r in caplog.records} == {"restmapper.store"}


def test_a_stats_snapshot_pickled_before_the_move_still_loads() -> None:
    stats = GenerationCacheStats(**dict.fromkeys((f.name for f in dataclasses.fields(GenerationCacheStats)), 3))
    now = pickle.dumps(stats, protocol=2)
    assert b"crestmapper.generation\nGenerationCacheStats\n" in now
    before = now.replace(b"crestmapper.generation\n", b"crestmapper.store._generation\n")
    assert pickle.loads(before) == stats


def imported_modules(path: Path, package: str) -> set[str]:
    """The modules (and ``module.name`` for each name imported from one) a source file of ``package`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_module_kept_for_old_pickles_is_imported_by_no_module_of_the_package() -> None:
    """``restmapper.store._generation`` exists for unpickling alone: the package's modules import the names from
    :mod:`restmapper.generation`."""
    root = Path(restmapper.__file__).parent
    importers = []
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        package = ".".join(parts if path.name == "__init__.py" else parts[:-1]).removesuffix(".__init__")
        if "restmapper.store._generation" in imported_modules(path, package):
            importers.append(path)
    assert importers == []
