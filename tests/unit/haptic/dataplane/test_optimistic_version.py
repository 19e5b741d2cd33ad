"""A runtime-only change to a config the cache holds is written with the cached version at once (no
``GET version`` first: one round trip less on every EndpointSlice change); when another writer moved the
instance on, the first write's 409 sends the sync down the full path, which plans against what is there."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.synchronizer import VersionCache, sync
from simulator.dataplane.instance import FakeDataplane
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

BASE = FRONTEND_FE + "    default_backend web\n\nbackend web\n    server s1 10.0.0.1:80\n    server s2 10.0.0.2:80\n"


async def test_a_cached_runtime_change_writes_without_asking_for_the_version(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    cache = VersionCache()
    assert (await sync(client, BASE, AuxFiles(), cache=cache)).ok
    requests = fake.counters.requests
    result = await sync(client, BASE.replace("10.0.0.2:80", "10.0.0.3:80"), AuxFiles(), cache=cache)
    assert result.ok and result.mode == "runtime" and not result.reload_triggered, result.errors
    assert fake.counters.requests - requests == 1  # the server PUT alone
    assert result.version == fake.version == cache.version and "server s2 10.0.0.3:80" in fake.raw()


async def test_another_writer_in_between_is_a_409_and_the_full_path_plans_again(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    cache = VersionCache()
    assert (await sync(client, BASE, AuxFiles(), cache=cache)).ok
    # Someone else changes s1 (the cache does not know): version moves on.
    model = await client.get_server("web", "s1")
    await client.replace_server("web", "s1", {**model, "address": "10.9.9.9"}, version=await client.get_version())
    result = await sync(client, BASE.replace("10.0.0.2:80", "10.0.0.3:80"), AuxFiles(), cache=cache)
    assert result.ok and result.mode == "runtime" and result.retries == 1, result.errors
    # planned against what is there: s1 is put back, s2 moved
    assert "server s1 10.0.0.1:80" in fake.raw() and "server s2 10.0.0.3:80" in fake.raw()
    assert result.operations == ("Update server 's1' in backend 'web'", "Update server 's2' in backend 'web'")
