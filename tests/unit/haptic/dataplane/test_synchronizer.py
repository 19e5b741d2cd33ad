"""The synchronizer against the in-process fake Dataplane API, on virtual time (looptime)."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import STORAGE_MAPS, STORAGE_SSL, DataplaneClient
from haptic.dataplane.planner import plan
from haptic.dataplane.synchronizer import SyncOptions, VersionCache, sync
from simulator.dataplane.inprocess import client_for
from simulator.dataplane.instance import DEFAULT_CONFIG, FakeDataplane, InstanceOptions
from tests.support.certs import make_pem
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

BASE = FRONTEND_FE + """    use_backend %(map_backend)s
    default_backend web

backend web
    server s1 10.0.0.1:80 weight 10
    server s2 10.0.0.2:80
"""


def config(map_name: str = "host.map", **replace: str) -> str:
    text = BASE % {"map_backend": f"%[req.hdr(host),map(/etc/haproxy/maps/{map_name},web)]"}
    for old, new in replace.items():
        text = text.replace(old.replace("_", " "), new)
    return text


MAPS = AuxFiles(maps={"host.map": "a.com web\nb.com web\n"})


async def test_first_sync_is_one_raw_push_with_one_verified_reload(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    cache = VersionCache()
    result = await sync(client, config(), MAPS, cache=cache)
    assert result.ok, result.errors
    assert result.mode == "raw" and result.reload_triggered and len(result.reload_ids) == 1
    # A fresh API (version 1) gets the config whole: what it replaces is counted, not planned operation by operation.
    assert result.operations == ("Create map 'host.map'", "Replace configuration")
    assert result.summary == {"totalAPIOperations": len(plan(DEFAULT_CONFIG, config()).operations),
                              "frontendsAdded": 1, "backendsAdded": 1, "serversAdded": 2}
    assert fake.counters.reloads == 1 and fake.counters.raw_pushes == 1
    assert fake.reload_status(result.reload_ids[0])["status"] == "succeeded"
    assert result.version == fake.version == 2 and cache.version == 2
    assert fake.raw() == "# _version=2\n" + config()
    assert result.duration >= 1.0  # the reload delay passed on the virtual clock


async def test_same_config_again_is_a_noop_served_from_the_cache(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    requests = fake.counters.requests
    result = await sync(client, config(), MAPS, cache=cache)
    assert result.ok and result.mode == "noop" and not result.reload_triggered and result.operations == ()
    assert fake.counters.requests - requests == 1  # GET version only
    # Without a cache the same answer costs a raw read and the file comparison.
    again = await sync(client, config(), MAPS)
    assert again.mode == "noop" and fake.counters.requests - requests > 2


async def test_server_address_change_goes_through_the_runtime_api(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    reloads = fake.counters.reloads
    result = await sync(client, config(**{"10.0.0.1:80": "10.0.0.9:8080"}), MAPS, cache=cache)
    assert result.ok and result.mode == "runtime"
    assert result.operations == ("Update server 's1' in backend 'web'",)
    assert not result.reload_triggered and result.runtime_updates == 1
    assert fake.counters.reloads == reloads and fake.counters.runtime_server_updates == 1
    assert fake.get_server("web", "s1")["address"] == "10.0.0.9" and cache.version == fake.version == 3


async def test_adding_a_backend_is_exactly_one_reload(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    desired = config() + "\nbackend api\n    server a1 10.0.1.1:80\n"
    result = await sync(client, desired, MAPS, cache=cache)
    assert result.ok and result.mode == "raw" and "Create backend 'api'" in result.operations
    assert len(result.reload_ids) == 1 and fake.counters.reloads == 2


async def test_unparseable_desired_config_is_refused_and_instance_untouched(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    await sync(client, config(), MAPS)
    before = (fake.version, fake.raw(), fake.counters.requests)
    result = await sync(client, config() + 'backend broken\n    server x "1.2.3.4:80\n', MAPS)
    assert not result.ok and result.mode == "failed"
    bad_line = len(config().splitlines()) + 2
    assert f"line {bad_line}:" in result.errors[0]
    assert (fake.version, fake.raw(), fake.counters.requests) == before


async def test_map_only_change_uses_runtime_map_entries(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    reloads = fake.counters.reloads
    changed = AuxFiles(maps={"host.map": "a.com api\nc.com web\n"})
    result = await sync(client, config(), changed, cache=cache)
    assert result.ok and result.mode == "runtime_maps" and not result.reload_triggered
    assert result.operations == ("Update map 'host.map' (runtime, 3 entries)",)
    assert fake.storage.get("maps", "host.map").content == "a.com api\nc.com web\n"  # type: ignore[union-attr]
    assert fake.counters.runtime_map_updates == 3 and fake.counters.reloads == reloads


async def test_reordered_map_is_uploaded_instead(client: DataplaneClient, fake: FakeDataplane) -> None:
    await sync(client, config(), MAPS)
    result = await sync(client, config(), AuxFiles(maps={"host.map": "b.com web\na.com web\n"}))
    assert result.ok and result.mode == "files" and result.reload_triggered
    assert result.operations == ("Update map 'host.map'",) and fake.counters.runtime_map_updates == 0


async def test_files_are_created_before_and_deleted_after_the_config(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    await sync(client, config(), MAPS)
    moved = AuxFiles(maps={"routes.map": "a.com web\n"})
    result = await sync(client, config(map_name="routes.map"), moved)
    assert result.ok, result.errors
    assert result.warnings == ()  # host.map was no longer referenced when it was deleted
    ops = list(result.operations)
    assert ops[0] == "Create map 'routes.map'" and ops[-1] == "Delete map 'host.map'"
    assert [f["storage_name"] for f in fake.storage.listing(STORAGE_MAPS)] == ["routes.map"]


async def test_failed_reload_is_reported_and_invalidates_the_cache(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    fake.fail_next_reloads()
    result = await sync(client, config() + "\nbackend api\n    server a1 10.0.1.1:80\n", MAPS, cache=cache)
    assert not result.ok and "failed" in result.errors[0]
    assert cache.version is None and "backend api" not in fake.raw()
    healed = await sync(client, config() + "\nbackend api\n    server a1 10.0.1.1:80\n", MAPS, cache=cache)
    assert healed.ok and "backend api" in fake.raw()


async def test_conflict_storm_is_retried(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    fake.conflict_storm(2)
    result = await sync(client, config(**{"10.0.0.2:80": "10.0.0.3:80"}), MAPS, cache=cache)
    assert result.ok and result.mode == "runtime" and result.retries == 2
    fake.conflict_storm(50)
    failed = await sync(client, config(**{"10.0.0.2:80": "10.0.0.4:80"}), MAPS, cache=cache)
    assert not failed.ok and "409" in failed.errors[0] and cache.version is None


async def test_restart_leads_to_a_fresh_raw_push(client: DataplaneClient, fake: FakeDataplane) -> None:
    cache = VersionCache()
    await sync(client, config(), MAPS, cache=cache)
    await fake.restart()
    result = await sync(client, config(), MAPS, cache=cache)
    assert result.ok and result.mode == "raw"
    assert "Create map 'host.map'" in result.operations and fake.version == 2


async def test_runtime_path_not_used_on_a_fresh_instance(client: DataplaneClient, fake: FakeDataplane) -> None:
    # The initial config has no backends; version 1 always gets a raw push.
    result = await sync(client, fake.raw(), AuxFiles())
    assert result.mode == "noop"
    result = await sync(client, config(), MAPS)
    assert result.mode == "raw"


async def test_certificates_compare_by_serial_and_issuer(client: DataplaneClient, fake: FakeDataplane) -> None:
    pem = make_pem("example.com", 11)
    aux = AuxFiles(certificates={"example.com.pem": pem}, maps=MAPS.maps)
    first = await sync(client, config(), aux)
    assert "Create SSL certificate 'example_com.pem'" in first.operations
    same = await sync(
        client, config(), AuxFiles(certificates={"example.com.pem": make_pem("example.com", 11)}, maps=MAPS.maps)
    )
    assert same.mode == "noop"
    renewed = await sync(
        client, config(), AuxFiles(certificates={"example.com.pem": make_pem("example.com", 12)}, maps=MAPS.maps)
    )
    assert renewed.operations == ("Update SSL certificate 'example_com.pem'",)
    assert fake.storage.get(STORAGE_SSL, "example_com.pem") is not None


async def test_verification_can_be_skipped(client: DataplaneClient, fake: FakeDataplane) -> None:
    result = await sync(client, config(), MAPS, options=SyncOptions(verify_reload=False))
    assert result.ok and result.reload_triggered and fake.reloads.pending == result.reload_id


async def test_connection_failure_is_an_error_result(fake: FakeDataplane) -> None:
    async with DataplaneClient("http://127.0.0.1:9", "admin", "adminpwd", sleep=_no_sleep) as c:
        result = await sync(c, config(), MAPS)
    assert not result.ok and result.retries == 2 and "127.0.0.1:9" in result.errors[0]


async def _no_sleep(seconds: float) -> None:
    return None


def test_map_edits_rules() -> None:
    from haptic.dataplane.aux_sync import map_edits

    assert map_edits("a 1\nb 2\n", "a 1\nb 3\nc 4\n", 10) is not None
    assert map_edits("a 1\nb 2\n", "c 0\na 1\nb 2\n", 10) is None  # insert before kept keys
    assert map_edits("a 1\nb 2\n", "b 2\na 1\n", 10) is None  # reorder
    assert map_edits("a 1\na 2\n", "a 1\n", 10) is None  # duplicates
    assert map_edits("a 1\n", "b 1\nc 1\nd 1\n", 2) is None  # over the limit
    edits = map_edits("a 1\nb 2\nc 3\n", "a 1\nc 4\nd 5\n", 10)
    assert edits is not None
    assert [(e.action, e.key, e.value) for e in edits] == [("delete", "b", ""), ("set", "c", "4"), ("add", "d", "5")]


async def test_runtime_rendered_lines_plan_as_unchanged_without_a_cache(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    await sync(client, config(), MAPS)
    desired = config(**{"10.0.0.1:80_weight_10": "10.0.0.5:81 weight 20"})
    assert (await sync(client, desired, MAPS)).mode == "runtime"
    # The fake re-rendered the line; reading it back and planning again finds nothing to do.
    again = await sync(client, desired, MAPS)
    assert again.ok and again.mode == "noop", again.operations


async def test_unparseable_current_config_is_replaced_whole() -> None:
    fake = FakeDataplane(InstanceOptions(initial_config='global\n    daemon\nbackend x\n    server a "1.1.1.1:80\n'))
    async with client_for(fake) as c:
        result = await sync(c, config(), MAPS)
    assert result.ok and result.mode == "raw" and "Replace configuration" in result.operations
    assert (
        "current configuration unparseable" in result.warnings[0] and "line 5:" in result.warnings[0]
    )  # of GET raw, after "# _version=1"
    await fake.aclose()


def test_aux_files_checksum_once_per_object_and_per_content() -> None:
    import dataclasses

    files = AuxFiles(maps={"hosts.map": "a b\n"}, files={"f": "x"})
    first = files.checksum()
    assert files.checksum() == first == AuxFiles(maps={"hosts.map": "a b\n"}, files={"f": "x"}).checksum()
    assert dataclasses.replace(files, maps={"hosts.map": "a c\n"}).checksum() != first
    assert files == AuxFiles(maps={"hosts.map": "a b\n"}, files={"f": "x"})  # the memo is no field
