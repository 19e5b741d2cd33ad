"""The debug app without sockets, as the simulator uses it (httpx over ASGI)."""

from __future__ import annotations

import httpx

from haptic.controller.metrics import ControllerMetrics
from haptic.controller.observe.debug_providers import DebugProviders
from haptic.core import ComponentHealth, HealthReport, Status
from haptic.live.debug_server import build_debug_app


async def test_app_answers_in_process_and_providers_can_be_swapped() -> None:
    metrics = ControllerMetrics()
    metrics.set_pods(2)
    down = HealthReport(False, {"deployer": ComponentHealth(Status.FAILED, False, "token=abcd1234 rejected")})
    app = build_debug_app(DebugProviders(health=lambda: down, metrics=lambda: metrics.registry,
                                         secrets=lambda: ["abcd1234"]))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://debug") as client:
        r = await client.get("/healthz")
        assert r.status_code == 503
        assert r.json()["components"]["deployer"]["reason"] == "token=***REDACTED*** rejected"
        assert "haptic_haproxy_pods 2.0" in (await client.get("/metrics")).text
        app.state.debug.providers = DebugProviders(vars={"iteration": lambda: 7})
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/debug/vars/iteration")).json() == 7
