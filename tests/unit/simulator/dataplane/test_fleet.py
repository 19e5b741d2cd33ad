"""A fleet of in-process fake Dataplane instances."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.synchronizer import sync
from simulator.dataplane.fleet import DataplaneFleet

CONFIG = "global\n    daemon\n\nbackend web\n    server s1 10.0.0.1:80\n"


@pytest.mark.looptime
async def test_fleet_instances_are_independent_and_counted_together() -> None:
    fleet = DataplaneFleet(reload_delay=1.0)
    try:
        for name in ("haproxy-0", "haproxy-1"):
            await fleet.add(name)
        with pytest.raises(ValueError, match="already exists"):
            await fleet.add("haproxy-0")
        async with fleet.client("haproxy-0") as c0:
            assert (await sync(c0, CONFIG, AuxFiles())).ok
        assert fleet.instances["haproxy-0"].version == 2 and fleet.instances["haproxy-1"].version == 1
        async with fleet.client("haproxy-1") as c1:
            assert (await sync(c1, CONFIG, AuxFiles())).ok
        assert fleet.totals().reloads == 2 and fleet.totals().raw_pushes == 2
        await fleet.remove("haproxy-0")
        assert list(fleet.instances) == ["haproxy-1"]
    finally:
        await fleet.aclose()
    assert fleet.instances == {}


def test_fleet_with_haproxy_needs_a_workdir() -> None:
    with pytest.raises(ValueError, match="workdir"):
        DataplaneFleet(haproxy_bin="/usr/sbin/haproxy")
