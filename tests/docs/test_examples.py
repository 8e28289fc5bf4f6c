"""Each example runs against the embedded cluster, exits 0 and prints what it demonstrates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("name, expected", [
    ("controller.py", ["converged: ['a=a892c16f91cb', 'b=8ee1da264ef6', 'c=aaa1d7de78af', 'plain=None']",
                       "after edits: ['a=aee35b8f0f2a', 'b=None', 'c=aaa1d7de78af', 'plain=None']",
                       "standby leading while we lead: False",
                       "writes: 5 ['default/a -> a892c16f91cb', 'default/a -> aee35b8f0f2a', "
                       "'default/b -> 8ee1da264ef6', 'default/b -> None', 'default/c -> aaa1d7de78af']",
                       "retries: ['default/c: ConflictError']",
                       "standby took over after our release: True",
                       "lease holder after the standby's release: ''"]),
    ("controller_async.py", ["converged: ['a=a892c16f91cb', 'b=8ee1da264ef6', 'c=aaa1d7de78af', 'plain=None']",
                             "after edits: ['a=aee35b8f0f2a', 'b=None', 'c=aaa1d7de78af', 'plain=None']",
                             "writes: 5 ['default/a -> a892c16f91cb', 'default/a -> aee35b8f0f2a', "
                             "'default/b -> 8ee1da264ef6', 'default/b -> None', 'default/c -> aaa1d7de78af']",
                             "retries: ['default/c: ConflictError']",
                             "lease holder after our release: ''"]),
    ("crd_upgrade_race.py", ["race (listed but gone):", "Cluster@v1alpha4:404", "ours healed: True",
                             "after upgrade: Cluster@v1beta1:200 Machine@v1beta1:200 MachineDeployment@v1beta1:200",
                             "kubernetes.dynamic after the upgrade"]),
    ("generation_cache.py", ["generation 1 -> 1 (no bump)", "Gadget request: accepted",
                             "Widget request: rejected (expects kind Gadget)", "builds: Widget@gen1, Gadget@gen1"]),
    ("object_cache_controller.py", ["while not leader, handler calls: 0",
                                    "term 2 (synthetic adds): ['a: size 10 via example.com/v1alpha1'",
                                    "| lease transitions: 2 | lists: 1",
                                    "after the upgrade: watching v1beta1, a is example.com/v1beta1 | moves=1",
                                    "upgrade events: ['update b']", "get raises no-match: True",
                                    "deletes: ['a: gone', 'b: gone', 'c: gone']",
                                    "CRD recreated cluster-scoped: ['z: size 7 via example.com/v1beta1']",
                                    "survived everything without a restart: True"]),
    ("kopf_operator.py", ["'resource': 'deployments'", "'group': 'cert-manager.io'", "'name': 'nope', 'error'",
                          "loop ticks while discovering:"]),
    ("watch_lease_loss.py", ["term 2: Widget namespaced = False", "term 1 handler calls after stop: 0",
                             "backoff waits: []", "nothing lost, nothing waited: True"]),
])
def test_example_runs(name: str, expected: list[str]) -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    for line in expected:
        assert line in proc.stdout, (line, proc.stdout)
