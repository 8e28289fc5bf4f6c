"""Every Python block of the README compiles, and every name it uses is defined in it, imported, a builtin, or
declared on a first line ``# given: name (what it is), ...`` (a fragment says what it takes from the reader).

A simple name analysis over :mod:`ast` (not scope-aware: a name bound anywhere in the block counts), enough to
catch a snippet that uses ``mapper``, ``watcher`` or ``tmp_path`` without saying where it comes from.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from restmapper.testing import FakeCluster

README = Path(__file__).resolve().parents[2] / "README.md"
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


def _readme_block(marker: str) -> str:
    readme = README.read_text(encoding="utf-8")
    return next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if marker in b)


@pytest.mark.parametrize("adapters", [False, True])
def test_readme_object_cache_and_adapters_snippets_run_as_written(monkeypatch: pytest.MonkeyPatch,
                                                                   adapters: bool) -> None:
    if adapters:
        pytest.importorskip("kr8s")
        pytest.importorskip("lightkube")
    from kubernetes import config, dynamic

    with FakeCluster.embedded().serve() as served:
        monkeypatch.setenv("KUBECONFIG", str(served.kubeconfig_path))
        dc = dynamic.DynamicClient(config.new_client_from_config(config_file=str(served.kubeconfig_path)))
        certs = dc.resources.get(api_version="cert-manager.io/v1", kind="Certificate")
        updated = dc.create(certs, namespace="default", body={
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c1", "labels": {
                "tier": "gold"}}, "spec": {"secretName": "s", "issuerRef": {"name": "i"}}}).to_dict()
        ns: dict[str, object] = {"updated": updated}
        if adapters:
            exec(_readme_block("kr8s_class(mapping)"), ns)
            assert [c.metadata.name for c in ns["certs"]] == ["c1"]  # type: ignore[attr-defined]
            assert any("/apis/cert-manager.io/v1/namespaces/default/certificates" in r.path
                       for r in served.cluster.requests if r.method == "GET")
        else:
            exec(_readme_block("ObjectCache.from_kubeconfig"), ns)
            assert ns["web"] is None
            assert [g["metadata"]["name"] for g in ns["gold"]] == ["c1"]  # type: ignore[attr-defined]
