"""Prometheus metrics of the controller, on a registry of its own (never the global one).

One ``ControllerMetrics`` lives as long as the controller process. The HTTP server that exposes it
asks ``metrics.registry`` at every scrape, so ``reset()`` (a fresh registry with fresh metrics, build
info kept) takes effect without a second server: the original opened a new metrics server per
reinitialization, which could not bind and kept serving the first, stale registry.

Recording methods take plain values (seconds, counts, names), so the event-driven metrics component
and the simulator's assertions can both use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from haptic.core import Event, SubscriberStats

__all__ = ["DURATION_BUCKETS", "BuildInfo", "ControllerMetrics", "DeploymentResult"]

# The original's buckets, in seconds.
DURATION_BUCKETS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

DeploymentResult = Literal["success", "partial", "failure", "skipped"]


@dataclass(frozen=True)
class BuildInfo:
    version: str
    haproxy_version: str = "unknown"


class _Metrics:
    """The metric objects of one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        def histogram(name: str, doc: str) -> Histogram:
            return Histogram(name, doc, registry=registry, buckets=DURATION_BUCKETS)

        self.reconciliations = Counter("haptic_reconciliation", "Reconciliations completed.", registry=registry)
        self.reconciliation_errors = Counter(
            "haptic_reconciliation_errors",
            "Reconciliations that failed (render or validate).",
            ["phase"],
            registry=registry,
        )
        self.reconciliation_duration = histogram(
            "haptic_reconciliation_duration_seconds", "Render plus validate time of a reconciliation."
        )
        self.render_duration = histogram("haptic_render_duration_seconds", "Template rendering time.")
        self.validations = Counter(
            "haptic_validation", "Validations of rendered configs.", ["result"], registry=registry
        )
        self.validation_duration = histogram("haptic_validation_duration_seconds", "haproxy -c validation time.")
        self.deployments = Counter(
            "haptic_deployment", "Deployments to the HAProxy pods, by result.", ["result"], registry=registry
        )
        self.deployment_duration = histogram(
            "haptic_deployment_duration_seconds", "Time to deploy a config to every HAProxy pod."
        )
        self.instance_deployments = Counter(
            "haptic_instance_deployment", "Deployments to one HAProxy pod, by result.", ["result"], registry=registry
        )
        self.reloads = Counter(
            "haptic_dataplane_reloads", "Config changes applied to a pod with a reload.", registry=registry
        )
        self.fallbacks = Counter(
            "haptic_dataplane_fallbacks",
            "Syncs of a pod that abandoned a failed runtime update (or an unreadable config) for uploads "
            "or one raw push.",
            registry=registry,
        )
        self.runtime_updates = Counter(
            "haptic_dataplane_runtime_updates",
            "Config changes applied to a pod through the runtime API, without a reload.",
            registry=registry,
        )
        self.pods = Gauge("haptic_haproxy_pods", "HAProxy pods discovered.", registry=registry)
        self.excluded = Gauge(
            "haptic_resources_excluded",
            "Objects the render leaves out of the config now, by kind and reason.",
            ["kind", "reason"],
            registry=registry,
        )
        self.exclusions = Counter(
            "haptic_resource_exclusions",
            "Times an object was left out of the config, by kind and reason.",
            ["kind", "reason"],
            registry=registry,
        )
        self.resources = Gauge(
            "haptic_resource_count", "Objects in each watched-resource store.", ["type"], registry=registry
        )
        self.is_leader = Gauge("haptic_leader_election_is_leader", "1 when this replica leads.", registry=registry)
        self.leader_transitions = Counter(
            "haptic_leader_election_transitions", "Leadership changes seen by this replica.", registry=registry
        )
        self.time_as_leader = Counter(
            "haptic_leader_election_time_as_leader_seconds", "Time this replica has led.", registry=registry
        )
        self.events_published = Counter(
            "haptic_events_published", "Events published on the bus, by type.", ["type"], registry=registry
        )
        self.events_dropped = Counter(
            "haptic_events_dropped",
            "Events dropped because a subscriber's buffer was full, by subscriber.",
            ["subscriber", "type"],
            registry=registry,
        )
        self.subscriber_dropped = Gauge(
            "haptic_event_subscriber_dropped",
            "Events dropped so far for each subscriber, lossy ones included (polled from the bus).",
            ["subscriber"],
            registry=registry,
        )
        self.subscriber_queued = Gauge(
            "haptic_event_subscriber_queued",
            "Events waiting in each subscriber's queue.",
            ["subscriber"],
            registry=registry,
        )
        self.webhook_requests = Counter(
            "haptic_webhook_requests",
            "Admission reviews answered, by resource kind and result (allowed, denied, error).",
            ["gvk", "result"],
            registry=registry,
        )
        self.webhook_duration = histogram(
            "haptic_webhook_request_duration_seconds", "Time to answer an admission review."
        )
        self.build_info = Gauge(
            "haptic_build_info",
            "Build information; the value is always 1.",
            ["version", "haproxy_version"],
            registry=registry,
        )


