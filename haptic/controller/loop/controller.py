"""``Controller``: the reinitialization loop around iterations, for one replica.

Waits for the HAProxyTemplateConfig and the credentials Secret (saying what it waits for), validates
both (an invalid config gets status ``Invalid`` and is waited on), runs an ``Iteration``, and starts a
new one in the same process when a new config generation validates. An iteration that fails is
retried after ``retry_delay``. ``stop()`` ends the loop gracefully (leadership released, components
stopped) within ``shutdown_timeout``; cancelling ``run()`` is a crash (the Lease is not released).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from haptic.config.credentials import Credentials, load_credentials
from haptic.config.errors import ConfigError
from haptic.config.haproxycfg import runtime_config_name
from haptic.config.models import HAProxyTemplateConfig
from haptic.controller.context import HAPROXY_CFGS, SECRETS, TEMPLATE_CONFIGS
from haptic.controller.loop.iteration import Iteration, IterationSettings
from haptic.controller.loop.progress import with_progress
from haptic.controller.metrics import ControllerMetrics
from haptic.controller.observe.debug_providers import DebugProviders
from haptic.controller.observe.event_ring import EventRing
from haptic.controller.ports import ControllerPorts
from haptic.controller.publish.content import decode_content
from haptic.controller.publish.status_writer import write_invalid_status
from haptic.controller.watch.config_loader import compile_config_object, config_version, secret_fingerprint
from haptic.controller.watch.config_tests import validation_test_failures
from haptic.core import ComponentHealth, Event, HealthReport, Status, cancel_and_wait
from haptic.k8s.api import JSON, ApiError, NotFound, ResourceRef
from haptic.templating.engine import TemplateEngine
from haptic.validation.local_haproxy import detect_local_haproxy

RETRY_DELAY = 5.0
CONFIG_POLL_INTERVAL = 5.0
SHUTDOWN_TIMEOUT = 25.0
#: how long /healthz stays healthy after a voluntary reinitialization (a new config or CRD): the new
#: iteration may take a while (validationTests, initial sync) and must not get the pod restarted meanwhile
REINIT_GRACE_WINDOW = 90.0
EVENT_RING_SIZE = 1000


class Controller:
    def __init__(
        self,
        ports: ControllerPorts,
        *,
        metrics: ControllerMetrics | None = None,
        observer: Callable[[Event], None] | None = None,
        settings: IterationSettings | None = None,
        retry_delay: float = RETRY_DELAY,
        poll_interval: float = CONFIG_POLL_INTERVAL,
        shutdown_timeout: float = SHUTDOWN_TIMEOUT,
    ) -> None:
        self.ports = ports
        self.metrics = metrics or ControllerMetrics()
        self.observer = observer
        self.settings = settings or IterationSettings()
        self.retry_delay = retry_delay
        self.poll_interval = poll_interval
        self.shutdown_timeout = shutdown_timeout
        self.log = ports.logger("controller")
        self.events = EventRing(EVENT_RING_SIZE)
        self.iteration: Iteration | None = None
        self.iterations = 0
        self.failures = 0
        self.waiting_for = ""
        self._stop = asyncio.Event()
        self._invalid_written: tuple[str, str] | None = None
        self.capabilities: dict[str, Any] | None = None
        #: (config generation, its failing validationTests) of the last config tested
        self._tested: tuple[str, list[str]] | None = None
        #: monotonic time of the last voluntary reinitialization (None: none yet)
        self.reinitialized_at: float | None = None
        self.reinit_grace = REINIT_GRACE_WINDOW

    # -- control ---------------------------------------------------------------------------------

    def stop(self) -> None:
        self._stop.set()

    async def shutdown(self, task: asyncio.Task[None]) -> None:
        """Graceful stop of a ``run()`` task, bounded by ``shutdown_timeout`` (then cancelled)."""
        self.stop()
        try:
            async with self.ports.clock.timeout(self.shutdown_timeout):
                await with_progress(asyncio.shield(task), self.ports.clock, self.log, "shutting down",
                                    self._still_running)
        except TimeoutError:
            self.log.warning("shutdown took longer than %.0fs: cancelling", self.shutdown_timeout)
            await cancel_and_wait(task)

    def _still_running(self) -> str:
        iteration = self.iteration
        return iteration.still_running() if iteration is not None else ""

    @property
    def is_leader(self) -> bool:
        return self.iteration is not None and self.iteration.is_leader

    # -- the loop --------------------------------------------------------------------------------

    async def run(self) -> None:
        while not self._stop.is_set():
            try:
                loaded = await self._wait_for_inputs()
                if loaded is None:
                    return
                config, engine, version, credentials, credentials_version = loaded
                if self.capabilities is None:
                    self.capabilities = await detect_local_haproxy(self.ports.haproxy_binary, self.ports.check_runner)
                    self.log.info("local HAProxy %s", self.capabilities.get("haproxy_version"))
                current = await self._current_config()
                self.metrics.reset()
                iteration = Iteration(self.ports, config, version, credentials, credentials_version, self.metrics,
                                      current_config=current, observer=self.observer, event_ring=self.events,
                                      settings=self.settings, capabilities=self.capabilities, engine=engine)
                self.iteration = iteration
                self.iterations += 1
                self.waiting_for = ""
                self.log.info("iteration %d: config generation %s", self.iterations, version)
                outcome = await iteration.run(self._stop)
                if outcome == "stopped":
                    return
                self.reinitialized_at = self.ports.clock.monotonic()
                self.log.info("reinitializing for a new configuration")
            except asyncio.CancelledError:
                raise
            except Exception:
                self.failures += 1
                self.log.exception("iteration failed; retrying in %.0fs", self.retry_delay)
                await self._pause(self.retry_delay)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with self.ports.clock.timeout(seconds):
                await self._stop.wait()

    def _waiting(self, what: str) -> None:
        if what != self.waiting_for:
            self.log.info("waiting for %s", what)
            self.waiting_for = what

    async def _wait_for_inputs(self) -> tuple[HAProxyTemplateConfig, TemplateEngine, str, Credentials, str] | None:
        identity = self.ports.identity
        while not self._stop.is_set():
            loaded = await self._try_load(identity.namespace, identity.config_name, identity.secret_name)
            if loaded is not None:
                return loaded
            await self._pause(self.poll_interval)
        return None

    async def _get_or_wait(self, ref: ResourceRef, what: str, name: str, namespace: str) -> JSON | None:
        """The object, or None after saying that (and why) the controller waits for it."""
        try:
            return await self.ports.kube.get(ref, name, namespace)
        except NotFound:
            self._waiting(f"{what} {namespace}/{name}")
        except ApiError as exc:
            self._waiting(f"{what} {namespace}/{name} (API error: {exc})")
        return None

    async def _try_load(self, namespace: str, name: str,
                        secret_name: str) -> tuple[HAProxyTemplateConfig, TemplateEngine, str, Credentials, str] | None:
        obj = await self._get_or_wait(TEMPLATE_CONFIGS, "HAProxyTemplateConfig", name, namespace)
        if obj is None:
            return None
        version = config_version(obj)
        config, engine, errors = compile_config_object(obj, f"{namespace}/{name}")
        if config is None or engine is None:
            self._waiting(f"a valid HAProxyTemplateConfig {namespace}/{name} (generation {version} is invalid: "
                          f"{'; '.join(errors)})")
            await self._mark_invalid(obj, version, errors)
            return None
        failures = await self._test_failures(config, version)
        if failures:
            self._waiting(f"a HAProxyTemplateConfig {namespace}/{name} whose validationTests pass (generation "
                          f"{version}: {'; '.join(failures)})")
            await self._mark_invalid(obj, version, failures)
            return None
        secret = await self._get_or_wait(SECRETS, "credentials Secret", secret_name, namespace)
        if secret is None:
            return None
        try:
            credentials = load_credentials(secret)
        except ConfigError as exc:
            self._waiting(f"valid credentials in Secret {namespace}/{secret_name} ({exc})")
            return None
        return config, engine, version, credentials, secret_fingerprint(secret)

    async def _test_failures(self, config: HAProxyTemplateConfig, version: str) -> list[str]:
        """The config's failing validationTests, run once per generation (the loop polls every few seconds)."""
        if self._tested is not None and self._tested[0] == version:
            return self._tested[1]
        if self.capabilities is None:
            self.capabilities = await detect_local_haproxy(self.ports.haproxy_binary, self.ports.check_runner)
            self.log.info("local HAProxy %s", self.capabilities.get("haproxy_version"))
        failures = await validation_test_failures(config.spec, self.ports, self.capabilities)
        self._tested = (version, failures)
        return failures

    async def _mark_invalid(self, obj: JSON, version: str, errors: list[str]) -> None:
        key = (version, "; ".join(errors))
        if key == self._invalid_written:
            return
        self._invalid_written = key
        identity = self.ports.identity
        generation = int(version) if version.isdigit() else None
        await write_invalid_status(self.ports.kube, identity.namespace, identity.config_name, errors, generation,
                                   self.ports.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ"))

    async def _current_config(self) -> str | None:
        identity = self.ports.identity
        try:
            obj = await self.ports.kube.get(HAPROXY_CFGS, runtime_config_name(identity.config_name),
                                            identity.namespace)
        except ApiError:
            return None
        spec = obj.get("spec") or {}
        content = spec.get("content")
        if not isinstance(content, str):
            return None
        try:
            return decode_content(content, bool(spec.get("compressed")))
        except Exception:  # a corrupt record only costs slot preservation
            self.log.warning("published HAProxyCfg content is unreadable; rendering without it")
            return None

    # -- introspection ----------------------------------------------------------------------------

    def health(self, *, grace: bool = True) -> HealthReport:
        """Liveness (``/healthz``): the current iteration's components and this replica's leadership.

        Waiting for the config or the Secret is healthy (the process works; it says what it waits for),
        so a cluster does not restart a controller that merely has nothing to do yet.
        """
        iteration = self.iteration
        if iteration is None:
            reason = f"waiting for {self.waiting_for}" if self.waiting_for else "starting"
            return HealthReport(True, {"config": ComponentHealth(Status.PENDING, True, reason)})
        report = iteration.registry.health()
        components = {**report.components, "leadership": self._leadership(iteration)}
        healthy = all(c.healthy for c in components.values())
        left = self._grace_left() if grace else 0.0
        if not healthy and left > 0:
            components["reinitialization"] = ComponentHealth(
                Status.PENDING, True, f"reinitialized recently: healthy for another {left:.0f}s whatever the "
                                      "new iteration reports")
            healthy = True
        return HealthReport(healthy, components)

    def _grace_left(self) -> float:
        if self.reinitialized_at is None:
            return 0.0
        try:
            now = self.ports.clock.monotonic()
        except RuntimeError:  # no running loop: no clock to read
            return 0.0
        return self.reinitialized_at + self.reinit_grace - now

    def readiness(self) -> HealthReport:
        """Readiness (``/readyz``): an iteration synced its watches, runs leader election (as leader or
        follower) and every component is healthy."""
        iteration = self.iteration
        if iteration is None:
            reason = f"waiting for {self.waiting_for}" if self.waiting_for else "starting"
            return HealthReport(False, {"config": ComponentHealth(Status.PENDING, False, reason)})
        report = self.health(grace=False)  # the grace keeps the pod alive, not in the Service's endpoints
        return HealthReport(report.healthy and iteration.campaigning, report.components)

    def _leadership(self, iteration: Iteration) -> ComponentHealth:
        if not iteration.campaigning:
            return ComponentHealth(Status.PENDING, True, "initial sync in progress")
        if iteration.is_leader:
            return ComponentHealth(Status.RUNNING, True, "leader")
        elector = iteration.leader.elector
        holder = elector.observed_leader if elector is not None else None
        return ComponentHealth(Status.STANDBY, True, f"follower (leader: {holder or 'none yet'})")

    def convergence(self) -> dict[str, Any]:
        """``/debug/vars/convergence``: whether this replica leads and what it still has to do
        (``Iteration.pending``); without an iteration, what it waits for."""
        iteration = self.iteration
        if iteration is None:
            waiting = f"waiting for {self.waiting_for}" if self.waiting_for else "starting"
            return {"is_leader": False, "pending": [waiting]}
        return {"is_leader": iteration.is_leader, "pending": iteration.pending()}

    def debug_providers(self) -> DebugProviders:
        """What the debug server shows; reads the current iteration at request time."""

        def var(name: str) -> Callable[[], object]:
            def get() -> object:
                if self.iteration is None:
                    return None
                return self.iteration.state.vars()[name]()

            return get

        names = ("config", "credentials", "rendered", "auxfiles", "resources", "pipeline", "validated", "errors",
                 "pods")
        variables: dict[str, Callable[[], object]] = {n: var(n) for n in names}
        variables["leader"] = lambda: {"is_leader": self.is_leader, "identity": self.ports.identity.pod_name}

        def discovery() -> object:
            # For observers that wait for convergence (the local tier's settle): a pod whose version check
            # failed transiently is about to be retried, so the admitted set is not final yet.
            if self.iteration is None:
                return None
            found = self.iteration.discovery
            return {"admitted": sorted(found.admitted), "retry_pending": found.retry_pending()}

        variables["discovery"] = discovery
        variables["iterations"] = lambda: {"count": self.iterations, "failures": self.failures,
                                           "waiting_for": self.waiting_for}
        variables["convergence"] = self.convergence

        def secrets() -> list[str]:
            it = self.iteration
            return [it.ctx.credentials.password.get_secret_value()] if it is not None else []

        return DebugProviders(vars=variables, health=self.health, ready=self.readiness,
                              events=self.events.last,
                              metrics=lambda: self.metrics.registry, secrets=secrets)
