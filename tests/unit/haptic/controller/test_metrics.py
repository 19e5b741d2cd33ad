"""Controller metrics: names, buckets, leadership accounting, reset without a second server."""

from __future__ import annotations

from haptic.controller.metrics import DURATION_BUCKETS, BuildInfo, ControllerMetrics


def test_pipeline_metrics_are_recorded_under_the_original_names() -> None:
    m = ControllerMetrics(BuildInfo("0.1.0", "2.6.12"))
    m.record_reconciliation(0.3)
    m.record_reconciliation_failure("render")
    m.record_render(0.02)
    m.record_validation(0.2, ok=True)
    m.record_validation(0.4, ok=False)
    m.record_deployment(1.5, "success", reloads=1)
    m.record_deployment(0.1, "success", runtime_updates=2)
    m.record_deployment(0.0, "skipped")
    m.record_instance_deployment(ok=False)
    assert m.sample("haptic_reconciliation_total") == 2
    assert m.sample("haptic_reconciliation_errors_total", {"phase": "render"}) == 1
    assert m.sample("haptic_reconciliation_duration_seconds_count") == 1
    assert m.sample("haptic_reconciliation_duration_seconds_bucket", {"le": "0.5"}) == 1
    assert m.sample("haptic_reconciliation_duration_seconds_bucket", {"le": "0.25"}) == 0
    assert m.sample("haptic_render_duration_seconds_sum") == 0.02
    assert m.sample("haptic_validation_total", {"result": "failure"}) == 1
    assert m.sample("haptic_deployment_total", {"result": "success"}) == 2
    assert m.sample("haptic_deployment_total", {"result": "skipped"}) == 1
    assert m.sample("haptic_deployment_duration_seconds_count") == 2  # skipped ones take no time
    assert m.sample("haptic_dataplane_reloads_total") == 1
    assert m.sample("haptic_dataplane_runtime_updates_total") == 2
    assert m.sample("haptic_instance_deployment_total", {"result": "failure"}) == 1
    assert m.sample("haptic_build_info", {"version": "0.1.0", "haproxy_version": "2.6.12"}) == 1
    text = m.exposition().decode()
    buckets = [line for line in text.splitlines() if line.startswith("haptic_validation_duration_seconds_bucket")]
    assert [b.split('le="')[1].split('"')[0] for b in buckets] == [str(b) for b in DURATION_BUCKETS] + ["+Inf"]


def test_world_and_event_bus_metrics() -> None:
    m = ControllerMetrics()
    m.set_pods(3)
    m.set_resource_counts({"services": 4, "ingresses": 2})
    m.record_event_published("reconciliation.triggered")
    m.record_event_dropped("commentator", "resource.index.updated")
    m.record_event_dropped("commentator", "resource.index.updated")
    assert m.sample("haptic_haproxy_pods") == 3
    assert m.sample("haptic_resource_count", {"type": "ingresses"}) == 2
    assert m.sample("haptic_events_published_total", {"type": "reconciliation.triggered"}) == 1
    labels = {"subscriber": "commentator", "type": "resource.index.updated"}
    assert m.sample("haptic_events_dropped_total", labels) == 2
    assert m.sample("haptic_build_info", {"version": "x", "haproxy_version": "y"}) is None


def test_leadership_counts_transitions_and_time_as_leader() -> None:
    m = ControllerMetrics()
    m.set_leader(False, now=0.0)
    assert m.sample("haptic_leader_election_is_leader") == 0
    assert m.sample("haptic_leader_election_transitions_total") == 0
    m.set_leader(True, now=10.0)
    m.update_time_as_leader(now=15.0)
    assert m.sample("haptic_leader_election_time_as_leader_seconds_total") == 5.0
    m.set_leader(True, now=16.0)  # no change, no transition
    m.set_leader(False, now=40.0)
    assert m.sample("haptic_leader_election_is_leader") == 0
    assert m.sample("haptic_leader_election_transitions_total") == 2
    assert m.sample("haptic_leader_election_time_as_leader_seconds_total") == 30.0


def test_reset_swaps_the_registry_and_keeps_build_info_and_leadership() -> None:
    m = ControllerMetrics(BuildInfo("0.1.0"))
    m.set_leader(True, now=0.0)
    m.record_reconciliation(1.0)
    old = m.registry
    m.reset()
    assert m.registry is not old
    assert m.sample("haptic_reconciliation_total") == 0
    assert old.get_sample_value("haptic_reconciliation_total") == 1
    assert m.sample("haptic_build_info", {"version": "0.1.0", "haproxy_version": "unknown"}) == 1
    assert m.sample("haptic_leader_election_is_leader") == 1
    m.set_build_info(BuildInfo("0.2.0", "3.0.1"))
    assert m.sample("haptic_build_info", {"version": "0.1.0", "haproxy_version": "unknown"}) is None
    assert m.sample("haptic_build_info", {"version": "0.2.0", "haproxy_version": "3.0.1"}) == 1


async def test_bus_drops_reach_the_metrics() -> None:
    from dataclasses import dataclass
    from typing import ClassVar

    from haptic.core import Event, EventBus, RealClock, SequentialIds

    @dataclass(frozen=True, slots=True, kw_only=True)
    class Ping(Event):
        type: ClassVar[str] = "test.metrics.ping"

    m = ControllerMetrics()
    bus = EventBus(RealClock(), SequentialIds(), on_critical_drop=m.on_critical_drop)
    bus.subscribe("slow", capacity=1)
    bus.start()
    for _ in range(3):
        bus.publish(Ping())
    assert m.sample("haptic_events_dropped_total", {"subscriber": "slow", "type": "test.metrics.ping"}) == 2
    m.observe_bus(bus.stats())
    assert m.sample("haptic_event_subscriber_dropped", {"subscriber": "slow"}) == 2
    assert m.sample("haptic_event_subscriber_queued", {"subscriber": "slow"}) == 1
