"""Server slots growing without a reload: new servers in existing backends go to the running haproxy
through the runtime ``add server`` endpoint, the file follows with a raw push that skips the reload, and
whatever haproxy cannot add at runtime is one ordinary push with its reload (virtual time)."""

from __future__ import annotations

import pytest

from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.synchronizer import VersionCache, sync
from simulator.dataplane.instance import FakeDataplane
from tests.support.dataplane import FRONTEND_FE

pytestmark = pytest.mark.looptime


def config(servers: list[str], backend_extra: str = "", defaults: str = "") -> str:
    lines = "".join(f"    server {s}\n" for s in servers)
    text = FRONTEND_FE + "    default_backend web\n\nbackend web\n" + backend_extra + lines
    return text.replace("defaults\n", "defaults\n" + defaults, 1) if defaults else text


TWO = ["SRV_1 10.0.0.1:80", "SRV_2 127.0.0.1:1 disabled"]
FOUR = ["SRV_1 10.0.0.1:80", "SRV_2 10.0.0.2:80", "SRV_3 10.0.0.3:80 weight 2 inter 2000", "SRV_4 127.0.0.1:1 disabled"]


async def _deployed(client: DataplaneClient, fake: FakeDataplane, text: str, cache: VersionCache) -> None:
    first = await sync(client, text, AuxFiles(), cache=cache)
    assert first.ok and first.reload_triggered, first.errors
    assert fake.counters.reloads == 1


async def test_growing_slots_adds_servers_at_runtime_and_writes_the_file_without_a_reload(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    cache = VersionCache()
    await _deployed(client, fake, config(TWO), cache)
    result = await sync(client, config(FOUR), AuxFiles(), cache=cache)
    assert result.ok, result.errors
    assert result.mode == "runtime" and not result.reload_triggered and result.runtime_updates == 3
    assert fake.counters.reloads == 1 and fake.counters.runtime_server_adds == 2
    assert fake.raw().endswith(config(FOUR))  # the file says what haproxy runs
    assert result.version == fake.version == cache.version
    running = {s["name"]: s["admin_state"] for s in fake.runtime.servers("web")}
    assert running == {"SRV_1": "ready", "SRV_2": "ready", "SRV_3": "ready", "SRV_4": "maint"}
    assert fake.haproxy.dynamic_servers[("web", "SRV_3")] == "server SRV_3 10.0.0.3:80 inter 2000 weight 2"
    # The next change of a runtime-added server is an ordinary runtime update.
    moved = await sync(client, config([*FOUR[:3], "SRV_4 10.0.0.4:80"]), AuxFiles(), cache=cache)
    assert moved.ok and moved.mode == "runtime" and not moved.reload_triggered, moved.errors
    assert fake.haproxy.dynamic_servers[("web", "SRV_4")] == "server SRV_4 10.0.0.4:80"


@pytest.mark.parametrize(("extra", "defaults", "why"), [
    ("    balance static-rr\n", "", "static-rr"),
    ("    balance source\n", "", "map-based hash"),
    ("    default-server inter 3s\n", "", "default-server in the backend"),
    ("", "    default-server check\n", "default-server in defaults"),
])
async def test_backends_haproxy_cannot_grow_at_runtime_reload_once(
    client: DataplaneClient, fake: FakeDataplane, extra: str, defaults: str, why: str
) -> None:
    cache = VersionCache()
    await _deployed(client, fake, config(TWO, extra, defaults), cache)
    result = await sync(client, config(FOUR, extra, defaults), AuxFiles(), cache=cache)
    assert result.ok, (why, result.errors)
    assert result.reload_triggered and result.mode != "runtime", why
    assert fake.counters.runtime_server_adds == 0 and fake.counters.reloads == 2


async def test_a_server_add_haproxy_refuses_falls_back_to_one_push_with_a_reload(
    client: DataplaneClient, fake: FakeDataplane
) -> None:
    cache = VersionCache()
    await _deployed(client, fake, config(TWO), cache)
    fake.haproxy.dynamic_servers[("web", "SRV_4")] = "server SRV_4 10.9.9.9:80"  # haproxy has one already
    result = await sync(client, config(FOUR), AuxFiles(), cache=cache)
    assert result.ok and result.mode == "raw" and result.reload_triggered, result.errors
    assert any("runtime server add failed" in f and "Already exists" in f for f in result.fallbacks)
    assert fake.raw().endswith(config(FOUR)) and fake.haproxy.dynamic_servers == {}  # the reload forgot them


@pytest.mark.parametrize("keywords", ["cookie SRV_2", "check", "check inter 2s", "agent-check agent-port 9"])
async def test_servers_add_server_would_not_reproduce_are_a_reload(
    client: DataplaneClient, fake: FakeDataplane, keywords: str
) -> None:
    """``cookie``: refused by dynamic servers; health or agent checks: haproxy would not start them."""
    cache = VersionCache()
    await _deployed(client, fake, config(["SRV_1 10.0.0.1:80"]), cache)
    result = await sync(client, config(["SRV_1 10.0.0.1:80", f"SRV_2 10.0.0.2:80 {keywords}"]), AuxFiles(), cache=cache)
    assert result.ok and result.reload_triggered and fake.counters.runtime_server_adds == 0, keywords
