"""The fake Dataplane API in front of a real haproxy answers what the real API would: runtime
updates fail once haproxy is gone (kill -9 of its master), a reload haproxy refuses is a failed
reload naming haproxy's reason, and a certificate rotation takes effect in haproxy also when the
certificate is named only by a crt-list."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from haptic.dataplane import api_errors as errors
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import STORAGE_MAPS
from haptic.dataplane.synchronizer import VersionCache, sync
from simulator.dataplane.process_runner import AsyncProcessRunner
from tests.support import dataplane_harness as harness
from tests.support.certs import make_pem
from tests.support.dataplane_harness import DrivenInstance, free_port, served_serial, start_instance

pytestmark = pytest.mark.haproxy


@pytest.fixture
async def instance(haproxy_bin: str, tmp_path: Path) -> AsyncIterator[DrivenInstance]:
    driven = await start_instance(haproxy_bin, tmp_path / "pod", AsyncProcessRunner(), "haproxy-0")
    yield driven
    driven.driver.close()
    await driven.close()


def _config(instance: DrivenInstance, extra: str = "") -> str:
    maps = instance.storage.dirs.maps_dir
    return (
        "global\n    log stdout format raw local0\n" + extra +
        "\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 5s\n    timeout server 5s\n\n"
        f"frontend fe\n    bind 127.0.0.1:{instance.frontend_port}\n"
        "    http-request return status 200 content-type text/plain"
        f" lf-string %[req.hdr(host),map({maps}/host.map,none)]"
        "\n\nbackend web\n    server s1 127.0.0.1:1 weight 10\n"
    )


async def test_kill_9_of_the_master_fails_runtime_updates_instead_of_reporting_success(
    instance: DrivenInstance,
) -> None:
    client, cache = instance.client, VersionCache()
    first = await sync(client, _config(instance), AuxFiles(maps={"host.map": "a.local alpha\n"}), cache=cache)
    assert first.ok, first.errors
    assert (await instance.get("a.local")).endswith("alpha")
    assert instance.driver.process is not None
    os.killpg(instance.driver.process.pid, signal.SIGKILL)
    instance.driver.process.wait(5)
    with pytest.raises(errors.DataplaneHTTPError, match="not running") as refused:
        await client.add_map_entry("host.map", "b.local", "beta")
    assert refused.value.status == 500
    # The controller's sync of a map change: no runtime API, so an upload, whose reload fails.
    result = await sync(client, _config(instance), AuxFiles(maps={"host.map": "a.local alpha\nb.local beta\n"}),
                        cache=cache)
    assert not result.ok and "not running" in result.errors[0]
    # A runtime-only server change: the API cannot use the socket and schedules a reload, which fails.
    model = await client.get_server("web", "s1")
    out = await client.replace_server("web", "s1", {**model, "weight": 20}, version=await client.get_version())
    assert out.status == 202 and out.reload_id is not None
    with pytest.raises(errors.ReloadFailedError, match="not running"):
        await client.wait_for_reload(out.reload_id)
    assert instance.fake.counters.runtime_map_updates == 0


async def test_a_reload_haproxy_refuses_is_a_failed_reload_with_its_reason(haproxy_bin: str, tmp_path: Path) -> None:
    # haproxy -c accepts maxconn 50000; at load time it cannot raise its FD limit under ulimit -n 4000.
    wrapper = tmp_path / "haproxy-limited"
    wrapper.write_text(f'#!/bin/sh\nulimit -n 4000\nexec {haproxy_bin} "$@"\n')
    wrapper.chmod(0o755)
    driven = await start_instance(str(wrapper), tmp_path / "pod", AsyncProcessRunner(), "haproxy-0")
    try:
        client, cache = driven.client, VersionCache()
        first = await sync(client, _config(driven), AuxFiles(maps={"host.map": "a.local alpha\n"}), cache=cache)
        assert first.ok, first.errors
        refused = await sync(client, _config(driven, "    maxconn 50000\n"),
                             AuxFiles(maps={"host.map": "a.local alpha\n"}), cache=cache)
        assert not refused.ok
        assert "FD limit" in refused.errors[0] or "Loading failure" in refused.errors[0], refused.errors
        assert driven.fake.counters.failed_reloads == 1
        assert "maxconn 50000" not in driven.fake.document.body()  # the last good config is back
        assert (await driven.get("a.local")).endswith("alpha")  # and still serving
    finally:
        driven.driver.close()
        await driven.close()


@pytest.mark.parametrize("relative", [False, True], ids=["absolute-paths", "relative-paths"])
async def test_certificate_named_only_by_a_crt_list_is_rotated_in_haproxy(instance: DrivenInstance,
                                                                           relative: bool) -> None:
    dirs, port = instance.storage.dirs, free_port()
    root = instance.storage.virtual_root
    if relative:  # as the Ingress library writes them: relative to default-path
        cert_ref, list_ref, extra = "ssl/example_com.pem", "general/crt-list.txt", f"    default-path origin {root}\n"
    else:
        cert_ref, extra = f"{dirs.ssl_certs_dir}/example_com.pem", ""
        list_ref = f"{dirs.general_storage_dir}/crt-list.txt"
    config = _config(instance, extra) + f"\nfrontend tls\n    bind 127.0.0.1:{port} ssl crt-list {list_ref}\n" \
        "    default_backend web\n"
    files = {"crt-list.txt": f"{cert_ref} example.com\n"}
    cache = VersionCache()

    def aux(serial: int) -> AuxFiles:
        return AuxFiles(maps={"host.map": "a.local alpha\n"}, files=files,
                        certificates={"example.com.pem": make_pem("example.com", serial)})

    first = await sync(instance.client, config, aux(2001), cache=cache)
    assert first.ok, first.errors
    assert await served_serial(port, "example.com") == 2001
    rotated = await sync(instance.client, config, aux(2002), cache=cache)
    assert rotated.ok, rotated.errors
    assert rotated.operations == ("Update SSL certificate 'example_com.pem'",)
    # haproxy knows the certificate under the API's path only when the crt-list names it so:
    # then set/commit ssl cert through the admin socket; otherwise the API's reload loads it.
    assert rotated.reload_triggered == relative
    assert await served_serial(port, "example.com") == 2002
    assert [f.storage_name for f in await instance.client.list_storage(STORAGE_MAPS)] == ["host.map"]


async def test_server_slots_grow_in_the_running_haproxy_without_a_reload(
    instance: DrivenInstance,
) -> None:
    """The runtime path for new servers against real haproxy: ``add server`` with the fields the API
    sends (haproxy 2.x would create them in maintenance without ``enabled``), traffic reaches the added
    server at once, haproxy's master counts no reload, and a later reload, from the file the skip_reload
    push wrote, runs the same servers in the same states."""
    echoes = [await harness.EchoServer(name).start() for name in ("alpha", "beta")]
    try:
        def grown(slots: list[str]) -> str:
            head = harness.render_config(instance, {}, "host.map")
            return head + "\nbackend web\n    balance roundrobin\n" + "".join(f"    server {s}\n" for s in slots)

        small = [f"SRV_1 127.0.0.1:{echoes[0].port}", "SRV_2 127.0.0.1:1 disabled"]
        large = [f"SRV_1 127.0.0.1:{echoes[0].port}", f"SRV_2 127.0.0.1:{echoes[1].port}",
                 f"SRV_3 127.0.0.1:{echoes[1].port} weight 2", "SRV_4 127.0.0.1:1 disabled"]
        client, cache = instance.client, VersionCache()
        first = await sync(client, grown(small), AuxFiles(maps={"host.map": ""}), cache=cache)
        assert first.ok, first.errors
        reloads = [p.reloads for p in await instance.driver.show_proc() if p.kind == "master"]
        result = await sync(client, grown(large), AuxFiles(maps={"host.map": ""}), cache=cache)
        assert result.ok and result.mode == "runtime" and not result.reload_triggered, (result.mode, result.errors)
        assert [p.reloads for p in await instance.driver.show_proc() if p.kind == "master"] == reloads
        assert {(await instance.get()) for _ in range(8)} == {"200 alpha", "200 beta"}

        async def states() -> list[tuple[str, ...]]:
            text = await instance.driver.runner.socket_command(instance.driver.admin_socket, "show servers state web")
            rows = [line.split() for line in text.splitlines() if line and not line.startswith("#")][1:]
            # name, address, operational state, admin flags, user weight, port
            return [(r[3], r[4], r[5], r[6], r[7], r[18]) for r in rows]

        runtime = await states()
        assert [(r[0], r[2]) for r in runtime] == [("SRV_1", "2"), ("SRV_2", "2"), ("SRV_3", "2"), ("SRV_4", "0")]
        await instance.fake.force_reload()
        reloaded = await states()
        # Addresses, ports, weights and operational states are what a reload of the file gives; the admin
        # flags too, but for SRV_2, which left its config's maintenance at runtime (4, CMAINT, lingers).
        assert [(r[0], r[1], r[2], r[4], r[5]) for r in reloaded] == [(r[0], r[1], r[2], r[4], r[5]) for r in runtime]
        assert [(r[0], r[3]) for r in reloaded if r[0] != "SRV_2"] == [(r[0], r[3]) for r in runtime if r[0] != "SRV_2"]
    finally:
        for echo in echoes:
            await echo.stop()


async def test_a_server_added_at_runtime_has_no_health_check_running(instance: DrivenInstance) -> None:
    """Why the synchronizer never adds a ``check`` server at runtime: haproxy registers it, but starts its
    check only on ``enable health`` (no Dataplane API call says that), so a dead endpoint would take
    traffic until the next reload, where the same config line is checked and marked down."""
    config = harness.render_config(instance, {}, "host.map") + (
        "\nbackend web\n    server s1 127.0.0.1:1 check inter 200\n")
    first = await sync(instance.client, config, AuxFiles(maps={"host.map": ""}), cache=VersionCache())
    assert first.ok, first.errors
    await instance.client.add_runtime_server("web", {"name": "s2", "address": "127.0.0.1", "port": 2,
                                                     "check": "enabled", "inter": 200, "maintenance": "disabled"})
    stat = ""
    for _ in range(50):  # s1's check (the config's) marks it down within a few intervals
        stat = await instance.driver.runner.socket_command(instance.driver.admin_socket, "show stat")
        rows = {r.split(",")[1]: r.split(",") for r in stat.splitlines() if r.startswith("web,")}
        if rows.get("s1", [""] * 20)[17] == "DOWN":
            break
        await asyncio.sleep(0.1)
    rows = {r.split(",")[1]: r.split(",") for r in stat.splitlines() if r.startswith("web,")}
    assert rows["s1"][17] == "DOWN" and rows["s2"][17] == "no check", stat
