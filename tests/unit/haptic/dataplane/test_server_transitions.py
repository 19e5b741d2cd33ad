"""A server slot that empties or fills never routes requests to the placeholder on the way.

Found on the local tier (real haproxy): scaling 3 → 1 endpoints, requests arriving while a slot was
being emptied hung for 3 s — the update set the placeholder address 127.0.0.1:1 before maintenance,
haproxy sent them there, got refused and retried with its one-second turn-around."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.synchronizer import VersionCache, safe_server_steps, sync
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from tests.support.dataplane import FRONTEND_FE, SpyDriver

pytestmark = pytest.mark.looptime

CONFIG = FRONTEND_FE + """    default_backend web

backend web
    server SRV_1 10.0.0.1:80
    server SRV_2 %s
"""
FILLED, EMPTY = "10.0.0.2:80", "127.0.0.1:1 disabled"


async def _commands_for(before: str, after: str) -> list[str]:
    driver = SpyDriver()
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5), driver=driver)  # type: ignore[arg-type]
    async with client_for(fake) as client:
        cache = VersionCache()
        assert (await sync(client, CONFIG % before, AuxFiles(), cache=cache)).ok
        driver.commands.clear()
        result = await sync(client, CONFIG % after, AuxFiles(), cache=cache)
        assert result.ok and result.mode == "runtime" and not result.reload_triggered
        assert result.runtime_updates == 1  # one server changed, whatever the number of writes
    await fake.aclose()
    return [c for c in driver.commands if "SRV_2" in c]


async def test_an_emptied_slot_goes_into_maintenance_before_it_moves() -> None:
    commands = await _commands_for(FILLED, EMPTY)
    assert commands == ["set server web/SRV_2 state maint", "set server web/SRV_2 addr 127.0.0.1 port 1"]


async def test_a_filled_slot_moves_before_it_leaves_maintenance() -> None:
    commands = await _commands_for(EMPTY, FILLED)
    assert commands == ["set server web/SRV_2 addr 10.0.0.2 port 80", "set server web/SRV_2 state ready"]


def test_changes_without_a_move_or_without_a_state_change_are_one_write() -> None:
    up, down = {"name": "s", "address": "10.0.0.1", "port": 80}, {"name": "s", "address": "10.0.0.1", "port": 80,
                                                                    "maintenance": "enabled"}
    assert safe_server_steps(up, down) == [down]
    moved = {**up, "address": "10.0.0.9"}
    assert safe_server_steps(up, moved) == [moved]
    assert safe_server_steps(None, moved) == [moved]
