"""The metrics and event-buffer components, fed through a real bus under virtual time."""

from __future__ import annotations

import asyncio
import logging

import pytest

from haptic.controller import events as ev
from haptic.controller.metrics import ControllerMetrics
from haptic.controller.observe.commentator import EventCommentator
from haptic.controller.observe.metrics_component import MetricsComponent
from haptic.core import EventBus, SequentialIds, VirtualClock
from haptic.dataplane.aux_files import AuxFiles

pytestmark = pytest.mark.looptime

POD = ev.DataplaneEndpoint("http://10.0.0.1:5555", "haproxy-0", "default")


async def test_pipeline_events_become_metrics() -> None:
    bus = EventBus(VirtualClock(), SequentialIds())
    metrics = ControllerMetrics()
    component = MetricsComponent(bus, metrics)
    bus.start()
    await component.start()
    bus.publish(ev.BecameLeader(identity="a"))
    bus.publish(ev.ReconciliationCompleted(duration_s=0.3))
    bus.publish(ev.ReconciliationFailed(error="boom", phase="validate"))
    bus.publish(ev.TemplateRendered(haproxy_config="global\n", content_checksum="c1", duration_s=0.02,
                                    auxiliary_files=AuxFiles()))
    bus.publish(ev.ValidationFailed(errors=("bad",), duration_s=0.2))
    bus.publish(ev.DeploymentCompleted(total=2, succeeded=1, failed=1, duration_s=1.5))
    bus.publish(ev.DeploymentCompleted(total=2, succeeded=2, failed=0, duration_s=0.5))
    bus.publish(ev.InstanceDeploymentFailed(endpoint=POD, error="down"))
    bus.publish(ev.ConfigAppliedToPod(pod_name="haproxy-0", pod_namespace="default", checksum="c1",
                                      sync=ev.SyncMetadata(reload_triggered=True)))
    bus.publish(ev.ConfigAppliedToPod(pod_name="haproxy-0", pod_namespace="default", checksum="c2"))
    bus.publish(ev.HAProxyPodsDiscovered(endpoints=(POD,)))
    bus.publish(ev.IndexSynchronized(resource_counts={"ingresses": 3}))
    await asyncio.sleep(12.0)  # two polls of the bus at 5 and 10
    bus.publish(ev.LostLeadership(identity="a"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    s = metrics.sample
    assert s("haptic_reconciliation_total") == 2
    assert s("haptic_reconciliation_errors_total", {"phase": "validate"}) == 1
    assert s("haptic_render_duration_seconds_count") == 1
    assert s("haptic_validation_total", {"result": "failure"}) == 1
    assert s("haptic_deployment_total", {"result": "partial"}) == 1
    assert s("haptic_deployment_total", {"result": "success"}) == 1
    assert s("haptic_instance_deployment_total", {"result": "failure"}) == 1
    assert s("haptic_dataplane_reloads_total") == 1
    assert s("haptic_dataplane_runtime_updates_total") == 1
    assert s("haptic_haproxy_pods") == 1
    assert s("haptic_resource_count", {"type": "ingresses"}) == 3
    assert s("haptic_leader_election_is_leader") == 0
    assert s("haptic_leader_election_transitions_total") == 2
    assert s("haptic_leader_election_time_as_leader_seconds_total") == 12.0
    assert s("haptic_events_published_total", {"type": "deployment.completed"}) == 2
    assert s("haptic_event_subscriber_dropped", {"subscriber": "metrics"}) == 0
    await component.stop()


async def test_commentator_ring_keeps_recent_events_with_correlation() -> None:
    bus = EventBus(VirtualClock(), SequentialIds())
    buffer = EventCommentator(bus, logging.getLogger("test.events"))
    bus.start()
    await buffer.start()
    first = ev.ReconciliationTriggered(reason="resource_change")
    bus.publish(first)
    bus.publish(ev.ReconciliationStarted(trigger="resource_change"), cause=first)
    bus.publish(ev.ReconciliationTriggered(reason="drift_prevention"))
    await asyncio.sleep(0)
    entries = buffer.ring.last(10, first.correlation_id or None)
    assert [e["type"] for e in entries] == ["reconciliation.triggered", "reconciliation.started"]
    assert len(buffer.ring.last(10)) == 3
    await buffer.stop()
