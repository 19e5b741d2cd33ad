"""What the deployer hands every pod's sync from the config: ``dataplane.rawPushThreshold``."""

from __future__ import annotations

from typing import Any

import pytest

from haptic.controller.deploy import deployer as deployer_module
from haptic.controller.deploy.deployer import Deployer
from haptic.controller.events import DataplaneEndpoint, DeploymentScheduled
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.synchronizer import SyncOptions, SyncResult
from tests.support.controller import make_ctx, started_bus

pytestmark = pytest.mark.looptime


@pytest.mark.parametrize(("configured", "used"), [(7, 7), (0, 100)])
async def test_raw_push_threshold_reaches_every_sync(configured: int, used: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[SyncOptions] = []

    async def fake_sync(client: Any, config: str, aux: AuxFiles, *, options: SyncOptions, **_: Any) -> SyncResult:
        seen.append(options)
        return SyncResult(ok=True, mode="transaction", version=2)

    monkeypatch.setattr(deployer_module, "sync", fake_sync)
    deployer = Deployer(started_bus(), make_ctx(rawPushThreshold=configured))
    endpoints = tuple(DataplaneEndpoint(f"http://10.0.0.{i}:5555", f"haproxy-{i}", "haptic") for i in range(2))
    await deployer.deploy(DeploymentScheduled(haproxy_config="global\n", content_checksum="c", reason="test",
                                              endpoints=endpoints, auxiliary_files=AuxFiles()))
    assert [o.raw_push_threshold for o in seen] == [used, used]
