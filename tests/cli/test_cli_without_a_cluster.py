"""Without a kubeconfig (and outside a pod) the discovery commands say why and suggest ``--embedded``, the built-in
fake cluster that needs none; ``restmapper serve --help`` says it serves objects, not only discovery."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from restmapper.cli import run


@pytest.mark.parametrize("argv", [["api-resources"], ["resolve", "deploy"]])
def test_no_kubeconfig_suggests_embedded(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    out, err = io.StringIO(), io.StringIO()
    assert run(argv, stdout=out, stderr=err) == 1
    message = err.getvalue()
    assert message.startswith("error: no kubeconfig") and message.count("\n") == 1
    assert message.endswith(f" (to try it without a cluster: restmapper {argv[0]} --embedded)\n")


def test_serve_help_says_it_serves_objects() -> None:
    out = io.StringIO()
    assert run(["serve", "--help"], stdout=out, stderr=io.StringIO()) == 0
    text = " ".join(out.getvalue().split())
    assert "empty lists" not in text
    assert "watch, create, update, patch, server-side apply, delete" in text
