"""The pytest plugin, as a user meets it: a test file that only names a fixture (run through ``pytester``)."""

from __future__ import annotations

import pytest

from restmapper import GroupKind, LazyRESTMapper
from restmapper.errors import is_no_match
from restmapper.testing import FakeCluster, ManualClock, crd_manifest

pytest_plugins = ("pytester",)


def test_a_test_that_only_names_fake_cluster_server_gets_a_working_kubeconfig(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import kubernetes

        def test_x(fake_cluster_server):
            kubernetes.config.load_kube_config()          # no argument: the import-time default was patched
            names = [n.metadata.name for n in kubernetes.client.CoreV1Api().list_namespace().items]
            assert "kube-system" in names or names == []
            from restmapper import LazyRESTMapper
            assert LazyRESTMapper.from_kubeconfig().resolve("deploy").resource.resource == "deployments"
            assert fake_cluster_server.cluster.request_count() > 0
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_fake_cluster_answers_requests_through_responses(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import requests

        def test_x(fake_cluster):
            answer = requests.get(fake_cluster.base_url + "/apis/apps/v1")
            assert answer.status_code == 200 and "deployments" in answer.text
            assert fake_cluster.request_count("/apis/apps/v1") == 1
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_marker_and_options_choose_mode_and_crds(pytester: pytest.Pytester) -> None:
    import yaml

    pytester.makefile(".yaml", widget=yaml.safe_dump(crd_manifest("example.com", "Widget", short_names=["wd"])))
    pytester.makepyfile("""
        import pytest

        from restmapper import GroupKind

        @pytest.mark.restmapper(mode="legacy", crds=["widget.yaml"], builtin=False)
        def test_marker(mapper, restmapper_cluster):
            assert restmapper_cluster.mode == "legacy"
            # No built-in profile: no core group either, so only lookups that need no core are answered.
            assert mapper.rest_mapping(GroupKind("example.com", "Widget")).resource.resource == "widgets"
            assert restmapper_cluster.request_count("/apis/example.com/v1") == 1   # legacy: per group version

        def test_options(mapper, restmapper_cluster):
            assert restmapper_cluster.mode == "aggregated-v2beta1"
            assert mapper.resolve("widgets").resource.resource == "widgets"
            assert mapper.resolve("deploy").resource.group == "apps"

        @pytest.mark.restmapper(flavour="x")
        def test_bad_marker(restmapper_cluster):
            pass
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--restmapper-mode=aggregated-v2beta1",
                                "--restmapper-crd=widget.yaml")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*unknown restmapper marker arguments*flavour*"])


def test_mapper_fixture_finds_a_crd_added_right_after_a_miss(restmapper_cluster: FakeCluster,
                                                             mapper: LazyRESTMapper,
                                                             manual_clock: ManualClock) -> None:
    """With miss_refresh_interval=0 a lookup after a miss revalidates at once: no sleep, no clock advance."""
    with pytest.raises(Exception) as caught:
        mapper.rest_mapping(GroupKind("example.com", "Widget"))
    assert is_no_match(caught.value)
    restmapper_cluster.add_crd(crd_manifest("example.com", "Widget"))
    assert mapper.rest_mapping(GroupKind("example.com", "Widget")).resource.version == "v1"


def test_negative_cache_holds_a_miss_until_the_clock_passes_the_interval(restmapper_cluster: FakeCluster,
                                                                         manual_clock: ManualClock) -> None:
    """The documented negative cache: with the default 1 s interval, a CRD added after a miss is found once the
    clock passes the interval (a test passes the clock instead of sleeping)."""
    from restmapper.discovery import DiscoveryClient
    from restmapper.testing import InProcessTransport

    slow = LazyRESTMapper(DiscoveryClient(InProcessTransport(restmapper_cluster)), clock=manual_clock)
    with pytest.raises(Exception) as caught:
        slow.rest_mapping(GroupKind("example.com", "Widget"))
    assert is_no_match(caught.value)
    restmapper_cluster.add_crd(crd_manifest("example.com", "Widget"))
    with pytest.raises(Exception) as again:
        slow.rest_mapping(GroupKind("example.com", "Widget"))
    assert is_no_match(again.value)
    manual_clock.advance(1.0)
    assert slow.rest_mapping(GroupKind("example.com", "Widget")).resource.resource == "widgets"


def test_marker_crd_paths_are_relative_to_the_test_file(pytester: pytest.Pytester) -> None:
    """The same test passes from its own directory and from the repository root (CI, IDEs)."""
    import yaml

    sub = pytester.mkpydir("pkg")
    (sub / "crds").mkdir()
    (sub / "crds" / "widget.yaml").write_text(yaml.safe_dump(crd_manifest("example.com", "Widget")))
    (sub / "test_mine.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.restmapper(crds=['crds/widget.yaml'])\n"
        "def test_marker(mapper):\n"
        "    assert mapper.resolve('widgets').resource.group == 'example.com'\n\n"
        "@pytest.mark.restmapper(crds=['crds/nothere.yaml'])\n"
        "def test_missing(mapper):\n"
        "    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "pkg/test_mine.py")  # from the root
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*marker crds: CRD file 'crds/nothere.yaml' not found; tried "
                                 f"{sub / 'crds' / 'nothere.yaml'} (relative to the test file), "
                                 f"{pytester.path / 'crds' / 'nothere.yaml'} (relative to the working directory)*"])
    assert "Traceback" not in result.stdout.str() and "FileNotFoundError" not in result.stdout.str()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = pytester.runpytest("-p", "no:cacheprovider", "test_mine.py")  # from the test's own directory
    result.assert_outcomes(passed=1, errors=1)


def test_marker_crd_paths_still_read_relative_to_the_working_directory(pytester: pytest.Pytester) -> None:
    import yaml

    pytester.mkpydir("tests")
    pytester.makefile(".yaml", widget=yaml.safe_dump(crd_manifest("example.com", "Widget")))
    (pytester.path / "tests" / "test_cwd.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.restmapper(crds=['widget.yaml'])\n"
        "def test_marker(mapper):\n"
        "    assert mapper.resolve('widgets').resource.group == 'example.com'\n")
    pytester.runpytest("-p", "no:cacheprovider", "tests/test_cwd.py").assert_outcomes(passed=1)
    result = pytester.runpytest("-p", "no:cacheprovider", "--restmapper-crd=nothere.yaml", "tests/test_cwd.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*--restmapper-crd: CRD file 'nothere.yaml' not found; tried*nothere.yaml "
                                 "(relative to the directory pytest was started in)*"])


def test_object_cache_fixture_reads_and_watches_and_the_mapper_fixture_is_refused_saying_so(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import threading

        import pytest

        from restmapper.errors import InvalidArgumentError
        from restmapper.store import ObjectCache

        def test_object_cache(object_cache, restmapper_cluster):
            restmapper_cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                             "metadata": {"name": "a", "namespace": "default"}})
            assert object_cache.get("cm", "a", "default")["metadata"]["name"] == "a"
            written = restmapper_cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap",
                                                       "metadata": {"name": "b", "namespace": "default"}})
            held = object_cache.wait_for("cm", "b", "default", timeout=10,
                                         resource_version=written["metadata"]["resourceVersion"])
            assert held["metadata"]["name"] == "b"

        def test_after_the_cache_fixture_no_informer_thread_is_left():
            assert not [t.name for t in threading.enumerate() if t.name.startswith("restmapper-informer")]

        def test_mapper_fixture(mapper):
            with pytest.raises(InvalidArgumentError, match="object_cache fixture"):
                ObjectCache(mapper)
    """)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)
