"""The debug server over real HTTP on 127.0.0.1 (httpx client, uvicorn server)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from haptic.controller.metrics import BuildInfo, ControllerMetrics
from haptic.controller.observe.debug_providers import DebugProviders
from haptic.controller.observe.event_ring import EventRing
from haptic.core import ComponentHealth, HealthReport, Status
from haptic.live.debug_server import DebugServer, FieldPathError, select_field

PASSWORD = "dp-Pa55w0rd-9f3"


@dataclass
class Credentials:
    dataplane_username: str
    dataplane_password: str


class World:
    """Controller-side state the providers read, mutable like the real thing."""

    def __init__(self) -> None:
        self.metrics = ControllerMetrics(BuildInfo("0.1.0", "2.6"))
        self.ring = EventRing(capacity=5)
        self.healthy = True
        self.credentials = Credentials("admin", PASSWORD)
        self.config: dict[str, Any] = {
            "version": "42",
            "dataplane": {"url": f"http://admin:{PASSWORD}@10.0.0.7:5555", "port": 5555},
            "watched": [{"name": "ingresses"}, {"name": "services"}],
        }

    def health(self) -> HealthReport:
        deployer = ComponentHealth(Status.RUNNING, True)
        if not self.healthy:
            deployer = ComponentHealth(Status.FAILED, False, f"auth failed with {PASSWORD}")
        components = {"config": ComponentHealth(Status.RUNNING, True), "deployer": deployer}
        return HealthReport(all(c.healthy for c in components.values()), components)

    def providers(self) -> DebugProviders:
        return DebugProviders(
            vars={
                "config": lambda: self.config,
                "credentials": lambda: self.credentials,
                "uptime": lambda: {"started": datetime(2026, 1, 1, tzinfo=UTC), "tags": {"b", "a"}},
                "rendered": lambda: {"config": f"userlist x\n  user admin password {PASSWORD}\n"},
                "broken": lambda: 1 / 0,
            },
            health=self.health,
            ready=lambda: HealthReport(True, {"elector": ComponentHealth(Status.STANDBY, True)}),
            events=self.ring.last,
            metrics=lambda: self.metrics.registry,
            secrets=lambda: [self.credentials.dataplane_password],
        )


@pytest.fixture
async def served() -> AsyncIterator[tuple[World, DebugServer, httpx.AsyncClient]]:
    world = World()
    server = DebugServer(world.providers(), host="127.0.0.1", port=0)
    await server.start()
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield world, server, client
    await server.stop()


async def test_health_and_readiness(served: tuple[World, DebugServer, httpx.AsyncClient]) -> None:
    world, _, client = served
    r = await client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {
        "status": "ok",
        "components": {
            "config": {"status": "running", "healthy": True, "reason": ""},
            "deployer": {"status": "running", "healthy": True, "reason": ""},
        },
    }
    world.healthy = False
    r = await client.get("/health")
    assert r.status_code == 503
    assert r.json()["status"] == "degraded"
    assert r.json()["components"]["deployer"]["reason"].startswith("auth failed with ***")
    r = await client.get("/readyz")
    assert (r.status_code, r.json()["status"]) == (200, "ok")


async def test_metrics_follow_the_current_registry_after_reset(
    served: tuple[World, DebugServer, httpx.AsyncClient],
) -> None:
    world, server, client = served
    world.metrics.record_reconciliation(0.2)
    r = await client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert "haptic_reconciliation_total 1.0" in r.text
    assert 'haptic_build_info{haproxy_version="2.6",version="0.1.0"} 1.0' in r.text
    port = server.port
    world.metrics.reset()  # a reinitialization: same server, same port, fresh registry
    world.metrics.record_reconciliation(0.2)
    world.metrics.record_reconciliation(0.3)
    r = await client.get("/metrics")
    assert "haptic_reconciliation_total 2.0" in r.text
    assert server.port == port


async def test_vars_index_values_and_field_selection(served: tuple[World, DebugServer, httpx.AsyncClient]) -> None:
    _, _, client = served
    r = await client.get("/debug/vars")
    assert r.json()["vars"] == ["broken", "config", "credentials", "rendered", "uptime"]
    assert "/debug/vars/all" in r.json()["paths"]
    r = await client.get("/debug/vars/config", params={"field": "{.version}"})
    assert r.json() == "42"
    r = await client.get("/debug/vars/config", params={"field": "{.watched[*].name}"})
    assert r.json() == ["ingresses", "services"]
    r = await client.get("/debug/vars/config", params={"field": ".watched[-1]['name']"})
    assert r.json() == "services"
    r = await client.get("/debug/vars/uptime")
    assert r.json() == {"started": "2026-01-01T00:00:00+00:00", "tags": ["a", "b"]}
    r = await client.get("/debug/vars/config", params={"field": "{.nope}"})
    assert r.status_code == 400
    assert r.json()["error"] == "field '{.nope}': no match"
    r = await client.get("/debug/vars/missing")
    assert r.status_code == 404
    r = await client.get("/debug/vars/broken")
    assert r.status_code == 500
    assert "division by zero" in r.json()["error"]
    everything = (await client.get("/debug/vars/all")).json()
    assert everything["broken"] == {"error": "variable failed: division by zero"}
    assert everything["config"]["version"] == "42"


async def test_events_limit_and_correlation(served: tuple[World, DebugServer, httpx.AsyncClient]) -> None:
    world, _, client = served
    for i in range(7):
        world.ring.add(f"t{i}", "reconciliation.triggered", f"#{i}", {"n": i}, "c1" if i % 2 else "c2")
    r = await client.get("/debug/events")
    assert [e["summary"] for e in r.json()["events"]] == ["#2", "#3", "#4", "#5", "#6"]  # ring of 5
    r = await client.get("/debug/events", params={"limit": 2})
    assert [e["summary"] for e in r.json()["events"]] == ["#5", "#6"]
    r = await client.get("/debug/events", params={"correlation_id": "c1"})
    assert [e["summary"] for e in r.json()["events"]] == ["#3", "#5"]
    assert r.json()["count"] == 2
    r = await client.get("/debug/events", params={"after": 5})
    assert [e["summary"] for e in r.json()["events"]] == ["#5", "#6"]  # seq 6 and 7
    r = await client.get("/debug/events", params={"limit": "x"})
    assert r.status_code == 400
    r = await client.get("/debug/events", params={"after": "-1"})
    assert r.status_code == 400


async def test_providers_are_swapped_without_a_new_server(served: tuple[World, DebugServer, httpx.AsyncClient]) -> None:
    _, server, client = served
    server.providers = DebugProviders(vars={"iteration": lambda: 2})
    r = await client.get("/debug/vars")
    assert r.json()["vars"] == ["iteration"]
    r = await client.get("/metrics")
    assert r.status_code == 404


async def test_a_password_never_appears_in_any_debug_output(
    served: tuple[World, DebugServer, httpx.AsyncClient],
) -> None:
    world, _, client = served
    world.healthy = False
    world.ring.add("t", "credentials.updated", f"password is {PASSWORD}", {"password": PASSWORD}, "c")
    world.metrics.record_event_dropped(f"sub-{PASSWORD}", "x")  # even a label cannot carry it out
    paths = ["/healthz", "/readyz", "/metrics", "/debug/vars", "/debug/vars/all", "/debug/events"]
    paths += [f"/debug/vars/{n}" for n in ("config", "credentials", "rendered", "uptime")]
    paths += [
        "/debug/vars/credentials?field={.dataplane_password}",
        "/debug/vars/config?field={.dataplane.url}",
        "/debug/vars/all?field={.credentials}",
    ]
    bodies = []
    for path in paths:
        r = await client.get(path)
        bodies.append(r.text)
        assert PASSWORD not in r.text, path
    assert any("***REDACTED***" in b for b in bodies)
    cred = (await client.get("/debug/vars/credentials")).json()
    assert cred == {"dataplane_username": "admin", "dataplane_password": "***REDACTED***"}


def test_select_field_on_plain_data() -> None:
    data = {"a": {"b.c": [1, {"d": 2}]}}
    assert select_field(data, "{.a['b.c'][1].d}") == 2
    assert select_field(data, "$.a") == {"b.c": [1, {"d": 2}]}
    assert select_field({"p": [{"n": "a", "v": 1}, {"n": "b", "v": 2}]}, '{.p[?(@.n=="b")].v}') == 2
    with pytest.raises(FieldPathError, match="no match"):
        select_field(data, "{.x}")
