"""The fake Dataplane API, driven through the real client in-process (ASGI, no sockets)."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from haptic.dataplane import api_errors as errors
from haptic.dataplane.client import STORAGE_GENERAL, STORAGE_MAPS, STORAGE_SSL, DataplaneClient
from simulator.dataplane.app import create_app
from simulator.dataplane.inprocess import client_for, transport_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from tests.support.certs import make_pem
from tests.support.dataplane import FRONTEND_FE

CONFIG = FRONTEND_FE + """    use_backend web if { hdr(host) -m str -f /usr/share/haproxy/hosts.lst }
    default_backend web

backend web
    server s1 10.0.0.1:80 check weight 10
    server s2 10.0.0.2:80 check
"""


MAP_CONFIG = CONFIG.replace(
    "    default_backend web", "    use_backend %[req.hdr(host),map(/etc/haproxy/maps/host.map,web)]"
)


async def push(client: DataplaneClient, text: str = CONFIG) -> str | None:
    """Pushes ``text`` after storing an empty file for each map it names that is not stored yet
    (the API refuses a config naming a missing file, as haproxy does)."""
    stored = {f.storage_name for f in await client.list_storage(STORAGE_MAPS)}
    for name in sorted(set(re.findall(r"/etc/haproxy/maps/([\w.-]+)", text)) - stored):
        await client.create_storage_file(STORAGE_MAPS, name, "")
    version = await client.get_version()
    return (await client.post_raw_config(text, version)).reload_id


async def loaded(client: DataplaneClient, text: str = CONFIG) -> None:
    """Pushes ``text`` and waits until haproxy runs it (runtime commands act on what it runs)."""
    reload_id = await push(client, text)
    assert reload_id is not None
    await client.wait_for_reload(reload_id)


async def test_info_version_is_configurable() -> None:
    fake = FakeDataplane(InstanceOptions(api_version="v3.1.4 abc"))
    async with client_for(fake) as c:
        info = await c.info()
    assert (info.major, info.minor) == (3, 1)


async def test_bad_credentials_get_401(fake: FakeDataplane) -> None:
    async with DataplaneClient("http://x", "admin", "wrong", transport=transport_for(fake)) as c:
        with pytest.raises(errors.AuthenticationError):
            await c.get_version()
    async with httpx.AsyncClient(transport=transport_for(fake), base_url="http://x") as raw:
        assert (await raw.get("/v3/info")).status_code == 401


async def test_version_starts_at_one_and_raw_carries_it(client: DataplaneClient) -> None:
    assert await client.get_version() == 1
    raw = await client.get_raw_config()
    assert raw.version == 1 and raw.text.startswith("# _version=1\n")


@pytest.mark.looptime
async def test_raw_push_bumps_version_and_schedules_one_reload(client: DataplaneClient, fake: FakeDataplane) -> None:
    with pytest.raises(errors.VersionConflictError):
        await client.post_raw_config(CONFIG, 7)
    out = await client.post_raw_config("# _version=99\n" + CONFIG, 1)
    assert out.status == 202 and out.reload_id is not None and out.version == 2
    raw = await client.get_raw_config()
    assert raw.text == "# _version=2\n" + CONFIG
    assert (await client.get_reload(out.reload_id)).status == "in_progress"
    # A second write within the reload delay coalesces into the same reload.
    second = await client.post_raw_config(CONFIG.replace("s2", "s3"), 2)
    assert second.reload_id == out.reload_id
    status = await client.wait_for_reload(out.reload_id)
    assert status.status == "succeeded" and fake.counters.reloads == 1


async def test_unparseable_config_is_refused_naming_the_line(client: DataplaneClient, fake: FakeDataplane) -> None:
    await push(client)
    before = await client.get_raw_config()
    with pytest.raises(errors.ValidationError, match="line 4"):
        await client.post_raw_config('global\n    daemon\nbackend web\n    server s1 "10.0.0.1:80\n', 2)
    assert await client.get_raw_config() == before
    with pytest.raises(errors.ValidationError, match="newline"):
        await client.post_raw_config("global", 2)


@pytest.mark.looptime
async def test_reload_failure_keeps_previous_config(client: DataplaneClient, fake: FakeDataplane) -> None:
    first = await push(client)
    assert first is not None
    await client.wait_for_reload(first)
    good = await client.get_raw_config()
    fake.fail_next_reloads()
    bad = await push(client, CONFIG.replace("s2", "s9"))
    assert bad is not None
    with pytest.raises(errors.ReloadFailedError, match="injected"):
        await client.wait_for_reload(bad)
    assert await client.get_raw_config() == good
    assert fake.counters.failed_reloads == 1
    # Older IDs of the day count as succeeded; unknown ones are 404.
    assert (await client.get_reload(first)).status == "succeeded"
    with pytest.raises(errors.NotFoundError):
        await client.get_reload("2026-01-01-99")


@pytest.mark.looptime
async def test_runtime_eligible_server_change_is_200_without_reload(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    await loaded(client)
    version = await client.get_version()
    model = await client.get_server("web", "s1")
    assert model["address"] == "10.0.0.1" and model["weight"] == 10
    out = await client.replace_server("web", "s1", {**model, "address": "10.0.0.9", "port": 8080}, version=version)
    assert out.status == 200 and out.reload_id is None
    assert await client.get_version() == version + 1
    assert fake.counters.runtime_server_updates == 1
    assert "server s1 10.0.0.9:8080" in (await client.get_raw_config()).text


async def test_non_runtime_server_change_schedules_a_reload(client: DataplaneClient, fake: FakeDataplane) -> None:
    await push(client)
    version = await client.get_version()
    model = await client.get_server("web", "s2")
    out = await client.replace_server("web", "s2", {**model, "inter": 5000}, version=version)
    assert out.status == 202 and out.reload_id is not None
    assert fake.counters.runtime_server_updates == 0


async def test_server_errors(client: DataplaneClient) -> None:
    await push(client)
    with pytest.raises(errors.NotFoundError):
        await client.replace_server("web", "nope", {"name": "nope", "address": "1.1.1.1"}, version=2)
    with pytest.raises(errors.NotFoundError):
        await client.get_server("nobackend", "s1")
    with pytest.raises(errors.VersionConflictError):
        await client.replace_server("web", "s1", {"name": "s1", "address": "1.1.1.1"}, version=1)


@pytest.mark.looptime
async def test_transactions_commit_outdate_abort(client: DataplaneClient, fake: FakeDataplane) -> None:
    await push(client)
    with pytest.raises(errors.VersionConflictError):
        await client.start_transaction(1)
    first = await client.start_transaction(2)
    second = await client.start_transaction(2)
    await client.replace_server("web", "s1", {"name": "s1", "address": "10.0.0.7", "port": 80}, transaction_id=first.id)
    assert "10.0.0.7" not in (await client.get_raw_config()).text  # not visible before commit
    out = await client.commit_transaction(first.id)
    assert out.status == 202 and out.reload_id is not None
    assert await client.get_version() == 3
    assert "10.0.0.7" in (await client.get_raw_config()).text
    with pytest.raises(errors.VersionConflictError) as outdated:
        await client.commit_transaction(second.id)
    assert outdated.value.status == 406
    await client.abort_transaction(second.id)
    with pytest.raises(errors.NotFoundError):
        await client.commit_transaction(second.id)
    assert await client.list_transactions() == []


async def test_too_many_transactions(fake: FakeDataplane) -> None:
    fake.options.max_open_transactions = 2
    async with client_for(fake) as c:
        await c.start_transaction(1)
        await c.start_transaction(1)
        with pytest.raises(errors.TooManyTransactionsError):
            await c.start_transaction(1)


async def test_run_transaction_survives_a_concurrent_commit(client: DataplaneClient, fake: FakeDataplane) -> None:
    await push(client)
    calls = 0

    async def body(tid: str) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:  # someone else writes while our transaction is open
            await client.post_raw_config(CONFIG.replace("weight 10", "weight 11"), await client.get_version())
        await client.replace_server("web", "s2", {"name": "s2", "address": "10.0.0.5", "port": 80}, transaction_id=tid)

    result = await client.run_transaction(body)
    assert calls == 2 and result.retries == 1
    text = (await client.get_raw_config()).text
    assert "10.0.0.5" in text and "weight 11" in text


@pytest.mark.looptime
async def test_map_storage_and_referenced_delete(client: DataplaneClient, fake: FakeDataplane) -> None:
    out = await client.create_storage_file(STORAGE_MAPS, "host", "a.com web\n")
    assert out.status == 201 and out.reload_id is None
    assert [f.storage_name for f in await client.list_storage(STORAGE_MAPS)] == ["host.map"]
    with pytest.raises(errors.AlreadyExistsError):
        await client.create_storage_file(STORAGE_MAPS, "host.map", "x y\n")
    assert await client.get_storage_content(STORAGE_MAPS, "host.map") == "a.com web\n"
    replaced = await client.replace_storage_file(STORAGE_MAPS, "host.map", "b.com web\n")
    assert replaced.status == 202 and replaced.reload_id is not None
    await push(client, MAP_CONFIG)  # the config references /etc/haproxy/maps/host.map
    with pytest.raises(errors.ReferencedFileError, match="referenced"):
        await client.delete_storage_file(STORAGE_MAPS, "host.map")
    await push(client, MAP_CONFIG.replace("/etc/haproxy/maps/host.map", "/etc/haproxy/maps/other.map"))
    assert (await client.delete_storage_file(STORAGE_MAPS, "host.map")).status == 204
    with pytest.raises(errors.NotFoundError):
        await client.delete_storage_file(STORAGE_MAPS, "host.map")
    with pytest.raises(errors.ValidationError, match=r"cannot open map '/etc/haproxy/maps/host\.map'"):
        await client.post_raw_config(MAP_CONFIG, await client.get_version())  # haproxy would not start


async def test_storage_leaves_the_version_alone_and_sanitizes_names(client: DataplaneClient) -> None:
    await client.create_storage_file(STORAGE_GENERAL, "my error!.page.http", "HTTP/1.0 503\n")
    names = [f.storage_name for f in await client.list_storage(STORAGE_GENERAL)]
    assert names == ["my_error_page.http"]
    assert await client.get_version() == 1
    out = await client.replace_storage_file(STORAGE_GENERAL, "my_error_page.http", "HTTP/1.0 500\n")
    assert out.status == 202
    assert await client.get_storage_content(STORAGE_GENERAL, "my_error_page.http") == "HTTP/1.0 500\n"


async def test_ssl_certificates_metadata(client: DataplaneClient) -> None:
    pem = make_pem("example.com", 4242, issuer_cn="Example CA")
    await client.create_storage_file(STORAGE_SSL, "example.com.pem", pem)
    assert [f.storage_name for f in await client.list_storage(STORAGE_SSL)] == ["example_com.pem"]
    info = await client.get_certificate_info("example_com.pem")
    assert info["serial"] == "4242" and info["issuers"] == "Example CA" and "BEGIN" not in str(info)
    # Pushed through the runtime API when uploaded (``new ssl cert``), so haproxy knows it until a
    # reload: replaced at runtime, no reload.
    out = await client.replace_storage_file(STORAGE_SSL, "example_com.pem", make_pem("example.com", 7))
    assert out.status == 200 and out.reload_id is None
    with pytest.raises(errors.ValidationError):
        await client.create_storage_file(STORAGE_SSL, "bad.pem", "not a certificate")


@pytest.mark.looptime
async def test_runtime_map_entries(client: DataplaneClient, fake: FakeDataplane) -> None:
    await client.create_storage_file(STORAGE_MAPS, "host.map", "a.com web\nb.com api\n")
    await loaded(client, MAP_CONFIG)
    await client.add_map_entry("host.map", "c.com", "web")
    await client.replace_map_entry("host.map", "a.com", "api")
    await client.delete_map_entry("host.map", "b.com")
    assert [(e.key, e.value) for e in await client.list_map_entries("host.map")] == [("a.com", "api"), ("c.com", "web")]
    assert await client.get_storage_content(STORAGE_MAPS, "host.map") == "a.com api\nc.com web\n"
    assert fake.counters.runtime_map_updates == 3 and fake.reloads.pending is None
    with pytest.raises(errors.AlreadyExistsError):
        await client.add_map_entry("host.map", "c.com", "x")
    with pytest.raises(errors.NotFoundError):
        await client.delete_map_entry("host.map", "zzz")
    with pytest.raises(errors.NotFoundError):
        await client.list_map_entries("nomap.map")


@pytest.mark.looptime
async def test_runtime_maps_are_the_ones_haproxy_loaded_under_the_name_it_uses(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    await client.create_storage_file(STORAGE_MAPS, "host.map", "a.com web\n")
    # Stored but not loaded: haproxy has no such map.
    with pytest.raises(errors.DataplaneHTTPError, match="Unknown map identifier") as refused:
        await client.add_map_entry("host.map", "c.com", "web")
    assert refused.value.status == 500
    # Loaded through a path relative to default-path: haproxy calls it "maps/host.map", the API
    # asks for "/etc/haproxy/maps/host.map" — unknown to haproxy, and not listed as managed.
    relative = MAP_CONFIG.replace("global\n", "global\n    default-path origin /etc/haproxy\n").replace(
        "/etc/haproxy/maps/host.map", "maps/host.map")
    await loaded(client, relative)
    assert await client.runtime_map_names() == set()
    with pytest.raises(errors.DataplaneHTTPError, match="Unknown map identifier"):
        await client.add_map_entry("host.map", "c.com", "web")
    with pytest.raises(errors.NotFoundError, match="Unknown map identifier"):
        await client.delete_map_entry("host.map", "a.com")
    await loaded(client, MAP_CONFIG)
    assert await client.runtime_map_names() == {"host.map"}
    await client.add_map_entry("host.map", "c.com", "web")
    assert fake.counters.runtime_map_updates == 1


async def test_injected_errors_then_recovery(client: DataplaneClient, fake: FakeDataplane) -> None:
    fake.inject_errors(2, status=500)
    for _ in range(2):
        with pytest.raises(errors.DataplaneHTTPError) as info:
            await client.get_version()
        assert info.value.status == 500
    assert await client.get_version() == 1


async def test_conflict_storm_is_absorbed_by_bounded_retries(client: DataplaneClient, fake: FakeDataplane) -> None:
    fake.conflict_storm(2)
    result = await client.with_version(lambda v: client.post_raw_config(CONFIG, v))
    assert result.retries == 2 and await client.get_version() == 2
    fake.conflict_storm(10)
    with pytest.raises(errors.VersionConflictError):
        await client.with_version(lambda v: client.post_raw_config(CONFIG, v))


@pytest.mark.looptime
async def test_slow_answers_take_virtual_time(client: DataplaneClient, fake: FakeDataplane) -> None:
    fake.slow_down(5.0)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await client.get_version()
    assert loop.time() - start == pytest.approx(5.0)


async def test_restart_resets_version_and_storage(client: DataplaneClient, fake: FakeDataplane) -> None:
    await push(client)
    await client.create_storage_file(STORAGE_MAPS, "host.map", "a b\n")
    await fake.restart()
    assert await client.get_version() == 1
    assert await client.list_storage(STORAGE_MAPS) == []
    assert "backend web" not in (await client.get_raw_config()).text


async def test_admin_endpoints(fake: FakeDataplane) -> None:
    auth = ("admin", "adminpwd")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(fake)), base_url="http://x", auth=auth
    ) as h:
        r = await h.post("/_sim/faults", json={"error_count": 1, "error_status": 502})
        assert r.status_code == 200 and fake.faults.error_count == 1
        assert (await h.get("/v3/services/haproxy/configuration/version")).status_code == 502
        assert (await h.post("/_sim/faults", json={"bogus": 1})).status_code == 400
        assert (await h.post("/_sim/restart")).json()["counters"]["restarts"] == 1
        state = (await h.get("/_sim/state")).json()
        assert state["version"] == 1 and state["counters"]["requests"] == 1
        await h.delete("/_sim/faults")
        assert fake.faults.error_count == 0


class _SlowDriver:
    """Stands in for HAProxyDriver: each reload takes virtual time, so writes can land during it."""

    running = True

    def __init__(self) -> None:
        self.loaded: list[str] = []

    async def check(self, text: str) -> None:
        return None

    async def reload(self, text: str) -> None:
        await asyncio.sleep(2.0)
        self.loaded.append(text)

    async def runtime(self, commands: list[str]) -> str | None:
        return None

    def stop(self) -> None:
        return None

    def close(self) -> None:
        return None


@pytest.mark.looptime
async def test_reloads_run_one_at_a_time_and_fall_back_to_what_last_loaded() -> None:
    driver = _SlowDriver()
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5), driver=driver)  # type: ignore[arg-type]
    async with client_for(fake) as c:
        first = await c.post_raw_config(CONFIG, 1)
        await asyncio.sleep(1.0)  # the first reload is now running (it takes 2s)
        second = await c.post_raw_config(CONFIG.replace("s2", "s3"), 2)
        assert second.reload_id != first.reload_id  # the first was no longer pending
        assert first.reload_id is not None and second.reload_id is not None
        fake.fail_next_reloads()  # the first reload is past its fault check; the second is not
        assert (await c.get_reload(first.reload_id)).status == "in_progress"
        await c.wait_for_reload(first.reload_id)
        with pytest.raises(errors.ReloadFailedError):
            await c.wait_for_reload(second.reload_id)
        raw = await c.get_raw_config()
    assert raw.text == "# _version=2\n" + CONFIG and driver.loaded == [CONFIG]
    await fake.aclose()
