"""Where the fake used to differ from the real dataplaneapi (issue 12's measurements), it now answers
as the real handlers do: force_reload and skip_reload, only_validate, certificate statuses, the
starting ``# _version``, error texts, and the endpoints a real client may use."""

from __future__ import annotations

import httpx
import pytest

from haptic.dataplane import api_errors as errors
from haptic.dataplane.client import STORAGE_MAPS, STORAGE_SSL, DataplaneClient
from simulator.dataplane.inprocess import client_for, transport_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from tests.support.certs import make_pem
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime

CFG = "/services/haproxy/configuration"
CONFIG = FRONTEND_FE + """    default_backend web

backend web
    server s1 10.0.0.1:80 weight 10
"""


def raw_client(fake: FakeDataplane) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=transport_for(fake), base_url="http://pod/v3", auth=("admin", "adminpwd"))


async def _loaded(c: DataplaneClient, text: str = CONFIG) -> None:
    out = await c.post_raw_config(text, await c.get_version())
    assert out.reload_id is not None
    await c.wait_for_reload(out.reload_id)


async def test_force_reload_and_skip_reload() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=5.0))
    async with client_for(fake) as c, raw_client(fake) as h:
        await _loaded(c)
        version, reloads = await c.get_version(), fake.counters.reloads
        model = await c.get_server("web", "s1")
        forced = await h.put(f"{CFG}/backends/web/servers/s1", params={"version": version, "force_reload": "true"},
                             json={**model, "check": "enabled"})
        assert forced.status_code == 200 and "Reload-ID" not in forced.headers
        assert fake.counters.reloads == reloads + 1  # done before the answer, not scheduled
        both = await h.put(f"{CFG}/backends/web/servers/s1", params={"transaction_id": "x", "force_reload": "true"},
                           json=model)
        assert both.status_code == 400 and "force_reload and transaction" in both.json()["message"]
        await c.create_storage_file(STORAGE_MAPS, "a.map", "k v\n")
        skipped = await h.put("/services/haproxy/storage/maps/a.map", params={"skip_reload": "true"}, content=b"k w\n")
        assert skipped.status_code == 204 and fake.reloads.pending is None
        reloads = fake.counters.reloads
        forced = await h.put("/services/haproxy/storage/maps/a.map", params={"force_reload": "true"}, content=b"k x\n")
        assert forced.status_code == 204 and fake.counters.reloads == reloads + 1
        raw = await h.post(f"{CFG}/raw", params={"version": await c.get_version(), "skip_reload": "true"},
                           content=CONFIG)
        assert raw.status_code == 201 and "Reload-ID" not in raw.headers and fake.reloads.pending is None
    await fake.aclose()


async def test_only_validate_does_not_apply() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c, raw_client(fake) as h:
        await _loaded(c)
        before = await c.get_raw_config()
        out = await h.post(f"{CFG}/raw", params={"version": before.version, "only_validate": "1"},
                           content=CONFIG.replace("weight 10", "weight 99"))
        assert out.status_code == 202 and "Reload-ID" not in out.headers
        assert await c.get_raw_config() == before and fake.reloads.pending is None
        bad = await h.post(f"{CFG}/raw", params={"version": before.version, "only_validate": "1"},
                           content="global\n    frobnicate\nbackend x\n    server a\n")
        assert bad.status_code == 400
    await fake.aclose()


async def test_certificates_reload_unless_haproxy_takes_them_at_runtime() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c:
        # A certificate already in the directory (kept volume, no upload): haproxy never heard of it.
        fake.storage.put("ssl_certificates", "old_com.pem", make_pem("old.com", 1))
        replaced = await c.replace_storage_file(STORAGE_SSL, "old_com.pem", make_pem("old.com", 2))
        assert replaced.status == 202 and replaced.reload_id is not None
        deleted = await c.delete_storage_file(STORAGE_SSL, "old_com.pem")
        assert deleted.status == 202 and deleted.reload_id is not None
        # An upload goes through the runtime API (new/set/commit ssl cert): 201, haproxy knows it...
        created = await c.create_storage_file(STORAGE_SSL, "new.com.pem", make_pem("new.com", 3))
        assert created.status == 201 and created.reload_id is None
        assert (await c.replace_storage_file(STORAGE_SSL, "new_com.pem", make_pem("new.com", 4))).status == 200
        # ...until a reload of a config that does not load it.
        await _loaded(c)
        again = await c.replace_storage_file(STORAGE_SSL, "new_com.pem", make_pem("new.com", 5))
        assert again.status == 202
    await fake.aclose()


async def test_the_starting_config_keeps_its_version_and_errors_use_the_real_texts() -> None:
    fake = FakeDataplane(InstanceOptions(initial_config="# _version=7\n" + CONFIG))
    async with client_for(fake) as c:
        assert await c.get_version() == 7
        raw = await c.get_raw_config()
        assert raw.version == 7 and raw.text.count("# _version=") == 1
        with pytest.raises(errors.ValidationError, match="invalid configuration: no newline character found"):
            await c.post_raw_config("global", 7)
    await fake.aclose()
    assert FakeDataplane(InstanceOptions(initial_config=CONFIG)).version == 1


