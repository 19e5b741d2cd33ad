"""A runtime operation that fails on a pod makes the sync fall back once (map uploads, one raw push)
instead of trying the same operation again; the result says why, and the fallback is counted."""

from __future__ import annotations

import pytest

from haptic.controller.metrics import BuildInfo, ControllerMetrics
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.aux_sync import map_edits
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.synchronizer import VersionCache, sync
from simulator.dataplane.instance import FakeDataplane
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

CONFIG = FRONTEND_FE + """    use_backend %[req.hdr(host),concat(,txn.path),map(MAP,web)]

backend web
    server s1 10.0.0.1:80 weight 10
    server s2 127.0.0.1:1 disabled
"""
ABSOLUTE = CONFIG.replace("MAP", "/etc/haproxy/maps/path.map")
RELATIVE = CONFIG.replace("MAP", "maps/path.map").replace("global\n", "global\n    default-path origin /etc/haproxy\n")
MAP = {"path.map": "shop.example.com/ web\n"}
GROWN = {"path.map": "shop.example.com/ web\nshop.example.com/api web\n"}


async def _first(client: DataplaneClient, config: str, cache: VersionCache) -> None:
    result = await sync(client, config, AuxFiles(maps=MAP), cache=cache)
    assert result.ok and result.mode == "raw", result.errors


async def test_failed_runtime_server_update_falls_back_to_one_raw_push(client: DataplaneClient,
                                                                        fake: FakeDataplane) -> None:
    cache = VersionCache()
    await _first(client, ABSOLUTE, cache)
    fake.inject_errors(1, status=500, path="/servers/s2")  # the runtime PUT of the slot fails once
    result = await sync(client, ABSOLUTE.replace("127.0.0.1:1 disabled", "10.0.0.2:80"), AuxFiles(maps=MAP),
                        cache=cache)
    assert result.ok, result.errors
    assert result.mode == "raw" and len(result.reload_ids) == 1 and fake.counters.raw_pushes == 2
    assert result.fallback_used and "runtime server update failed" in result.fallbacks[0]
    assert "server s2 10.0.0.2:80" in fake.document.body()
    assert fake.faults.error_count == 0  # one attempt at the runtime operation, not a retry loop


async def test_failed_runtime_map_update_falls_back_to_an_upload(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await _first(client, ABSOLUTE, cache)
    fake.inject_errors(1, status=404, path="/runtime/maps/path.map/entries")
    result = await sync(client, ABSOLUTE, AuxFiles(maps=GROWN), cache=cache)
    assert result.ok, result.errors
    assert result.fallback_used and "runtime map update failed" in result.fallbacks[0]
    assert result.reload_triggered and fake.counters.runtime_map_updates == 0
    assert fake.storage.get("maps", "path.map").content == GROWN["path.map"]  # type: ignore[union-attr]
    # Once the map loaded under the API's name, the next change is a runtime one again.
    again = await sync(client, ABSOLUTE, AuxFiles(maps={"path.map": "shop.example.com/ api\n"}), cache=cache)
    assert again.ok and again.mode == "runtime_maps" and not again.fallback_used and not again.reload_triggered


async def test_maps_the_runtime_api_cannot_reach_are_uploaded_without_trying(client: DataplaneClient,
                                                                             fake: FakeDataplane) -> None:
    cache = VersionCache()
    await _first(client, RELATIVE, cache)
    result = await sync(client, RELATIVE, AuxFiles(maps=GROWN), cache=cache)
    assert result.ok and result.mode == "files" and result.reload_triggered and not result.fallback_used
    assert fake.counters.runtime_map_updates == 0


@pytest.mark.parametrize("key", ["shop.example.com/a;b", "shop.example.com/#x", "a\u2028b", "a\x85b"])
def test_map_edits_never_carry_what_the_api_cannot_take(key: str) -> None:
    assert map_edits("a.com web\n", f"a.com web\n{key} api\n", 100) is None
    assert map_edits("a.com web\n", "a.com web\nshop.example.com/a+b%20 api\n", 100) is not None


def test_fallbacks_are_counted() -> None:
    metrics = ControllerMetrics(BuildInfo("0.1.0"))
    metrics.record_pod_sync(reloaded=True, fallback=True)
    metrics.record_pod_sync(reloaded=False)
    assert metrics.sample("haptic_dataplane_fallbacks_total") == 1
