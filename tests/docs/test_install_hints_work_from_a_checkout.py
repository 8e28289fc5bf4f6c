"""Every message that says how to install an optional dependency gives the form that works from a source checkout
too (``pip install '.[extra]'``: the project's name means nothing to pip there), and names the extra that really
brings the package (the kit's TLS mode needs ``cryptography``, which the ``testing`` extra installs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomllib

from restmapper._optional import missing
from restmapper.testing import FakeCluster

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_optional_module_names_both_install_forms() -> None:
    error = missing("restmapper.metrics", "prometheus_client", "prometheus")
    assert "pip install 'kube-restmapper[prometheus]'" in str(error)
    assert "pip install '.[prometheus]'" in str(error)


def test_tls_without_cryptography_names_the_testing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cryptography", None)  # as if not installed
    with pytest.raises(ModuleNotFoundError) as info, FakeCluster().serve(tls=True):
        pass
    assert "pip install 'kube-restmapper[testing]'" in str(info.value)
    assert "pip install '.[testing]'" in str(info.value)
    testing = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["testing"]
    assert any(req.startswith("cryptography") for req in testing)


def test_mock_without_responses_names_both_install_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "responses", None)
    with pytest.raises(ModuleNotFoundError) as info, FakeCluster().mock():
        pass
    assert "pip install 'kube-restmapper[testing]'" in str(info.value)
    assert "pip install '.[testing]'" in str(info.value)
