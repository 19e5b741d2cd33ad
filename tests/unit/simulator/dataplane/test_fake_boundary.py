"""The fake Dataplane API's HTTP boundary is as strict as the real one (and never lets a line break
reach haproxy's runtime socket): path parameters are percent-decoded once after routing, runtime
values holding control characters are refused with 400 and a message, and runtime endpoints fail
while haproxy is not running."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from haptic.dataplane import api_errors as errors
from haptic.dataplane.client import STORAGE_MAPS, DataplaneClient
from simulator.dataplane.inprocess import client_for, transport_for
from simulator.dataplane.instance import FakeDataplane, InstanceOptions
from tests.support.dataplane import FRONTEND_FE, SpyDriver

pytestmark = pytest.mark.looptime

MAP = "/etc/haproxy/maps/path.map"
CONFIG = FRONTEND_FE + f"""    use_backend %[req.hdr(host),concat(,txn.path),map({MAP},web)]

backend web
    server s1 10.0.0.1:80 weight 10
"""
KEY = "shop.example.com/api/v1/health"
# Every character str.splitlines splits on, plus the other C0/C1 controls a command must not hold.
CONTROL = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\t", "\x00", "\x7f"]


async def _loaded(fake: FakeDataplane, c: DataplaneClient) -> None:
    await c.create_storage_file(STORAGE_MAPS, "path.map", f"{KEY} web\nshop.example.com/ web\n")
    out = await c.post_raw_config(CONFIG, await c.get_version())
    assert out.reload_id is not None
    await c.wait_for_reload(out.reload_id)


async def test_encoded_slash_stays_in_its_parameter_and_is_decoded_once() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c:
        await _loaded(fake, c)
        await c.replace_map_entry("path.map", KEY, "api")
        assert (KEY, "api") in [(e.key, e.value) for e in await c.list_map_entries("path.map")]
        await c.delete_map_entry("path.map", KEY)
        assert KEY not in [e.key for e in await c.list_map_entries("path.map")]
        await c.add_map_entry("path.map", "a+b%2Fc", "web")  # "+" stays "+", "%2F" in the key stays
        assert "a+b%2Fc" in [e.key for e in await c.list_map_entries("path.map")]
        async with httpx.AsyncClient(transport=transport_for(fake), base_url="http://x/v3",
                                     auth=("admin", "adminpwd")) as raw:
            entries = "/services/haproxy/runtime/maps/path.map/entries"
            # A raw "/" makes more path segments: no route (as on the real API).
            assert (await raw.get(f"{entries}/shop.example.com/")).status_code == 404
            one = await raw.get(f"{entries}/{quote('shop.example.com/', safe='')}")
            assert one.status_code == 200 and one.json()["key"] == "shop.example.com/"
            # Decoded exactly once: "%252F" is the key "%2F", not "/".
            assert (await raw.get(f"{entries}/a+b%252Fc")).json()["key"] == "a+b%2Fc"
    await fake.aclose()


@pytest.mark.parametrize("bad", CONTROL)
async def test_control_characters_are_refused_before_the_socket(bad: str) -> None:
    driver = SpyDriver()
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5), driver=driver)  # type: ignore[arg-type]
    async with client_for(fake) as c:
        await _loaded(fake, c)
        injected = f"x{bad}set server web/s1 state maint"
        with pytest.raises(errors.ValidationError, match="control character"):
            await c.add_map_entry("path.map", injected, "web")
        with pytest.raises(errors.ValidationError, match="control character"):
            await c.add_map_entry("path.map", "k", injected)
        with pytest.raises(errors.ValidationError, match="control character"):
            await c.replace_map_entry("path.map", injected, "web")
        with pytest.raises(errors.ValidationError, match="control character"):
            await c.replace_map_entry("path.map", KEY, injected)
        model = await c.get_server("web", "s1")
        with pytest.raises(errors.ValidationError, match="control character"):
            await c.replace_server("web", "s1", {**model, "agent-send": injected}, version=await c.get_version())
    assert driver.commands == [] and fake.counters.runtime_map_updates == 0
    await fake.aclose()


async def test_map_path_parameters_follow_the_specification_pattern() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c:
        await _loaded(fake, c)
        for bad in ("a;b", "a#b", "a{b}", "a$b", 'a"b', "a<b>", "a&b", "a*b"):
            with pytest.raises(errors.ValidationError, match="does not match"):
                await c.delete_map_entry("path.map", bad)
    await fake.aclose()


async def test_runtime_endpoints_fail_while_haproxy_is_not_running() -> None:
    driver = SpyDriver()
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5), driver=driver)  # type: ignore[arg-type]
    async with client_for(fake) as c:
        await _loaded(fake, c)
        driver.stop()  # kill -9 of the haproxy master: the API itself keeps answering
        with pytest.raises(errors.DataplaneHTTPError, match="not running") as refused:
            await c.add_map_entry("path.map", "new.example.com/", "web")
        assert refused.value.status == 500
        with pytest.raises(errors.DataplaneHTTPError, match="not running"):
            await c.list_map_entries("path.map")
        # A runtime-eligible server change cannot go through the socket: a reload, which fails.
        model = await c.get_server("web", "s1")
        out = await c.replace_server("web", "s1", {**model, "weight": 20}, version=await c.get_version())
        assert out.status == 202 and out.reload_id is not None
        with pytest.raises(errors.ReloadFailedError, match="refused"):
            await c.wait_for_reload(out.reload_id)
        health = await c.http.get("/health")
        assert health.json() == {"haproxy": "down"}
    assert driver.commands == [] and fake.counters.runtime_server_updates == 0
    await fake.aclose()


async def test_haproxy_down_fault_on_sim_and_back_up() -> None:
    fake = FakeDataplane(InstanceOptions(reload_delay=0.5))
    async with client_for(fake) as c:
        await _loaded(fake, c)
        fake.haproxy_down()
        with pytest.raises(errors.DataplaneHTTPError, match="not running"):
            await c.add_map_entry("path.map", "new.example.com/", "web")
        pushed = await c.post_raw_config(CONFIG.replace("weight 10", "weight 11"), await c.get_version())
        assert pushed.reload_id is not None  # the file is written...
        with pytest.raises(errors.ReloadFailedError, match="not running"):
            await c.wait_for_reload(pushed.reload_id)  # ...but nothing loads it
        await fake.haproxy_up()
        await c.add_map_entry("path.map", "new.example.com/", "web")
        assert fake.counters.runtime_map_updates == 1
    await fake.aclose()
