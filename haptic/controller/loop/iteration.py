"""One iteration of the controller: a fresh bus, stores and components for one validated config.

Order (after the original): build everything (components subscribe at construction) → start the
all-replica components (watchers list and watch) → wait until every watcher finished its initial
sync → publish the bootstrap ``config.validated`` / ``credentials.updated`` → release the bus →
start leader election (leader-only components start with leadership) → run until a new valid
config generation asks for reinitialization or the controller stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from haptic.config.credentials import Credentials
from haptic.config.models import HAProxyTemplateConfig
from haptic.controller.component import IterationComponent
from haptic.controller.context import IterationContext
from haptic.controller.deploy.deployer import Deployer
from haptic.controller.deploy.discovery import Discovery
from haptic.controller.deploy.drift_monitor import DriftMonitor
from haptic.controller.deploy.scheduler import DeploymentScheduler
from haptic.controller.events import ConfigValidated, CrdChanged, NamespaceSelectionChanged
from haptic.controller.loop.leader_election import LeaderElection
from haptic.controller.loop.observed_bus import ObservedBus
from haptic.controller.loop.progress import with_progress
from haptic.controller.loop.startup_heap import StartupHeap
from haptic.controller.metrics import ControllerMetrics
from haptic.controller.observe.commentator import EventCommentator
from haptic.controller.observe.event_ring import EventRing
from haptic.controller.observe.metrics_component import MetricsComponent
from haptic.controller.observe.state_cache import StateCache
from haptic.controller.ports import ControllerPorts
from haptic.controller.publish.object_events import ObjectEventRecorder
from haptic.controller.publish.object_status import ObjectStatusApplier
from haptic.controller.publish.publisher import ConfigPublisher
from haptic.controller.publish.status_writer import ConfigStatusWriter
from haptic.controller.reconcile.coordinator import RenderValidateCoordinator
from haptic.controller.reconcile.http_content import HttpContentRefresher, templates_use_http
from haptic.controller.reconcile.reconciler import DEFAULT_DEBOUNCE, DEFAULT_MIN_DEBOUNCE, Reconciler
from haptic.controller.watch.config_loader import ConfigLoader, ConfigWatcher, CredentialsLoader, SecretWatcher
from haptic.controller.watch.crd_watch import CrdWatcher
from haptic.controller.watch.index_tracker import IndexSynchronizationTracker
from haptic.controller.watch.namespace_selection import NamespaceSelection
from haptic.controller.watch.watcher import ResourceWatcher
from haptic.core import Component, Event, EventBus, LifecycleRegistry, Status
from haptic.httpstore.fetcher import make_client
from haptic.httpstore.store import HttpStore
from haptic.k8s.leaderelection import ElectionConfig, LeaderElector
from haptic.names import HAPROXY_PODS
from haptic.templating.engine import TemplateEngine, compile_templates
from haptic.validation.haproxy_check import HAProxyValidator

DEFAULT_REINIT_DEBOUNCE = 5.0
DEFAULT_RELEASE_TIMEOUT = 10.0
SYNC_PROGRESS_INTERVAL = 30.0


@dataclass(frozen=True)
class IterationSettings:
    #: the reconciler's longest refractory window (a sustained burst) and its shortest (idle): see ``Reconciler``
    reconcile_debounce: float = DEFAULT_DEBOUNCE
    reconcile_min_debounce: float = DEFAULT_MIN_DEBOUNCE
    reinit_debounce: float = DEFAULT_REINIT_DEBOUNCE
    #: How long ending an iteration (stop or reinitialization) waits for the Lease release; past it the
    #: Lease is left to expire, so a hung API cannot hold a reinitialization up.
    release_timeout: float = DEFAULT_RELEASE_TIMEOUT


class ReinitTrigger(IterationComponent):
    """Signals reinitialization once a newer config generation validated or a CRD backing a watched resource
    changed (debounced: edits and CRD installs come in bursts)."""

    name = "configchange-handler"
    subscribes = (ConfigValidated, CrdChanged, NamespaceSelectionChanged)

    def __init__(self, bus: EventBus, ctx: IterationContext, debounce: float) -> None:
        super().__init__(bus, ctx)
        self.debounce = debounce
        self.requested = asyncio.Event()
        self.version: str | None = None
        self._timer = self.clock.timer(self.requested.set)

    async def on_stop(self) -> None:
        self._timer.cancel()

    @property
    def due(self) -> bool:
        """A newer config generation validated and its reinitialization is still to come."""
        return self._timer.active or self.requested.is_set()

    async def handle(self, event: Event) -> None:
        if isinstance(event, CrdChanged | NamespaceSelectionChanged):
            self.version = self.version or self.ctx.config_version
            what = (f"CustomResourceDefinition {event.crd} {event.change}" if isinstance(event, CrdChanged)
                    else f"the namespaces selected for {', '.join(event.resources)} changed")
            self.logger.info("%s: reinitializing in %.0fs", what, self.debounce)
            self._timer.start(self.debounce)
            return
        assert isinstance(event, ConfigValidated)
        if event.version == self.ctx.config_version:
            return
        self.version = event.version
        self.logger.info("config generation %s validated: reinitializing in %.0fs", event.version, self.debounce)
        self._timer.start(self.debounce)


class Iteration:
    """Build with a validated config and credentials, then ``await run(stop)``."""

    def __init__(
        self,
        ports: ControllerPorts,
        config: HAProxyTemplateConfig,
        config_version: str,
        credentials: Credentials,
        credentials_version: str,
        metrics: ControllerMetrics,
        *,
        current_config: str | None = None,
        observer: Callable[[Event], None] | None = None,
        event_ring: EventRing | None = None,
        settings: IterationSettings | None = None,
        capabilities: dict[str, Any] | None = None,
        engine: TemplateEngine | None = None,
    ) -> None:
        """``engine``: the config's templates, compiled when it was validated (compiled here when None)."""
        self.ports = ports
        self.settings = settings or IterationSettings()
        self.logger = ports.logger("iteration")
        self.bus = ObservedBus(ports.clock, ports.ids, on_critical_drop=metrics.on_critical_drop)
        self.bus.observer = observer
        spec = config.spec
        self.ctx = IterationContext(
            ports=ports, config=config, config_version=config_version, credentials=credentials,
            credentials_version=credentials_version, engine=engine if engine is not None else compile_templates(spec),
            validator=HAProxyValidator(ports.haproxy_binary, structural=True), metrics=metrics,
            stores=spec.make_stores(),
            current_config=current_config, capabilities=dict(capabilities or {}),
        )
        if templates_use_http(self.ctx.engine.templates):
            self.ctx.http = HttpStore(make_client(ports.http_transport), ports.clock)
        self.ctx.validator.dirs = self.ctx.dirs
        self.registry = LifecycleRegistry()
        bus, ctx = self.bus, self.ctx
        self.commentator = EventCommentator(bus, ports.logger("events"), event_ring)
        self.metrics_recorder = MetricsComponent(bus, metrics)
        self.state = StateCache(bus, ctx)
        self.config_loader = ConfigLoader(bus, ctx)
        self.credentials_loader = CredentialsLoader(bus, ctx)
        self.reinit = ReinitTrigger(bus, ctx, self.settings.reinit_debounce)
        self.watchers = [ResourceWatcher(bus, ctx, name) for name in sorted(ctx.stores)]
        self.crd_watcher = CrdWatcher(bus, ctx)
        self.namespace_selection = NamespaceSelection(bus, ctx)
        self.index_tracker = IndexSynchronizationTracker(bus, sorted(ctx.stores))
        self.reconciler = Reconciler(bus, ctx, self.settings.reconcile_debounce, self.settings.reconcile_min_debounce)
        self.discovery = Discovery(bus, ctx)
        self.config_watcher = ConfigWatcher(bus, ctx)
        self.secret_watcher = SecretWatcher(bus, ctx, ports.identity.secret_name)
        self.coordinator = RenderValidateCoordinator(bus, ctx)
        self.http_refresher = HttpContentRefresher(bus, ctx)
        self.coordinator.http_gate.report_to(self.http_refresher.report)
        self.scheduler = DeploymentScheduler(bus, ctx)
        self.deployer = Deployer(bus, ctx)
        self.drift = DriftMonitor(bus, ctx)
        self.publisher = ConfigPublisher(bus, ctx)
        self.status_writer = ConfigStatusWriter(bus, ctx)
        self.object_status = ObjectStatusApplier(bus, ctx)
        self.object_events = ObjectEventRecorder(bus, ctx)
        self.heap = StartupHeap(bus, ports.clock)
        all_replica: list[Component] = [
            self.heap, self.commentator, self.metrics_recorder, self.state, self.config_loader, self.credentials_loader,
            self.reinit, *self.watchers, self.crd_watcher, self.namespace_selection, self.index_tracker,
            self.reconciler, self.discovery,
            self.config_watcher, self.secret_watcher,
        ]
        for component in all_replica:
            self.registry.register(component)
        leader_only: list[Component] = [self.coordinator, self.scheduler, self.deployer, self.drift, self.publisher,
                                        self.status_writer, self.object_status, self.object_events]
        if ctx.http is not None:
            leader_only.insert(1, self.http_refresher)
        for component in leader_only:
            self.registry.register(component, leader_only=True)
        # Started by hand after the bus is released (it must not lead before the initial sync).
        elector = _elector(ctx)
        if elector is not None:
            ctx.fence = elector
        self.leader = LeaderElection(bus, self.registry, elector, identity=ports.identity.pod_name)
        #: Set once the initial sync is complete and leader election runs (readiness).
        self.campaigning = False

    @property
    def is_leader(self) -> bool:
        return self.registry.is_leader

    def pending(self) -> list[str]:
        """What this replica still has to do before what it watches is deployed, ``[]`` when nothing:
        initial sync, a reinitialization, a watch to be retried after an error, a change held by the
        debounce window, work queued in or being done by a component, a deployment held back (in
        flight, pending, retry backoff), pods to be admitted after a failed version check. Only the
        leader renders and deploys, so a follower has nothing of that to do. For observers waiting for
        convergence (``/debug/vars/convergence``, the simulator's ``settle``): a quiet event stream
        alone does not mean converged."""
        found: list[str] = []
        if not self.campaigning:
            found.append("initial sync")
        if self.reinit.due:
            found.append(f"reinitialization for config generation {self.reinit.version}")
        retrying = [w.resource for w in self.watchers if w.watch_state.retrying]
        if retrying:
            found.append(f"watch of {', '.join(retrying)} to be retried after an error")
        if self.reconciler.holds_change:
            found.append("a change waits for the debounce window")
        elif self.reconciler.window_open:
            found.append("debounce window open (the next change would wait for it)")
        stages: list[Component] = [self.reconciler, self.discovery]
        if self.is_leader:
            stages += [self.coordinator, self.scheduler, self.deployer, self.publisher]
        for component in stages:
            queued = component.subscription.queued if component.subscription is not None else 0
            if component.current_event is not None or queued:
                found.append(f"{component.name} busy ({queued} event(s) queued)")
        if self.is_leader and self.http_refresher.refreshing:
            found.append("http.fetch content being refreshed")
        if self.is_leader:
            held = self.scheduler.held_back()
            if held:
                found.append(f"deployment {held}")
        discovery = self.discovery.retry_pending()
        if discovery:
            found.append(discovery)
        return found

    async def _wait_for_sync(self) -> None:
        pending = [w for w in self.watchers if not w.synced.is_set()]
        while pending:
            waits = [asyncio.ensure_future(w.synced.wait()) for w in pending]
            try:
                await asyncio.wait(waits, timeout=SYNC_PROGRESS_INTERVAL)
            finally:
                for w in waits:
                    w.cancel()
            pending = [w for w in self.watchers if not w.synced.is_set()]
            if pending:
                self.logger.info("waiting for the initial sync of %s", ", ".join(w.resource for w in pending))

    async def run(self, stop: asyncio.Event) -> str:
        """Runs until ``stop`` is set ("stopped") or a new config generation validated ("config_changed")."""
        graceful = False
        self.heap.hold()
        try:
            absent = await self.crd_watcher.probe()
            selected = await self.namespace_selection.probe()
            for watcher in self.watchers:
                watcher.absent = absent.get(watcher.resource)
                watcher.namespaces = selected.get(watcher.resource)
            await self.registry.start()
            await self._wait_for_sync()
            counts = {w.resource: len(w.store) for w in self.watchers}
            self.logger.info("initial sync complete: %s", ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
            self.bus.publish(self.config_loader.initial())
            self.bus.publish(self.credentials_loader.initial())
            self.bus.start()
            await self.leader.start()
            self.campaigning = True
            stopping = asyncio.ensure_future(stop.wait())
            reinit = asyncio.ensure_future(self.reinit.requested.wait())
            try:
                await asyncio.wait((stopping, reinit), return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
                reinit.cancel()
            graceful = True
            return "stopped" if stop.is_set() else "config_changed"
        finally:
            await self.shutdown(graceful)

    async def shutdown(self, graceful: bool) -> None:
        self.campaigning = False
        try:
            if graceful:
                limit = self.settings.release_timeout
                try:
                    async with self.ports.clock.timeout(limit):
                        await self.leader.release()
                except TimeoutError:
                    self.logger.warning("releasing leadership took longer than %.0fs: the Lease is left to expire",
                                        limit)
                except Exception:
                    self.logger.exception("releasing leadership failed")
            await self.leader.abandon()
            await with_progress(self.registry.stop(), self.ports.clock, self.logger, "stopping the iteration",
                                self.still_running)
        finally:
            # The collector is the process's: however the stop went (a second cancellation), it is given back.
            self.heap.release()
        if self.ctx.http is not None:
            await self.ctx.http.client.aclose()

    def still_running(self) -> str:
        """The components not stopped yet (for progress lines while stopping)."""
        running = [name for name, status in self.registry.statuses().items()
                   if status in (Status.RUNNING, Status.STARTING)]
        return ", ".join(sorted(running))

    def resource_count(self, name: str = HAPROXY_PODS) -> int:
        return len(self.ctx.stores[name])


def _elector(ctx: IterationContext) -> LeaderElector | None:
    settings = ctx.spec.controller.leader_election
    if not settings.enabled:
        return None
    return LeaderElector(ctx.ports.kube, ElectionConfig(
        lease_name=settings.lease_name, namespace=ctx.namespace, identity=ctx.ports.identity.pod_name,
        lease_duration=settings.lease_duration.total_seconds(),
        renew_deadline=settings.renew_deadline.total_seconds(),
        retry_period=settings.retry_period.total_seconds(),
    ), ctx.ports.clock)


def log_waiting(log: logging.Logger, what: str) -> None:
    log.info("waiting for %s", what)