class ControllerMetrics:
    """The controller's metrics. Read ``registry`` at scrape time: ``reset()`` replaces it."""

    def __init__(self, build: BuildInfo | None = None) -> None:
        self._build = build
        self._registry = CollectorRegistry(auto_describe=True)
        self._m = _Metrics(self._registry)
        self._leading_since: float | None = None
        self._apply_build_info()

    @property
    def registry(self) -> CollectorRegistry:
        return self._registry

    def reset(self) -> None:
        """Starts over on a fresh registry (e.g. at reinitialization); build info is kept."""
        self._registry = CollectorRegistry(auto_describe=True)
        self._m = _Metrics(self._registry)
        self._apply_build_info()
        if self._leading_since is not None:
            self._m.is_leader.set(1)

    def exposition(self) -> bytes:
        """The Prometheus text format of the current registry."""
        return generate_latest(self._registry)

    def sample(self, name: str, labels: Mapping[str, str] | None = None) -> float | None:
        """The value of one sample (``None`` when absent); for tests and the simulator's expectations."""
        value = self._registry.get_sample_value(name, dict(labels or {}))
        return None if value is None else float(value)

    # -- build ---------------------------------------------------------------------------------

    def set_build_info(self, build: BuildInfo) -> None:
        self._build = build
        self._m.build_info.clear()
        self._apply_build_info()

    def _apply_build_info(self) -> None:
        if self._build is not None:
            self._m.build_info.labels(version=self._build.version, haproxy_version=self._build.haproxy_version).set(1)

    # -- pipeline ------------------------------------------------------------------------------

    def record_reconciliation(self, duration_s: float) -> None:
        self._m.reconciliations.inc()
        self._m.reconciliation_duration.observe(duration_s)

    def record_reconciliation_failure(self, phase: str) -> None:
        self._m.reconciliations.inc()
        self._m.reconciliation_errors.labels(phase=phase).inc()

    def record_render(self, duration_s: float) -> None:
        self._m.render_duration.observe(duration_s)

    def record_validation(self, duration_s: float, ok: bool) -> None:
        self._m.validations.labels(result="success" if ok else "failure").inc()
        self._m.validation_duration.observe(duration_s)

    def record_deployment(
        self, duration_s: float, result: DeploymentResult, reloads: int = 0, runtime_updates: int = 0
    ) -> None:
        self._m.deployments.labels(result=result).inc()
        if result != "skipped":
            self._m.deployment_duration.observe(duration_s)
        self._m.reloads.inc(reloads)
        self._m.runtime_updates.inc(runtime_updates)

    def record_pod_sync(self, reloaded: bool, fallback: bool = False) -> None:
        """One pod brought to a new config: by a reload, or through the runtime API alone; ``fallback``
        when its runtime update failed and uploads / a raw push took over."""
        if reloaded:
            self._m.reloads.inc()
        else:
            self._m.runtime_updates.inc()
        if fallback:
            self._m.fallbacks.inc()

    def record_instance_deployment(self, ok: bool) -> None:
        self._m.instance_deployments.labels(result="success" if ok else "failure").inc()

    # -- world ---------------------------------------------------------------------------------

    def set_pods(self, count: int) -> None:
        self._m.pods.set(count)

    def record_exclusion(self, kind: str, reason: str) -> None:
        self._m.exclusions.labels(kind=kind, reason=reason).inc()

    def set_excluded(self, counts: Mapping[tuple[str, str], int]) -> None:
        """The objects left out now, by (kind, reason); pairs no longer present disappear."""
        self._m.excluded.clear()
        for kind, reason in sorted(counts):
            self._m.excluded.labels(kind=kind, reason=reason).set(counts[(kind, reason)])

    def set_resource_counts(self, counts: Mapping[str, int]) -> None:
        for name in sorted(counts):
            self._m.resources.labels(type=name).set(counts[name])

    # -- leadership ----------------------------------------------------------------------------

    def set_leader(self, leading: bool, now: float) -> None:
        """Leadership as seen now (``now`` from the controller's monotonic clock)."""
        if leading and self._leading_since is None:
            self._leading_since = now
            self._m.leader_transitions.inc()
        elif not leading and self._leading_since is not None:
            self._m.time_as_leader.inc(max(0.0, now - self._leading_since))
            self._leading_since = None
            self._m.leader_transitions.inc()
        self._m.is_leader.set(1 if leading else 0)

    def update_time_as_leader(self, now: float) -> None:
        """Accounts leading time up to ``now`` (call before a scrape or on a ticker)."""
        if self._leading_since is not None:
            self._m.time_as_leader.inc(max(0.0, now - self._leading_since))
            self._leading_since = now

    # -- admission webhook ---------------------------------------------------------------------

    def record_webhook_request(self, gvk: str, result: str, duration_s: float) -> None:
        """One admission review answered (``result``: allowed, denied or error)."""
        self._m.webhook_requests.labels(gvk=gvk, result=result).inc()
        self._m.webhook_duration.observe(duration_s)

    # -- event bus -----------------------------------------------------------------------------

    def record_event_published(self, event_type: str) -> None:
        self._m.events_published.labels(type=event_type).inc()

    def record_event_dropped(self, subscriber: str, event_type: str) -> None:
        self._m.events_dropped.labels(subscriber=subscriber, type=event_type).inc()

    def on_critical_drop(self, subscriber: str, event: Event) -> None:
        """An ``EventBus(on_critical_drop=...)`` callback."""
        self.record_event_dropped(subscriber, event.type)

    def observe_bus(self, stats: Iterable[SubscriberStats]) -> None:
        """Copies the bus's per-subscriber counters (``EventBus.stats()``), lossy subscribers included."""
        for s in stats:
            self._m.subscriber_dropped.labels(subscriber=s.name).set(s.dropped)
            self._m.subscriber_queued.labels(subscriber=s.name).set(s.queued)
