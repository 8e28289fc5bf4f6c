"""kopf, a real operator framework, runs against the loopback kit: ``KopfRunner`` with ``--namespace default``
sees a created object, runs its handler and writes its progress back (annotations, status) through the kit."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers.kit import kopf_registry as kopf_registry  # a fixture, used by name
from helpers.kit import wait_until

from restmapper.testing import FakeCluster

kopf_testing = pytest.importorskip("kopf.testing", reason="kopf is a test extra: pip install 'kube-restmapper[test]'")

OPERATOR = textwrap.dedent('''
    import kopf

    @kopf.on.create("v1", "configmaps")
    def created(name, namespace, logger, **_):
        logger.info("handled %s/%s", namespace, name)
        return {"seen": name}
''')


@pytest.mark.usefixtures("kopf_registry")
def test_kopf_runner_sees_a_created_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubernetes.config.kube_config as kube_config

    cluster = FakeCluster.embedded()
    operator = tmp_path / "operator.py"
    operator.write_text(OPERATOR)
    with cluster.serve() as served:
        # kopf logs in through the kubernetes client, whose default kubeconfig path is read at import time.
        monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(served.kubeconfig_path))
        args = ["run", "--standalone", "--namespace", "default", "--verbose", str(operator)]
        with kopf_testing.KopfRunner(args, timeout=60) as runner:
            assert wait_until(lambda: any(r.path == "/api/v1/namespaces/default/configmaps"
                                          and r.query.get("watch") == "true" for r in cluster.requests))
            cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "hello", "namespace": "default"}, "data": {"k": "v"}})

            def handled() -> bool:
                obj = cluster.get_object("configmaps", "hello", "default")
                return obj is not None and (obj.get("status") or {}).get("created") == {"seen": "hello"}

            assert wait_until(handled), cluster.get_object("configmaps", "hello", "default")
    assert runner.exit_code == 0, runner.output
    obj = cluster.get_object("configmaps", "hello", "default")
    assert obj is not None
    assert "kopf.zalando.org/last-handled-configuration" in obj["metadata"]["annotations"]
    assert any(e["manager"] == "kopf" for e in obj["metadata"]["managedFields"])
