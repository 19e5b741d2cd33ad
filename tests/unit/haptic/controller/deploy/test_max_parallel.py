"""``dataplane.maxParallel``: how many HAProxy pods one deployment writes at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from haptic.controller.deploy import deployer as deployer_module
from haptic.controller.deploy.deployer import Deployer
from haptic.controller.events import DataplaneEndpoint, DeploymentScheduled
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.synchronizer import SyncResult
from tests.support.controller import make_ctx, started_bus

pytestmark = pytest.mark.looptime

CONFIG = "global\n    maxconn 100\n"


async def deploy_to(pods: int, max_parallel: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    in_flight, peak, synced = 0, 0, []

    async def fake_sync(client: Any, config: str, aux: AuxFiles, **_: Any) -> SyncResult:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(1.0)  # a pod's writes take a while (virtual time)
        in_flight -= 1
        synced.append(client.base_url)
        return SyncResult(ok=True, mode="runtime", version=2)

    monkeypatch.setattr(deployer_module, "sync", fake_sync)
    deployer = Deployer(started_bus(), make_ctx(maxParallel=max_parallel))
    endpoints = tuple(DataplaneEndpoint(f"http://10.0.0.{i}:5555", f"haproxy-{i}", "haptic") for i in range(pods))
    completed = await deployer.deploy(DeploymentScheduled(haproxy_config=CONFIG, content_checksum="c", reason="test",
                                                          endpoints=endpoints, auxiliary_files=AuxFiles()))
    assert completed.succeeded == pods
    return peak, synced


async def test_at_most_max_parallel_pods_are_written_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    peak, synced = await deploy_to(5, 2, monkeypatch)
    assert peak == 2 and len(synced) == 5


async def test_zero_writes_every_pod_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    peak, synced = await deploy_to(5, 0, monkeypatch)
    assert peak == 5 and len(synced) == 5
