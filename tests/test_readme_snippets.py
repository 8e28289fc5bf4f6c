"""Every Python block of the README compiles, and every name it uses is defined in it, imported, a builtin, or
declared on a first line ``# given: name (what it is), ...`` (a fragment says what it takes from the reader).

A simple name analysis over :mod:`ast` (not scope-aware: a name bound anywhere in the block counts), enough to
catch a snippet that uses ``mapper``, ``watcher`` or ``tmp_path`` without saying where it comes from. Review 9, F6.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_GIVEN = re.compile(r"#\s*given:\s*(.*)")


def blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def given(block: str) -> set[str]:
    """The names a block's first-line ``# given:`` comment declares (parenthesised explanations dropped)."""
    first = block.lstrip().splitlines()[0] if block.strip() else ""
    m = _GIVEN.match(first)
    if m is None:
        return set()
    text = m.group(1)
    while (shorter := re.sub(r"\([^()]*\)", "", text)) != text:  # drop explanations, nested ones too
        text = shorter
    return {part.strip() for part in text.split(",") if part.strip()}


def undefined(block: str) -> dict[str, int]:
    """Names the block reads but never binds, imports or takes as a builtin: name -> first line."""
    tree = compile(block, "<README>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    bound = set(dir(builtins)) | given(block)
    read: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                read.setdefault(node.id, node.lineno)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {name: line for name, line in read.items() if name not in bound}


def test_the_readme_has_python_blocks() -> None:
    assert len(blocks()) >= 5


@pytest.mark.parametrize("line, block", blocks(), ids=[f"README.md:{line}" for line, _ in blocks()])
def test_every_readme_block_defines_what_it_uses(line: int, block: str) -> None:
    missing = undefined(block)
    assert not missing, (f"README.md:{line}: the block uses {sorted(missing)} without defining or importing them; "
                         "define them, or declare a fragment with a first line '# given: name (what it is)'")


def test_the_analysis_catches_an_undefined_name() -> None:
    assert undefined("from x import a\nprint(a, watcher)\n") == {"watcher": 2}
    assert undefined("# given: api_client (an ApiClient)\nf(api_client)\n") == {"f": 2}
    assert undefined("def t(tmp_path):\n    return tmp_path\n") == {}
    assert undefined("x = await g()\n") == {"g": 1}
    assert given("# given: a (an A, e.g. f()), b\n") == {"a", "b"}
