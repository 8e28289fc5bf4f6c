"""A group re-read with an outdated version list whose every listed version answers 404 must not vouch for absence.

Found by the model test (test_model_never_wrong.py, explore profile), reduced. Legacy discovery: the mapper
knows a.example.com from ``/apis`` when it served only ``v1``. A CRD adds ``v2`` (and a kind) to it and the
mapper is told (``invalidate_group``); ``/apis`` then fails, so the group is re-read with the old listing's
versions: ``v1`` alone, which now answers 404 (reported). Installed with nothing left to flag stale, the group
looked empty and complete, and a lower-ranked group answered in its place (DESIGN 5.10: a needed group that could
not be read makes the answer a discovery error naming it; aggregated discovery already says so).
"""

from __future__ import annotations

import pytest
from helpers.model import manifest

from restmapper import DiscoveryError, GroupVersion
from restmapper.discovery import DiscoveryClient
from restmapper.mapper import LazyRESTMapper
from restmapper.testing import FakeCluster, InProcessTransport, ManualClock


@pytest.mark.parametrize("mode", ["legacy", "aggregated"])
@pytest.mark.filterwarnings("ignore::restmapper.errors.ShortNameConflictWarning")
def test_a_relisted_group_whose_listed_versions_are_gone_is_not_answered_as_empty(mode: str) -> None:
    cluster = FakeCluster.embedded(mode=mode)
    for group, kind, versions in [("a.example.com", "Gadget", ("v1",)), ("m.example.com", "Thing", ("v2", "v1"))]:
        cluster.add_crd(manifest(group, kind, versions))
    clock = ManualClock()
    mapper = LazyRESTMapper(DiscoveryClient(InProcessTransport(cluster)), clock=clock, ttl=300.0, max_stale=20.0,
                            miss_refresh_interval=1.0)
    assert mapper.resolve("thg").resource.group == "m.example.com"  # every group read (a kind-less question)
    cluster.add_crd(manifest("a.example.com", "Thing", ("v2", "v1")))  # a now serves Thing at v2, outranking m
    mapper.invalidate_group("a.example.com")
    cluster.inject("/apis", status=503, body="unavailable")
    clock.advance(1)
    cluster.inject("/apis/a.example.com/v1", status=404, body="404 page not found")
    mapper.report_not_found(GroupVersion.parse("a.example.com/v1"))
    try:
        got = mapper.resolve("Thing")
    except DiscoveryError as exc:
        assert "a.example.com" in str(exc)
    else:
        assert got.resource.group == "a.example.com", f"{got.resource}: answered in place of a.example.com"
