"""/healthz stays healthy for REINIT_GRACE_WINDOW after a voluntary reinitialization (readiness does not),
and a slow stop says every PROGRESS_INTERVAL what it still waits for (virtual time)."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace
from typing import Any

import pytest

from haptic.controller.loop.controller import REINIT_GRACE_WINDOW, Controller
from haptic.controller.loop.progress import PROGRESS_INTERVAL, with_progress
from haptic.controller.ports import ControllerIdentity, ControllerPorts
from haptic.core import ComponentHealth, HealthReport, Status, VirtualClock

pytestmark = pytest.mark.looptime


def unhealthy_iteration() -> Any:
    registry = SimpleNamespace(health=lambda: HealthReport(False, {"watcher:ingresses": ComponentHealth(
        Status.STARTING, False, "starting")}), statuses=lambda: {})
    return SimpleNamespace(registry=registry, campaigning=True, is_leader=True, leader=None)


def controller() -> Controller:
    ports = ControllerPorts(kube=None, identity=ControllerIdentity("ns", "pod"), clock=VirtualClock())  # type: ignore[arg-type]
    return Controller(ports)


async def test_healthz_is_healthy_during_the_grace_after_a_reinitialization_only() -> None:
    c = controller()
    c.iteration = unhealthy_iteration()
    assert not c.health().healthy  # no reinitialization yet: unhealthy is unhealthy
    c.reinitialized_at = asyncio.get_running_loop().time()
    await asyncio.sleep(REINIT_GRACE_WINDOW - 1)
    report = c.health()
    assert report.healthy and "another 1s" in report.components["reinitialization"].reason
    assert not c.readiness().healthy
    await asyncio.sleep(2)
    assert not c.health().healthy


async def test_a_slow_stop_logs_progress_every_interval(caplog: pytest.LogCaptureFixture) -> None:
    clock = VirtualClock()
    log = logging.getLogger("test.progress")
    caplog.set_level(logging.INFO, "test.progress")

    async def slow() -> str:
        await asyncio.sleep(2 * PROGRESS_INTERVAL + 1)
        return "stopped"

    assert await with_progress(slow(), clock, log, "shutting down", lambda: "deployer") == "stopped"
    assert [r.getMessage() for r in caplog.records] == [
        "shutting down: still waiting after 5s for deployer", "shutting down: still waiting after 10s for deployer"]
