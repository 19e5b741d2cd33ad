"""``DriftMonitor`` on the bus: a drift-prevention trigger after ``driftPreventionInterval`` without a
deployment; each completed deployment restarts the interval."""

from __future__ import annotations

import asyncio

import pytest

from haptic.controller.deploy.drift_monitor import DriftMonitor
from haptic.controller.events import DeploymentCompleted, DriftPreventionTriggered
from tests.support.controller import make_ctx, started_bus

pytestmark = pytest.mark.looptime


async def test_fires_after_the_interval_and_a_deployment_restarts_it() -> None:
    bus = started_bus()
    out = bus.subscribe("out", types=(DriftPreventionTriggered,))
    monitor = DriftMonitor(bus, make_ctx(driftPreventionInterval="60s"))
    await monitor.start()
    await asyncio.sleep(30)
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0))
    await asyncio.sleep(59)
    assert out.drain() == [], "the deployment at 30 s moved the next check to 90 s"
    await asyncio.sleep(2)
    [fired] = out.drain()  # between 89 s and 91 s
    assert isinstance(fired, DriftPreventionTriggered)
    assert fired.time_since_last_deployment_s == pytest.approx(60.0)
    await asyncio.sleep(60)
    assert len(out.drain()) == 1, "and again one interval later"
    await monitor.stop()


async def test_a_zero_interval_disables_it() -> None:
    bus = started_bus()
    out = bus.subscribe("out", types=(DriftPreventionTriggered,))
    monitor = DriftMonitor(bus, make_ctx(driftPreventionInterval="0s"))
    await monitor.start()
    bus.publish(DeploymentCompleted(total=1, succeeded=1, failed=0))
    await asyncio.sleep(3600)
    assert out.drain() == []
    await monitor.stop()
