"""``DeploymentScheduler`` (leader-only): decides when a validated config goes to the pods.

* Only validated renders are deployed (``ValidationCompleted`` carries the render it validated).
* One deployment at a time; while one runs, one pending slot holds the latest request ("latest wins").
* At least ``minDeploymentInterval`` between the end of one deployment and the start of the next.
* Skipped when the content checksum and the pod set equal the last deployment's, unless forced (drift).
* A drift run whose validation failed deploys the last known-good config instead.
* Watchdog: a deployment running beyond ``deploymentTimeout`` is cancelled and reconciliation re-triggered.
* A deployment with failed pods is retried with backoff (5 s doubling, at most the drift interval).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import (
    DataplaneEndpoint,
    DeploymentCancelRequest,
    DeploymentCompleted,
    DeploymentScheduled,
    HAProxyPodsDiscovered,
    LostLeadership,
    ReconciliationTriggered,
    TriggerReason,
    ValidationCompleted,
    ValidationFailed,
)
from haptic.core import Event, EventBus
from haptic.dataplane.aux_files import AuxFiles

RETRY_INITIAL = 5.0


@dataclass(frozen=True)
class Candidate:
    config: str
    aux: AuxFiles
    checksum: str
    reason: str
    forced: bool = False


class DeploymentScheduler(IterationComponent):
    name = "deployment-scheduler"
    subscribes = (ValidationCompleted, ValidationFailed, HAProxyPodsDiscovered, DeploymentCompleted, LostLeadership)
    leader_only = True
    capacity = 1000

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        dataplane = ctx.spec.dataplane
        self.min_interval = dataplane.min_deployment_interval.total_seconds()
        self.timeout = dataplane.deployment_timeout.total_seconds()
        self.max_retry = max(RETRY_INITIAL, dataplane.drift_prevention_interval.total_seconds())
        self._rate = self.clock.timer(self._rate_elapsed)
        self._watchdog = self.clock.timer(self._deployment_timed_out)
        self._retry = self.clock.timer(self._retry_due)
        self._retry_delay = RETRY_INITIAL
        self._reset()

    def _reset(self) -> None:
        self.validated: Candidate | None = None
        self.endpoints: tuple[DataplaneEndpoint, ...] | None = None
        self.deploying = False
        self.pending: Candidate | None = None
        self.last_deployed: tuple[str, tuple[str, ...]] | None = None
        self.last_end: float | None = None
        self.scheduled = 0
        self.skipped = 0
        for timer in ("_rate", "_watchdog", "_retry"):
            t = getattr(self, timer, None)
            if t is not None:
                t.cancel()

    async def on_stop(self) -> None:
        self._reset()

    async def handle(self, event: Event) -> None:
        if isinstance(event, ValidationCompleted):
            forced = event.trigger_reason == TriggerReason.DRIFT_PREVENTION
            self.validated = Candidate(event.haproxy_config, event.auxiliary_files, event.content_checksum,
                                       event.trigger_reason or "config_validation", forced)
            self.request(self.validated)
        elif isinstance(event, ValidationFailed):
            if event.trigger_reason == TriggerReason.DRIFT_PREVENTION and self.validated is not None:
                self.request(replace(self.validated, reason="validation_fallback", forced=True))
        elif isinstance(event, HAProxyPodsDiscovered):
            self.endpoints = tuple(sorted(event.endpoints, key=lambda e: (e.pod_namespace, e.pod_name, e.url)))
            if self.validated is not None:
                self.request(replace(self.validated, reason="pod_discovery", forced=False))
        elif isinstance(event, DeploymentCompleted):
            self._finished(event)
        elif isinstance(event, LostLeadership):
            self._reset()

    def held_back(self) -> str:
        """Why a deployment is still to come, or ``""`` when none is: ``"in flight"``, ``"pending"``
        (waiting for the minimum interval or the running deployment), ``"retry backoff"``.

        For observers that wait for quiescence (the simulator's ``settle``): a quiet event stream alone
        does not mean converged while the scheduler holds a deployment back.
        """
        if self.deploying:
            return "in flight"
        if self.pending is not None:
            return "pending"
        if self._retry.active:
            return "retry backoff"
        return ""

    # -- decisions -----------------------------------------------------------------------------

    def _pod_set(self) -> tuple[str, ...]:
        return tuple(e.url for e in self.endpoints or ())

    def request(self, candidate: Candidate) -> None:
        if self.endpoints is None:
            return  # discovery has not reported yet; its event will request again
        if self.deploying:
            self._hold(candidate)
            return
        if not candidate.forced and self.last_deployed == (candidate.checksum, self._pod_set()):
            self.skipped += 1
            self.logger.debug("deployment of %s skipped: already deployed to the same pods", candidate.checksum)
            return
        if self.last_end is not None:
            wait = self.last_end + self.min_interval - self.clock.monotonic()
            if wait > 0:
                self._hold(candidate)
                if not self._rate.active:
                    self._rate.start(wait)
                return
        self._dispatch(candidate)

    def _hold(self, candidate: Candidate) -> None:
        forced = candidate.forced or (self.pending is not None and self.pending.forced)
        self.pending = replace(candidate, forced=forced)

    def _dispatch(self, candidate: Candidate) -> None:
        endpoints = self.endpoints or ()
        self.deploying = True
        self.last_deployed = (candidate.checksum, self._pod_set())
        self.scheduled += 1
        self._retry.cancel()
        self.publish(DeploymentScheduled(
            haproxy_config=candidate.config, content_checksum=candidate.checksum, endpoints=endpoints,
            reason=TriggerReason.DRIFT_PREVENTION.value if candidate.forced else candidate.reason,
            runtime_config_name=self.ctx.runtime_config_name, runtime_config_namespace=self.ctx.namespace,
            auxiliary_files=candidate.aux,
        ))
        if self.timeout > 0:
            self._watchdog.start(self.timeout)

    def _finished(self, event: DeploymentCompleted) -> None:
        if not self.deploying:
            return
        self.deploying = False
        self._watchdog.cancel()
        self.last_end = self.clock.monotonic()
        if event.failed:
            # Not converged: the same config must be tried again, not skipped as "already deployed".
            self.last_deployed = None
            self._retry.start(self._retry_delay)
            self._retry_delay = min(self._retry_delay * 2, self.max_retry)
        else:
            self._retry_delay = RETRY_INITIAL
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self.request(pending)

    # -- timers --------------------------------------------------------------------------------

    def _rate_elapsed(self) -> None:
        if self.pending is not None and not self.deploying:
            pending, self.pending = self.pending, None
            self.request(pending)

    def _retry_due(self) -> None:
        if self.validated is not None and not self.deploying:
            self.request(replace(self.validated, reason="deployment_retry"))

    def _deployment_timed_out(self) -> None:
        if not self.deploying:
            return
        self.logger.warning("deployment did not finish within %.0fs: cancelling it", self.timeout)
        self.bus.publish(DeploymentCancelRequest(reason="deployment_timeout"))
        self.deploying = False
        self.last_deployed = None
        self.last_end = self.clock.monotonic()
        self.bus.publish(ReconciliationTriggered(reason=TriggerReason.DEPLOYMENT_TIMEOUT_RECOVERY.value,
                                                 coalescible=False))
