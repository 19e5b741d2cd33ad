"""``RenderValidateCoordinator`` on the bus: a trigger renders the live stores and validates the result
with the real ``haproxy -c``; the validation result carries the render it validated."""

from __future__ import annotations

import asyncio

import pytest

from haptic.controller.events import (
    ReconciliationCompleted,
    ReconciliationFailed,
    ReconciliationTriggered,
    TemplateRendered,
    TemplateRenderFailed,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.controller.reconcile.coordinator import RenderValidateCoordinator
from haptic.validation.haproxy_check import HAProxyValidator
from haptic.validation.process import BlockingAsyncRunner
from simulator.cluster_objects import endpoint_slice, ingress, template_config
from tests.support.controller import make_ctx, started_bus

pytestmark = [pytest.mark.looptime, pytest.mark.haproxy]

OUTCOMES = (TemplateRendered, TemplateRenderFailed, ValidationCompleted, ValidationFailed, ReconciliationCompleted,
            ReconciliationFailed)


async def run_once(template: str | None, haproxy_bin: str) -> list[object]:
    config = template_config() if template is None else template_config(template=template)
    ctx = make_ctx(config=config, validator=HAProxyValidator(haproxy_bin), check_runner=BlockingAsyncRunner())
    ctx.stores["ingresses"].apply(ingress("web", "web.example", "web"))
    ctx.stores["endpoints"].apply(endpoint_slice("web", ["10.1.0.1", "10.1.0.2"]))
    bus = started_bus()
    out = bus.subscribe("out", types=OUTCOMES)
    coordinator = RenderValidateCoordinator(bus, ctx)
    await coordinator.start()
    bus.publish(ReconciliationTriggered(reason="resource_change"))
    for _ in range(10):
        await asyncio.sleep(0)
    await coordinator.stop()
    return list(out.drain())


async def test_a_valid_render_is_handed_over_with_its_validation(haproxy_bin: str) -> None:
    rendered, validated, completed = await run_once(None, haproxy_bin)
    assert isinstance(rendered, TemplateRendered) and isinstance(validated, ValidationCompleted)
    assert isinstance(completed, ReconciliationCompleted)
    assert "server SRV_2 10.1.0.2:8080" in validated.haproxy_config
    assert validated.haproxy_config == rendered.haproxy_config
    assert validated.auxiliary_files == rendered.auxiliary_files
    assert validated.content_checksum == rendered.content_checksum
    assert validated.method == "haproxy -c"
    assert validated.trigger_reason == "resource_change"


async def test_haproxy_refusing_the_render_is_a_validation_failure(haproxy_bin: str) -> None:
    events = await run_once("global\n    no_such_keyword on\n", haproxy_bin)
    assert [type(e) for e in events] == [TemplateRendered, ValidationFailed, ReconciliationFailed]
    failed, reconciliation = events[1], events[2]
    assert isinstance(failed, ValidationFailed) and "no_such_keyword" in " ".join(failed.errors)
    assert isinstance(reconciliation, ReconciliationFailed) and reconciliation.phase == "validate"


async def test_a_template_error_stops_before_validation(haproxy_bin: str) -> None:
    events = await run_once("global\n{{ undefined_function() }}\n", haproxy_bin)
    assert [type(e) for e in events] == [TemplateRenderFailed, ReconciliationFailed]
    reconciliation = events[1]
    assert isinstance(reconciliation, ReconciliationFailed) and reconciliation.phase == "render"
