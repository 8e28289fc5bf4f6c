"""The command line starts fast: ``--help`` loads no discovery, mapper or HTTP stack (nor the errors and model
types), ``--embedded`` no HTTP stack, and no command loads another command's code (``resolve`` loads no
``api-resources`` code, no watch streaming).

Each case runs in a fresh interpreter, since this process has long imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from restmapper.testing import FakeCluster

_HEAVY = ("requests", "urllib3", "kubernetes", "restmapper.discovery", "restmapper.mapper", "restmapper.cache",
          "restmapper.cli._api_resources", "restmapper.transport._stream", "restmapper.errors", "restmapper.model")


def _loaded_after(args: list[str]) -> list[str]:
    code = (
        "import io, json, sys\n"
        "from restmapper.cli import run\n"
        f"code = run({args!r}, stdout=io.StringIO(), stderr=io.StringIO())\n"
        f"print(json.dumps([code, [m for m in {_HEAVY!r} if m in sys.modules]]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    code_, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert code_ == 0
    return list(loaded)


def test_help_loads_no_discovery_mapper_or_http_stack() -> None:
    assert _loaded_after(["--help"]) == []
    assert _loaded_after(["resolve", "--help"]) == []
    assert _loaded_after(["api-resources", "--help"]) == []


def test_resolve_over_kubeconfig_loads_no_api_resources_or_watch_code(tmp_path: Path) -> None:
    cluster = FakeCluster(builtin=True)
    with cluster.serve() as served:
        config = tmp_path / "config"
        config.write_text(f"apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster:\n    server: {served.url}\n"
                          "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\ncurrent-context: c\n"
                          "users:\n- name: u\n  user: {}\n")
        loaded = _loaded_after(["resolve", "--kubeconfig", str(config), "deploy"])
    assert {"requests", "kubernetes", "restmapper.mapper"} <= set(loaded)  # it did resolve, over HTTP
    assert not {"restmapper.cli._api_resources", "restmapper.transport._stream"} & set(loaded)


def test_embedded_resolve_loads_no_http_stack() -> None:
    loaded = _loaded_after(["resolve", "--embedded", "deploy"])
    assert "restmapper.mapper" in loaded  # it did resolve
    assert not {"requests", "urllib3", "kubernetes"} & set(loaded)


def test_package_root_still_reaches_errors_and_model_after_a_bare_import() -> None:
    code = ("import sys, restmapper\n"
            "assert 'restmapper.model' not in sys.modules\n"
            "assert restmapper.model.GroupVersion('apps', 'v1') == restmapper.GroupVersion('apps', 'v1')\n"
            "assert restmapper.errors.ConfigError is restmapper.ConfigError\n"
            "assert {'GroupVersion', 'ConfigError'} <= set(dir(restmapper))\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