async def test_runtime_maps_are_haproxys_and_report_the_configured_directory() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c, raw_client(fake) as h:
        await c.create_storage_file(STORAGE_MAPS, "host.map", "a.com web\n")
        await c.create_storage_file(STORAGE_MAPS, "unused.map", "b.com web\n")
        await _loaded(c, CONFIG.replace("    default_backend web",
                                        "    use_backend %[req.hdr(host),map(/etc/haproxy/maps/host.map,web)]"))
        listed = (await h.get("/services/haproxy/runtime/maps")).json()
        assert [(m["file"], m["storage_name"]) for m in listed] == [("/etc/haproxy/maps/host.map", "host.map")]
        assert (await h.get("/services/haproxy/runtime/maps/unused.map")).status_code == 404
        with pytest.raises(errors.DataplaneHTTPError, match="Unknown map identifier"):
            await c.add_map_entry("unused.map", "c.com", "web")
        one = (await h.get("/services/haproxy/runtime/maps/host.map/entries/a.com")).json()
        assert (one["key"], one["value"]) == ("a.com", "web")
        assert (await h.delete("/services/haproxy/runtime/maps/host.map")).status_code == 204
        assert await c.list_map_entries("host.map") == []
    await fake.aclose()


async def test_servers_can_be_listed_created_deleted_and_seen_at_runtime() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c, raw_client(fake) as h:
        await _loaded(c)
        version = await c.get_version()
        created = await h.post(f"{CFG}/backends/web/servers", params={"version": version},
                               json={"name": "s2", "address": "10.0.0.2", "port": 80, "resolve-net": "10.0.0.0/8"})
        assert created.status_code == 202 and created.headers["Reload-ID"]
        assert [s["name"] for s in (await h.get(f"{CFG}/backends/web/servers")).json()] == ["s1", "s2"]
        wrong = await h.post(f"{CFG}/backends/web/servers", params={"version": version + 1},
                             json={"name": "s3", "address": "10.0.0.3", "resolve_net": "10.0.0.0/8"})
        assert wrong.status_code == 400 and "resolve_net" in wrong.json()["message"]
        await c.wait_for_reload(created.headers["Reload-ID"])
        runtime = (await h.get("/services/haproxy/runtime/backends/web/servers")).json()
        assert [(s["name"], s["admin_state"]) for s in runtime] == [("s1", "ready"), ("s2", "ready")]
        drained = await h.put("/services/haproxy/runtime/backends/web/servers/s2", json={"admin_state": "drain"})
        assert drained.status_code == 200 and drained.json()["admin_state"] == "drain"
        gone = await h.delete(f"{CFG}/backends/web/servers/s2", params={"version": version + 1})
        assert gone.status_code == 202 and "server s2" not in fake.document.body()
        info = (await h.get("/services/haproxy/runtime/info")).json()
        assert info[0]["info"]["version"]
        spec = (await h.get("/specification")).json()
        assert "/services/haproxy/runtime/maps/{name}/entries/{key}" in spec["paths"]
    await fake.aclose()


async def test_runtime_add_server_changes_haproxys_memory_only_as_the_real_handler() -> None:
    """``POST /runtime/backends/{b}/servers`` (v3.2's AddRuntimeServerHandler): 400 without a name, 404
    for a backend haproxy does not run, 409 for a name it has, 500 where haproxy refuses (no dynamic load
    balancing); 201 echoing the body, version and file unchanged; haproxy before 3.0 creates the server in
    maintenance unless the body says ``maintenance: disabled``; the next reload forgets it."""
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    servers = "/services/haproxy/runtime/backends/web/servers"
    async with client_for(fake) as c, raw_client(fake) as h:
        await _loaded(c, CONFIG + "\nbackend fixed\n    balance static-rr\n    server f1 10.0.1.1:80\n")
        version, raw = await c.get_version(), fake.raw()
        assert (await h.post(servers, json={"address": "10.0.0.2"})).status_code == 400
        assert (await h.post("/services/haproxy/runtime/backends/nope/servers",
                             json={"name": "s2", "address": "10.0.0.2"})).status_code == 404
        assert (await h.post(servers, json={"name": "s1", "address": "10.0.0.2"})).status_code == 409
        refused = await h.post("/services/haproxy/runtime/backends/fixed/servers",
                               json={"name": "f2", "address": "1.1.1.1"})
        assert refused.status_code == 500 and "dynamic load balancing" in refused.json()["message"]
        unknown = await h.post(servers, json={"name": "s2", "address": "10.0.0.2", "cookie": "s2"})
        assert unknown.status_code == 400 and "cookie" in unknown.json()["message"]
        ready = await h.post(servers, json={"name": "s2", "address": "10.0.0.2", "port": 80, "maintenance": "disabled",
                                            "weight": 5})
        assert ready.status_code == 201 and ready.json()["name"] == "s2" and "Reload-ID" not in ready.headers
        await c.add_runtime_server("web", {"name": "s3", "address": "10.0.0.3", "port": 80})
        listed = {s["name"]: (s["address"], s.get("port"), s["admin_state"]) for s in
                  (await h.get(servers)).json()}
        assert listed == {"s1": ("10.0.0.1", 80, "ready"), "s2": ("10.0.0.2", 80, "ready"),
                          "s3": ("10.0.0.3", 80, "maint")}
        assert await c.get_version() == version and fake.raw() == raw and fake.counters.reloads == 1
        assert (await h.get(f"{CFG}/backends/web/servers/s2", params={})).status_code == 404  # not in the file
        await fake.force_reload()
        assert [s["name"] for s in (await h.get(servers)).json()] == ["s1"]
    await fake.aclose()
