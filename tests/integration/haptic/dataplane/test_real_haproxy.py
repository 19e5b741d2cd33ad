"""The synchronizer and the fake Dataplane API driving real haproxy processes, with real traffic.

Two fake instances, each with its own haproxy (master-worker) on 127.0.0.1 and echo backends on
free ports. HAProxy processes are killed (process groups) by the fixtures even when a test fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.synchronizer import VersionCache, sync
from simulator.dataplane.http_server import serve
from simulator.dataplane.process_runner import AsyncProcessRunner, BlockingProcessRunner
from tests.support.certs import make_pem
from tests.support.dataplane_harness import (
    DrivenInstance,
    EchoServer,
    free_port,
    render_config,
    served_serial,
    start_instance,
)

pytestmark = pytest.mark.haproxy


@pytest.fixture
async def echoes() -> AsyncIterator[dict[str, EchoServer]]:
    servers = {name: await EchoServer(name).start() for name in ("alpha", "beta", "gamma", "delta")}
    yield servers
    for server in servers.values():
        await server.stop()


@pytest.fixture
def cleanup() -> Iterator[list[DrivenInstance]]:
    """Kills every haproxy started by the test, whatever happened to it."""
    instances: list[DrivenInstance] = []
    yield instances
    for instance in instances:
        instance.driver.close()


@pytest.fixture
async def pair(haproxy_bin: str, tmp_path: Path, cleanup: list[DrivenInstance]) -> AsyncIterator[list[DrivenInstance]]:
    instances = []
    for index in range(2):
        instance = await start_instance(haproxy_bin, tmp_path / f"pod{index}", AsyncProcessRunner(), f"haproxy-{index}")
        cleanup.append(instance)
        instances.append(instance)
    yield instances
    for instance in instances:
        await instance.close()


HOSTS = AuxFiles(maps={"host.map": "api.local api\n"})


def topology(
    echoes: dict[str, EchoServer], web: str = "alpha", extra: dict[str, str] | None = None
) -> dict[str, list[tuple[str, int]]]:
    servers = {"web": [(web, echoes[web].port)], "api": [("beta", echoes["beta"].port)]}
    for backend, echo in (extra or {}).items():
        servers[backend] = [(echo, echoes[echo].port)]
    return servers


async def worker_pids(instance: DrivenInstance) -> list[int]:
    return await instance.driver.worker_pids()


async def test_push_routes_traffic_on_both_instances(pair: list[DrivenInstance], echoes: dict[str, EchoServer]) -> None:
    for instance in pair:
        result = await sync(instance.client, render_config(instance, topology(echoes)), HOSTS)
        assert result.ok, result.errors
        assert result.mode == "raw" and len(result.reload_ids) == 1
        assert await instance.get("default.local") == "200 alpha"
        assert await instance.get("api.local") == "200 beta"
    assert echoes["alpha"].hits == 2 and echoes["beta"].hits == 2


async def test_server_address_change_moves_traffic_without_reload(
    pair: list[DrivenInstance], echoes: dict[str, EchoServer]
) -> None:
    instance = pair[0]
    cache = VersionCache()
    assert (await sync(instance.client, render_config(instance, topology(echoes)), HOSTS, cache=cache)).ok
    assert await instance.get() == "200 alpha"
    before = await worker_pids(instance)
    reloads = instance.fake.counters.reloads

    result = await sync(instance.client, render_config(instance, topology(echoes, web="gamma")), HOSTS, cache=cache)
    assert result.ok, result.errors
    assert result.mode == "runtime" and not result.reload_triggered and result.runtime_updates == 1
    assert await instance.get() == "200 gamma"
    assert await worker_pids(instance) == before  # same worker process: no reload happened
    assert instance.fake.counters.reloads == reloads


async def test_adding_a_backend_is_exactly_one_reload(
    pair: list[DrivenInstance], echoes: dict[str, EchoServer]
) -> None:
    instance = pair[1]
    cache = VersionCache()
    assert (await sync(instance.client, render_config(instance, topology(echoes)), HOSTS, cache=cache)).ok
    before = await worker_pids(instance)
    reloads = instance.fake.counters.reloads
    hosts = AuxFiles(maps={"host.map": "api.local api\nshop.local shop\n"})
    desired = render_config(instance, topology(echoes, extra={"shop": "delta"}))
    result = await sync(instance.client, desired, hosts, cache=cache)
    assert result.ok, result.errors
    assert "Create backend 'shop'" in result.operations
    assert instance.fake.counters.reloads == reloads + 1
    assert await worker_pids(instance) != before
    assert await instance.get("shop.local") == "200 delta"


async def test_map_entries_change_routing_without_reload(
    pair: list[DrivenInstance], echoes: dict[str, EchoServer]
) -> None:
    instance = pair[0]
    cache = VersionCache()
    config = render_config(instance, topology(echoes))
    assert (await sync(instance.client, config, HOSTS, cache=cache)).ok
    before = await worker_pids(instance)
    result = await sync(
        instance.client, config, AuxFiles(maps={"host.map": "api.local api\nnew.local api\n"}), cache=cache
    )
    assert result.ok and result.mode == "runtime_maps" and not result.reload_triggered
    assert await instance.get("new.local") == "200 beta"
    assert await worker_pids(instance) == before


async def test_config_failing_haproxy_check_is_refused_and_traffic_keeps_flowing(
    haproxy_bin: str, tmp_path: Path, cleanup: list[DrivenInstance], echoes: dict[str, EchoServer]
) -> None:
    # The sim backend's runner: real work blocks the loop.
    instance = await start_instance(haproxy_bin, tmp_path / "pod", BlockingProcessRunner(), "haproxy-b")
    cleanup.append(instance)
    try:
        good = render_config(instance, topology(echoes))
        assert (await sync(instance.client, good, HOSTS)).ok
        version = instance.fake.version
        bad = good.replace("    default_backend web", "    default_backend web\n    balance no-such-algorithm")
        result = await sync(instance.client, bad, HOSTS)
        assert not result.ok and "haproxy -c failed" in result.errors[0]
        assert instance.fake.version == version and instance.fake.counters.reloads == 1
        assert await instance.get() == "200 alpha"
    finally:
        await instance.close()


async def test_sync_over_http(pair: list[DrivenInstance], echoes: dict[str, EchoServer]) -> None:
    instance = pair[1]
    running = await serve(instance.fake)
    try:
        async with DataplaneClient(running.url, "admin", "adminpwd") as client:
            info = await client.info()
            assert info.major == 3
            result = await sync(client, render_config(instance, topology(echoes, web="delta")), HOSTS)
        assert result.ok, result.errors
        assert await instance.get() == "200 delta"
    finally:
        await running.stop()


async def test_restart_then_sync_restores_traffic(pair: list[DrivenInstance], echoes: dict[str, EchoServer]) -> None:
    instance = pair[0]
    cache = VersionCache()
    config = render_config(instance, topology(echoes))
    assert (await sync(instance.client, config, HOSTS, cache=cache)).ok
    await instance.fake.restart()  # the pod restarts: initial config, empty storage, version 1
    assert instance.fake.version == 1 and instance.fake.storage.listing("maps") == []
    result = await sync(instance.client, config, HOSTS, cache=cache)
    assert result.ok and result.mode == "raw" and "Create map 'host.map'" in result.operations
    assert await instance.get("api.local") == "200 beta"


async def test_certificate_served_and_rotated(pair: list[DrivenInstance], echoes: dict[str, EchoServer]) -> None:
    instance = pair[1]
    tls_port = free_port()
    cert_path = instance.storage.path("ssl_certificates", "example_com.pem")
    config = render_config(instance, topology(echoes)) + (
        f"\nfrontend tls\n    bind 127.0.0.1:{tls_port} ssl crt {cert_path}\n    default_backend web\n"
    )
    first = AuxFiles(maps=HOSTS.maps, certificates={"example.com.pem": make_pem("example.com", 1001)})
    result = await sync(instance.client, config, first)
    assert result.ok, result.errors
    assert result.operations[0] == "Create SSL certificate 'example_com.pem'"  # before the config needing it
    assert await served_serial(tls_port) == 1001
    rotated = AuxFiles(maps=HOSTS.maps, certificates={"example.com.pem": make_pem("example.com", 1002)})
    result = await sync(instance.client, config, rotated)
    assert result.ok and result.operations == ("Update SSL certificate 'example_com.pem'",)
    # haproxy loaded it under the path the API uses: set + commit ssl cert, no reload.
    assert not result.reload_triggered and instance.fake.counters.runtime_cert_updates >= 1
    assert await served_serial(tls_port) == 1002


async def test_reserved_server_slot_is_filled_without_reload(
    pair: list[DrivenInstance], echoes: dict[str, EchoServer]
) -> None:
    instance = pair[0]
    cache = VersionCache()
    base = render_config(instance, topology(echoes))
    slot = "    server s1 127.0.0.1:1 disabled\n"
    empty = base.replace("backend api\n", "backend api\n" + slot.replace("s1", "s9")).replace(
        f"    server s1 127.0.0.1:{echoes['beta'].port}\n", slot
    )
    assert (await sync(instance.client, empty, HOSTS, cache=cache)).ok
    assert (await instance.get("api.local")).startswith("503")  # every slot in maintenance
    before = await worker_pids(instance)
    filled = empty.replace(slot, f"    server s1 127.0.0.1:{echoes['gamma'].port}\n", 1)
    result = await sync(instance.client, filled, HOSTS, cache=cache)
    assert result.ok and result.mode == "runtime" and not result.reload_triggered, result
    assert await instance.get("api.local") == "200 gamma"
    assert await worker_pids(instance) == before
