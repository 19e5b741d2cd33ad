"""The sim backend's shape: a fleet of fake instances driving real haproxy on virtual time."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.synchronizer import VersionCache, sync
from haptic.validation.capabilities import detect_capabilities
from simulator.dataplane.fleet import DataplaneFleet
from tests.support.dataplane_harness import free_port

pytestmark = pytest.mark.haproxy


def config(port: int, backend_port: int) -> str:
    return (
        "global\n    log stdout format raw local0\n\n"
        "defaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\n"
        f"frontend fe\n    bind 127.0.0.1:{port}\n    http-request return status 200 content-type text/plain"
        f" string {port}\n\nbackend web\n    server s1 127.0.0.1:{backend_port}\n"
    )


@pytest.mark.looptime
async def test_fleet_of_real_haproxies_on_virtual_time(haproxy_bin: str, tmp_path: Path) -> None:
    fleet = DataplaneFleet(haproxy_bin=haproxy_bin, workdir=tmp_path, reload_delay=1.0)
    try:
        ports = {}
        for name in ("haproxy-0", "haproxy-1"):
            await fleet.add(name)
            ports[name] = free_port()
            async with fleet.client(name) as client:
                # The controller admits only Dataplanes reporting its own haproxy's major.minor.
                info = await client.info()
                local = detect_capabilities(haproxy_bin)
                assert (info.major, info.minor) == (local["version_major"], local["version_minor"])
                cache = VersionCache()
                result = await sync(client, config(ports[name], 9), AuxFiles(), cache=cache)
                assert result.ok, result.errors
                workers = await fleet.instances[name].driver.worker_pids()  # type: ignore[union-attr]
                changed = await sync(client, config(ports[name], 10), AuxFiles(), cache=cache)
                assert changed.mode == "runtime" and not changed.reload_triggered
                assert await fleet.instances[name].driver.worker_pids() == workers  # type: ignore[union-attr]
        for name, port in ports.items():
            # Blocking on purpose: real traffic while the virtual clock stands still.
            answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)  # noqa: ASYNC210
            assert (answer.status_code, answer.text) == (200, str(port)), name
        assert fleet.totals().reloads == 2 and fleet.totals().runtime_server_updates == 2
    finally:
        await fleet.aclose()
