"""New-user review 15 (README only): wrong types get a clear TypeError, hints that lead somewhere, a complete dir()."""

from __future__ import annotations

from typing import Any

import pytest

import restmapper
from restmapper import GroupVersion, GroupVersionKind, LazyRESTMapper
from restmapper.discovery import DiscoveryClient
from restmapper.testing import FakeCluster, InProcessTransport


def _mapper(**options: Any) -> LazyRESTMapper:
    return LazyRESTMapper(DiscoveryClient(InProcessTransport(FakeCluster.embedded())), **options)


@pytest.mark.parametrize("arg", [["deploy"], {"deploy"}, ("deploy",)])
def test_resolve_of_a_collection_names_the_type_expected(arg: object) -> None:
    mapper = _mapper()
    mapper.resolve("deploy")
    with pytest.raises(TypeError, match=r"resolve\(\) takes a resource type argument as str, not"):
        mapper.resolve(arg)  # type: ignore[arg-type]


@pytest.mark.parametrize("option", ["ttl", "miss_refresh_interval", "max_stale"])
@pytest.mark.parametrize("value", ["5", b"5", True, [5]])
def test_cache_timings_must_be_numbers_of_seconds(option: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"{option} must be a number of seconds"):
        _mapper(**{option: value})


def test_ttl_none_and_numbers_are_accepted() -> None:
    for ttl in (None, 0, 5, 2.5):
        _mapper(ttl=ttl)


@pytest.mark.parametrize("api_version, kind", [(None, "Deployment"), (3, "Deployment"), ("apps/v1", None)])
def test_a_manifest_without_api_version_or_kind_is_a_type_error(api_version: object, kind: object) -> None:
    with pytest.raises(TypeError, match=r"from_api_version_and_kind.* as str, not .*a manifest without"):
        GroupVersionKind.from_api_version_and_kind(api_version, kind)  # type: ignore[arg-type]


def test_invalidate_group_version_hints_at_what_a_string_names() -> None:
    mapper = _mapper()
    with pytest.raises(TypeError, match=r"'example.com' is a group: call invalidate_group\('example.com'\)"):
        mapper.invalidate_group_version("example.com")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pass GroupVersion.parse\('example.com/v1'\)"):
        mapper.invalidate_group_version("example.com/v1")  # type: ignore[arg-type]
    assert GroupVersion.parse("example.com/v1") == GroupVersion("example.com", "v1")


def test_dir_lists_what_loads_lazily_and_not_the_modules_imports() -> None:
    names = dir(restmapper)
    for name in ("LazyRESTMapper", "ObjectCache", "Watcher", "AsyncRESTMapper", "GroupKind", "__version__"):
        assert name in names
    for name in ("logging", "TYPE_CHECKING", "annotations", "lazy_getattr"):
        assert name not in names
