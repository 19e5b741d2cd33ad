"""The controller's startup on a populated cluster does each piece of work once: the config's templates are
compiled once (the engine that validated them renders), and a freshly started Dataplane API gets the
configuration in one raw push without a plan of every operation it replaces."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from haptic.templating import engine as engine_module
from simulator.harness import Harness
from tests.integration.haptic.controller.conftest import add_app

pytestmark = pytest.mark.looptime


async def test_a_controller_start_compiles_the_config_templates_once(haproxy_bin: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    h = await Harness(pods=1, replicas=0, haproxy_binary=haproxy_bin, ingress_library=True).start()
    try:
        add_app(h, "web", "web.example", ["10.1.0.1"])
        compiled: list[Any] = []
        original = engine_module.TemplateEngine.__init__

        def counting(self: Any, *args: Any, **kwargs: Any) -> None:
            compiled.append(self)
            original(self, *args, **kwargs)

        monkeypatch.setattr(engine_module.TemplateEngine, "__init__", counting)
        replica = h.add_replica()
        await h.settle()
        assert h.deployed_config(0) and "web.example" in (h.stored_file(0, "maps", "path-prefix.map") or "")
        iteration = replica.controller.iteration
        assert iteration is not None
        assert compiled == [iteration.ctx.engine], f"{len(compiled)} compilations for one start"
    finally:
        await h.stop()


async def test_the_first_deployment_ends_the_startup_heap_hold(haproxy_bin: str) -> None:
    before = gc.get_threshold()
    h = await Harness(pods=2, replicas=0, haproxy_binary=haproxy_bin, ingress_library=True).start()
    try:
        add_app(h, "web", "web.example", ["10.1.0.1"])
        replica = h.add_replica()
        await h.settle()
        iteration = replica.controller.iteration
        assert iteration is not None and h.events("deployment.completed")
        assert not iteration.heap.holding and gc.get_threshold() == before
    finally:
        await h.stop()


async def test_a_replica_killed_during_its_startup_gives_the_collector_back(haproxy_bin: str) -> None:
    before = gc.get_threshold()
    h = await Harness(pods=1, replicas=0, haproxy_binary=haproxy_bin, ingress_library=True).start()
    try:
        add_app(h, "web", "web.example", ["10.1.0.1"])
        replica = h.add_replica()
        await h.advance(0.001)  # started, not deployed yet
        assert replica.controller.iteration is not None and replica.controller.iteration.heap.holding
        assert gc.get_threshold() != before
        await h.kill_replica(0)  # a crash: the run task cancelled
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    finally:
        await h.stop()
