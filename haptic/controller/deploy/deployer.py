"""``Deployer`` (leader-only): pushes a scheduled config to every HAProxy pod in parallel.

Each pod is synchronized by ``haptic.dataplane.synchronizer.sync`` with a per-pod version cache
(skips re-reading and re-parsing a config the pod still has). A failed pod is retried a few times with
backoff inside the deployment; what is still failing is reported per pod and left to the scheduler's
retry and the drift monitor. Results are published in endpoint order, whatever order the pods
answered in, so traces are deterministic. Credentials are read at each deployment (rotation).

Fencing: every Dataplane write first asks the iteration's ``WriteFence`` whether this replica can
still prove it leads (it holds the Lease, renewed within the renew deadline); a replica that cannot
makes no further write, not even the rest of a deployment already under way. A fresh leader starts
its first deployment only once the previous holder's last possible write window has passed.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.events import (
    ConfigAppliedToPod,
    DataplaneEndpoint,
    DeploymentCancelled,
    DeploymentCancelRequest,
    DeploymentCompleted,
    DeploymentScheduled,
    DeploymentStarted,
    InstanceDeployed,
    InstanceDeploymentFailed,
    LostLeadership,
    SyncMetadata,
    TriggerReason,
)
from haptic.core import Event, EventBus
from haptic.dataplane.api_errors import FencedError
from haptic.dataplane.aux_files import AuxFiles
from haptic.dataplane.client import DataplaneClient
from haptic.dataplane.errors import ConfigParseError
from haptic.dataplane.parser import HAProxyConfig, parse_config, parse_config_reusing
from haptic.dataplane.synchronizer import SharedPlans, SyncOptions, SyncResult, VersionCache, sync

ATTEMPTS = 3
BACKOFF = 1.0


class Deployer(IterationComponent):
    name = "deployer"
    subscribes = (DeploymentScheduled, DeploymentCancelRequest, LostLeadership)
    leader_only = True
    capacity = 1000

    def __init__(self, bus: EventBus, ctx: IterationContext) -> None:
        super().__init__(bus, ctx)
        self.caches: dict[str, VersionCache] = {}
        self._deployment: asyncio.Task[None] | None = None
        self._next: DeploymentScheduled | None = None
        self.deployments = 0
        #: The last desired config parsed: the next one re-parses only the sections that changed.
        self._parsed: HAProxyConfig | None = None

    async def on_stop(self) -> None:
        self._parsed = None
        self.caches.clear()
        self._next = None

    @property
    def busy(self) -> bool:
        return self._deployment is not None and not self._deployment.done()

    async def handle(self, event: Event) -> None:
        if isinstance(event, DeploymentScheduled):
            if self.busy:
                self._next = event  # latest wins
            else:
                self._start(event)
        elif isinstance(event, DeploymentCancelRequest):
            self._next = None
            if self._deployment is not None:
                self._deployment.cancel()
        elif isinstance(event, LostLeadership):
            self._next = None
            if self._deployment is not None:
                self._deployment.cancel()
            self.caches.clear()

    def _start(self, event: DeploymentScheduled) -> None:
        self._deployment = self.spawn(self._run(event), "deployment")

    async def _run(self, event: DeploymentScheduled) -> None:
        try:
            wait = self.ctx.fence.writes_allowed_from() - self.clock.monotonic()
            if wait > 0:
                self.logger.info("new leader: waiting %.1fs for the previous leader's last writes to end", wait)
                await self.clock.sleep(wait)
            refusal = self.ctx.fence.refusal()
            if refusal:
                self.logger.warning("deployment of %s not started: %s", event.content_checksum, refusal)
                self.publish(DeploymentCancelled(content_checksum=event.content_checksum), cause=event)
                return
            await self.deploy(event)
        except asyncio.CancelledError:
            self.logger.warning("deployment of %s cancelled", event.content_checksum)
            # A deployment spawned just before leadership was lost publishes its start after the loss;
            # without an end event observers would count this replica as deploying forever.
            self.publish(DeploymentCancelled(content_checksum=event.content_checksum), cause=event)
            raise
        nxt, self._next = self._next, None
        if nxt is not None:
            self._start(nxt)

    async def deploy(self, event: DeploymentScheduled) -> DeploymentCompleted:
        self.deployments += 1
        started = self.clock.monotonic()
        endpoints = event.endpoints
        self.publish(DeploymentStarted(endpoints=endpoints, content_checksum=event.content_checksum), cause=event)
        aux = event.auxiliary_files
        parsed: HAProxyConfig | None
        try:
            previous = self._parsed
            parsed = (parse_config_reusing(event.haproxy_config, previous) if previous is not None
                      else parse_config(event.haproxy_config))
            self._parsed = parsed
        except ConfigParseError:
            parsed = None  # the synchronizer reports it per pod
        forced = event.reason == TriggerReason.DRIFT_PREVENTION
        limit = self.ctx.spec.dataplane.max_parallel
        # dataplane.maxParallel: at most that many pods written at once (0: all at once, as the original's code)
        gate = asyncio.Semaphore(limit) if limit > 0 else None
        # one plan per (configuration on the pod, desired configuration), whatever the number of pods
        shared = SharedPlans()

        async def one(endpoint: DataplaneEndpoint) -> tuple[SyncResult, float]:
            if gate is None:
                return await self._sync_pod(endpoint, event.haproxy_config, aux, parsed, forced, shared)
            async with gate:
                return await self._sync_pod(endpoint, event.haproxy_config, aux, parsed, forced, shared)

        results = await asyncio.gather(*(one(ep) for ep in endpoints))
        breakdown: Counter[str] = Counter()
        reloads = 0
        operations = 0
        runtime = 0
        succeeded = 0
        for endpoint, (result, duration) in zip(endpoints, results, strict=True):
            breakdown[f"mode_{result.mode}"] += 1
            operations += len(result.operations)
            runtime += result.runtime_updates
            reloads += 1 if result.reload_triggered else 0
            if result.ok:
                succeeded += 1
                self.publish(InstanceDeployed(endpoint=endpoint, duration_s=duration,
                                              reload_required=result.reload_triggered), cause=event)
            else:
                self.publish(InstanceDeploymentFailed(endpoint=endpoint, error="; ".join(result.errors)), cause=event)
            if result.mode != "noop" or not result.ok or forced:
                self.publish(ConfigAppliedToPod(
                    pod_name=endpoint.pod_name, pod_namespace=endpoint.pod_namespace,
                    checksum=event.content_checksum, runtime_config_name=event.runtime_config_name,
                    runtime_config_namespace=event.runtime_config_namespace, is_drift_check=forced,
                    sync=SyncMetadata(reload_triggered=result.reload_triggered, reload_id=result.reload_id or "",
                                      sync_duration_s=duration, version_conflict_retries=result.retries,
                                      fallback_used=result.fallback_used,
                                      operation_counts={**result.summary,
                                                        "totalAPIOperations": len(result.operations)},
                                      error="; ".join(result.errors)),
                ), cause=event)
        if runtime:
            breakdown["runtime_updates"] = runtime
        failed = len(endpoints) - succeeded
        duration = self.clock.monotonic() - started
        completed = DeploymentCompleted(total=len(endpoints), succeeded=succeeded, failed=failed, duration_s=duration,
                                        reloads_triggered=reloads, total_api_operations=operations,
                                        operation_breakdown=dict(sorted(breakdown.items())),
                                        content_checksum=event.content_checksum)
        self.publish(completed, cause=event)
        return completed

    def _guard(self, method: str, path: str) -> None:
        refusal = self.ctx.fence.refusal()
        if refusal:
            raise FencedError(f"{method} {path} not sent: {refusal}")

    def _client(self, endpoint: DataplaneEndpoint) -> DataplaneClient:
        creds = self.ctx.credentials
        ports = self.ctx.ports
        return DataplaneClient(endpoint.url, creds.username, creds.password.get_secret_value(),
                               transport=ports.dataplane_transport(endpoint.url), timeout=ports.dataplane_timeout,
                               sleep=self.clock.sleep, clock=self.clock.monotonic, write_guard=self._guard)

    async def _sync_pod(self, endpoint: DataplaneEndpoint, config: str, aux: AuxFiles, parsed: HAProxyConfig | None,
                        forced: bool, shared: SharedPlans) -> tuple[SyncResult, float]:
        started = self.clock.monotonic()
        cache = self.caches.setdefault(endpoint.url, VersionCache())
        if forced:
            cache.invalidate()  # drift checks look at what is really there
        options = SyncOptions(force_aux_compare=forced,
                              raw_push_threshold=self.ctx.spec.dataplane.raw_push_threshold)
        delay = BACKOFF
        result: SyncResult | None = None
        for attempt in range(1, ATTEMPTS + 1):
            client = self._client(endpoint)
            try:
                result = await sync(client, config, aux, cache=cache, options=options, parsed_desired=parsed,
                                    shared=shared)
            finally:
                await client.aclose()
            if result.ok or self.ctx.fence.refusal():
                break
            self.logger.warning("sync of pod %s failed (attempt %d/%d): %s", endpoint.pod_name, attempt, ATTEMPTS,
                             "; ".join(result.errors))
            if attempt < ATTEMPTS:
                await self.clock.sleep(delay)
                delay *= 2
        assert result is not None
        return result, self.clock.monotonic() - started
